//! rein as the binary behind the real Claude Agent SDKs (issue 25): the Python SDK from PyPI
//! (`suite.py`) and the TypeScript SDK from npm (`suite.mjs`) drive the built rein through
//! their public API; the raw control protocol's faults are in `faults.rs`.
//!
//! The SDKs are installed once per target directory at the pinned versions below (`pip
//! --target`, `npm install --prefix`), under a lock, retried on a flaky registry. The Python
//! SDK's wheel bundles Claude Code's own binary; it is deleted after the install, so that an
//! SDK example that names no binary finds rein as `claude` on PATH (`readme_examples`), and
//! nothing here can run Claude Code by mistake. The npm SDK's platform package (the bundled
//! binary) is not installed at all (`--omit=optional`).

mod faults;
mod fidelity;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use crate::harness::rein_bin;

/// The Python SDK and every package it needs, pinned (the versions `pip` resolved for
/// `claude-agent-sdk==0.2.189` on 2026-12-05; installed with `--no-deps`).
pub const PY_SDK: &[&str] = &[
    "claude-agent-sdk==0.2.189",
    "annotated-types==0.8.0",
    "anyio==4.16.0",
    "attrs==26.1.0",
    "cffi==2.1.1",
    "click==8.5.1",
    "cryptography==50.0.2",
    "h11==0.16.0",
    "httpcore2==2.17.0",
    "httpx2==2.17.0",
    "idna==3.20",
    "jsonschema==4.26.0",
    "jsonschema-specifications==2025.9.1",
    "mcp==2.3.0",
    "mcp-types==2.3.0",
    "opentelemetry-api==1.45.3",
    "pycparser==3.12",
    "pydantic==2.14.4",
    "pydantic-core==2.50.5",
    "pyjwt==2.15.1",
    "python-multipart==0.0.34",
    "referencing==0.37.0",
    "rpds-py==2026.9.1",
    "sniffio==1.3.1",
    "sse-starlette==3.7.1",
    "starlette==1.10.0",
    "truststore==0.10.5",
    "typing-extensions==4.16.0",
    "typing-inspection==0.4.5",
    "uvicorn==0.55.0",
];

/// The TypeScript SDK and its peer dependencies, pinned (the versions npm resolved for
/// 0.3.336 on 2026-12-05).
pub const JS_SDK: &[&str] = &[
    "@anthropic-ai/claude-agent-sdk@0.3.336",
    "zod@4.6.7",
    "@modelcontextprotocol/sdk@1.32.2",
    "@anthropic-ai/sdk@1.17.0",
];

fn locked_install(dir: &Path, what: &str, install: impl Fn(&Path) -> Result<(), String>) {
    std::fs::create_dir_all(dir).unwrap();
    let lock = std::fs::File::create(dir.with_extension("lock")).unwrap();
    // SAFETY: flock(2) on a file descriptor this function owns for its whole run.
    unsafe {
        libc::flock(std::os::fd::AsRawFd::as_raw_fd(&lock), libc::LOCK_EX);
    }
    if dir.join(".installed").exists() {
        return;
    }
    let mut last = String::new();
    for _ in 0..3 {
        match install(dir) {
            Ok(()) => {
                std::fs::write(dir.join(".installed"), what).unwrap();
                return;
            }
            Err(e) => last = e,
        }
    }
    panic!("installing {what} failed three times:\n{last}");
}

/// Where the Python SDK is installed (`PYTHONPATH`).
pub fn py_site() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("agent-sdk-py-0.2.189");
        locked_install(&dir, &PY_SDK.join("\n"), |dir| {
            let site = dir.join("site");
            let _ = std::fs::remove_dir_all(&site);
            let out = Command::new("python3")
                .args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check"])
                .args(["--no-deps", "--only-binary=:all:", "--target"])
                .arg(&site)
                .args(PY_SDK)
                .env("PIP_BREAK_SYSTEM_PACKAGES", "1")
                .output()
                .expect("python3 -m pip (the Agent SDK tests need python3 with pip; .ci/run installs it)");
            if !out.status.success() {
                return Err(String::from_utf8_lossy(&out.stderr).into_owned());
            }
            // Claude Code's own binary, bundled in the wheel: never run here.
            let bundled = site.join("claude_agent_sdk/_bundled/claude");
            let _ = std::fs::remove_file(bundled);
            Ok(())
        });
        dir.join("site")
    })
}

