//! Unit tests of `settings::lint` (a child module of it, so they see its private items).

use super::*;

static NO_POLICY: crate::hooks::http::HttpHookPolicy = crate::hooks::http::HttpHookPolicy {
    allowed_urls: None,
    allowed_env_vars: None,
};

fn ctx() -> LintContext<'static> {
    LintContext {
        project_dir: Path::new("/p"),
        home: Path::new("/h"),
        settings_env: &[],
        http_policy: &NO_POLICY,
        mcp_servers: None,
    }
}

fn words(s: &str) -> Vec<String> {
    split_first_command(s, ctx())
        .unwrap()
        .into_iter()
        .map(|w| w.text)
        .collect()
}

#[test]
fn splits_the_first_command_and_expands_known_variables() {
    assert_eq!(
        words("\"$CLAUDE_PROJECT_DIR\"/hooks/a.sh arg && echo x"),
        ["/p/hooks/a.sh", "arg"]
    );
    assert_eq!(words("${CLAUDE_PROJECT_DIR}/x.py"), ["/p/x.py"]);
    assert_eq!(words("~/bin/x 'a b'"), ["/h/bin/x", "a b"]);
    assert_eq!(words("'$CLAUDE_PROJECT_DIR'/x"), ["$CLAUDE_PROJECT_DIR/x"]);
    assert!(split_first_command("echo 'open", ctx()).is_none());
    let w = split_first_command("$OTHER/x.sh", ctx()).unwrap();
    assert!(w[0].unresolved);
}

fn script(cmd: &str) -> Option<(String, Runner)> {
    let c = CommandHandler {
        command: cmd.to_string(),
        args: None,
        shell: None,
        is_async: false,
        async_rewake: false,
    };
    resolve_script(&c, ctx()).map(|s| (s.path.display().to_string(), s.runner))
}

#[test]
fn finds_the_script_a_command_runs() {
    assert_eq!(
        script("hooks/a.sh"),
        Some(("/p/hooks/a.sh".into(), Runner::Direct))
    );
    assert_eq!(
        script("python3 -u hooks/a.py --x"),
        Some((
            "/p/hooks/a.py".into(),
            Runner::Interpreter("python3".into())
        ))
    );
    assert_eq!(
        script("FOO=1 sh ./a.sh"),
        Some(("/p/a.sh".into(), Runner::Interpreter("sh".into())))
    );
    assert_eq!(
        script(". ~/x.sh"),
        Some(("/h/x.sh".into(), Runner::Interpreter(".".into())))
    );
    assert_eq!(
        script("jq -r . | node x.js"),
        None,
        "a PATH command with no script-like argument"
    );
    assert_eq!(script("bash -c 'echo hi'"), None);
    assert_eq!(script("echo hi"), None);
    assert_eq!(
        script("/usr/bin/env python3 /abs/t.py"),
        Some(("/abs/t.py".into(), Runner::Interpreter("python3".into())))
    );
}

#[test]
fn bashisms_are_found_with_their_line() {
    assert_eq!(
        find_bashism("#!/bin/sh\n# [[ in a comment\nif [[ -n x ]]; then :; fi\n"),
        Some((3, "`[[ … ]]`"))
    );
    assert_eq!(find_bashism("a=(1 2)\n").map(|x| x.0), Some(1));
    assert_eq!(find_bashism("[ \"$a\" == b ]\n").map(|x| x.0), Some(1));
    assert_eq!(find_bashism("cat <<<\"$x\"\n").map(|x| x.0), Some(1));
    assert_eq!(find_bashism("[ \"$a\" = b ] && . ./lib.sh\n"), None);
}

#[test]
fn exit_one_only_needs_every_nonzero_exit_to_be_one() {
    assert_eq!(exit_one_only("if x; then\n  exit 1\nfi\nexit 0\n"), Some(2));
    assert_eq!(exit_one_only("exit 1\nexit 2\n"), None);
    assert_eq!(exit_one_only("import sys\nsys.exit(1)\n"), Some(2));
    assert_eq!(exit_one_only("exit 0\n"), None);
    assert_eq!(
        exit_one_only("print('{\"permissionDecision\": \"deny\"}')\nsys.exit(1)\n"),
        None
    );
}

#[test]
fn seconds_format_without_noise() {
    assert_eq!(format_seconds(10.0), "10");
    assert_eq!(format_seconds(0.5), "0.5");
    assert_eq!(format_seconds(5.0), "5");
    assert_eq!(humanize(5000.0), "1.4 h");
    assert_eq!(humanize(1500.0), "25 min");
}
