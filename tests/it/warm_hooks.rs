//! Warm python and node hooks (issue 26): a warm run is a cold run as far as the hook can tell.
//!
//! The differential tests configure the same script twice on one event, once with
//! `"warm": false` and once warm, their commands differing only in blanks the shell drops (so
//! they are not deduplicated and get the very same argv and stdin), and compare the two runs of
//! every firing byte for byte: exit code, stdout, stderr. The run log says which runs were warm.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::harness::{Sandbox, say};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/warm")
        .join(name)
}

/// A Bash call whose command ends with `mode`, after waiting for the next spare of `script`
/// to appear (a process whose command line names it) and a pause for it to get ready.
fn call(mode: &str, script: &str, pause: &str) -> Value {
    let pattern = script.replace('.', "[.]");
    json!({"tool_use": [{"name": "Bash", "input": {"command": format!(
        "for i in $(seq 100); do pgrep -f '{pattern}' >/dev/null && break; sleep 0.05; done; sleep {pause}; echo {mode}"
    )}}]})
}

/// The script file a hook command runs (its last word ending in .py, .js or .mjs).
fn script_of(command: &str) -> String {
    command
        .split_whitespace()
        .find(|w| {
            [".py", ".js", ".mjs", ".cjs"]
                .iter()
                .any(|x| w.trim_matches('"').ends_with(x))
        })
        .map(|w| {
            w.rsplit('/')
                .next()
                .unwrap_or(w)
                .trim_matches('"')
                .to_string()
        })
        .unwrap_or_default()
}

struct Pair {
    cold: Value,
    warm: Value,
}

/// Runs a session firing PreToolUse once per mode with `cold_cmd` (`"warm": false`) and
/// `warm_cmd` both configured; returns each firing's two hook_response events and the run log.
fn differential(
    s: &Sandbox,
    cold_cmd: &str,
    warm_cmd: &str,
    modes: &[&str],
) -> (Vec<Pair>, Vec<Value>) {
    differential_with_env(s, cold_cmd, warm_cmd, modes, &json!({}))
}

/// [`differential`] with the settings' `env`.
fn differential_with_env(
    s: &Sandbox,
    cold_cmd: &str,
    warm_cmd: &str,
    modes: &[&str],
    env: &Value,
) -> (Vec<Pair>, Vec<Value>) {
    // Node starts slower than python: give its next spare more time between calls.
    let pause =
        if cold_cmd.contains("node") || cold_cmd.contains(".mjs") || cold_cmd.contains(".js") {
            "0.5"
        } else {
            "0.2"
        };
    let script_name = script_of(cold_cmd);
    s.settings(json!({
        "env": env,
        "permissions": {"allow": ["Bash"]},
        "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": cold_cmd, "warm": false, "timeout": 20},
            {"type": "command", "command": warm_cmd, "timeout": 20}
        ]}]}
    }));
    let mut steps: Vec<Value> = modes.iter().map(|m| call(m, &script_name, pause)).collect();
    steps.push(say("done"));
    let script = s.mock(Value::Array(steps));
    let out = s
        .rein()
        .args([
            "-p",
            "go",
            "--trust",
            "--output-format",
            "stream-json",
            "--verbose",
            "--include-hook-events",
            "--mock-script",
        ])
        .arg(&script)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let logs = s.home.join(".rein/logs");
    let responses: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["subtype"] == "hook_response")
        .collect();
    assert_eq!(responses.len(), modes.len() * 2, "two runs per firing");
    let pairs = responses
        .chunks(2)
        .map(|c| Pair {
            cold: c[0].clone(),
            warm: c[1].clone(),
        })
        .collect();
    let log: Vec<Value> = std::fs::read_dir(s.home.join(".rein/logs"))
        .unwrap()
        .flatten()
        .flat_map(|f| {
            std::fs::read_to_string(f.path())
                .unwrap()
                .lines()
                .map(|l| serde_json::from_str::<Value>(l).unwrap())
                .collect::<Vec<_>>()
        })
        .collect();
    let _ = std::fs::remove_dir_all(&logs);
    (pairs, log)
}

fn assert_same(pairs: &[Pair], modes: &[&str]) {
    for (pair, mode) in pairs.iter().zip(modes) {
        for field in ["exit_code", "stdout", "stderr", "outcome"] {
            if pair.cold[field] != pair.warm[field] {
                let (c, w) = (pair.cold[field].to_string(), pair.warm[field].to_string());
                let at = c.chars().zip(w.chars()).take_while(|(a, b)| a == b).count();
                let around = |t: &str| -> String {
                    t.chars().skip(at.saturating_sub(60)).take(160).collect()
                };
                panic!(
                    "{mode}: {field} differs between the cold and the warm run at char {at}:\ncold: …{}…\nwarm: …{}…",
                    around(&c),
                    around(&w)
                );
            }
        }
    }
}

