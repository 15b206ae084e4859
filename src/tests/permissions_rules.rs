//! Pins the permission rule grammar (spec §6.2, §3.4), the mode × tier table (§6.3) and the
//! hook × rule precedence (§6.4).

use std::path::{Path, PathBuf};

use crate::permissions::mode::{PermissionMode, resolve_mode};
use crate::permissions::policy::{
    AskCause, HookAnswer, PermissionPolicy, PolicyPaths, Verdict, headless_denial, split_tool_list,
};
use crate::permissions::rule::{Rule, RuleContext, RulePurpose};
use crate::settings::schema::{Location, PermissionSettings, RuleEntry, SourceKind};
use serde_json::{Value, json};

const CWD: &str = "/proj/app";
const PROJECT: &str = "/proj";
const HOME: &str = "/home/u";

fn ctx() -> RuleContext<'static> {
    RuleContext {
        cwd: Path::new(CWD),
        project_dir: Path::new(PROJECT),
        home: Path::new(HOME),
    }
}

fn bash(cmd: &str) -> Value {
    json!({ "command": cmd })
}

fn file(path: &str) -> Value {
    json!({ "file_path": path })
}

use RulePurpose::{Allow, Ask, Condition, Deny};

/// (rule, tool, input, purpose, expected)
fn rule_table() -> Vec<(&'static str, &'static str, Value, RulePurpose, bool)> {
    vec![
        // Whole-tool forms.
        ("Bash", "Bash", bash("anything at all"), Condition, true),
        ("Bash()", "Bash", bash("rm -rf /"), Deny, true),
        ("Bash(*)", "Bash", bash("ls"), Allow, true),
        ("Read", "Read", file("/x"), Condition, true),
        ("Read", "Grep", json!({"pattern": "x"}), Condition, false),
        // Bash `*` matches any text, spaces included.
        ("Bash(echo *)", "Bash", bash("echo hi there"), Allow, true),
        (
            "Bash(git * --force)",
            "Bash",
            bash("git push origin main --force"),
            Deny,
            true,
        ),
        ("Bash(npm test)", "Bash", bash("npm test"), Allow, true),
        (
            "Bash(npm test)",
            "Bash",
            bash("npm test --watch"),
            Allow,
            false,
        ),
        // Legacy `prefix:*` with a word boundary.
        (
            "Bash(npm run test:*)",
            "Bash",
            bash("npm run test"),
            Allow,
            true,
        ),
        (
            "Bash(npm run test:*)",
            "Bash",
            bash("npm run test --coverage"),
            Allow,
            true,
        ),
        (
            "Bash(npm run test:*)",
            "Bash",
            bash("npm run testx"),
            Allow,
            false,
        ),
        ("Bash(npm:*)", "Bash", bash("npmx install"), Allow, false),
        // Trailing ` *` is optional.
        ("Bash(ls *)", "Bash", bash("ls"), Allow, true),
        ("Bash(ls *)", "Bash", bash("ls -la"), Allow, true),
        ("Bash(ls *)", "Bash", bash("lsof"), Allow, false),
        // Compound commands: any part for deny/ask/if, every part for allow.
        (
            "Bash(git push*)",
            "Bash",
            bash("ls && git push"),
            Condition,
            true,
        ),
        (
            "Bash(git push*)",
            "Bash",
            bash("ls && git push"),
            Deny,
            true,
        ),
        (
            "Bash(git push*)",
            "Bash",
            bash("ls && git push"),
            Allow,
            false,
        ),
        (
            "Bash(echo *)",
            "Bash",
            bash("echo hi && echo there"),
            Condition,
            true,
        ),
        (
            "Bash(echo *)",
            "Bash",
            bash("echo hi && echo there"),
            Allow,
            true,
        ),
        (
            "Bash(git *)",
            "Bash",
            bash("echo hi && echo there"),
            Condition,
            false,
        ),
        (
            "Bash(git *)",
            "Bash",
            bash("cd . && git status"),
            Condition,
            true,
        ),
        ("Bash(rm *)", "Bash", bash("ls; rm -rf x"), Deny, true),
        ("Bash(rm *)", "Bash", bash("ls || rm -rf x"), Deny, true),
        ("Bash(rm *)", "Bash", bash("ls | rm -rf x"), Deny, true),
        ("Bash(rm *)", "Bash", bash("sleep 1 & rm -rf x"), Deny, true),
        ("Bash(rm *)", "Bash", bash("ls\nrm -rf x"), Deny, true),
        (
            "Bash(rm *)",
            "Bash",
            bash("(cd /tmp && rm -rf x)"),
            Deny,
            true,
        ),
        // Quotes are respected: a `;` inside quotes does not split.
        (
            "Bash(rm *)",
            "Bash",
            bash("echo 'a; rm -rf x'"),
            Deny,
            false,
        ),
        (
            "Bash(rm *)",
            "Bash",
            bash("echo \"a && rm -rf x\""),
            Deny,
            false,
        ),
        (
            "Bash(echo *)",
            "Bash",
            bash("echo 'a; rm -rf x'"),
            Allow,
            true,
        ),
        // Env-var prefixes are skipped.
        (
            "Bash(npm test)",
            "Bash",
            bash("NODE_ENV=test npm test"),
            Allow,
            true,
        ),
        (
            "Bash(rm *)",
            "Bash",
            bash("FOO=1 BAR=2 rm -rf x"),
            Deny,
            true,
        ),
        // Wrappers are decomposed; deny rules see through every wrapper.
        ("Bash(rm *)", "Bash", bash("sudo rm -rf /"), Deny, true),
        ("Bash(rm *)", "Bash", bash("timeout 5 rm -rf x"), Deny, true),
        ("Bash(rm *)", "Bash", bash("nice -n 10 rm x"), Deny, true),
        ("Bash(rm *)", "Bash", bash("nohup rm x"), Deny, true),
        ("Bash(rm *)", "Bash", bash("env -i FOO=1 rm x"), Deny, true),
        ("Bash(rm *)", "Bash", bash("time rm x"), Deny, true),
        ("Bash(rm *)", "Bash", bash("watch -n 1 rm x"), Deny, true),
        ("Bash(rm *)", "Bash", bash("setsid rm x"), Deny, true),
        ("Bash(rm *)", "Bash", bash("ionice -c 3 rm x"), Deny, true),
        ("Bash(rm *)", "Bash", bash("stdbuf -oL rm x"), Deny, true),
        (
            "Bash(rm *)",
            "Bash",
            bash("find . -name '*.o' | xargs -0 rm"),
            Deny,
            true,
        ),
        (
            "Bash(rm *)",
            "Bash",
            bash("bash -c 'ls; rm -rf x'"),
            Deny,
            true,
        ),
        (
            "Bash(rm *)",
            "Bash",
            bash("sudo -u root timeout 3 nice rm x"),
            Deny,
            true,
        ),
        // Quoting or a path does not hide the command from deny rules (but does not allow it).
        ("Bash(rm *)", "Bash", bash("'rm' -rf x"), Deny, true),
        ("Bash(rm *)", "Bash", bash("\\rm -rf x"), Deny, true),
        ("Bash(rm *)", "Bash", bash("r\"\"m -rf x"), Deny, true),
        ("Bash(rm *)", "Bash", bash("/bin/rm -rf x"), Deny, true),
        ("Bash(rm *)", "Bash", bash("'rm' -rf x"), Allow, false),
        // Safe wrappers are transparent for allow; sudo is not.
        (
            "Bash(npm test)",
            "Bash",
            bash("timeout 60 npm test"),
            Allow,
            true,
        ),
        ("Bash(rm *)", "Bash", bash("sudo rm -rf /"), Allow, false),
        ("Bash(sudo rm *)", "Bash", bash("sudo rm x"), Allow, true),
        // `$()` and backticks are checked.
        ("Bash(rm *)", "Bash", bash("echo $(rm -rf x)"), Deny, true),
        ("Bash(rm *)", "Bash", bash("echo `rm -rf x`"), Deny, true),
        (
            "Bash(rm *)",
            "Bash",
            bash("echo \"$(rm -rf x)\""),
            Condition,
            true,
        ),
        (
            "Bash(echo *)",
            "Bash",
            bash("echo $(rm -rf x)"),
            Allow,
            false,
        ),
        ("Bash(echo *)", "Bash", bash("echo $(date)"), Allow, false),
        // Unresolvable variables in command position, eval, unbalanced quotes: never allowed.
        ("Bash(*)", "Bash", bash("$CMD arg"), Allow, true),
        ("Bash(echo *)", "Bash", bash("$CMD arg"), Allow, false),
        (
            "Bash(echo *)",
            "Bash",
            bash("echo ok && ${X} arg"),
            Allow,
            false,
        ),
        ("Bash(eval *)", "Bash", bash("eval echo hi"), Allow, false),
        (
            "Bash(echo *)",
            "Bash",
            bash("echo 'unterminated"),
            Allow,
            false,
        ),
        (
            "Bash(echo *)",
            "Bash",
            bash("echo 'unterminated"),
            Deny,
            true,
        ),
        ("Bash(echo *)", "Bash", bash("echo $HOME"), Allow, true),
        // `find -exec` / `-delete` are not auto-allowed by `find:*`.
        ("Bash(find:*)", "Bash", bash("find . -name x"), Allow, true),
        (
            "Bash(find:*)",
            "Bash",
            bash("find . -name x -delete"),
            Allow,
            false,
        ),
        (
            "Bash(find:*)",
            "Bash",
            bash("find . -exec rm {} \\;"),
            Allow,
            false,
        ),
        (
            "Bash(rm *)",
            "Bash",
            bash("find . -exec rm {} \\;"),
            Deny,
            true,
        ),
        // Output redirections are writes: a Bash allow rule alone does not cover them.
        (
            "Bash(echo *)",
            "Bash",
            bash("echo hi > out.txt"),
            Allow,
            false,
        ),
        (
            "Bash(echo *)",
            "Bash",
            bash("echo hi > /dev/null 2>&1"),
            Allow,
            true,
        ),
        // File anchors.
        (
            "Read(//etc/passwd)",
            "Read",
            file("/etc/passwd"),
            Deny,
            true,
        ),
        (
            "Read(//etc/*)",
            "Read",
            file("/etc/ssh/sshd_config"),
            Allow,
            false,
        ),
        // A deny pattern that names a directory covers what is inside it.
        (
            "Read(//etc/*)",
            "Read",
            file("/etc/ssh/sshd_config"),
            Deny,
            true,
        ),
        (
            "Read(//etc/**)",
            "Read",
            file("/etc/ssh/sshd_config"),
            Deny,
            true,
        ),
        (
            "Read(~/.ssh/**)",
            "Read",
            file("/home/u/.ssh/id_ed25519"),
            Deny,
            true,
        ),
        (
            "Read(~/.ssh/**)",
            "Read",
            file("/proj/app/.ssh/id_ed25519"),
            Deny,
            false,
        ),
        (
            "Edit(/src/**)",
            "Edit",
            file("/proj/src/main.rs"),
            Allow,
            true,
        ),
        (
            "Edit(/src/**)",
            "Edit",
            file("/proj/app/src/main.rs"),
            Allow,
            false,
        ),
        (
            "Edit(/proj/app/src/*)",
            "Edit",
            file("/proj/app/src/a.txt"),
            Condition,
            false,
        ),
        ("Read(./.env)", "Read", file("/proj/app/.env"), Deny, true),
        (
            "Read(./.env)",
            "Read",
            file("/proj/app/sub/.env"),
            Deny,
            false,
        ),
        (
            "Read(docs/*.md)",
            "Read",
            file("/proj/app/docs/a.md"),
            Allow,
            true,
        ),
        (
            "Read(docs/*.md)",
            "Read",
            file("/proj/app/docs/x/a.md"),
            Allow,
            false,
        ),
        (
            "Read(docs/**)",
            "Read",
            file("/proj/app/docs/x/a.md"),
            Allow,
            true,
        ),
        // A pattern without `/` matches at any depth (gitignore).
        (
            "Read(.env)",
            "Read",
            file("/proj/app/.env"),
            Condition,
            true,
        ),
        ("Read(.env)", "Read", file("/proj/app/a/b/.env"), Deny, true),
        ("Read(.env)", "Read", file("/proj/other/.env"), Deny, false),
        (
            "Write(*.md)",
            "Write",
            file("/proj/app/a/b/README.md"),
            Condition,
            true,
        ),
        (
            "Read(secrets)",
            "Read",
            file("/proj/app/x/secrets/key.pem"),
            Deny,
            true,
        ),
        // `Edit(src/**)` vs `Edit(**/src/**)`.
        (
            "Edit(src/**)",
            "Edit",
            file("/proj/app/src/a.txt"),
            Condition,
            true,
        ),
        (
            "Edit(**/src/**)",
            "Edit",
            file("/proj/app/src/a.txt"),
            Condition,
            true,
        ),
        (
            "Edit(**/src/**)",
            "Edit",
            file("/proj/app/lib/src/a.txt"),
            Condition,
            true,
        ),
        // Single-segment `dir/**`: cwd-only in `if`/allow, any depth for deny/ask.
        (
            "Edit(src/**)",
            "Edit",
            file("/proj/app/lib/src/a.txt"),
            Condition,
            false,
        ),
        (
            "Edit(src/**)",
            "Edit",
            file("/proj/app/lib/src/a.txt"),
            Allow,
            false,
        ),
        (
            "Edit(src/**)",
            "Edit",
            file("/proj/app/lib/src/a.txt"),
            Deny,
            true,
        ),
        (
            "Edit(src/**)",
            "Edit",
            file("/proj/app/lib/src/a.txt"),
            Ask,
            true,
        ),
        // Paths are normalised before matching.
        (
            "Read(./.env)",
            "Read",
            file("/proj/app/x/../.env"),
            Deny,
            true,
        ),
        (
            "Edit(/src/**)",
            "Edit",
            file("/proj/app/../src/./a.rs"),
            Allow,
            true,
        ),
        // Tool families: Edit governs Write/NotebookEdit; Read governs Grep/Glob (permission rules only).
        (
            "Edit(src/**)",
            "Write",
            file("/proj/app/src/new.rs"),
            Allow,
            true,
        ),
        (
            "Edit(src/**)",
            "NotebookEdit",
            json!({"notebook_path": "/proj/app/src/n.ipynb"}),
            Deny,
            true,
        ),
        (
            "Edit(src/**)",
            "Write",
            file("/proj/app/src/new.rs"),
            Condition,
            false,
        ),
        (
            "Read(secrets/**)",
            "Grep",
            json!({"pattern": "k", "path": "/proj/app/secrets"}),
            Deny,
            true,
        ),
        (
            "Read(secrets/**)",
            "Glob",
            json!({"pattern": "*", "path": "/proj/app/secrets/x"}),
            Deny,
            true,
        ),
        (
            "Read(secrets/**)",
            "Glob",
            json!({"pattern": "secrets/**/*.pem"}),
            Deny,
            true,
        ),
        (
            "Read(//etc/**)",
            "Glob",
            json!({"pattern": "/etc/**/*.conf"}),
            Deny,
            true,
        ),
        (
            "Read(//etc/**)",
            "Glob",
            json!({"pattern": "**/*.conf"}),
            Deny,
            false,
        ),
        // WebFetch domains.
        (
            "WebFetch(domain:example.com)",
            "WebFetch",
            json!({"url": "https://example.com/a?b"}),
            Allow,
            true,
        ),
        (
            "WebFetch(domain:example.com)",
            "WebFetch",
            json!({"url": "https://EXAMPLE.com:8443/"}),
            Allow,
            true,
        ),
        (
            "WebFetch(domain:example.com)",
            "WebFetch",
            json!({"url": "https://example.com.evil.io/"}),
            Allow,
            false,
        ),
        (
            "WebFetch(domain:example.com)",
            "WebFetch",
            json!({"url": "https://example.com@evil.io/"}),
            Allow,
            false,
        ),
        (
            "WebFetch(domain:example.com)",
            "WebFetch",
            json!({"url": "https://api.example.com/"}),
            Allow,
            false,
        ),
        (
            "WebFetch(domain:example.com)",
            "WebFetch",
            json!({"url": "https://api.example.com/"}),
            Deny,
            true,
        ),
        (
            "WebFetch(domain:*.example.com)",
            "WebFetch",
            json!({"url": "https://api.example.com/"}),
            Allow,
            true,
        ),
        // MCP forms.
        (
            "mcp__github",
            "mcp__github__create_issue",
            json!({}),
            Allow,
            true,
        ),
        (
            "mcp__github",
            "mcp__githubx__create_issue",
            json!({}),
            Allow,
            false,
        ),
        ("mcp__github__*", "mcp__github__list", json!({}), Deny, true),
        (
            "mcp__github__create_issue",
            "mcp__github__create_issue",
            json!({}),
            Allow,
            true,
        ),
        (
            "mcp__github__create_issue",
            "mcp__github__delete_repo",
            json!({}),
            Allow,
            false,
        ),
        // Aliases: former names in rules and in calls.
        (
            "Task",
            "Agent",
            json!({"subagent_type": "Explore"}),
            Condition,
            true,
        ),
        ("Agent", "Task", json!({}), Allow, true),
        (
            "Task(Explore)",
            "Agent",
            json!({"subagent_type": "Explore"}),
            Allow,
            true,
        ),
        (
            "Agent(Explore)",
            "Agent",
            json!({"subagent_type": "Plan"}),
            Allow,
            false,
        ),
        ("KillShell", "TaskStop", json!({}), Deny, true),
        // Escaped parentheses in content.
        (
            "Bash(echo \\(hi\\))",
            "Bash",
            bash("echo (hi)"),
            Condition,
            true,
        ),
        (
            "Bash(echo \\(hi\\))",
            "Bash",
            bash("echo hi"),
            Condition,
            false,
        ),
    ]
}