/// Where the TypeScript SDK is installed (`node_modules` is under it).
pub fn js_prefix() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("agent-sdk-js-0.3.336-pinned");
        locked_install(&dir, &JS_SDK.join("\n"), |dir| {
            let out = Command::new("npm")
                .args([
                    "install",
                    "--silent",
                    "--no-audit",
                    "--no-fund",
                    "--omit=optional",
                ])
                .arg("--prefix")
                .arg(dir)
                .args(JS_SDK)
                .output()
                .expect("npm (the Agent SDK tests need node and npm; .ci/run installs them)");
            if out.status.success() {
                Ok(())
            } else {
                Err(String::from_utf8_lossy(&out.stderr).into_owned())
            }
        });
        dir
    })
}

/// Runs one case of `suite.py` in a fresh sandbox; panics with its output if it fails.
fn python_case(case: &str) {
    let site = py_site();
    let sandbox = tempfile::tempdir().unwrap();
    let mut cmd = Command::new("python3");
    cmd.arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/agent_sdk/suite.py"))
        .arg(case)
        .env("PYTHONPATH", site)
        .env("REIN_BIN", rein_bin())
        .env("SANDBOX", sandbox.path())
        .env("PYTHONDONTWRITEBYTECODE", "1");
    for var in crate::harness::LEAKY_VARS {
        cmd.env_remove(var);
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "python SDK case {case} failed:\n--- stdout\n{}\n--- stderr\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Runs one case of `suite.mjs` in a fresh sandbox; panics with its output if it fails.
fn node_case(case: &str) {
    // Node resolves packages from the script's own directory upwards: the suite is copied
    // next to the installed node_modules, once per test run (cases run side by side).
    static SUITE: OnceLock<PathBuf> = OnceLock::new();
    let suite = SUITE.get_or_init(|| {
        let prefix = js_prefix();
        for file in ["suite.mjs", "echo_server.mjs"] {
            let staged = prefix.join(format!("{file}.{}", std::process::id()));
            std::fs::copy(
                Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("tests/it/agent_sdk")
                    .join(file),
                &staged,
            )
            .unwrap();
            // A rename is atomic: a node still reading an older copy keeps it whole.
            std::fs::rename(&staged, prefix.join(file)).unwrap();
        }
        prefix.join("suite.mjs")
    });
    let sandbox = tempfile::tempdir().unwrap();
    let mut cmd = Command::new("node");
    cmd.arg(suite)
        .arg(case)
        .env("REIN_BIN", rein_bin())
        .env("SANDBOX", sandbox.path());
    for var in crate::harness::LEAKY_VARS {
        cmd.env_remove(var);
    }
    let out = cmd.output().unwrap();
    // The SDK is one minified file: a stack through it is a screenful per frame.
    let stderr = String::from_utf8_lossy(&out.stderr);
    let tail: String = stderr
        .lines()
        .map(|l| l.chars().take(300).collect::<String>())
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        out.status.success(),
        "TypeScript SDK case {case} failed:\n--- stdout\n{}\n--- stderr\n{tail}",
        String::from_utf8_lossy(&out.stdout),
    );
}

/// One `#[test]` per case, in a module named after the SDK (`agent_sdk::py::resume`).
macro_rules! cases {
    ($module:ident, $runner:ident: $($name:ident),* $(,)?) => {
        mod $module {
            $(
                #[test]
                fn $name() {
                    super::$runner(stringify!($name));
                }
            )*
        }
    };
}

cases!(py, python_case:
    query_oneshot,
    query_streaming_input,
    client_interrupt_multiturn,
    permission_mode_switch,
    bypass_switch_needs_the_flag,
    permission_mode_reaches_subagents,
    max_budget,
    fallback_model,
    set_model,
    hooks_deny_rewrite_context,
    hooks_stop_and_subagent,
    can_use_tool,
    can_use_tool_updated_permissions,
    can_use_tool_for_a_subagent,
    background_task_keeps_the_sdk_listening,
    tools_and_rules_options,
    sdk_mcp_tool,
    mcp_toggle_and_status,
    mcp_reconnect,
    settings_hooks_and_callbacks,
    resume,
    structured_output,
    readme_examples,
);

cases!(ts, node_case:
    query_oneshot,
    hooks_and_can_use_tool,
    sdk_mcp_tool,
    external_mcp_server,
    structured_output,
    interrupt_and_set_permission_mode,
);

mod docs {
    use std::path::Path;
    use std::process::Command;

    use crate::harness::{Sandbox, home_vars, rein_bin};

    #[test]
    fn the_worked_example_of_the_agent_sdk_doc_runs() {
        let doc = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/agent-sdk.md"),
        )
        .unwrap();
        let block = doc
            .split("## A worked example")
            .nth(1)
            .and_then(|s| s.split("```python\n").nth(1))
            .and_then(|b| b.split("\n```").next())
            .expect("the worked example's python block");
        let s = Sandbox::new("proj", &[]);
        let mut cmd = Command::new("python3");
        cmd.args(["-c", block])
            .current_dir(&s.project)
            .envs(home_vars(&s.home))
            .env("PYTHONPATH", super::py_site())
            .env("REIN", rein_bin())
            .env("PYTHONDONTWRITEBYTECODE", "1");
        for var in crate::harness::LEAKY_VARS {
            cmd.env_remove(var);
        }
        let out = cmd.output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "the worked example failed:\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            stdout.contains("denied: ['rm -rf victim.txt', 'curl http://example.com']"),
            "{stdout}"
        );
        assert!(stdout.trim_end().ends_with("ok"), "{stdout}");
        assert_eq!(
            std::fs::read_to_string(s.project.join("victim.txt")).unwrap(),
            "keep me"
        );
    }
}