/// How many runs of the warm handler were warm, and how many of the cold one.
fn warm_counts(log: &[Value], cold_cmd: &str, warm_cmd: &str) -> (usize, usize) {
    let count = |cmd: &str| {
        log.iter()
            .filter(|l| l["command"] == cmd && l["warm"] == true)
            .count()
    };
    (count(warm_cmd), count(cold_cmd))
}

const PY_MODES: &[&str] = &[
    "plain",
    "exit2",
    "osexit",
    "raise",
    "signal",
    "thread",
    "fork",
    "mutate",
    "plain",
    "missing",
    "exitmsg",
    "atexit",
    "interrupt",
    "daemonthread",
];

#[test]
fn a_warm_python_hook_is_a_cold_one_byte_for_byte() {
    let s = Sandbox::new("proj", &["proj/.claude", "proj/hooks"]);
    std::fs::copy(fixture("probe.py"), s.path("hooks/probe.py")).unwrap();
    for (cold, warm) in [
        (
            "python3 $CLAUDE_PROJECT_DIR/hooks/probe.py",
            "python3  $CLAUDE_PROJECT_DIR/hooks/probe.py",
        ),
        (
            "\"$CLAUDE_PROJECT_DIR\"/hooks/probe.py",
            "\"$CLAUDE_PROJECT_DIR\"/hooks/probe.py ",
        ),
    ] {
        let (pairs, log) = differential(&s, cold, warm, PY_MODES);
        assert_same(&pairs, PY_MODES);
        let (warm_runs, cold_warm) = warm_counts(&log, cold, warm);
        assert_eq!(cold_warm, 0, "a \"warm\": false handler ran warm");
        // Under load a spare may not be ready in time; that call runs cold (and is compared
        // all the same). Most must be warm.
        assert!(
            warm_runs * 2 >= PY_MODES.len(),
            "{warm}: only {warm_runs} of {} runs were warm",
            PY_MODES.len()
        );
        // What the probe saw is what a hook should see.
        let facts: Value = serde_json::from_str(
            pairs[0].warm["stdout"]
                .as_str()
                .unwrap()
                .lines()
                .next()
                .unwrap(),
        )
        .unwrap();
        assert_eq!(facts["name"], "__main__");
        assert!(
            facts["argv"][0]
                .as_str()
                .unwrap()
                .ends_with("hooks/probe.py")
        );
        assert!(!facts["env"].as_object().unwrap().contains_key("PYTHONPATH"));
        assert_eq!(facts["sitecustomize"], false);
        // The uncaught exception's traceback names only the script.
        let raise = &pairs[3].warm["stderr"];
        assert!(
            raise
                .as_str()
                .unwrap()
                .starts_with("Traceback (most recent call last):")
        );
        assert!(!raise.as_str().unwrap().contains("sitecustomize"));
        assert_eq!(pairs[1].warm["exit_code"], 2);
        assert_eq!(pairs[2].warm["exit_code"], 3);
    }
}

#[test]
fn a_warm_node_hook_is_a_cold_one_byte_for_byte() {
    let s = Sandbox::new("proj", &["proj/.claude", "proj/hooks"]);
    std::fs::copy(fixture("probe.js"), s.path("hooks/probe.js")).unwrap();
    std::fs::copy(fixture("probe.mjs"), s.path("hooks/probe.mjs")).unwrap();
    let modes = [
        "plain",
        "exit2",
        "raise",
        "exitcode",
        "signal",
        "async",
        "hot",
        "timerthrow",
        "reject",
        "beforeexit",
        "exitthrow",
        "execsync",
        "stringcode",
        "exitinexit",
        "plain",
    ];
    let (pairs, log) = differential(
        &s,
        "node $CLAUDE_PROJECT_DIR/hooks/probe.js",
        "node  $CLAUDE_PROJECT_DIR/hooks/probe.js",
        &modes,
    );
    assert_same(&pairs, &modes);
    let (warm_runs, _) = warm_counts(
        &log,
        "node $CLAUDE_PROJECT_DIR/hooks/probe.js",
        "node  $CLAUDE_PROJECT_DIR/hooks/probe.js",
    );
    // Node starts slower; on a loaded machine a spare may not be ready for every call (that
    // call then runs cold, which the comparison above covers too).
    assert!(warm_runs * 2 >= modes.len(), "only {warm_runs} warm runs");
    let facts: Value = serde_json::from_str(
        pairs[0].warm["stdout"]
            .as_str()
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(facts["main"], true);
    assert_eq!(facts["execArgv"], json!([]));
    assert!(
        !facts["env"]
            .as_object()
            .unwrap()
            .contains_key("NODE_OPTIONS")
    );
    assert!(
        pairs[2].warm["stderr"]
            .as_str()
            .unwrap()
            .contains("Error: boom")
    );
    let esm = ["plain", "raise", "exit2"];
    let (pairs, _) = differential(
        &s,
        "\"$CLAUDE_PROJECT_DIR\"/hooks/probe.mjs",
        "\"$CLAUDE_PROJECT_DIR\"/hooks/probe.mjs ",
        &esm,
    );
    assert_same(&pairs, &esm);
}

/// Every python hook the project ships, on inputs that make each one act.
#[test]
fn the_shipped_python_hooks_behave_the_same_warm() {
    let s = Sandbox::new("proj", &["proj/.claude", "proj/hooks"]);
    let hooks = Path::new(env!("CARGO_MANIFEST_DIR")).join("hooks");
    for entry in std::fs::read_dir(&hooks).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.ends_with(".py") {
            std::fs::copy(entry.path(), s.path(&format!("hooks/{name}"))).unwrap();
        }
    }
    s.write("secrets.env", "TOKEN=1");
    let modes = [
        "ls",
        "rm -rf /",
        "git push --force origin main",
        "cat secrets.env",
        "ls",
    ];
    for hook in [
        "block-dangerous-commands.py",
        "protect-files.py",
        "normalize-paths.py",
        "inject-context.py",
        "redact-secrets.py",
        "audit-log.py",
        "tdd-guard.py",
        "run-tests-after-edit.py",
    ] {
        let cold = format!("\"$CLAUDE_PROJECT_DIR\"/hooks/{hook}");
        let warm = format!("{cold} ");
        let steps: Vec<&str> = modes.to_vec();
        let (pairs, log) = differential(&s, &cold, &warm, &steps);
        assert_same(&pairs, &steps);
        let (warm_runs, _) = warm_counts(&log, &cold, &warm);
        assert!(
            warm_runs * 2 >= steps.len(),
            "{hook}: only {warm_runs} warm runs"
        );
    }
}

