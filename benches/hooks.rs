//! What a hook costs in rein, against the floor of spawning the same process bare.
//!
//! Run with `cargo bench --bench hooks` (release build; prints markdown tables to stdout).
//! `REIN_BENCH_ITERS=N` scales every section (default 200 for the single-hook section; the
//! heavier sections use a fraction of it, see [`Plan`]).
//!
//! Method: every section runs its variants **round-robin** (variant order rotated each round)
//! after a warm-up, so the noise of a small shared machine hits all variants alike; figures are
//! meant to be read as ratios and differences within one table, not as absolute wall times.
//!
//! Sections:
//! 1. floor: `/bin/sh -c <command>` spawned bare with `tokio::process`, the same stdin bytes
//!    written, stdout/stderr read, waited for;
//! 2. the same command through `command::run` (rein's process runner alone) and through
//!    `Dispatcher::fire` (selection, input serialization, spawn, drain, parse, merge, run log);
//! 3. fan-out: 1, 2, 4, 8 matching hooks on one event, rein and bare;
//! 4. selection: 500 handlers with regex matchers and `if` rules, none matching;
//! 5. `rein -p` sessions with the mock model (50 tool calls, 3 hooks per call vs none), start-up
//!    time against `/bin/true`, and peak RSS from `wait4`.
//!
//! Not part of `cargo test`; nothing here asserts a timing. The checks it does make (a hook
//! really ran and answered, nothing spawned when nothing matches, a session ran its 150 hooks)
//! abort the run, because figures of a broken setup would be meaningless.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use rein::hooks::command::{self, CommandForm, CommandSpec};
use rein::hooks::decision::{Decision, PermissionDecision, RunStatus};
use rein::hooks::dispatch::{Dispatcher, HookEnvironment};
use rein::hooks::event::{BaseInput, HookEvent, HookInput, PreToolUseInput};
use rein::hooks::matcher::{IfCondition, Matcher};
use rein::settings::schema::{
    CommandHandler, ConfiguredHandler, HandlerKind, HandlerOrigin, Location, OnFailure, Settings,
    SourceKind,
};
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;

const SESSION: &str = "0b3c2d1e-4f5a-4b6c-8d7e-9f0a1b2c3d4e";

/// The python hook: reads all of stdin, prints a PreToolUse allow.
const PY_CODE: &str = "import sys,json;sys.stdin.read();print(json.dumps({\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"allow\",\"permissionDecisionReason\":\"bench\"}}))";

/// Iteration counts per section, derived from one knob.
struct Plan {
    one_hook: usize,
    fan_sh: usize,
    fan_py: usize,
    selection: usize,
    startup: usize,
    session: usize,
}