#[test]
fn rule_examples() {
    let mut failures = Vec::new();
    for (i, (rule, tool, input, purpose, expected)) in rule_table().into_iter().enumerate() {
        let parsed = Rule::parse(rule).unwrap_or_else(|e| panic!("row {i}: {e}"));
        let got = parsed.matches(tool, &input, &ctx(), purpose);
        if got != expected {
            failures.push(format!(
                "row {i}: {rule} on {tool} {input} as {purpose:?}: got {got}, want {expected}"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn rule_parsing() {
    let r = Rule::parse("Task(Explore)").unwrap();
    assert_eq!(
        (r.tool.as_str(), r.content.as_deref()),
        ("Agent", Some("Explore"))
    );
    for whole in ["Bash", "Bash()", "Bash(*)", " Bash "] {
        assert_eq!(Rule::parse(whole).unwrap().content, None, "{whole}");
    }
    assert_eq!(
        Rule::parse("Bash(echo \\(x\\))")
            .unwrap()
            .content
            .as_deref(),
        Some("echo (x)")
    );
    for bad in [
        "",
        "Bash(ls",
        "(ls)",
        "Bash(ls) extra",
        "Ba sh",
        "Bash*",
        "WebFetch(https://x)",
        "mcp__s(x)",
    ] {
        let err = Rule::parse(bad).expect_err(bad);
        assert_eq!(err.rule, bad.trim(), "{err}");
        assert!(
            err.to_string().contains(&format!("`{}`", bad.trim())),
            "{err}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Policy.

fn paths() -> PolicyPaths {
    PolicyPaths {
        cwd: PathBuf::from(CWD),
        project_dir: PathBuf::from(PROJECT),
        home: PathBuf::from(HOME),
        additional_dirs: Vec::new(),
        readable_dirs: Vec::new(),
    }
}

fn entries(texts: &[&str]) -> Vec<RuleEntry> {
    texts
        .iter()
        .enumerate()
        .map(|(i, t)| {
            RuleEntry::new(
                *t,
                SourceKind::User,
                Location {
                    file: "/home/u/.claude/settings.json".into(),
                    line: i as u32 + 3,
                    col: 7,
                },
            )
        })
        .collect()
}

fn policy(
    mode: PermissionMode,
    allow: &[&str],
    ask: &[&str],
    deny: &[&str],
) -> (PermissionPolicy, Vec<String>) {
    let settings = PermissionSettings {
        allow: entries(allow),
        ask: entries(ask),
        deny: entries(deny),
        ..PermissionSettings::default()
    };
    PermissionPolicy::from_settings(&settings, mode, &[], &[], paths())
}

/// The outcome kind, for table comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum K {
    Allow,
    Ask,
    Deny,
}

fn kind(v: &Verdict) -> K {
    match v {
        Verdict::Allow => K::Allow,
        Verdict::Ask { .. } => K::Ask,
        Verdict::Deny { .. } => K::Deny,
        Verdict::Defer { .. } => panic!("unexpected defer"),
    }
}

#[test]
fn mode_by_tier() {
    let calls: [(&str, Value); 6] = [
        ("Read", file("/proj/app/a.txt")),
        ("Write", file("/proj/app/a.txt")),
        ("Edit", file("/proj/app/a.txt")),
        // Not a read-only line (those run without asking; see tests::read_only).
        ("Bash", bash("npm test")),
        ("Grep", json!({"pattern": "x"})),
        ("mcp__srv__tool", json!({})),
    ];
    use K::{Allow as A, Ask as Q, Deny as D};
    // Columns: Read, Write, Edit, Bash, Grep, unknown.
    let table = [
        (PermissionMode::Default, [A, Q, Q, Q, A, Q]),
        (PermissionMode::AcceptEdits, [A, A, A, Q, A, Q]),
        (PermissionMode::Plan, [A, D, D, D, A, D]),
        (PermissionMode::BypassPermissions, [A, A, A, A, A, A]),
        (PermissionMode::DontAsk, [A, D, D, D, A, D]),
    ];
    let mut failures = Vec::new();
    for (mode, want) in table {
        let (p, warnings) = policy(mode, &[], &[], &[]);
        assert!(warnings.is_empty());
        for ((tool, input), want) in calls.iter().zip(want) {
            let got = kind(&p.evaluate(tool, input, None));
            if got != want {
                failures.push(format!("{mode:?} × {tool}: got {got:?}, want {want:?}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn deny_wins_in_every_mode_and_allow_rules_pass() {
    for mode in [
        PermissionMode::Default,
        PermissionMode::AcceptEdits,
        PermissionMode::Plan,
        PermissionMode::BypassPermissions,
        PermissionMode::DontAsk,
    ] {
        let (p, _) = policy(
            mode,
            &["Bash(echo *)", "Read"],
            &[],
            &["Bash(echo hi)", "Read(./.env)"],
        );
        assert_eq!(
            p.evaluate("Bash", &bash("echo hi"), None),
            Verdict::Deny {
                message: "Permission to use Bash with command echo hi has been denied.".into()
            },
            "{mode:?}"
        );
        assert_eq!(
            p.evaluate("Read", &file("/proj/app/.env"), None),
            Verdict::Deny {
                message: "File is in a directory that is denied by your permission settings."
                    .into()
            },
            "{mode:?}"
        );
    }
    let (p, _) = policy(
        PermissionMode::Default,
        &["Bash(echo *)", "Edit(src/**)"],
        &[],
        &[],
    );
    assert_eq!(
        p.evaluate("Bash", &bash("echo a && echo b"), None),
        Verdict::Allow
    );
    assert_eq!(
        p.evaluate("Write", &file("/proj/app/src/x.rs"), None),
        Verdict::Allow
    );
    assert_eq!(
        kind(&p.evaluate("Write", &file("/proj/app/lib/x.rs"), None)),
        K::Ask
    );
    assert_eq!(
        kind(&p.evaluate("Bash", &bash("echo a && rm b"), None)),
        K::Ask
    );
}

fn hook_allow() -> HookAnswer {
    HookAnswer::Allow
}

#[test]
fn hooks_and_rules() {
    let ask_hook = HookAnswer::Ask {
        reason: Some("HOOK-ASK-REASON".into()),
    };
    // Deny rule beats a hook allow.
    let (p, _) = policy(PermissionMode::Default, &[], &[], &["Bash(echo hi)"]);
    assert_eq!(
        p.evaluate("Bash", &bash("echo hi"), Some(&hook_allow())),
        Verdict::Deny {
            message: "Permission to use Bash with command echo hi has been denied.".into()
        }
    );
    // Ask rule + hook allow → Ask (also in bypassPermissions).
    for mode in [PermissionMode::Default, PermissionMode::BypassPermissions] {
        let (p, _) = policy(mode, &[], &["Bash(git push:*)"], &[]);
        let v = p.evaluate("Bash", &bash("git push origin"), Some(&hook_allow()));
        assert_eq!(
            v,
            Verdict::Ask {
                reason: "The permission rule `Bash(git push:*)` requires approval for this call"
                    .into(),
                cause: AskCause::AskRule("Bash(git push:*)".into()),
            }
        );
    }
    // Hook ask + allow rule → Ask, with the hook's reason; headless shows the reason verbatim.
    let (p, _) = policy(PermissionMode::Default, &["Bash(ls)"], &[], &[]);
    let v = p.evaluate("Bash", &bash("ls"), Some(&ask_hook));
    let Verdict::Ask { reason, cause } = &v else {
        panic!("{v:?}")
    };
    assert_eq!(
        (reason.as_str(), cause),
        ("HOOK-ASK-REASON", &AskCause::Hook)
    );
    assert_eq!(headless_denial("Bash", reason, cause), "HOOK-ASK-REASON");
    // Hook ask in bypassPermissions still asks.
    let (p, _) = policy(PermissionMode::BypassPermissions, &[], &[], &[]);
    assert_eq!(
        kind(&p.evaluate("Bash", &bash("ls"), Some(&ask_hook))),
        K::Ask
    );
    // Hook allow + no rule on Bash → Allow (it satisfies the would-prompt case).
    let (p, _) = policy(PermissionMode::Default, &[], &[], &[]);
    assert_eq!(
        p.evaluate("Bash", &bash("make"), Some(&hook_allow())),
        Verdict::Allow
    );
    assert_eq!(
        p.evaluate("Bash", &bash("$CMD"), Some(&hook_allow())),
        Verdict::Allow
    );
    // Hook deny and defer.
    let deny = HookAnswer::Deny {
        message: "PreToolUse:Bash hook error: r".into(),
    };
    assert_eq!(
        p.evaluate("Bash", &bash("ls"), Some(&deny)),
        Verdict::Deny {
            message: "PreToolUse:Bash hook error: r".into()
        }
    );
    let defer = HookAnswer::Defer { reason: None };
    assert_eq!(
        p.evaluate("Bash", &bash("ls"), Some(&defer)),
        Verdict::Defer { reason: None }
    );
    // dontAsk turns a hook ask into a denial.
    let (p, _) = policy(PermissionMode::DontAsk, &[], &[], &[]);
    assert_eq!(
        kind(&p.evaluate("Bash", &bash("ls"), Some(&ask_hook))),
        K::Deny
    );
}

#[test]
fn updated_input_is_rechecked_against_deny_rules() {
    let (p, _) = policy(
        PermissionMode::Default,
        &["Bash"],
        &[],
        &["Bash(rm *)", "Edit(.env)"],
    );
    assert_eq!(p.check_deny("Bash", &bash("ls")), None);
    assert_eq!(
        p.check_deny("Bash", &bash("ls && sudo rm -rf /")),
        Some("Permission to use Bash with command ls && sudo rm -rf / has been denied.".into())
    );
    assert_eq!(
        p.check_deny("Write", &file("/proj/app/conf/.env")),
        Some("File is in a directory that is denied by your permission settings.".into())
    );
    // A Bash redirection into a denied file is a denied edit.
    assert_eq!(
        p.check_deny("Bash", &bash("echo X=1 >> .env")),
        Some("File is in a directory that is denied by your permission settings.".into())
    );
}

#[test]
fn unchecked_bash_is_asked_with_the_reason() {
    let (p, _) = policy(PermissionMode::Default, &["Bash(echo *)"], &[], &[]);
    let v = p.evaluate("Bash", &bash("echo $(date) && $RUN"), None);
    assert_eq!(
        v,
        Verdict::Ask {
            reason: "A variable in this command can't be checked before it runs".into(),
            cause: AskCause::Unchecked,
        }
    );
    let Verdict::Ask { reason, cause } = &v else {
        unreachable!()
    };
    assert!(headless_denial("Bash", reason, cause).starts_with(
        "Permission to use Bash was not granted: A variable in this command can't be checked before it runs."
    ));
    // bypassPermissions runs it (no prompts), dontAsk refuses it.
    let (p, _) = policy(PermissionMode::BypassPermissions, &[], &[], &[]);
    assert_eq!(p.evaluate("Bash", &bash("$RUN"), None), Verdict::Allow);
    let (p, _) = policy(PermissionMode::DontAsk, &["Bash(echo *)"], &[], &[]);
    assert_eq!(kind(&p.evaluate("Bash", &bash("$RUN"), None)), K::Deny);
    // Dangerous env prefixes are not skipped silently.
    let (p, _) = policy(PermissionMode::Default, &["Bash(npm test)"], &[], &[]);
    assert_eq!(
        p.evaluate("Bash", &bash("NODE_ENV=ci npm test"), None),
        Verdict::Allow
    );
    assert_eq!(
        kind(&p.evaluate("Bash", &bash("LD_PRELOAD=/tmp/x.so npm test"), None)),
        K::Ask
    );
}

#[test]
fn redirections_need_edit_permission() {
    let (p, _) = policy(PermissionMode::Default, &["Bash(echo *)"], &[], &[]);
    assert_eq!(
        kind(&p.evaluate("Bash", &bash("echo hi > out.txt"), None)),
        K::Ask
    );
    let (p, _) = policy(
        PermissionMode::Default,
        &["Bash(echo *)", "Edit(out.txt)"],
        &[],
        &[],
    );
    assert_eq!(
        p.evaluate("Bash", &bash("echo hi > out.txt"), None),
        Verdict::Allow
    );
    let (p, _) = policy(PermissionMode::AcceptEdits, &["Bash(echo *)"], &[], &[]);
    assert_eq!(
        p.evaluate("Bash", &bash("echo hi > out.txt"), None),
        Verdict::Allow
    );
    assert_eq!(
        kind(&p.evaluate("Bash", &bash("echo hi > /etc/motd"), None)),
        K::Ask
    );
}

#[test]
fn accept_edits_stays_inside_working_dirs() {
    let (p, _) = policy(PermissionMode::AcceptEdits, &[], &[], &[]);
    assert_eq!(
        p.evaluate("Edit", &file("/proj/lib/a.rs"), None),
        Verdict::Allow
    );
    let v = p.evaluate("Write", &file("/etc/cron.d/x"), None);
    assert_eq!(kind(&v), K::Ask, "{v:?}");
    let settings = PermissionSettings {
        additional_directories: vec!["~/shared".into()],
        ..PermissionSettings::default()
    };
    let (p, _) =
        PermissionPolicy::from_settings(&settings, PermissionMode::AcceptEdits, &[], &[], paths());
    assert_eq!(
        p.evaluate("Write", &file("/home/u/shared/n.txt"), None),
        Verdict::Allow
    );
}

#[test]
fn unparsable_rules_fail_closed() {
    let (p, warnings) = policy(
        PermissionMode::BypassPermissions,
        &["Bash(ls"],
        &["Read(x"],
        &["Bash(rm -rf"],
    );
    assert_eq!(warnings.len(), 3, "{warnings:?}");
    assert!(warnings[2].starts_with(
        "/home/u/.claude/settings.json:3:7: warning: invalid permission rule `Bash(rm -rf`"
    ));
    assert!(
        warnings[2].ends_with("rein denies every Bash call instead"),
        "{}",
        warnings[2]
    );
    let v = p.evaluate("Bash", &bash("ls"), Some(&hook_allow()));
    let Verdict::Deny { message } = v else {
        panic!("{v:?}")
    };
    assert!(message.contains("`Bash(rm -rf`"), "{message}");
    assert_eq!(
        kind(&p.evaluate("Read", &file("/proj/app/a"), None)),
        K::Ask
    );
    // Other tools are unaffected.
    assert_eq!(
        p.evaluate("Write", &file("/proj/app/a"), None),
        Verdict::Allow
    );
    // A rule whose tool part cannot be read covers every tool.
    let (p, _) = policy(PermissionMode::BypassPermissions, &[], &[], &["(oops"]);
    assert_eq!(
        kind(&p.evaluate("Write", &file("/proj/app/a"), None)),
        K::Deny
    );
    // An unparsable allow rule allows nothing.
    let (p, _) = policy(PermissionMode::Default, &["Bash(npm test"], &[], &[]);
    assert_eq!(kind(&p.evaluate("Bash", &bash("npm test"), None)), K::Ask);
}

#[test]
fn cli_rule_lists() {
    assert_eq!(
        split_tool_list("Bash(git log:*) Read,Edit(src/**),  WebFetch(domain:a.b)"),
        vec![
            "Bash(git log:*)",
            "Read",
            "Edit(src/**)",
            "WebFetch(domain:a.b)"
        ]
    );
    let (p, _) = PermissionPolicy::from_settings(
        &PermissionSettings::default(),
        PermissionMode::Default,
        &["Bash(echo *)".to_string()],
        &["Bash(echo secret*)".to_string()],
        paths(),
    );
    assert_eq!(
        p.evaluate("Bash", &bash("echo hi && echo there"), None),
        Verdict::Allow
    );
    assert_eq!(
        kind(&p.evaluate("Bash", &bash("echo secret"), None)),
        K::Deny
    );
}

#[test]
fn session_approvals() {
    let (mut p, _) = policy(PermissionMode::Default, &[], &[], &["Bash(rm *)"]);
    assert_eq!(
        kind(&p.evaluate("Bash", &bash("make test && make *lint"), None)),
        K::Ask
    );
    p.remember_session_allow("Bash", &bash("make test && make *lint"));
    assert_eq!(
        p.evaluate("Bash", &bash("make test && make *lint"), None),
        Verdict::Allow
    );
    assert_eq!(p.evaluate("Bash", &bash("make test"), None), Verdict::Allow);
    // The remembered `*` is literal, not a wildcard.
    assert_eq!(kind(&p.evaluate("Bash", &bash("make xlint"), None)), K::Ask);
    // Deny rules still win over a remembered approval.
    p.remember_session_allow("Bash", &bash("rm -rf build"));
    assert_eq!(
        kind(&p.evaluate("Bash", &bash("rm -rf build"), None)),
        K::Deny
    );
    // Files: exactly that file.
    p.remember_session_allow("Write", &file("/proj/app/[a].txt"));
    assert_eq!(
        p.evaluate("Edit", &file("/proj/app/[a].txt"), None),
        Verdict::Allow
    );
    assert_eq!(
        kind(&p.evaluate("Edit", &file("/proj/app/a.txt"), None)),
        K::Ask
    );
    // Other tools: the whole tool.
    p.remember_session_allow("WebFetch", &json!({"url": "https://a.b/"}));
    assert_eq!(
        p.evaluate("WebFetch", &json!({"url": "https://c.d/"}), None),
        Verdict::Allow
    );
}

#[test]
fn mode_resolution() {
    let with_mode = |m: &str, s: SourceKind| PermissionSettings {
        default_mode: Some((m.to_string(), s)),
        ..PermissionSettings::default()
    };
    let none = PermissionSettings::default();
    assert_eq!(
        resolve_mode(true, Some("plan"), &none).unwrap().0,
        PermissionMode::BypassPermissions
    );
    assert_eq!(
        resolve_mode(false, Some("manual"), &none).unwrap().0,
        PermissionMode::Default
    );
    assert!(resolve_mode(false, Some("yolo"), &none).is_err());
    let (m, w) = resolve_mode(false, Some("auto"), &none).unwrap();
    assert_eq!(m, PermissionMode::Default);
    assert_eq!(w.len(), 1);
    assert_eq!(
        resolve_mode(false, None, &with_mode("plan", SourceKind::Project))
            .unwrap()
            .0,
        PermissionMode::Plan
    );
    for escalating in ["bypassPermissions", "acceptEdits", "auto"] {
        let (m, w) =
            resolve_mode(false, None, &with_mode(escalating, SourceKind::Project)).unwrap();
        assert_eq!(m, PermissionMode::Default, "{escalating}");
        assert!(w[0].contains("ignoring permissions.defaultMode"), "{w:?}");
    }
    assert_eq!(
        resolve_mode(false, None, &with_mode("acceptEdits", SourceKind::Local))
            .unwrap()
            .0,
        PermissionMode::AcceptEdits
    );
    let (m, w) = resolve_mode(false, None, &with_mode("nonsense", SourceKind::User)).unwrap();
    assert_eq!((m, w.len()), (PermissionMode::Default, 1));
    assert_eq!(
        resolve_mode(false, None, &none).unwrap().0,
        PermissionMode::Default
    );
}

#[test]
fn accept_edits_runs_simple_filesystem_commands_inside_working_dirs() {
    let (p, _) = policy(PermissionMode::AcceptEdits, &[], &[], &[]);
    assert_eq!(
        p.evaluate("Bash", &bash("mkdir -p out && touch out/c.txt"), None),
        Verdict::Allow
    );
    for outside in [
        "rm -rf /",
        "touch ~/x",
        "cp a ../../etc/x",
        "touch $F",
        "mv a b && ls",
        "touch a > /etc/x",
    ] {
        assert_eq!(
            kind(&p.evaluate("Bash", &bash(outside), None)),
            K::Ask,
            "{outside}"
        );
    }
    let (p, _) = policy(PermissionMode::Default, &[], &[], &[]);
    assert_eq!(
        kind(&p.evaluate("Bash", &bash("touch c.txt"), None)),
        K::Ask
    );
}

#[test]
fn permission_suggestions_and_updates() {
    let (mut p, _) = policy(PermissionMode::Default, &["Bash(ls *)"], &[], &[]);
    // Claude Code's suggestion for `touch c.txt` (golden stdin-PermissionRequest-Bash.json).
    assert_eq!(
        Value::Array(p.permission_suggestions("Bash", &bash("touch c.txt"))),
        json!([
            {"type": "addDirectories", "directories": [CWD], "destination": "session"},
            {"type": "setMode", "mode": "acceptEdits", "destination": "session"}
        ])
    );
    assert_eq!(
        Value::Array(p.permission_suggestions("Bash", &bash("ls && npm test"))),
        json!([{"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "npm test"}],
                "behavior": "allow", "destination": "localSettings"}])
    );
    assert!(p.permission_suggestions("Bash", &bash("$X")).is_empty());
    // Applying updates (PermissionRequest `updatedPermissions`).
    p.apply_update(
        &json!({"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "npm test"}],
                           "behavior": "allow", "destination": "session"}),
    )
    .unwrap();
    assert_eq!(
        p.evaluate("Bash", &bash("ls && npm test"), None),
        Verdict::Allow
    );
    p.apply_update(
        &json!({"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "npm *"}],
                           "behavior": "deny", "destination": "session"}),
    )
    .unwrap();
    assert_eq!(kind(&p.evaluate("Bash", &bash("npm test"), None)), K::Deny);
    p.apply_update(
        &json!({"type": "removeRules", "rules": [{"toolName": "Bash", "ruleContent": "npm *"}],
                           "behavior": "deny", "destination": "session"}),
    )
    .unwrap();
    assert_eq!(p.evaluate("Bash", &bash("npm test"), None), Verdict::Allow);
    p.apply_update(&json!({"type": "setMode", "mode": "acceptEdits", "destination": "session"}))
        .unwrap();
    assert_eq!(p.mode(), PermissionMode::AcceptEdits);
    p.apply_update(
        &json!({"type": "addDirectories", "directories": ["/srv/data"], "destination": "session"}),
    )
    .unwrap();
    assert_eq!(
        p.evaluate("Write", &file("/srv/data/x"), None),
        Verdict::Allow
    );
    for bad in [
        json!({"type": "setMode", "mode": "yolo"}),
        json!({"type": "addRules", "rules": [{"toolName": "Bash(", "ruleContent": "x"}], "behavior": "allow"}),
        json!({"type": "addRules", "rules": [], "behavior": "maybe"}),
        json!({"type": "explode"}),
        json!("addRules"),
    ] {
        assert!(p.apply_update(&bad).is_err(), "{bad}");
    }
    assert_eq!(p.mode(), PermissionMode::AcceptEdits);
}

/// Fail-closed deny rules on lines whose command word is hidden, and the lines that must stay
/// precise (no false denial): (command, deny rule, denied?).
#[test]
fn hidden_commands_meet_deny_rules_and_visible_ones_stay_precise() {
    let table: &[(&str, &str, bool)] = &[
        ("c=rm; $c x", "Bash(rm:*)", true),
        ("$'\\x72m' x", "Bash(rm:*)", true),
        ("rm${IFS}x", "Bash(rm:*)", true),
        ("/bin/r? x", "Bash(rm:*)", true),
        ("{rm,x}", "Bash(rm:*)", true),
        ("git $(echo push) origin", "Bash(git push:*)", true),
        ("flock /tmp/l rm x", "Bash(rm:*)", true),
        ("strace -f -o /dev/null -- rm x", "Bash(rm:*)", true),
        ("flock /tmp/l -c 'rm x'", "Bash(rm:*)", true),
        ("unshare -r sh", "Bash(rm:*)", true),
        ("trap 'rm x' EXIT", "Bash(rm:*)", true),
        ("PAGER='rm x' git log", "Bash(rm:*)", true),
        ("PATH=/tmp/b ls", "Bash(rm:*)", true),
        // Precise: the hidden part cannot be what the rule names.
        ("echo $HOME", "Bash(rm:*)", false),
        ("rmdir $X", "Bash(rm:*)", false),
        ("git commit -m \"$(date)\"", "Bash(git push:*)", false),
        ("[ -f x ] && echo y", "Bash(rm:*)", false),
        ("LANG=C ls *.txt", "Bash(rm:*)", false),
        ("sh build.sh", "Bash(rm:*)", false),
        (
            "git commit -m \"$(cat <<'EOF'\nFix the parser\n\nDetails.\nEOF\n)\"",
            "Bash(rm:*)",
            false,
        ),
        ("for f in *.txt; do echo \"$f\"; done", "Bash(rm:*)", false),
        ("if [ -f x ]; then cat x; fi", "Bash(rm:*)", false),
        (
            "npm test -- --watch=false 2>&1 | tail -n 20",
            "Bash(rm:*)",
            false,
        ),
    ];
    let mut failures = Vec::new();
    for (cmd, rule, want) in table {
        let (p, _) = policy(PermissionMode::BypassPermissions, &[], &[], &[rule]);
        let got = p.check_deny("Bash", &bash(cmd)).is_some();
        if got != *want {
            failures.push(format!(
                "{cmd:?} under deny {rule}: denied {got}, want {want}"
            ));
        }
        let (p, _) = policy(PermissionMode::BypassPermissions, &[], &[rule], &[]);
        let asked = matches!(p.evaluate("Bash", &bash(cmd), None), Verdict::Ask { .. });
        if asked != *want {
            failures.push(format!(
                "{cmd:?} under ask {rule}: asked {asked}, want {want}"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn env_prefixes_reach_allow_rules_only_from_the_safe_list() {
    let (p, _) = policy(PermissionMode::Default, &["Bash(git status:*)"], &[], &[]);
    for (cmd, allowed) in [
        ("git status", true),
        ("LANG=C git status", true),
        ("NO_COLOR=1 TERM=dumb git status", true),
        ("LANG=../../x git status", false),
        ("GIT_CONFIG_COUNT=1 git status", false),
        ("GIT_DIR=/tmp/x git status", false),
        ("HOME=/tmp/h git status", false),
        ("npm_config_script_shell=/tmp/x git status", false),
        ("BASH_ENV=/tmp/x git status", false),
        ("LD_PRELOAD=/tmp/x.so git status", false),
        ("FOO=1 git status", false),
        ("env GIT_DIR=/tmp/x git status", false),
    ] {
        let got = p.evaluate("Bash", &bash(cmd), None) == Verdict::Allow;
        assert_eq!(got, allowed, "{cmd}");
    }
}

#[test]
fn accept_edits_protected_places_are_judged_below_the_working_directory() {
    let settings = PermissionSettings::default();
    let root = "/nonexistent-i14/home/u/.claude/work/proj";
    let paths = PolicyPaths {
        cwd: PathBuf::from(root),
        project_dir: PathBuf::from(root),
        home: PathBuf::from("/nonexistent-i14/home/u"),
        additional_dirs: Vec::new(),
        readable_dirs: Vec::new(),
    };
    let (p, _) =
        PermissionPolicy::from_settings(&settings, PermissionMode::AcceptEdits, &[], &[], paths);
    let write = |rel: &str| p.evaluate("Write", &file(&format!("{root}/{rel}")), None);
    assert_eq!(write("src/x.rs"), Verdict::Allow);
    for protected in [
        ".git/config",
        ".claude/settings.json",
        ".vscode/tasks.json",
        "a/.bashrc",
    ] {
        assert!(
            matches!(write(protected), Verdict::Ask { .. }),
            "{protected}: {:?}",
            write(protected)
        );
    }
}

/// acceptEdits reads a file command's options instead of skipping them: a target directory
/// inside the project is still auto-allowed in each spelling, one outside asks in each; an
/// operand brace or glob expansion could carry elsewhere asks; a copy landing on a protected
/// name asks (issue 24, class 9).
#[test]
fn accept_edits_judges_every_spelling_of_a_target() {
    let settings = PermissionSettings::default();
    let root = "/nonexistent-i24/proj";
    let paths = PolicyPaths {
        cwd: PathBuf::from(root),
        project_dir: PathBuf::from(root),
        home: PathBuf::from("/nonexistent-i24/home"),
        additional_dirs: Vec::new(),
        readable_dirs: Vec::new(),
    };
    let (p, _) =
        PermissionPolicy::from_settings(&settings, PermissionMode::AcceptEdits, &[], &[], paths);
    let bash = |c: &str| p.evaluate("Bash", &json!({ "command": c }), None);
    for allowed in [
        "cp a.txt -t sub",
        "cp a.txt -tsub",
        "cp -rtsub a.txt",
        "cp --target-directory=sub a.txt",
        "cp --target-directory sub a.txt",
        "mv a.txt sub/",
        "mkdir -p -m 755 sub/dir",
        "rm -rf -- build",
        "touch -d 2020-01-01 sub/x",
    ] {
        assert_eq!(bash(allowed), Verdict::Allow, "{allowed}");
    }
    for asks in [
        "cp a.txt -t /elsewhere",
        "cp a.txt -t/elsewhere",
        "cp -rt/elsewhere a.txt",
        "cp --target-directory=/elsewhere a.txt",
        "cp --target-directory /elsewhere a.txt",
        "mv -t ../up a.txt",
        "cp --suffix=/x a.txt b.txt",
        "touch -r/etc/passwd x",
        "touch .{.,}/x",
        "mkdir {..,.}/d",
        "rm link*/x",
        "touch sub/x~/../../y",
        "cp src/.bashrc sub",
        "cp -t .git/hooks pre-commit",
    ] {
        assert!(
            matches!(bash(asks), Verdict::Ask { .. }),
            "{asks}: {:?}",
            bash(asks)
        );
    }
}

/// Plan mode lets the model write its plan file and nothing else, and no symlink carries that
/// one write elsewhere: a link at the plan file, or a linked folder on its path, is refused
/// (the victim the link points at is the thing protected).
#[test]
fn plan_mode_allows_the_plan_file_itself_and_no_link_to_elsewhere() {
    let root = tempfile::tempdir().unwrap();
    let real = std::fs::canonicalize(root.path()).unwrap();
    let session = real.join("session");
    std::fs::create_dir(&session).unwrap();
    let plan = session.join("plan.md");
    let write = |path: &Path| json!({"file_path": path.display().to_string(), "content": "x"});
    let (mut p, _) = policy(PermissionMode::Plan, &[], &[], &[]);
    assert_eq!(
        kind(&p.evaluate("Write", &write(&plan), None)),
        K::Deny,
        "no plan file set"
    );
    p.set_plan_file(Some(plan.clone()));
    assert_eq!(
        kind(&p.evaluate("Write", &write(&plan), None)),
        K::Allow,
        "not there yet"
    );
    std::fs::write(&plan, "# plan\n").unwrap();
    assert_eq!(
        kind(&p.evaluate("Edit", &write(&plan), None)),
        K::Allow,
        "a plain file"
    );
    assert_eq!(
        kind(&p.evaluate("Write", &write(&session.join("other.md")), None)),
        K::Deny
    );
    assert_eq!(
        kind(&p.evaluate("Bash", &bash("echo x > plan.md"), None)),
        K::Deny
    );

    // A link at the plan file.
    let victim = real.join("victim.txt");
    std::fs::write(&victim, "keep").unwrap();
    std::fs::remove_file(&plan).unwrap();
    std::os::unix::fs::symlink(&victim, &plan).unwrap();
    assert_eq!(kind(&p.evaluate("Write", &write(&plan), None)), K::Deny);

    // A linked folder on the way.
    let elsewhere = real.join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    let linked = real.join("linked");
    std::os::unix::fs::symlink(&elsewhere, &linked).unwrap();
    let through = linked.join("plan.md");
    p.set_plan_file(Some(through.clone()));
    assert_eq!(kind(&p.evaluate("Write", &write(&through), None)), K::Deny);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
}

/// A Skill call that grants tools (its skill names `allowed-tools`) is approved as a command
/// is; other skills start at once; "always" for one is for that skill only.
#[test]
fn a_skill_that_grants_tools_is_approved_as_a_command_is() {
    let skill = |name: &str| json!({"skill": name});
    for (mode, allow, expected) in [
        (PermissionMode::Default, &[][..], K::Ask),
        (PermissionMode::AcceptEdits, &[][..], K::Ask),
        (PermissionMode::Default, &["Skill(ctx)"][..], K::Allow),
        (PermissionMode::Default, &["Skill(other)"][..], K::Ask),
        (PermissionMode::BypassPermissions, &[][..], K::Allow),
    ] {
        let (mut p, _) = policy(mode, allow, &[], &[]);
        p.set_granting_skills(vec!["ctx".to_string()]);
        assert_eq!(
            kind(&p.evaluate("Skill", &skill("ctx"), None)),
            expected,
            "{mode:?} {allow:?}"
        );
        assert_eq!(
            kind(&p.evaluate("Skill", &skill("/ctx"), None)),
            expected,
            "with a slash"
        );
        assert_eq!(kind(&p.evaluate("Skill", &skill("plain"), None)), K::Allow);
    }
    let (mut p, _) = policy(PermissionMode::DontAsk, &[], &[], &[]);
    p.set_granting_skills(vec!["ctx".to_string(), "two".to_string()]);
    assert_eq!(
        kind(&p.evaluate("Skill", &skill("ctx"), None)),
        K::Deny,
        "dontAsk"
    );
    let (mut p, _) = policy(PermissionMode::Default, &[], &[], &[]);
    p.set_granting_skills(vec!["ctx".to_string(), "two".to_string()]);
    p.remember_session_allow("Skill", &skill("ctx"));
    assert_eq!(kind(&p.evaluate("Skill", &skill("ctx"), None)), K::Allow);
    assert_eq!(
        kind(&p.evaluate("Skill", &skill("two"), None)),
        K::Ask,
        "only that skill"
    );
}

/// A deny rule for a skill refuses it however the model spells its name (`/deploy` runs the
/// skill `deploy`).
#[test]
fn a_skill_deny_rule_covers_the_name_with_a_slash() {
    let (p, _) = policy(
        PermissionMode::BypassPermissions,
        &[],
        &[],
        &["Skill(deploy)"],
    );
    for name in ["deploy", "/deploy"] {
        assert_eq!(
            kind(&p.evaluate("Skill", &json!({"skill": name}), None)),
            K::Deny,
            "{name}"
        );
    }
    assert_eq!(
        kind(&p.evaluate("Skill", &json!({"skill": "other"}), None)),
        K::Allow
    );
}

/// A line whose every part an allow rule covers or only reads runs without asking, as in
/// Claude Code 2.1.328 (fixture `bash_rule_and_read_only`); a part neither covers asks; a line
/// that changes directory, and dontAsk mode, get no such pass.
#[test]
fn a_line_of_ruled_and_reading_parts_is_allowed() {
    let (p, _) = policy(PermissionMode::Default, &["Bash(touch:*)"], &[], &[]);
    for (command, expected) in [
        ("touch a.txt && echo made", K::Allow),
        ("touch b.txt && cat notes.txt", K::Allow),
        ("touch d.txt; ls -la | wc -l", K::Allow),
        ("touch c.txt && rm keep.txt", K::Ask),
        ("touch e.txt && cat /etc/passwd", K::Ask),
        ("touch f.txt && echo x > out.txt", K::Ask),
        ("cd sub && touch g.txt && cat notes.txt", K::Ask),
    ] {
        assert_eq!(
            kind(&p.evaluate("Bash", &bash(command), None)),
            expected,
            "{command}"
        );
    }
    let (p, _) = policy(PermissionMode::DontAsk, &["Bash(touch:*)"], &[], &[]);
    assert_eq!(
        kind(&p.evaluate("Bash", &bash("touch a.txt && echo made"), None)),
        K::Deny,
        "dontAsk"
    );
    let (p, _) = policy(
        PermissionMode::Default,
        &["Bash(touch:*)"],
        &[],
        &["Read(**/notes.txt)"],
    );
    assert_ne!(
        kind(&p.evaluate("Bash", &bash("touch b.txt && cat notes.txt"), None)),
        K::Allow,
        "a file the rules deny reading is not read without asking"
    );
}
