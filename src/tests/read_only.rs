//! The read-only Bash lines that run without asking in default mode (`permissions::read_only`),
//! against the verdicts Claude Code 2.1.328 gave in `tests/fixtures/cc-2.1.328/read_only_bash`,
//! and the rules they must never get around.

use std::path::PathBuf;

use serde_json::json;

use crate::permissions::mode::PermissionMode;
use crate::permissions::policy::{PermissionPolicy, PolicyPaths, Verdict};
use crate::settings::schema::{Location, PermissionSettings, RuleEntry, SourceKind};

fn entries(texts: &[&str]) -> Vec<RuleEntry> {
    texts
        .iter()
        .map(|t| {
            RuleEntry::new(
                *t,
                SourceKind::Project,
                Location {
                    file: "/proj/.claude/settings.json".into(),
                    line: 1,
                    col: 1,
                },
            )
        })
        .collect()
}

fn policy(mode: PermissionMode, ask: &[&str], deny: &[&str]) -> PermissionPolicy {
    let settings = PermissionSettings {
        ask: entries(ask),
        deny: entries(deny),
        ..PermissionSettings::default()
    };
    let paths = PolicyPaths {
        cwd: PathBuf::from("/proj"),
        project_dir: PathBuf::from("/proj"),
        home: PathBuf::from("/home/u"),
        additional_dirs: Vec::new(),
        readable_dirs: Vec::new(),
    };
    PermissionPolicy::from_settings(&settings, mode, &[], &[], paths).0
}

fn allowed(p: &PermissionPolicy, command: &str) -> bool {
    matches!(
        p.evaluate("Bash", &json!({"command": command}), None),
        Verdict::Allow
    )
}

/// Every command of the fixture scenario, with Claude Code's verdict (`git log` failed there
/// for want of a commit, after it was allowed; `cat a.txt` was refused by a deny rule).
#[test]
fn verdicts_match_claude_codes() {
    let p = policy(PermissionMode::Default, &[], &["Bash(cat a.txt)"]);
    let runs = [
        "ls",
        "ls -la sub",
        "cat sub/b.txt",
        "git status",
        "git log --oneline -1",
        "pwd",
        "echo hi",
        "head -1 a.txt",
        "wc -l a.txt",
        "grep alpha a.txt",
        "ls | wc -l",
        "find . -name '*.txt'",
        "git diff",
        "sort a.txt",
        "which ls",
        "cd sub && ls",
    ];
    for command in runs {
        assert!(allowed(&p, command), "{command} should run without asking");
    }
    let asks = [
        "cat a.txt",
        "cat /etc/hostname",
        "echo hi > out.txt",
        "find . -delete",
        "git commit -m x",
        "cat sub/b.txt && rm a.txt",
        // tests/fixtures/cc-2.1.328/read_only_more: `uniq IN OUT` writes, so it asks.
        "uniq a.txt",
    ];
    for command in asks {
        assert!(
            !allowed(&p, command),
            "{command} must not run without asking"
        );
    }
}

/// What a reading command must never get around or get wrong: deny and ask rules, Read deny
/// rules on its paths, expansions, wrappers, options that write or run programs, paths
/// outside the working directories.
#[test]
fn never_gets_around_rules_or_runs_what_was_not_checked() {
    let p = policy(
        PermissionMode::Default,
        &["Bash(git status)"],
        &["Read(./secret/**)", "Bash(ls -R *)"],
    );
    for command in [
        "git status",
        "ls -R sub",
        "cat secret/key.txt",
        "grep x secret/key.txt",
        "cat $HOME/.ssh/id_rsa",
        "cat $(echo a.txt)",
        "sudo ls",
        "timeout 5 cat a.txt",
        "sort -o out.txt a.txt",
        "sort -oout.txt a.txt",
        "git -c core.pager=evil log",
        "git diff --output=x",
        "git diff --ext-diff",
        "rg --pre ./evil x",
        "find . -exec rm {} ;",
        "cat ../outside.txt",
        "cd .. && cat x",
        "ls /",
        "env ls",
        "cat a.txt >> b.txt",
    ] {
        assert!(
            !allowed(&p, command),
            "{command} must not run without asking"
        );
    }
    for command in [
        "cat a.txt",
        "grep -e alpha a.txt",
        "wc -c a.txt",
        "head -c 10 a.txt",
    ] {
        assert!(allowed(&p, command), "{command} should run");
    }
    // Other modes: plan still refuses changes; bypass allows anyway; deny rules hold in all.
    let bypass = policy(PermissionMode::BypassPermissions, &[], &["Bash(ls *)"]);
    assert!(!allowed(&bypass, "ls sub"));
}
