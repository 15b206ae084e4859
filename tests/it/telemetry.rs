//! OpenTelemetry export (issue 27): a session's spans received by a real OTLP receiver built on
//! the official protobuf definitions (`opentelemetry-proto` from PyPI, `tests/it/otlp_receiver.py`),
//! checked as a tree with their attributes; collectors that refuse, fail, hang or are not
//! collectors at all cost the session nothing but a one-line report.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;

use serde_json::{Value, json};

use crate::harness::{Sandbox, bash, say};

/// The pinned Python packages of the receiver.
const PY_PACKAGES: &[&str] = &["opentelemetry-proto==1.45.2", "protobuf==7.36.2"];

/// `<target tmp>/otlp-py-<versions>`, where the packages are installed once (`pip --target`).
fn py_packages() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let tag = PY_PACKAGES
            .iter()
            .map(|p| p.replace("==", "-"))
            .collect::<Vec<_>>()
            .join("_");
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("otlp-py-{tag}"));
        std::fs::create_dir_all(&dir).unwrap();
        let lock = std::fs::File::create(dir.with_extension("lock")).unwrap();
        // SAFETY: flock(2) on a file descriptor this closure owns for its whole run.
        unsafe {
            libc::flock(std::os::fd::AsRawFd::as_raw_fd(&lock), libc::LOCK_EX);
        }
        let site = dir.join("site");
        if dir.join(".installed").exists() {
            return site;
        }
        let mut last = String::new();
        for _ in 0..3 {
            let _ = std::fs::remove_dir_all(&site);
            let out = Command::new("python3")
                .args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--target"])
                .arg(&site)
                .args(PY_PACKAGES)
                // Debian's python marks its own site-packages as managed by apt; a --target
                // install touches none of it (older pips ignore the variable).
                .env("PIP_BREAK_SYSTEM_PACKAGES", "1")
                .output()
                .expect("python3 -m pip (the telemetry tests need python3 with pip; .ci/run installs it)");
            if out.status.success() {
                std::fs::write(dir.join(".installed"), PY_PACKAGES.join("\n")).unwrap();
                return site;
            }
            last = String::from_utf8_lossy(&out.stderr).into_owned();
        }
        panic!("pip install of {PY_PACKAGES:?} failed three times:\n{last}");
    })
}

/// A running receiver; killed when dropped.
struct Receiver {
    child: Child,
    port: u16,
    out: PathBuf,
}

impl Receiver {
    fn start(dir: &Path, mode: &str) -> Receiver {
        static COUNT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let out = dir.join(format!("spans-{mode}-{n}.jsonl"));
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/otlp_receiver.py");
        let mut child = Command::new("python3")
            .arg(script)
            .arg(&out)
            .arg(mode)
            .env("PYTHONPATH", py_packages())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line.trim().parse().expect("the receiver prints its port");
        Receiver { child, port, out }
    }

    fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn spans(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.out)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

const NO_RM: &str = r#"input=$(cat)
case "$input" in *'rm -f'*) echo "rm is not allowed here" >&2; exit 2;; esac
exit 0"#;

fn project() -> Sandbox {
    let s = Sandbox::new("proj", &["proj/.claude", "proj/hooks"]);
    std::fs::create_dir_all(s.home.join(".claude")).unwrap();
    std::fs::write(
        s.home.join(".claude/settings.json"),
        json!({"permissions": {"allow": ["Bash"]}}).to_string(),
    )
    .unwrap();
    s.write("victim", "precious");
    let no_rm = s.script("no-rm.sh", NO_RM);
    let judge = s.script(
        "judge.sh",
        r#"echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"trial policy"}}'"#,
    );
    let post = s.script("post.sh", "cat > /dev/null");
    let ups = s.script("ups.sh", "echo 'remember the rules'");
    s.hooks(json!({
        "UserPromptSubmit": [{"hooks": [{"type": "command", "command": ups}]}],
        "PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": no_rm},
            {"type": "command", "command": judge, "shadow": true}
        ]}],
        "PostToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": post}]}]
    }));
    s
}