impl Plan {
    fn from_env() -> Plan {
        let n = std::env::var("REIN_BENCH_ITERS")
            .ok()
            .and_then(|v| v.parse::<usize>().ok())
            .filter(|n| *n > 0)
            .unwrap_or(200);
        Plan {
            one_hook: n,
            fan_sh: n,
            fan_py: (n / 4).max(5),
            selection: n * 25,
            startup: n / 2 + 1,
            session: (n / 10).max(3),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Statistics and tables

struct Stats {
    n: usize,
    median: Duration,
    p95: Duration,
}

fn stats(samples: &[Duration]) -> Stats {
    let mut v = samples.to_vec();
    v.sort_unstable();
    let at = |q: f64| {
        // Nearest-rank percentile.
        let rank = ((q * v.len() as f64).ceil() as usize).clamp(1, v.len());
        v[rank - 1]
    };
    Stats {
        n: v.len(),
        median: at(0.5),
        p95: at(0.95),
    }
}

fn ms(d: Duration) -> String {
    let ms = d.as_secs_f64() * 1000.0;
    if ms >= 100.0 {
        format!("{ms:.1} ms")
    } else if ms >= 1.0 {
        format!("{ms:.2} ms")
    } else {
        format!("{:.1} µs", ms * 1000.0)
    }
}

fn signed_ms(a: Duration, b: Duration) -> String {
    if a >= b {
        format!("+{}", ms(a - b))
    } else {
        format!("−{}", ms(b - a))
    }
}

fn ratio(a: Duration, b: Duration) -> String {
    format!("{:.3}×", a.as_secs_f64() / b.as_secs_f64().max(1e-12))
}

/// Runs `variants` variants round-robin: `warmup` rounds discarded, then `iters` rounds, the
/// starting variant rotated each round. Returns the samples per variant.
fn interleave(
    variants: usize,
    warmup: usize,
    iters: usize,
    mut sample: impl FnMut(usize) -> Duration,
) -> Vec<Vec<Duration>> {
    let mut out = vec![Vec::with_capacity(iters); variants];
    for round in 0..warmup + iters {
        for k in 0..variants {
            let v = (round + k) % variants;
            let d = sample(v);
            if round >= warmup {
                out[v].push(d);
            }
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Fixture: settings built in code, the same shape the loader produces

struct Fixture {
    _tmp: tempfile::TempDir,
    project: PathBuf,
    home: PathBuf,
}

impl Fixture {
    fn new() -> Fixture {
        let tmp = tempfile::tempdir().expect("tempdir");
        let project = tmp.path().join("project");
        let home = tmp.path().join("home");
        std::fs::create_dir_all(&project).expect("mkdir project");
        std::fs::create_dir_all(&home).expect("mkdir home");
        let project = std::fs::canonicalize(project).expect("canonicalize");
        let home = std::fs::canonicalize(home).expect("canonicalize");
        Fixture {
            _tmp: tmp,
            project,
            home,
        }
    }

    /// The environment `rein -p` gives its dispatcher, run log included.
    fn env(&self) -> HookEnvironment {
        let rein_home = self.home.join(".rein");
        let mut env = HookEnvironment::new(
            &self.project,
            SESSION,
            rein_home.join("session-env").join(SESSION),
        );
        env.run_log = Some(rein_home.join("logs").join(format!("{SESSION}.jsonl")));
        env.output_dir = Some(rein_home.join("tool-results"));
        env.home = Some(self.home.clone());
        env
    }

    fn dispatcher(&self, handlers: Vec<ConfiguredHandler>) -> Dispatcher {
        Dispatcher::new(
            Settings {
                handlers,
                ..Settings::default()
            },
            self.env(),
        )
    }

    fn bash_input(&self, command: &str) -> HookInput {
        HookInput::PreToolUse(PreToolUseInput {
            base: BaseInput {
                session_id: SESSION.into(),
                transcript_path: self
                    .home
                    .join(".rein/projects/bench")
                    .join(format!("{SESSION}.jsonl"))
                    .to_string_lossy()
                    .into_owned(),
                cwd: self.project.to_string_lossy().into_owned(),
                prompt_id: Some("prompt-1".into()),
                permission_mode: Some("default".into()),
                effort: None,
            },
            hook_event_name: HookEvent::PreToolUse,
            tool_name: "Bash".into(),
            tool_input: json!({
                "command": command,
                "description": "List files in the project directory"
            }),
            tool_use_id: "toolu_01A2b3C4d5E6f7G8h9I0j1K2".into(),
        })
    }
}

fn handler(event: HookEvent, matcher: Option<&str>, command: &str) -> ConfiguredHandler {
    static LINE: AtomicU32 = AtomicU32::new(1);
    let line = LINE.fetch_add(1, Ordering::Relaxed);
    ConfiguredHandler {
        event: Some(event),
        matcher_text: matcher.map(str::to_string),
        matcher: Matcher::compile(Some(event), matcher),
        if_text: None,
        if_condition: None,
        kind: HandlerKind::Command(CommandHandler {
            command: command.into(),
            args: None,
            shell: None,
            is_async: false,
            async_rewake: false,
        }),
        timeout: None,
        status_message: None,
        on_failure: OnFailure::Continue,
        once: false,
        origin: HandlerOrigin {
            source: SourceKind::User,
            event_key: event.as_str().into(),
            group: 0,
            index: line as usize,
            location: Location {
                file: Arc::from("/bench/settings.json"),
                line,
                col: 5,
            },
        },
        inactive: None,
    }
}

/// `n` distinct copies of `command` (distinct so dedup keeps them all).
fn fan(command: &str, n: usize) -> Vec<ConfiguredHandler> {
    (0..n)
        .map(|i| {
            handler(
                HookEvent::PreToolUse,
                Some("Bash"),
                &format!("{command} # hook {i}"),
            )
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// The floor: a bare spawn

/// `/bin/sh -c <command>`: write `stdin`, read stdout and stderr to EOF, wait.
async fn bare_spawn(command: &str, stdin: &[u8]) -> std::process::Output {
    let mut child = tokio::process::Command::new("/bin/sh")
        .arg("-c")
        .arg(command)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn /bin/sh");
    let pipe = child.stdin.take();
    let write = async move {
        if let Some(mut pipe) = pipe {
            // A hook that exits without reading all of stdin gives EPIPE; that is fine here.
            let _ = pipe.write_all(stdin).await;
        }
    };
    let ((), out) = tokio::join!(write, child.wait_with_output());
    out.expect("wait for /bin/sh")
}

/// `n` bare spawns of `command` at once; checks that each exited 0 (and, for the python hook,
/// printed its JSON).
async fn floor(command: &str, stdin: &[u8], n: usize, expect_json: bool) -> Duration {
    let started = Instant::now();
    let outs = futures_util::future::join_all((0..n).map(|_| bare_spawn(command, stdin))).await;
    let elapsed = started.elapsed();
    for out in outs {
        assert!(
            out.status.success(),
            "floor run of {command:?} failed: {out:?}"
        );
        if expect_json {
            let v: Value = serde_json::from_slice(&out.stdout).expect("python hook JSON");
            assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "allow");
        }
    }
    elapsed
}

/// rein's process runner alone: the spec the dispatcher would build, minus the dispatcher.
async fn runner(spec: &CommandSpec, stdin: &[u8]) -> Duration {
    let started = Instant::now();
    let raw = command::run(spec, stdin).await;
    let elapsed = started.elapsed();
    assert_eq!(raw.status, RunStatus::Exited(0), "runner: {raw:?}");
    elapsed
}

/// What a fired event must have produced.
#[derive(Clone, Copy)]
enum Expect {
    /// `n` runs, each exited 0.
    Ran(usize),
    /// `n` runs and a merged allow.
    Allowed(usize),
    /// Nothing selected.
    Nothing,
}

fn check(decision: &Decision, expect: Expect) {
    let ran_ok = |n: usize| {
        decision.runs.len() == n
            && decision
                .runs
                .iter()
                .all(|r| r.status == RunStatus::Exited(0))
    };
    let ok = match expect {
        Expect::Ran(n) => ran_ok(n),
        Expect::Allowed(n) => {
            ran_ok(n) && matches!(decision.permission, Some(PermissionDecision::Allow { .. }))
        }
        Expect::Nothing => decision.runs.is_empty() && decision.permission.is_none(),
    };
    assert!(ok, "unexpected decision: {decision:#?}");
}

async fn fire(dispatcher: &Dispatcher, input: &HookInput, expect: Expect) -> Duration {
    let started = Instant::now();
    let decision = dispatcher.fire(input).await;
    let elapsed = started.elapsed();
    check(&decision, expect);
    elapsed
}

// ---------------------------------------------------------------------------------------------
// Child processes with their resource usage (sessions, start-up)

struct ProcRun {
    wall: Duration,
    /// Peak resident set of the child, KiB (`ru_maxrss` on Linux).
    maxrss_kib: i64,
}

/// Spawns `cmd` and reaps it with `wait4`, which gives the rusage of exactly that child.
fn run_child(cmd: &mut std::process::Command) -> ProcRun {
    let started = Instant::now();
    let child = cmd.spawn().expect("spawn child");
    let pid = libc::pid_t::try_from(child.id()).expect("pid fits pid_t");
    let mut status: libc::c_int = 0;
    // SAFETY: rusage is a plain C struct for which all-zero bytes are a valid value.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointers to locals; pid is our own unreaped child.
    let reaped = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    let wall = started.elapsed();
    assert_eq!(reaped, pid, "wait4 failed");
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "child {cmd:?} ended with status {status}"
    );
    // `child` was reaped above; dropping a std Child neither waits nor kills.
    drop(child);
    ProcRun {
        wall,
        maxrss_kib: usage.ru_maxrss,
    }
}

struct ReinRunner {
    bin: PathBuf,
    project: PathBuf,
    home: PathBuf,
}

impl ReinRunner {
    fn cmd(&self, args: &[String]) -> std::process::Command {
        let mut c = std::process::Command::new(&self.bin);
        c.args(args)
            .current_dir(&self.project)
            .env("HOME", &self.home)
            .env("REIN_HOME", self.home.join(".rein"))
            .env("REIN_MANAGED_SETTINGS_DIR", self.home.join("no-managed"))
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("OPENAI_API_KEY")
            .env_remove("REIN_PROVIDER")
            .env_remove("CLAUDE_CONFIG_DIR")
            .env_remove("REIN_LOG")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        c
    }
}

fn write_json(path: &Path, value: &Value) {
    std::fs::write(path, serde_json::to_vec_pretty(value).expect("json")).expect("write json");
}

/// Lines of every run log under `<home>/.rein/logs` (one line per hook run).
fn run_log_lines(home: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(home.join(".rein/logs")) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| {
            std::fs::read_to_string(e.path())
                .map(|t| t.lines().count())
                .unwrap_or(0)
        })
        .sum()
}

// ---------------------------------------------------------------------------------------------

fn real_python() -> String {
    let out = std::process::Command::new("python3")
        .args(["-c", "import sys;print(sys.executable)"])
        .output()
        .expect("python3 on PATH");
    assert!(out.status.success(), "python3 -c failed: {out:?}");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn which(program: &str) -> String {
    std::env::var_os("PATH")
        .and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|dir| dir.join(program))
                .find(|p| p.is_file())
        })
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| format!("{program} (not on PATH)"))
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` does not: then only check that it
    // built, instead of spending minutes measuring inside a test run.
    if !std::env::args().any(|a| a == "--bench") {
        println!("hooks bench: run it with `cargo bench --bench hooks`");
        return;
    }
    let plan = Plan::from_env();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let fx = Fixture::new();
    let started = Instant::now();

    let py_real = real_python();
    let sh_cmd = "cat >/dev/null".to_string();
    let py_shim_cmd = format!("python3 -c '{PY_CODE}'");
    let py_real_cmd = format!("{py_real} -c '{PY_CODE}'");

    let input = fx.bash_input("ls -la");
    let stdin = input.to_stdin_bytes();

    println!("# rein hook benchmarks\n");
    println!(
        "python3 on PATH: `{}`; real interpreter: `{py_real}`; stdin: {} bytes (PreToolUse Bash).\n",
        which("python3"),
        stdin.len()
    );

    // -- 1 + 2: one hook, floor vs rein ------------------------------------------------------
    struct Case {
        label: &'static str,
        command: String,
        json: bool,
        dispatcher: Dispatcher,
    }
    let cases: Vec<Case> = [
        ("sh `cat >/dev/null`", sh_cmd.clone(), false),
        ("python3 (pyenv shim)", py_shim_cmd.clone(), true),
        ("python3 (real path)", py_real_cmd.clone(), true),
    ]
    .into_iter()
    .map(|(label, command, json)| Case {
        label,
        dispatcher: fx.dispatcher(vec![handler(HookEvent::PreToolUse, Some("Bash"), &command)]),
        command,
        json,
    })
    .collect();
    // rein's runner alone, for the sh hook: the spec shape the dispatcher builds (process
    // group, env additions and removals, cwd), so "dispatcher − runner" isolates selection,
    // serialization, parse, merge and the run log.
    let mut runner_spec = CommandSpec::new(
        CommandForm::Shell(sh_cmd.clone()),
        fx.project.clone(),
        Duration::from_secs(600),
    );
    runner_spec.env = vec![
        (
            "CLAUDE_PROJECT_DIR".into(),
            fx.project.display().to_string(),
        ),
        ("CLAUDE_CODE_SESSION_ID".into(), SESSION.into()),
        ("AI_AGENT".into(), "rein_bench".into()),
        ("CLAUDE_CODE_SESSION_ATTENDED".into(), "0".into()),
        ("CLAUDE_PID".into(), std::process::id().to_string()),
    ];
    runner_spec.env_remove = vec!["CLAUDECODE".into(), "CLAUDE_ENV_FILE".into()];

    // Variants: per case floor then rein (0..6), then the sh runner (6).
    let one = interleave(cases.len() * 2 + 1, 5, plan.one_hook, |v| {
        rt.block_on(async {
            if v == cases.len() * 2 {
                return runner(&runner_spec, &stdin).await;
            }
            let case = &cases[v / 2];
            if v % 2 == 0 {
                floor(&case.command, &stdin, 1, case.json).await
            } else {
                let expect = if case.json {
                    Expect::Allowed(1)
                } else {
                    Expect::Ran(1)
                };
                fire(&case.dispatcher, &input, expect).await
            }
        })
    });
    println!("## One hook: bare spawn (floor) vs. rein\n");
    println!(
        "| hook | floor median | floor p95 | rein median | rein p95 | overhead (median) | rein / floor |"
    );
    println!("|---|---|---|---|---|---|---|");
    for (i, case) in cases.iter().enumerate() {
        let f = stats(&one[i * 2]);
        let r = stats(&one[i * 2 + 1]);
        println!(
            "| {} | {} | {} | {} | {} | {} | {} |",
            case.label,
            ms(f.median),
            ms(f.p95),
            ms(r.median),
            ms(r.p95),
            signed_ms(r.median, f.median),
            ratio(r.median, f.median)
        );
    }
    let f_sh = stats(&one[0]);
    let r_sh = stats(&one[1]);
    let run_sh = stats(&one[cases.len() * 2]);
    println!(
        "\nsh hook split: floor {} → `command::run` {} ({}) → `Dispatcher::fire` {} ({}); n = {} each.\n",
        ms(f_sh.median),
        ms(run_sh.median),
        signed_ms(run_sh.median, f_sh.median),
        ms(r_sh.median),
        signed_ms(r_sh.median, run_sh.median),
        f_sh.n
    );

    // -- 3: fan-out ----------------------------------------------------------------------------
    println!("## Fan-out: N matching hooks on one PreToolUse (run concurrently)\n");
    println!(
        "| hook | N | bare N concurrent (median) | rein median | rein p95 | rein N / rein 1 | rein / bare |"
    );
    println!("|---|---|---|---|---|---|---|");
    let fans = [1usize, 2, 4, 8];
    // Bare medians of the sh hook per N, for the session's per-call floor below.
    let mut sh_bare = [Duration::ZERO; 4];
    for (label, command, json, iters) in [
        ("sh `cat >/dev/null`", &sh_cmd, false, plan.fan_sh),
        ("python3 (real path)", &py_real_cmd, true, plan.fan_py),
    ] {
        let dispatchers: Vec<Dispatcher> = fans
            .iter()
            .map(|&n| fx.dispatcher(fan(command, n)))
            .collect();
        let samples = interleave(fans.len() * 2, 3, iters, |v| {
            let n = fans[v / 2];
            rt.block_on(async {
                if v % 2 == 0 {
                    floor(command, &stdin, n, json).await
                } else {
                    let expect = if json {
                        Expect::Allowed(n)
                    } else {
                        Expect::Ran(n)
                    };
                    fire(&dispatchers[v / 2], &input, expect).await
                }
            })
        });
        let rein_one = stats(&samples[1]).median;
        for (k, n) in fans.iter().enumerate() {
            let b = stats(&samples[k * 2]);
            let r = stats(&samples[k * 2 + 1]);
            if !json {
                sh_bare[k] = b.median;
            }
            println!(
                "| {label} | {n} | {} | {} | {} | {} | {} |",
                ms(b.median),
                ms(r.median),
                ms(r.p95),
                ratio(r.median, rein_one),
                ratio(r.median, b.median)
            );
        }
    }
    println!();

    // -- 4: selection -------------------------------------------------------------------------
    let marker = fx.project.join("selection-ran.flag");
    let touch = format!("touch '{}'", marker.display());
    let mut many = Vec::with_capacity(500);
    for i in 0..250 {
        // Regex matchers that do not accept Bash (the common MCP pattern, and an alternation).
        let m = if i % 2 == 0 {
            format!("mcp__server{i}__.*")
        } else {
            format!("^(Write|Edit|Notebook{i})$")
        };
        many.push(handler(
            HookEvent::PreToolUse,
            Some(&m),
            &format!("{touch} # {i}"),
        ));
    }
    for i in 250..500 {
        // Matchers that do accept Bash, with an `if` that does not hold for `ls -la`.
        let mut h = handler(
            HookEvent::PreToolUse,
            Some("^(Bash|Shell)$"),
            &format!("{touch} # {i}"),
        );
        let rule = format!("Bash(git push --force origin branch-{i}*)");
        h.if_condition = Some(IfCondition::parse(&rule).expect("if rule"));
        h.if_text = Some(rule);
        many.push(h);
    }
    let selection_dispatcher = fx.dispatcher(many);
    let empty_dispatcher = fx.dispatcher(Vec::new());
    let sel = interleave(2, 100, plan.selection, |v| {
        rt.block_on(async {
            if v == 0 {
                fire(&selection_dispatcher, &input, Expect::Nothing).await
            } else {
                fire(&empty_dispatcher, &input, Expect::Nothing).await
            }
        })
    });
    assert!(
        selection_dispatcher.select(&input).is_empty() && !marker.exists(),
        "a handler ran although none should match"
    );
    let s500 = stats(&sel[0]);
    let s0 = stats(&sel[1]);
    println!("## Selection: 500 handlers, none matching (no process spawned)\n");
    println!("| settings | n | median | p95 | per handler (median) |");
    println!("|---|---|---|---|---|");
    println!(
        "| 500 handlers (250 regex matchers not matching, 250 matching with a failing `if`) | {} | {} | {} | {:.0} ns |",
        s500.n,
        ms(s500.median),
        ms(s500.p95),
        s500.median.saturating_sub(s0.median).as_secs_f64() * 1e9 / 500.0
    );
    println!(
        "| no handlers | {} | {} | {} | – |\n",
        s0.n,
        ms(s0.median),
        ms(s0.p95)
    );

    // -- 5: sessions and start-up -----------------------------------------------------------------
    let rein = ReinRunner {
        bin: PathBuf::from(env!("CARGO_BIN_EXE_rein")),
        project: fx.project.clone(),
        home: fx.home.clone(),
    };
    let calls = 50usize;
    let mut turns: Vec<Value> = (0..calls)
        .map(|i| json!({"tool_use": [{"name": "Bash", "input": {"command": format!("true {i}")}}]}))
        .collect();
    turns.push(json!({"text": "done"}));
    let session_script = fx.project.join("session.json");
    write_json(&session_script, &Value::Array(turns));
    let trivial_script = fx.project.join("trivial.json");
    write_json(&trivial_script, &json!([{"text": "ok"}]));
    let no_hooks = fx.project.join("no-hooks.json");
    write_json(&no_hooks, &json!({}));
    let hook = |c: &str| json!({"type": "command", "command": c});
    let three_hooks = fx.project.join("three-hooks.json");
    write_json(
        &three_hooks,
        &json!({"hooks": {
            "PreToolUse": [{"matcher": "Bash", "hooks": [
                hook("cat >/dev/null # guard"),
                hook("cat >/dev/null # audit")
            ]}],
            "PostToolUse": [{"matcher": "Bash", "hooks": [hook("cat >/dev/null # log")]}]
        }}),
    );
    let session_args = |settings: &Path| {
        vec![
            "-p".to_string(),
            "run the scripted session".to_string(),
            "--mock-script".to_string(),
            session_script.display().to_string(),
            "--settings".to_string(),
            settings.display().to_string(),
            "--max-turns".to_string(),
            "1000".to_string(),
            "--dangerously-skip-permissions".to_string(),
        ]
    };
    let args_none = session_args(&no_hooks);
    let args_hooks = session_args(&three_hooks);

    // Check once that the hooked session really runs 3 hooks per call, and the other none.
    let before = run_log_lines(&fx.home);
    run_child(&mut rein.cmd(&args_hooks));
    let hooked_runs = run_log_lines(&fx.home) - before;
    assert_eq!(hooked_runs, calls * 3, "hook runs in one hooked session");
    let before = run_log_lines(&fx.home);
    run_child(&mut rein.cmd(&args_none));
    assert_eq!(run_log_lines(&fx.home), before, "hook runs without hooks");

    let mut rss = [0i64; 4];
    let startup_args = [
        "-p",
        "hi",
        "--mock-script",
        &trivial_script.display().to_string(),
        "--settings",
        &no_hooks.display().to_string(),
    ]
    .map(str::to_string);
    let startup = interleave(2, 5, plan.startup, |v| {
        let run = if v == 0 {
            run_child(
                std::process::Command::new("/bin/true")
                    .stdin(Stdio::null())
                    .stdout(Stdio::null()),
            )
        } else {
            run_child(&mut rein.cmd(&startup_args))
        };
        rss[v] = rss[v].max(run.maxrss_kib);
        run.wall
    });
    let sessions = interleave(2, 1, plan.session, |v| {
        let args = if v == 0 { &args_none } else { &args_hooks };
        let run = run_child(&mut rein.cmd(args));
        rss[2 + v] = rss[2 + v].max(run.maxrss_kib);
        run.wall
    });
    let t_true = stats(&startup[0]);
    let t_rein = stats(&startup[1]);
    let s_none = stats(&sessions[0]);
    let s_hooks = stats(&sessions[1]);
    println!("## `rein -p` with the mock model\n");
    println!("| run | n | median | p95 | peak RSS (max) |");
    println!("|---|---|---|---|---|");
    let row = |label: &str, s: &Stats, kib: i64| {
        println!(
            "| {label} | {} | {} | {} | {:.1} MiB |",
            s.n,
            ms(s.median),
            ms(s.p95),
            kib as f64 / 1024.0
        );
    };
    row("`/bin/true`", &t_true, rss[0]);
    row("`rein -p hi`, no hooks (start-up)", &t_rein, rss[1]);
    row(
        &format!("session: {calls} Bash calls, no hooks"),
        &s_none,
        rss[2],
    );
    row(
        &format!("session: {calls} Bash calls, 3 hooks per call (2 Pre + 1 Post)"),
        &s_hooks,
        rss[3],
    );
    let added = s_hooks.median.saturating_sub(s_none.median);
    let per_call = added / u32::try_from(calls).unwrap_or(1);
    let call_floor = sh_bare[1] + sh_bare[0];
    println!(
        "\nStart-up: rein − `/bin/true` = {}. Hooks add {} per session = {} per tool call \
         (one PreToolUse phase of 2 concurrent hooks + one PostToolUse phase of 1 hook); the \
         bare floor of those two phases (fan-out table: 2 concurrent + 1) is {} → {}.\n",
        signed_ms(t_rein.median, t_true.median),
        ms(added),
        ms(per_call),
        ms(call_floor),
        ratio(per_call, call_floor),
    );
    println!(
        "Total bench time: {:.1} s.",
        started.elapsed().as_secs_f64()
    );
}