mod flags {
    use std::path::Path;

    use crate::harness::Sandbox;

    /// `-v` (what an SDK may run to learn the version): the Claude Code version whose protocol
    /// rein speaks first, then rein's own name and version.
    #[test]
    fn the_version_line_starts_with_the_protocol_version_and_names_rein() {
        let s = Sandbox::new("proj", &[]);
        for flag in ["-v", "--version", "-V"] {
            let out = s.rein().arg(flag).output().unwrap();
            assert_eq!(out.status.code(), Some(0));
            let line = String::from_utf8_lossy(&out.stdout);
            assert!(
                line.starts_with(&format!("2.1.328 (rein {}", env!("CARGO_PKG_VERSION"))),
                "{flag}: {line}"
            );
        }
    }

    /// The flags the README lists as having no effect: each is accepted (exit 0) and reported
    /// exactly once, by name, on stderr.
    #[test]
    fn every_flag_the_readme_lists_as_inert_is_accepted_and_reported_once() {
        let readme =
            std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"))
                .unwrap();
        let section = readme
            .split("## Under the Claude Agent SDK")
            .nth(1)
            .and_then(|s| s.split("\n## ").next())
            .unwrap();
        let listed = section
            .split("have no\neffect in rein are accepted and reported once on stderr:")
            .nth(1)
            .unwrap()
            .split("and a `--permission-prompt-tool`")
            .next()
            .unwrap();
        let flags: Vec<&str> = listed.split('`').filter(|w| w.starts_with("--")).collect();
        assert!(flags.len() >= 13, "{flags:?}");
        let s = Sandbox::new("proj", &[]);
        for flag in flags {
            let boolean = flag == "--session-mirror";
            let mut cmd = s.rein();
            cmd.args(["-p", "hi", flag]);
            if !boolean {
                cmd.arg("x");
            }
            let out = cmd.output().unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(0), "{flag}: {err}");
            assert_eq!(
                err.matches(&format!("rein: {flag} has no effect in rein"))
                    .count(),
                1,
                "{flag}: {err}"
            );
        }
    }
}