fn run(s: &Sandbox, env: &[(&str, String)]) -> std::process::Output {
    let script = s.mock(json!([bash("echo hi"), bash("rm -f victim"), say("done")]));
    let mut cmd = s.rein();
    cmd.args(["-p", "tidy up", "--trust", "--mock-script"])
        .arg(&script);
    for var in [
        "CLAUDE_CODE_ENABLE_TELEMETRY",
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "OTEL_EXPORTER_OTLP_PROTOCOL",
        "OTEL_TRACES_EXPORTER",
        "OTEL_SERVICE_NAME",
        "OTEL_RESOURCE_ATTRIBUTES",
        "OTEL_LOG_USER_PROMPTS",
        "OTEL_LOG_TOOL_DETAILS",
    ] {
        cmd.env_remove(var);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

fn traced(r: &Receiver) -> Vec<(&'static str, String)> {
    vec![
        ("CLAUDE_CODE_ENABLE_TELEMETRY", "1".to_string()),
        ("OTEL_EXPORTER_OTLP_ENDPOINT", r.endpoint()),
    ]
}

fn by_id(spans: &[Value]) -> std::collections::HashMap<String, &Value> {
    spans
        .iter()
        .map(|s| (s["span_id"].as_str().unwrap().to_string(), s))
        .collect()
}

#[test]
fn a_sessions_spans_reach_a_real_receiver_as_a_tree_with_their_attributes() {
    let s = project();
    let r = Receiver::start(&s.root, "ok");
    let out = run(&s, &traced(&r));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(s.exists("victim"), "the hook kept the victim");
    assert!(!String::from_utf8_lossy(&out.stderr).contains("telemetry"));
    let spans = r.spans();
    let ids = by_id(&spans);
    let named = |n: &str| spans.iter().filter(|s| s["name"] == n).collect::<Vec<_>>();
    // One trace, one root: the session.
    let trace = spans[0]["trace_id"].as_str().unwrap();
    assert!(spans.iter().all(|s| s["trace_id"] == trace));
    let roots: Vec<_> = spans.iter().filter(|s| s["parent_span_id"] == "").collect();
    assert_eq!(roots.len(), 1);
    let session = roots[0];
    assert_eq!(session["name"], "rein.session");
    assert_eq!(session["attributes"]["rein.model"], "mock");
    assert_eq!(session["path"], "/v1/traces");
    assert_eq!(session["resource"]["service.name"], "rein");
    // The turn under the session, with its prompt's length but not its text.
    let turns = named("rein.turn");
    assert_eq!(turns.len(), 1);
    let turn = turns[0];
    assert_eq!(turn["parent_span_id"], session["span_id"]);
    assert_eq!(turn["attributes"]["rein.prompt.length"], 7);
    assert!(turn["attributes"].get("rein.prompt").is_none());
    // The tool calls under the turn; the refused one is an error, with the permission outcome.
    let tools = named("rein.tool Bash");
    assert_eq!(tools.len(), 2);
    for t in &tools {
        assert_eq!(t["parent_span_id"], turn["span_id"]);
        assert!(t["attributes"].get("rein.tool.input").is_none());
    }
    let rm = tools
        .iter()
        .find(|t| t["attributes"]["rein.permission.outcome"] == "denied")
        .expect("the refused call");
    assert_eq!(rm["status"]["code"], 2, "STATUS_CODE_ERROR");
    assert!(
        rm["status"]["message"]
            .as_str()
            .unwrap()
            .contains("rm is not allowed here")
    );
    let ok = tools
        .iter()
        .find(|t| t["attributes"]["rein.permission.outcome"] == "allowed")
        .expect("the call that ran");
    assert_eq!(ok["attributes"]["rein.tool.status"], "succeeded");
    // Hook runs under their call (tool events) or their turn (UserPromptSubmit).
    let hooks: Vec<&Value> = spans
        .iter()
        .filter(|s| s["name"].as_str().unwrap().starts_with("rein.hook "))
        .collect();
    for h in &hooks {
        let parent = ids[h["parent_span_id"].as_str().unwrap()];
        match h["attributes"]["rein.hook.event"].as_str().unwrap() {
            "UserPromptSubmit" => assert_eq!(parent["span_id"], turn["span_id"]),
            "PreToolUse" | "PostToolUse" => {
                assert_eq!(
                    parent["attributes"]["rein.tool.use_id"],
                    h["attributes"]["rein.tool.use_id"]
                );
                assert!(parent["name"].as_str().unwrap().starts_with("rein.tool"));
            }
            other => panic!("unexpected hook event {other}"),
        }
        assert!(h["start"].as_u64() <= h["end"].as_u64());
        assert_eq!(h["attributes"]["rein.hook.warm"], false);
        assert!(
            h["attributes"]["rein.hook.source"]
                .as_str()
                .unwrap()
                .contains(".claude/settings.json:")
        );
    }
    let blocker = hooks
        .iter()
        .find(|h| h["attributes"]["rein.hook.decision"] == "block")
        .expect("the blocking run");
    assert_eq!(blocker["attributes"]["rein.hook.exit_code"], 2);
    assert_eq!(blocker["attributes"]["rein.hook.matcher"], "Bash");
    assert_eq!(blocker["attributes"]["rein.hook.outcome"], "blocking");
    assert!(
        blocker["attributes"]["rein.hook.command"]
            .as_str()
            .unwrap()
            .ends_with("no-rm.sh")
    );
    assert_eq!(
        ids[blocker["parent_span_id"].as_str().unwrap()]["span_id"],
        rm["span_id"]
    );
    let shadowed: Vec<_> = hooks
        .iter()
        .filter(|h| h["attributes"]["rein.hook.shadow"] == true)
        .collect();
    assert_eq!(shadowed.len(), 2, "the shadow hook ran for both calls");
    for h in shadowed {
        assert_eq!(
            h["attributes"]["rein.hook.would_have"],
            "would have denied: trial policy"
        );
        assert_eq!(
            h["attributes"]["rein.hook.decision"], "deny",
            "the withheld decision"
        );
    }
    assert_eq!(
        hooks.len(),
        1 + 2 * 2 + 1,
        "UPS, 2×2 PreToolUse, 1 PostToolUse"
    );
}

#[test]
fn prompts_and_tool_inputs_are_exported_only_when_asked_and_json_works_too() {
    let s = project();
    let r = Receiver::start(&s.root, "ok");
    let mut env = traced(&r);
    env.push(("OTEL_LOG_USER_PROMPTS", "1".to_string()));
    env.push(("OTEL_LOG_TOOL_DETAILS", "1".to_string()));
    env.push(("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json".to_string()));
    env.push(("OTEL_SERVICE_NAME", "policy-trial".to_string()));
    env.push(("OTEL_RESOURCE_ATTRIBUTES", "team=platform".to_string()));
    let out = run(&s, &env);
    assert!(out.status.success());
    let spans = r.spans();
    let turn = spans.iter().find(|s| s["name"] == "rein.turn").unwrap();
    assert_eq!(turn["attributes"]["rein.prompt"], "tidy up");
    let tool = spans
        .iter()
        .find(|s| s["name"] == "rein.tool Bash")
        .unwrap();
    assert_eq!(
        tool["attributes"]["rein.tool.input"],
        r#"{"command":"echo hi"}"#
    );
    assert_eq!(turn["resource"]["service.name"], "policy-trial");
    assert_eq!(turn["resource"]["team"], "platform");
    // Nothing at all without the switch, even with an endpoint set.
    let quiet = Receiver::start(&s.root, "ok");
    let out = run(&s, &[("OTEL_EXPORTER_OTLP_ENDPOINT", quiet.endpoint())]);
    assert!(out.status.success());
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert!(
        quiet.spans().is_empty(),
        "exported without CLAUDE_CODE_ENABLE_TELEMETRY"
    );
}

/// A collector that refuses connections, answers 500, never answers, or is a web page: the
/// session does what it does without telemetry, and says once how many spans were lost.
#[test]
fn a_broken_collector_costs_the_session_nothing_but_one_line() {
    let s = project();
    let plain = run(&s, &[]);
    assert!(plain.status.success());
    let refused_port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let receivers: Vec<(&str, Option<Receiver>)> = vec![
        ("refused", None),
        ("500", Some(Receiver::start(&s.root, "500"))),
        ("hang", Some(Receiver::start(&s.root, "hang"))),
        ("html", Some(Receiver::start(&s.root, "html"))),
    ];
    for (mode, receiver) in &receivers {
        let endpoint = match receiver {
            Some(r) => r.endpoint(),
            None => format!("http://127.0.0.1:{refused_port}"),
        };
        s.write("victim", "precious");
        let out = run(
            &s,
            &[
                ("CLAUDE_CODE_ENABLE_TELEMETRY", "1".to_string()),
                ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint),
                ("OTEL_EXPORTER_OTLP_TIMEOUT", "2000".to_string()),
            ],
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), plain.status.code(), "{mode}: {stderr}");
        assert_eq!(out.stdout, plain.stdout, "{mode}");
        assert!(s.exists("victim"), "{mode}");
        let lines: Vec<&str> = stderr.lines().filter(|l| l.contains("telemetry")).collect();
        assert_eq!(lines.len(), 1, "{mode}: one report, got {stderr}");
        assert!(
            lines[0].contains("spans were not delivered"),
            "{mode}: {}",
            lines[0]
        );
    }
}
