//! The README cannot rot: its commands are run here as written.
//!
//! The demo command (`cargo run --release -- …`) runs the built binary with the same arguments
//! in a copy of the repository's demo files; the `rein …` lines of the README's shell blocks
//! run as written and must succeed.

use std::path::{Path, PathBuf};

use crate::harness::Sandbox;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn readme() -> String {
    std::fs::read_to_string(repo().join("README.md")).expect("README.md")
}

/// Splits a command line the way `sh` would for the simple quoting the README uses.
fn split_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    for c in line.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => cur.push(c),
            None if c == '\'' || c == '"' => {
                quote = Some(c);
                in_word = true;
            }
            None if c == '#' && !in_word => break,
            None if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            None => {
                cur.push(c);
                in_word = true;
            }
        }
    }
    assert!(quote.is_none(), "unbalanced quote in README line: {line}");
    if in_word {
        words.push(cur);
    }
    words
}

/// A temporary project holding the demo files, with rein's home and HOME inside it.
struct Demo {
    sandbox: Sandbox,
    project: PathBuf,
}

impl Demo {
    fn new() -> Demo {
        let sandbox = Sandbox::new("proj", &["proj/hooks"]);
        let project = sandbox.project.clone();
        for f in ["Cargo.toml", "settings.example.json"] {
            std::fs::copy(repo().join(f), project.join(f)).expect("copy");
        }
        for entry in std::fs::read_dir(repo().join("hooks")).expect("hooks/") {
            let entry = entry.expect("entry");
            std::fs::copy(entry.path(), project.join("hooks").join(entry.file_name()))
                .expect("copy hook");
        }
        Demo { sandbox, project }
    }

    /// The built binary, sealed off from the developer's environment ([`Sandbox::rein`]).
    fn rein(&self, args: &[String]) -> std::process::Output {
        self.sandbox.rein().args(args).output().expect("run rein")
    }

    fn ledger(&self, name: &str) -> Vec<serde_json::Value> {
        let path = self.project.join(".rein").join(name);
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        text.lines()
            .map(|l| serde_json::from_str(l).expect("ledger line is JSON"))
            .collect()
    }
}

fn text(out: &[u8]) -> String {
    String::from_utf8_lossy(out).into_owned()
}

#[test]
fn readme_demo_command_plays_the_four_scenarios() {
    let readme = readme();
    let line = readme
        .lines()
        .find(|l| l.starts_with("cargo run --release -- "))
        .expect("the README's first command");
    let words = split_words(line);
    assert_eq!(&words[..4], ["cargo", "run", "--release", "--"]);
    let demo = Demo::new();
    let out = demo.rein(&words[4..]);
    let stdout = text(&out.stdout);
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "stdout:\n{stdout}\nstderr:\n{stderr}");

    // 1. The read ran, with the path rewritten by normalize-paths, and was audited.
    let audit = demo.ledger("audit.jsonl");
    assert_eq!(audit.len(), 1, "exactly the read was executed: {audit:?}");
    assert_eq!(audit[0]["tool"], "Read");
    let cargo_toml = demo.project.join("Cargo.toml");
    assert_eq!(
        audit[0]["input"]["file_path"],
        cargo_toml.to_string_lossy().as_ref(),
        "./Cargo.toml was rewritten to the clean path"
    );
    assert!(stdout.contains("[package]"), "{stdout}");

    // 2 + 3. touch refused by the permission step, rm -rf / by the dangerous-command hook.
    let blocked = demo.ledger("blocked.jsonl");
    let commands: Vec<&str> = blocked
        .iter()
        .map(|b| b["input"]["command"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(commands, ["touch notes.txt", "rm -rf /"]);
    assert!(!demo.project.join("notes.txt").exists());
    assert!(
        blocked[0]["reason"]
            .as_str()
            .unwrap_or_default()
            .contains("Permission to use Bash"),
        "{blocked:?}"
    );
    assert!(
        blocked[1]["reason"]
            .as_str()
            .unwrap_or_default()
            .starts_with("PreToolUse:Bash hook error: Blocked dangerous command: rm -rf"),
        "{blocked:?}"
    );
    // The model was told why: its summary names both refusals.
    assert!(stdout.contains("Blocked dangerous command"), "{stdout}");
    assert!(stdout.contains("touch notes.txt"), "{stdout}");

    // 4. The turn log saw the session.
    let turns: Vec<String> = demo
        .ledger("turns.jsonl")
        .iter()
        .map(|t| t["event"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(turns, ["SessionStart", "Stop", "SessionEnd"]);
}

#[test]
fn readme_rein_commands_run_as_written() {
    let readme = readme();
    let mut in_sh = false;
    let mut lines: Vec<&str> = Vec::new();
    for l in readme.lines() {
        if l.starts_with("```") {
            in_sh = l == "```sh";
        } else if in_sh && l.starts_with("rein ") {
            lines.push(l);
        }
    }
    assert!(lines.len() >= 5, "README shows rein commands: {lines:?}");
    let demo = Demo::new();
    for line in lines {
        let words = split_words(line);
        let out = demo.rein(&words[1..]);
        let stdout = text(&out.stdout);
        // `rein hooks test` exits 3 when the hooks block (the README says so next to it).
        let expected = if line.starts_with("rein hooks test") && line.contains("rm -rf /") {
            3
        } else {
            0
        };
        assert_eq!(
            out.status.code(),
            Some(expected),
            "`{line}`: {}\n{stdout}",
            text(&out.stderr)
        );
        if line.contains("rm -rf /") {
            assert!(
                stdout.contains("PreToolUse:Bash hook error: Blocked dangerous command"),
                "{stdout}"
            );
        }
    }
}

#[test]
fn readme_links_point_at_files() {
    let readme = readme();
    for target in readme.split("](").skip(1) {
        let Some(end) = target.find(')') else {
            continue;
        };
        let link = &target[..end];
        if link.starts_with("http") || link.starts_with('#') {
            continue;
        }
        assert!(
            Path::new(&repo().join(link)).exists(),
            "README links to a missing file: {link}"
        );
    }
}

/// Every relative link in `docs/` (and the index's links back up) names a file that exists.
#[test]
fn docs_links_point_at_files() {
    let docs = repo().join("docs");
    let mut checked = 0;
    for entry in std::fs::read_dir(&docs).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "md") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        for target in text.split("](").skip(1) {
            let Some(end) = target.find(')') else {
                continue;
            };
            let link = target[..end].split('#').next().unwrap_or_default();
            if link.is_empty() || link.starts_with("http") {
                continue;
            }
            checked += 1;
            assert!(
                docs.join(link).exists(),
                "{} links to a missing file: {link}",
                path.display()
            );
        }
    }
    assert!(
        checked >= 14,
        "the docs index links every document ({checked} links)"
    );
}