#[test]
fn a_syntax_error_behaves_as_cold() {
    let s = Sandbox::new("proj", &["proj/.claude", "proj/hooks"]);
    std::fs::copy(fixture("syntax_error.py"), s.path("hooks/bad.py")).unwrap();
    let (pairs, _) = differential(
        &s,
        "python3 $CLAUDE_PROJECT_DIR/hooks/bad.py",
        "python3  $CLAUDE_PROJECT_DIR/hooks/bad.py",
        &["a", "b"],
    );
    assert_same(&pairs, &["a", "b"]);
    assert!(
        pairs[1].warm["stderr"]
            .as_str()
            .unwrap()
            .contains("SyntaxError")
    );
}

/// The real interpreter behind `python3` (not a pyenv shim), for tests that start many.
fn real_python() -> String {
    let out = std::process::Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

fn run_log(s: &Sandbox) -> Vec<Value> {
    std::fs::read_dir(s.home.join(".rein/logs"))
        .map(|d| {
            d.flatten()
                .flat_map(|f| {
                    std::fs::read_to_string(f.path())
                        .unwrap()
                        .lines()
                        .map(|l| serde_json::from_str::<Value>(l).unwrap())
                        .collect::<Vec<_>>()
                })
                .collect()
        })
        .unwrap_or_default()
}

fn session(s: &Sandbox, hooks: Value, commands: &[&str]) -> std::process::Output {
    s.settings(json!({"permissions": {"allow": ["Bash"]}, "hooks": hooks}));
    let mut steps: Vec<Value> = commands
        .iter()
        .map(|c| json!({"tool_use": [{"name": "Bash", "input": {"command": c}}]}))
        .collect();
    steps.push(say("done"));
    let script = s.mock(Value::Array(steps));
    s.rein()
        .args(["-p", "go", "--trust", "--mock-script"])
        .arg(&script)
        .output()
        .unwrap()
}

/// Edited between calls: the next (warm) call runs the new bytes. Its spare was started
/// before the edit; the script is read only when the call begins.
#[test]
fn a_script_edited_between_calls_runs_its_new_bytes_warm() {
    let s = Sandbox::new("proj", &["proj/.claude", "proj/hooks"]);
    let out_file = s.path("seen.txt");
    s.write(
        "hooks/ver.py",
        &format!(
            "import sys\nsys.stdin.read()\nopen({:?}, 'a').write('v1\\n')\n",
            out_file.display().to_string()
        ),
    );
    let out = session(
        &s,
        json!({"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": "python3 $CLAUDE_PROJECT_DIR/hooks/ver.py"}]}]}),
        &[
            "sleep 0.5",
            "sed -i 's/v1/v2/' hooks/ver.py; sleep 0.5",
            "sleep 0.1",
        ],
    );
    assert!(out.status.success());
    assert_eq!(std::fs::read_to_string(&out_file).unwrap(), "v1\nv1\nv2\n");
    let log = run_log(&s);
    assert_eq!(log[2]["warm"], true, "the third call ran warm: {log:?}");
}

