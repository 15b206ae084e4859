//! rein as a library, through the public API only: the seed demo example, typed in-process hooks
//! registered on a running session, and matchers that are refused instead of silently ignored.

use std::path::PathBuf;
use std::process::Command;

use rein::Engine;
use rein::events::{PreToolUse, Stop};
use rein::{HookReply, MatcherError};

use crate::harness::Sandbox;

/// The example binaries `cargo test` builds beside the test binary
/// (`target/<profile>/examples/`).
fn example(name: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let profile_dir = exe.parent().and_then(|deps| deps.parent()).unwrap();
    profile_dir.join("examples").join(name)
}

#[test]
fn the_seed_demo_example_runs_offline_and_every_scenario_ends_as_described() {
    let path = example("seed_demo");
    assert!(
        path.exists(),
        "{} missing: cargo test builds examples",
        path.display()
    );
    let sandbox = Sandbox::new("project", &[]);
    let out = Command::new(&path)
        .env("HOME", &sandbox.home)
        .env("TMPDIR", &sandbox.root)
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The four scenarios, in order, with what each must show.
    let expected = [
        "1. read a file",
        "rein embeds cleanly",
        "2. a command nobody approved",
        "refused/failed: Permission to use Bash",
        "3. rm -rf, allowed by a rule but denied by the safety hook",
        "refused/failed: PreToolUse:Bash hook error: blocked by the in-process safety hook",
        "scratch/ still exists: true",
        "4. the safety hook unregistered",
        "scratch/ removed: true",
        "all four scenarios ended as described",
    ];
    let mut at = 0;
    for want in expected {
        let found = stdout[at..]
            .find(want)
            .unwrap_or_else(|| panic!("{want:?} not found (in order) in:\n{stdout}"));
        at += found + want.len();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hooks_registered_on_a_running_session_apply_at_the_next_call() {
    let sandbox = Sandbox::new("project", &["project/a", "project/b"]);
    let engine = Engine::builder(&sandbox.project)
        .home(&sandbox.home)
        .read_settings_files(false)
        .allow("Bash(rm -rf a)")
        .allow("Bash(rm -rf b)")
        .build()
        .unwrap();
    let mut session = engine.session();
    session.start().await;

    // Registered after the session started: it guards the next call.
    let guard = engine
        .on::<PreToolUse, _, _>("Bash", |input| async move {
            let command = input.tool_input["command"].as_str().unwrap_or_default();
            if command.starts_with("rm ") {
                PreToolUse::deny("no rm while the guard is on")
            } else {
                HookReply::none()
            }
        })
        .unwrap();
    let denied = session.run_prompt("执行命令 rm -rf a").await;
    assert_eq!(denied.denials.len(), 1, "{denied:?}");
    assert!(sandbox.project.join("a").is_dir(), "the victim survived");

    // Unregistered mid-session: the same kind of call now runs.
    guard.unregister();
    let passed = session.run_prompt("执行命令 rm -rf b").await;
    assert!(passed.denials.is_empty(), "{passed:?}");
    assert!(!sandbox.project.join("b").exists(), "the call ran");
    session.end("other").await;
}

#[test]
fn bad_matchers_are_errors_not_hooks_that_never_fire() {
    let sandbox = Sandbox::new("project", &[]);
    let engine = Engine::builder(&sandbox.project)
        .home(&sandbox.home)
        .read_settings_files(false)
        .build()
        .unwrap();
    let invalid = engine.on::<PreToolUse, _, _>("Bash(", |_| async { HookReply::none() });
    assert!(
        matches!(&invalid, Err(MatcherError::Invalid { matcher, .. }) if matcher == "Bash("),
        "{invalid:?}"
    );
    // Stop has nothing to match: a matcher there would be ignored, so it is refused.
    let ignored = engine.on::<Stop, _, _>("Bash", |_| async { HookReply::none() });
    assert!(
        matches!(ignored, Err(MatcherError::NoTarget { .. })),
        "{ignored:?}"
    );
    let all = engine.on::<Stop, _, _>("*", |_| async { HookReply::none() });
    assert!(all.is_ok());
}

#[test]
fn a_project_dir_that_is_not_utf8_is_refused_by_the_builder() {
    use std::os::unix::ffi::OsStrExt;
    let sandbox = Sandbox::new("proj", &[]);
    let dir = sandbox.root.join(std::ffi::OsStr::from_bytes(b"proj-\xff"));
    std::fs::create_dir_all(&dir).unwrap();
    match Engine::builder(&dir).build() {
        Err(rein::EngineError::ProjectDirNotUtf8 { path }) => {
            assert_eq!(path, dir);
        }
        other => panic!("built: {other:?}"),
    }
}

/// The library follows folder trust: a project file's allow rule applies only with
/// `trust_project(true)` (or a recorded trust).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn project_allow_rules_apply_only_in_a_trusted_folder() {
    for trusted in [false, true] {
        let sandbox = Sandbox::new("project", &["project/.claude", "project/victim"]);
        sandbox.settings(serde_json::json!({"permissions": {"allow": ["Bash(rm -rf victim)"]}}));
        let engine = Engine::builder(&sandbox.project)
            .home(&sandbox.home)
            .trust_project(trusted)
            .build()
            .unwrap();
        let mut session = engine.session();
        session.start().await;
        session.run_prompt("执行命令 rm -rf victim").await;
        session.end("other").await;
        assert_eq!(
            sandbox.project.join("victim").is_dir(),
            !trusted,
            "trusted = {trusted}"
        );
    }
}
