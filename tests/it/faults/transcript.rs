//! The transcript on a disk that fills up: an append that fails part-way is cut back, so every
//! line in the file stays complete JSON; the session itself goes on unchanged, says
//! `transcript incomplete: <reason>` on stderr and exits 1.
//!
//! The full disk is real: rein's home is a small tmpfs, mounted when the suite runs as root
//! (the test says it skipped otherwise) and filled until only a few pages are left.

use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use super::{TOOL_RAN, bash, env, on, say};

/// A tmpfs mounted for one test; unmounted on drop.
struct Tmpfs {
    dir: PathBuf,
}

impl Tmpfs {
    /// Mounts a tmpfs of `size` (`mount -o size=`) at `dir`, or says on stderr why the test
    /// skips (not root, or mounting is not allowed here) and returns `None`.
    fn mount(dir: &Path, size: &str) -> Option<Tmpfs> {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            eprintln!("skipped: mounting a tmpfs needs root");
            return None;
        }
        std::fs::create_dir_all(dir).unwrap();
        let out = Command::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                &format!("size={size},mode=0755"),
                "tmpfs",
            ])
            .arg(dir)
            .output()
            .unwrap();
        if !out.status.success() {
            eprintln!(
                "skipped: cannot mount a tmpfs: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            );
            return None;
        }
        Some(Tmpfs {
            dir: dir.to_path_buf(),
        })
    }

    /// Fills the file system with one file until `ENOSPC`, then frees `pages` whole pages.
    fn fill_leaving(&self, pages: u64) {
        let page = page_size();
        let path = self.dir.join("filler");
        let mut f = std::fs::File::create(&path).unwrap();
        let chunk = vec![0u8; 64 * 1024];
        loop {
            match f.write(&chunk) {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) if e.raw_os_error() == Some(libc::ENOSPC) => break,
                Err(e) => panic!("filling the tmpfs: {e}"),
            }
        }
        let full = f.metadata().unwrap().len() / page * page;
        assert!(full > pages * page, "the tmpfs holds only {full} bytes");
        f.set_len(full - pages * page).unwrap();
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let ok = Command::new("umount")
            .arg(&self.dir)
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            // Something still has it open (a process of a failed test): detach it anyway.
            let _ = Command::new("umount").arg("-l").arg(&self.dir).status();
        }
    }
}

fn page_size() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    u64::try_from(size).unwrap_or(4096)
}

/// Bytes of output of the tool call whose result line cannot fit: written twice into its
/// transcript line (`content` and `toolUseResult.stdout`), so about 24 KB against 12 KB free.
const BIG_OUTPUT: usize = 12_000;

#[test]
fn enospc_during_a_transcript_append_leaves_every_line_parseable() {
    let e = env();
    let Some(disk) = Tmpfs::mount(&e.home.join(".rein"), "1m") else {
        return;
    };
    let end = e.script(
        "end.sh",
        &format!("cat > '{}'", e.path("end.json").display()),
    );
    e.hooks(json!({"SessionEnd": on("", &end, 5)}));
    disk.fill_leaving(3);

    let run = e.run_mock(
        json!([
            bash(&format!(
                "head -c {BIG_OUTPUT} /dev/zero | tr '\\0' x; echo; echo ran > {TOOL_RAN}"
            )),
            say("done"),
        ]),
        &[],
    );

    // The session is unchanged: the tool ran, the answer was printed, SessionEnd ran.
    assert!(e.exists(TOOL_RAN), "stderr: {}", run.stderr);
    assert_eq!(run.stdout, "done\n", "stderr: {}", run.stderr);
    assert!(e.exists("end.json"), "SessionEnd did not run");
    // Every line is complete JSON (`transcript()` fails on a torn one), the line that did not
    // fit is not there at all, and the lines after it were written and chain past it.
    let lines = e.transcript();
    let texts: Vec<String> = lines.iter().map(Value::to_string).collect();
    assert!(
        !texts.iter().any(|t| t.contains("xxxxxxxxxx")),
        "a part of the line that did not fit is in the transcript"
    );
    let last_assistant = lines
        .iter()
        .rev()
        .find(|l| l["type"] == "assistant")
        .unwrap();
    assert_eq!(last_assistant["message"]["content"][0]["text"], "done");
    assert!(
        lines
            .iter()
            .any(|l| l["attachment"]["hookEvent"] == "SessionEnd"),
        "the SessionEnd hook's line after the loss is missing"
    );
    let uuids: HashSet<&str> = lines.iter().filter_map(|l| l["uuid"].as_str()).collect();
    for line in &lines {
        if let Some(parent) = line["parentUuid"].as_str() {
            assert!(
                uuids.contains(parent),
                "parentUuid {parent} names a line that is not in the file"
            );
        }
    }

    // What the record misses is said on stderr, and rein exits non-zero.
    assert_eq!(run.code, Some(1), "stderr: {}", run.stderr);
    let report = run
        .stderr
        .lines()
        .find(|l| l.starts_with("rein: transcript incomplete: "))
        .unwrap_or_else(|| panic!("no `transcript incomplete` in stderr: {}", run.stderr));
    eprintln!("{report}");
    assert!(
        report.contains("1 line not written (No space left on device (os error 28))"),
        "{report}"
    );
    assert!(
        run.stderr.contains("cannot append to the transcript"),
        "no notice when it happened: {}",
        run.stderr
    );
}

#[test]
fn enospc_during_a_hook_run_log_append_leaves_no_torn_line() {
    let e = env();
    let Some(disk) = Tmpfs::mount(&e.home.join(".rein").join("logs"), "1m") else {
        return;
    };
    // Each run-log line carries the command: about 1.3 KB a line, two per call, against one
    // free page, so some append crosses into a page the disk does not have.
    let hook = e.script("ok.sh", "exit 0");
    let command = format!("{hook} # {}", "x".repeat(1200));
    e.hooks(json!({
        "PreToolUse": on("Bash", &command, 5),
        "PostToolUse": on("Bash", &command, 5),
    }));
    disk.fill_leaving(1);
    let calls: Vec<Value> = (0..4).map(|i| bash(&format!("echo {i}"))).collect();
    let mut turns = calls;
    turns.push(say("done"));
    let run = e.run_mock(Value::Array(turns), &[]);
    assert_eq!(run.code, Some(0), "stderr: {}", run.stderr);
    assert_eq!(run.stdout, "done\n");

    let logs: Vec<PathBuf> = std::fs::read_dir(e.home.join(".rein").join("logs"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    assert_eq!(logs.len(), 1, "{logs:?}");
    let text = std::fs::read_to_string(&logs[0]).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    eprintln!("run log: {} bytes, {} lines", text.len(), lines.len());
    assert!(!lines.is_empty(), "no line fitted at all");
    assert!(
        lines.len() < 8,
        "the disk was not full: {} lines",
        lines.len()
    );
    assert!(text.ends_with('\n'), "torn last line");
    for line in lines {
        serde_json::from_str::<Value>(line).unwrap_or_else(|err| panic!("{err}: {line:.200}"));
    }
}