/// A spare killed while it waits: the next call finds it dead and runs cold, once. A hook
/// killed mid-call (SIGKILL) is that call's failure and is not run again.
#[test]
fn a_killed_interpreter_never_runs_a_hook_twice() {
    let s = Sandbox::new("proj", &["proj/.claude", "proj/hooks"]);
    let ledger = s.path("ledger.txt");
    s.write(
        "hooks/once.py",
        &format!(
            "import json, os, signal, sys\nd = json.load(sys.stdin)\n\
             open({:?}, 'a').write(d['tool_input']['command'] + '\\n')\n\
             if 'die' in d['tool_input']['command']:\n    os.kill(os.getpid(), signal.SIGKILL)\n",
            ledger.display().to_string()
        ),
    );
    let out = session(
        &s,
        json!({"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": "python3 $CLAUDE_PROJECT_DIR/hooks/once.py"}]}]}),
        &[
            "sleep 0.6",
            // Kills the waiting spare (its argv names the script).
            "pkill -KILL -f 'hooks/once.py'; sleep 0.05",
            "echo after-kill",
            "sleep 0.6",
            "echo die",
            "echo last",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<String> = std::fs::read_to_string(&ledger)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(
        lines,
        [
            "sleep 0.6",
            "pkill -KILL -f 'hooks/once.py'; sleep 0.05",
            "echo after-kill",
            "sleep 0.6",
            "echo die",
            "echo last"
        ],
        "each firing ran its hook exactly once"
    );
    let log = run_log(&s);
    assert_eq!(log.len(), 6);
    // Killed by SIGKILL: a signal, or 137 from the shell that started it (as when cold).
    assert!(
        log[4]["status"] == "signaled" || log[4]["exit_code"] == 137,
        "the SIGKILLed call is that call's failure: {}",
        log[4]
    );
}

/// When rein is SIGKILLed, its waiting interpreters read EOF and exit.
#[test]
fn waiting_interpreters_do_not_outlive_rein() {
    let s = Sandbox::new("proj", &["proj/.claude", "proj/hooks"]);
    s.write("hooks/orphan-probe.py", "import sys\nsys.stdin.read()\n");
    s.settings(json!({"permissions": {"allow": ["Bash"]}, "hooks": {"PreToolUse": [{"matcher": "Bash",
        "hooks": [{"type": "command", "command": "python3 $CLAUDE_PROJECT_DIR/hooks/orphan-probe.py"}]}]}}));
    let script = s.mock(json!([
        {"tool_use": [{"name": "Bash", "input": {"command": "sleep 30"}}]},
        say("done")
    ]));
    let mut child = s
        .rein()
        .args(["-p", "go", "--trust", "--mock-script"])
        .arg(&script)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let count = || {
        std::process::Command::new("pgrep")
            .args(["-f", "orphan-probe.py"])
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).lines().count())
            .unwrap_or(0)
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
    while count() == 0 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(count() > 0, "a spare was started");
    child.kill().unwrap();
    child.wait().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while count() > 0 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert_eq!(count(), 0, "a waiting interpreter outlived rein");
    let _ = std::process::Command::new("pkill")
        .args(["-KILL", "-f", "sleep 30"])
        .status();
}

/// 50 python hooks on one firing: every one runs once with the same answer, warm or cold.
#[test]
fn fifty_hooks_at_once() {
    let s = Sandbox::new("proj", &["proj/.claude", "proj/hooks"]);
    let python = real_python();
    s.write(
        "hooks/fifty.py",
        "import json, sys\nd = json.load(sys.stdin)\nprint(json.dumps({'n': len(sys.argv), 'tool': d['tool_name']}))\n",
    );
    let hooks: Vec<Value> = (0..50)
        .map(|i| {
            json!({"type": "command",
                "command": format!("{python} $CLAUDE_PROJECT_DIR/hooks/fifty.py{}", " ".repeat(i))})
        })
        .collect();
    let out = session(
        &s,
        json!({"PreToolUse": [{"matcher": "Bash", "hooks": hooks}]}),
        &["sleep 4", "echo again"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let log = run_log(&s);
    assert_eq!(log.len(), 100);
    assert!(
        log.iter()
            .all(|l| l["exit_code"] == 0 && l["outcome"] == "success"),
        "{log:?}"
    );
    let warm = log.iter().filter(|l| l["warm"] == true).count();
    // 50 interpreters start at once on a small machine: most are ready for the second firing.
    assert!(
        warm >= 40,
        "the second firing found its spares: {warm} warm runs"
    );
}

/// `REIN_WARM_HOOKS=0`, and a session with no python or node hook starts no interpreter.
#[test]
fn warm_hooks_can_be_switched_off_and_cost_nothing_unused() {
    let s = Sandbox::new("proj", &["proj/.claude", "proj/hooks"]);
    s.write("hooks/w.py", "import sys\nsys.stdin.read()\n");
    let hooks = json!({"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": "python3 $CLAUDE_PROJECT_DIR/hooks/w.py"}]}]});
    s.settings(json!({"permissions": {"allow": ["Bash"]}, "hooks": hooks}));
    let script = s.mock(json!([
        {"tool_use": [{"name": "Bash", "input": {"command": "sleep 0.5"}}]},
        {"tool_use": [{"name": "Bash", "input": {"command": "echo 2"}}]},
        say("done")
    ]));
    let out = s
        .rein()
        .env("REIN_WARM_HOOKS", "0")
        .args(["-p", "go", "--trust", "--mock-script"])
        .arg(&script)
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(run_log(&s).iter().all(|l| l["warm"] == false));
    let _ = std::fs::remove_dir_all(s.home.join(".rein/logs"));
    // The settings key, globally.
    s.settings(json!({"warmHooks": false, "permissions": {"allow": ["Bash"]}, "hooks": hooks}));
    let out = s
        .rein()
        .args(["-p", "go", "--trust", "--mock-script"])
        .arg(&script)
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(run_log(&s).iter().all(|l| l["warm"] == false));
    let list = s.rein().args(["hooks", "list"]).output().unwrap();
    assert!(String::from_utf8_lossy(&list.stdout).contains("warm    no: \"warm\": false"));
    // What a session starts, seen from inside it: a Bash call lists the processes whose
    // command line names the hook's script. With a python hook a spare waits; with only a sh
    // hook nothing is started.
    let probe = |hooks: Value| -> String {
        s.settings(json!({"permissions": {"allow": ["Bash"]}, "hooks": hooks}));
        let script = s.mock(json!([
            {"tool_use": [{"name": "Bash", "input": {"command":
                "sleep 1; pgrep -f 'hooks/w[.]py' > seen.txt; true"}}]},
            say("done")
        ]));
        let out = s
            .rein()
            .args(["-p", "go", "--trust", "--mock-script"])
            .arg(&script)
            .output()
            .unwrap();
        assert!(out.status.success());
        std::fs::read_to_string(s.path("seen.txt")).unwrap_or_default()
    };
    let python = json!({"PostToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": "python3 $CLAUDE_PROJECT_DIR/hooks/w.py"}]}]});
    assert!(
        !probe(python).trim().is_empty(),
        "a python hook's spare waits during the session"
    );
    let sh = s.script("plain.sh", "cat >/dev/null");
    let only_sh = json!({"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": sh}]}]});
    assert_eq!(
        probe(only_sh.clone()),
        "",
        "a session without python or node hooks started one"
    );
    s.settings(json!({"permissions": {"allow": ["Bash"]}, "hooks": only_sh}));
    let list = s.rein().args(["hooks", "list"]).output().unwrap();
    assert!(String::from_utf8_lossy(&list.stdout).contains("warm    no:"));
}

/// Published hooks from the registries: a guard written with `cchooks` (PyPI, pinned) and the
/// `prettier` CLI (npm, pinned) run by node as a formatting check, cold and warm.
#[test]
fn published_hooks_from_the_registries_behave_the_same_warm() {
    let cache =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join("warm-published-cchooks-0.1.5-prettier-3.6.2");
    let site = cache.join("site");
    let prettier = cache.join("node_modules/prettier/bin/prettier.cjs");
    if !cache.join(".installed").exists() {
        std::fs::create_dir_all(&cache).unwrap();
        let pip = std::process::Command::new("python3")
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "--target",
            ])
            .arg(&site)
            .arg("cchooks==0.1.5")
            .env("PIP_BREAK_SYSTEM_PACKAGES", "1")
            .output()
            .unwrap();
        assert!(
            pip.status.success(),
            "{}",
            String::from_utf8_lossy(&pip.stderr)
        );
        let npm = std::process::Command::new("npm")
            .args([
                "install",
                "--no-audit",
                "--no-fund",
                "--no-save",
                "--loglevel=error",
                "--prefix",
            ])
            .arg(&cache)
            .arg("prettier@3.6.2")
            .output()
            .unwrap();
        assert!(
            npm.status.success(),
            "{}",
            String::from_utf8_lossy(&npm.stderr)
        );
        std::fs::write(cache.join(".installed"), "").unwrap();
    }
    let s = Sandbox::new("proj", &["proj/.claude", "proj/hooks"]);
    std::fs::copy(fixture("cchooks_guard.py"), s.path("hooks/guard.py")).unwrap();
    s.write("ugly.js", "const  a = {b:1,c:2}\n");
    s.write("pretty.js", "const a = { b: 1, c: 2 };\n");
    // The hooks find cchooks through the settings' env, as a user's would.
    let settings_env = json!({"PYTHONPATH": site.display().to_string()});
    let modes = ["ls", "rm -rf build", "git push", "ls"];
    let cold = "python3 $CLAUDE_PROJECT_DIR/hooks/guard.py";
    let warm = "python3  $CLAUDE_PROJECT_DIR/hooks/guard.py";
    let (pairs, log) = differential_with_env(&s, cold, warm, &modes, &settings_env);
    assert_same(&pairs, &modes);
    assert!(
        pairs[1].warm["stdout"]
            .as_str()
            .unwrap()
            .contains("\"deny\"")
    );
    let (warm_runs, _) = warm_counts(&log, cold, warm);
    assert!(warm_runs * 2 >= modes.len(), "only {warm_runs} warm runs");
    // prettier --check: exit 0 on a formatted file, 1 with a report on stderr otherwise.
    for file in ["pretty.js", "ugly.js"] {
        let cold = format!("node {} --check {file}", prettier.display());
        let warm = format!("node  {} --check {file}", prettier.display());
        let (pairs, _) = differential_with_env(&s, &cold, &warm, &["a", "b"], &json!({}));
        assert_same(&pairs, &["a", "b"]);
        let expected = if file == "pretty.js" { 0 } else { 1 };
        assert_eq!(
            pairs[1].warm["exit_code"], expected,
            "prettier --check {file}"
        );
    }
}

/// Calls back to back (issue 33): a python hook on PreToolUse and PostToolUse of 20 Bash calls
/// that follow each other with no pause. The interpreter started once serves each call (it
/// forks one per call), so every call after it is ready runs warm; each runs exactly once.
#[test]
fn calls_back_to_back_run_warm() {
    let s = Sandbox::new("proj", &["proj/.claude", "proj/hooks"]);
    let ledger = s.path("ledger.txt");
    s.write(
        "hooks/b2b.py",
        &format!(
            "import json, os, sys\nd = json.load(sys.stdin)\n\
             open({:?}, 'a').write(d['hook_event_name'] + ' ' + d['tool_input']['command'] + ' ' + str(os.getsid(0) != os.getpid()) + '\\n')\n",
            ledger.display().to_string()
        ),
    );
    let commands: Vec<String> = (0..20).map(|i| format!("echo {i}")).collect();
    let refs: Vec<&str> = commands.iter().map(String::as_str).collect();
    let hook = json!([{"matcher": "Bash", "hooks": [
        {"type": "command", "command": "python3 $CLAUDE_PROJECT_DIR/hooks/b2b.py"}]}]);
    let out = session(&s, json!({"PreToolUse": hook, "PostToolUse": hook}), &refs);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<String> = std::fs::read_to_string(&ledger)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    let expected: Vec<String> = (0..20)
        .flat_map(|i| {
            [
                format!("PreToolUse echo {i} True"),
                format!("PostToolUse echo {i} True"),
            ]
        })
        .collect();
    assert_eq!(
        lines, expected,
        "each firing ran its hook exactly once, in order, in a session it does not lead"
    );
    let log = run_log(&s);
    assert_eq!(log.len(), 40);
    let first_warm = log
        .iter()
        .position(|l| l["warm"] == true)
        .expect("no call ran warm");
    assert!(
        log[first_warm..].iter().all(|l| l["warm"] == true),
        "once the interpreter was ready every call ran warm: {:?}",
        log.iter().map(|l| &l["warm"]).collect::<Vec<_>>()
    );
    assert!(
        first_warm <= 6,
        "the interpreter took {first_warm} calls to be ready"
    );
    // The session is over: its interpreter and the processes it forked ahead end with it
    // (none lingers, none keeps forking).
    let count = || {
        std::process::Command::new("pgrep")
            .args(["-f", &format!("{}/hooks/b2b.py", s.project.display())])
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).lines().count())
            .unwrap_or(0)
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while count() > 0 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert_eq!(count(), 0, "an interpreter outlived the session");
}

/// A warm hook that hangs is killed at its timeout with everything it started (its session's
/// group), and the next call still runs warm.
#[test]
fn a_hanging_warm_hook_is_killed_with_its_children_and_the_next_runs_warm() {
    let s = Sandbox::new("proj", &["proj/.claude", "proj/hooks"]);
    let marker = s.path("grandchild-ran");
    s.write(
        "hooks/hang.py",
        &format!(
            "import json, subprocess, sys, time\nd = json.load(sys.stdin)\n\
             if 'hang' in d['tool_input']['command']:\n\
             \x20   subprocess.Popen(['sh', '-c', 'sleep 3; touch {}'])\n\
             \x20   time.sleep(60)\n\
             print('ok')\n",
            marker.display()
        ),
    );
    let out = session(
        &s,
        json!({"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": "python3 $CLAUDE_PROJECT_DIR/hooks/hang.py", "timeout": 1}]}]}),
        &["sleep 0.5", "echo hang", "echo after"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let log = run_log(&s);
    assert_eq!(log.len(), 3, "{log:?}");
    assert_eq!(log[1]["warm"], true, "{}", log[1]);
    assert_eq!(log[1]["timed_out"], true, "{}", log[1]);
    assert_eq!(log[2]["warm"], true, "the next call ran warm: {}", log[2]);
    assert_eq!(log[2]["outcome"], "success", "{}", log[2]);
    std::thread::sleep(std::time::Duration::from_millis(3500));
    assert!(
        !marker.exists(),
        "the hung hook's child outlived its timeout and ran"
    );
}

/// `rein hooks warm` starts the interpreters a session would keep waiting and says what each
/// costs; a hook that cannot run warm starts none, and nothing is left running afterwards.
#[test]
fn hooks_warm_reports_what_the_waiting_interpreters_cost() {
    let s = Sandbox::new("proj", &["proj/.claude", "proj/hooks"]);
    s.write("hooks/cost.py", "import json, sys\njson.load(sys.stdin)\n");
    s.settings(
        json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": "python3 $CLAUDE_PROJECT_DIR/hooks/cost.py"},
        {"type": "command", "command": "echo cold | cat"}]}]}}),
    );
    let out = s.rein().args(["hooks", "warm", "--json"]).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let waiting = report["waiting"].as_array().unwrap();
    assert_eq!(waiting.len(), 1, "{report}");
    assert_eq!(waiting[0]["interpreter"], "python");
    assert!(
        waiting[0]["command"]
            .as_str()
            .unwrap()
            .ends_with("hooks/cost.py")
    );
    // The server and the pair it forked for the next call, at least.
    assert!(waiting[0]["processes"].as_u64().unwrap() >= 3, "{report}");
    let pss = waiting[0]["pss_kib"].as_u64().unwrap();
    assert!(
        pss > 1024,
        "a python interpreter costs more than 1 MiB: {report}"
    );
    assert_eq!(report["pss_kib_total"].as_u64().unwrap(), pss);
    assert_eq!(report["max_waiting"], 16);
    let count = || {
        std::process::Command::new("pgrep")
            .args(["-f", &format!("{}/hooks/cost.py", s.project.display())])
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).lines().count())
            .unwrap_or(0)
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while count() > 0 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert_eq!(count(), 0, "an interpreter outlived rein hooks warm");
    // The cap: none may wait, so none is started (the hook runs cold).
    let out = s
        .rein()
        .args(["hooks", "warm", "--json"])
        .env("REIN_WARM_HOOKS_MAX", "0")
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["waiting"], json!([]), "{report}");
    assert_eq!(report["max_waiting"], 0);
}

/// An interpreter that ignores rein's start hook (here a `python3` on PATH that runs the real
/// one with `-I`) is only found out after the start limit (20 s); the first call waits for it
/// at most a couple of seconds, then runs cold, and its answer is the cold run's.
#[test]
fn a_call_does_not_wait_long_for_an_interpreter_that_never_gets_ready() {
    let s = Sandbox::new("proj", &["proj/.claude", "proj/hooks"]);
    let python = real_python();
    s.write(
        "bin/python3",
        &format!("#!/bin/sh\nexec {python} -I \"$@\"\n"),
    );
    let wrapper = s.path("bin/python3");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    s.write(
        "hooks/guard.py",
        "import json, sys\nd = json.load(sys.stdin)\nprint('checked ' + d['tool_input']['command'], file=sys.stderr)\nsys.exit(2)\n",
    );
    s.settings(json!({"permissions": {"allow": ["Bash"]}, "hooks": {"PreToolUse": [{"matcher": "Bash",
        "hooks": [{"type": "command", "command": "python3 $CLAUDE_PROJECT_DIR/hooks/guard.py"}]}]}}));
    let victim = s.path("victim.txt");
    std::fs::write(&victim, "keep\n").unwrap();
    let script = s.mock(json!([
        {"tool_use": [{"name": "Bash", "input": {"command": format!("rm {}", victim.display())}}]},
        say("done")
    ]));
    let path = format!(
        "{}:{}",
        s.path("bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let started = std::time::Instant::now();
    let out = s
        .rein()
        .env("PATH", path)
        .args(["-p", "go", "--trust", "--mock-script"])
        .arg(&script)
        .output()
        .unwrap();
    let took = started.elapsed();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(victim.exists(), "the guard refused the call");
    let log = run_log(&s);
    assert_eq!(log.len(), 1, "{log:?}");
    assert_eq!(log[0]["warm"], false, "{}", log[0]);
    assert_eq!(log[0]["exit_code"], 2, "{}", log[0]);
    // Not the 20 s start limit: the wait for the interpreter is bounded.
    assert!(
        took < std::time::Duration::from_secs(12),
        "the call waited {took:?} for an interpreter that never got ready"
    );
}

/// Node calls back to back, each a fork of one waiting interpreter: every one runs warm once
/// it is ready, exactly once and in order, and is a process of its own as a fresh node is —
/// its own pid (the one `process.pid` says), and its own `Math.random` draws.
#[test]
fn node_calls_back_to_back_run_warm_as_processes_of_their_own() {
    let s = Sandbox::new("proj", &["proj/.claude", "proj/hooks"]);
    let ledger = s.path("ledger.txt");
    s.write(
        "hooks/b2b.js",
        &format!(
            "const fs = require('fs');\nconst d = JSON.parse(fs.readFileSync(0));\n\
             fs.appendFileSync({:?}, JSON.stringify({{event: d.hook_event_name, command: d.tool_input.command, \
             pid: process.pid, real: Number(fs.readlinkSync('/proc/self')), random: Math.random()}}) + '\\n');\n",
            ledger.display().to_string()
        ),
    );
    let commands: Vec<String> = (0..20).map(|i| format!("echo {i}")).collect();
    let refs: Vec<&str> = commands.iter().map(String::as_str).collect();
    let hook = json!([{"matcher": "Bash", "hooks": [
        {"type": "command", "command": "node $CLAUDE_PROJECT_DIR/hooks/b2b.js"}]}]);
    let out = session(&s, json!({"PreToolUse": hook, "PostToolUse": hook}), &refs);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<Value> = std::fs::read_to_string(&ledger)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let seen: Vec<String> = lines
        .iter()
        .map(|l| {
            format!(
                "{} {}",
                l["event"].as_str().unwrap(),
                l["command"].as_str().unwrap()
            )
        })
        .collect();
    let expected: Vec<String> = (0..20)
        .flat_map(|i| {
            [
                format!("PreToolUse echo {i}"),
                format!("PostToolUse echo {i}"),
            ]
        })
        .collect();
    assert_eq!(
        seen, expected,
        "each firing ran its hook exactly once, in order"
    );
    let log = run_log(&s);
    let first_warm = log
        .iter()
        .position(|l| l["warm"] == true)
        .expect("no call ran warm");
    assert!(
        log[first_warm..].iter().all(|l| l["warm"] == true),
        "once the interpreter was ready every call ran warm: {:?}",
        log.iter().map(|l| &l["warm"]).collect::<Vec<_>>()
    );
    assert!(
        first_warm <= 6,
        "the interpreter took {first_warm} calls to be ready"
    );
    for line in &lines {
        assert_eq!(
            line["pid"], line["real"],
            "process.pid is the call's own: {line}"
        );
    }
    let pids: std::collections::HashSet<String> =
        lines.iter().map(|l| l["pid"].to_string()).collect();
    assert_eq!(pids.len(), lines.len(), "a process per call");
    let draws: std::collections::HashSet<String> =
        lines.iter().map(|l| l["random"].to_string()).collect();
    assert_eq!(
        draws.len(),
        lines.len(),
        "Math.random draws the same numbers in two calls"
    );
}

/// Worker threads cannot end in a forked node (it has none of node's platform threads): a
/// script that names worker_threads runs cold and works; one that reaches them through
/// another module fails at once with the reason, rather than hanging until its timeout.
#[test]
fn a_node_hook_with_worker_threads_runs_cold_or_says_why() {
    let s = Sandbox::new("proj", &["proj/.claude", "proj/hooks"]);
    s.write(
        "hooks/threads.js",
        "const { Worker } = require('worker_threads');\nrequire('fs').readFileSync(0);\n\
         new Worker('require(\"worker_threads\").parentPort.postMessage(42)', { eval: true })\n\
         .on('message', (m) => console.log('worker says', m));\n",
    );
    s.write(
        "hooks/spawn.js",
        "module.exports = () => new (require('worker' + '_threads').Worker)('0', { eval: true });\n",
    );
    s.write(
        "hooks/indirect.js",
        "require('fs').readFileSync(0);\nrequire('./spawn.js')();\n",
    );
    let hooks = json!({"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": "node $CLAUDE_PROJECT_DIR/hooks/threads.js", "timeout": 20},
        {"type": "command", "command": "node $CLAUDE_PROJECT_DIR/hooks/indirect.js", "timeout": 20}]}]});
    s.settings(json!({"permissions": {"allow": ["Bash"]}, "hooks": hooks}));
    let steps = json!([
        {"tool_use": [{"name": "Bash", "input": {"command": "sleep 1"}}]},
        {"tool_use": [{"name": "Bash", "input": {"command": "echo b"}}]},
        say("done")
    ]);
    let script = s.mock(steps);
    let started = std::time::Instant::now();
    let out = s
        .rein()
        .args([
            "-p",
            "go",
            "--trust",
            "--output-format",
            "stream-json",
            "--verbose",
        ])
        .args(["--include-hook-events", "--mock-script"])
        .arg(&script)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        started.elapsed() < std::time::Duration::from_secs(15),
        "a hook waited for its timeout"
    );
    let responses: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["subtype"] == "hook_response")
        .collect();
    assert_eq!(responses.len(), 4);
    let log = run_log(&s);
    for l in log
        .iter()
        .filter(|l| l["command"].as_str().unwrap().contains("threads.js"))
    {
        assert_eq!(l["warm"], false, "{l}");
    }
    let threads: Vec<&Value> = responses
        .iter()
        .filter(|r| {
            r["stdout"]
                .as_str()
                .unwrap_or("")
                .contains("worker says 42")
        })
        .collect();
    assert_eq!(
        threads.len(),
        2,
        "the worker_threads script works, cold: {responses:?}"
    );
    let indirect_warm: Vec<&Value> = log
        .iter()
        .filter(|l| l["command"].as_str().unwrap().contains("indirect.js") && l["warm"] == true)
        .collect();
    assert!(
        !indirect_warm.is_empty(),
        "the indirect script never ran warm: {log:?}"
    );
    assert!(
        responses.iter().any(|r| r["stderr"]
            .as_str()
            .unwrap_or("")
            .contains("worker threads cannot run in a warm node hook; set \"warm\": false")),
        "{responses:?}"
    );
}
