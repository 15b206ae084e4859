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

// Why: a benchmark may panic on a setup failure; its figures would be meaningless anyway.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use rein::hooks::command::{self, CommandForm, CommandSpec};
use rein::hooks::dispatch::{Dispatcher, HookEnvironment, Target};
use rein::hooks::events::post_tool_use::PostToolUseInput;
use rein::hooks::events::pre_tool_use::{PermissionDecision, PreToolUseInput};
use rein::hooks::events::{BaseInput, Common, PostToolUse, PreToolUse, stdin_bytes};
use rein::hooks::matcher::{IfCondition, Matcher};
use rein::hooks::run::RunStatus;
use rein::hooks::spec::HookEvent;
use rein::settings::schema::{
    CommandHandler, ConfiguredHandler, HandlerKind, HandlerOrigin, Location, OnFailure, Settings,
    SourceKind,
};
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;

const SESSION: &str = "0b3c2d1e-4f5a-4b6c-8d7e-9f0a1b2c3d4e";

/// The python hook: reads all of stdin, prints a PreToolUse allow.
const PY_CODE: &str = "import sys,json;sys.stdin.read();print(json.dumps({\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"allow\",\"permissionDecisionReason\":\"bench\"}}))";

/// Iteration counts per section, derived from one knob (`REIN_BENCH_ITERS`, default 200), so
/// the whole run stays within a few minutes on a loaded 2-core machine.
struct Plan {
    sh: usize,
    py_real: usize,
    py_shim: usize,
    fan_sh: usize,
    fan_py: usize,
    selection: usize,
    startup: usize,
    session: usize,
    /// Sections to run (`REIN_BENCH_ONLY=one,fan,call,selection,session`); all when unset.
    only: Option<Vec<String>>,
}

impl Plan {
    fn from_env() -> Plan {
        let n = std::env::var("REIN_BENCH_ITERS")
            .ok()
            .and_then(|v| v.parse::<usize>().ok())
            .filter(|n| *n > 0)
            .unwrap_or(200);
        Plan {
            sh: n,
            py_real: (n / 2).max(3),
            py_shim: (n / 4).max(3),
            fan_sh: n,
            fan_py: (n / 10).max(3),
            selection: n * 25,
            startup: (n / 2).max(3),
            session: (n / 10).max(3),
            only: std::env::var("REIN_BENCH_ONLY")
                .ok()
                .map(|v| v.split(',').map(|s| s.trim().to_string()).collect()),
        }
    }

    fn runs(&self, section: &str) -> bool {
        self.only
            .as_ref()
            .is_none_or(|only| only.iter().any(|s| s == section))
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
            (Settings {
                handlers,
                ..Settings::default()
            })
            .handlers,
            self.env(),
        )
    }

    fn bash_input(&self, command: &str) -> PreToolUseInput {
        PreToolUseInput {
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
        }
    }
}

impl Fixture {
    /// The PostToolUse of [`Fixture::bash_input`]'s call.
    fn post_bash_input(&self) -> PostToolUseInput {
        let pre = self.bash_input("ls -la");
        PostToolUseInput {
            base: pre.base,
            hook_event_name: HookEvent::PostToolUse,
            tool_name: pre.tool_name,
            tool_input: pre.tool_input,
            tool_response: json!({
                "stdout": "total 8\ndrwxr-xr-x 2 user user 4096 Dec  2 12:00 .\n",
                "stderr": "",
                "interrupted": false,
                "isImage": false
            }),
            tool_use_id: pre.tool_use_id,
            duration_ms: 3,
        }
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

fn check(decision: &Common, permission: Option<&PermissionDecision>, expect: Expect) {
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
            ran_ok(n) && matches!(permission, Some(PermissionDecision::Allow { .. }))
        }
        Expect::Nothing => decision.runs.is_empty() && permission.is_none(),
    };
    assert!(ok, "unexpected decision: {decision:#?} {permission:?}");
}

async fn fire(dispatcher: &Dispatcher, input: &PreToolUseInput, expect: Expect) -> Duration {
    let started = Instant::now();
    let outcome = dispatcher.fire::<PreToolUse>(input).await;
    let elapsed = started.elapsed();
    check(&outcome.common, outcome.permission.as_ref(), expect);
    elapsed
}

// ---------------------------------------------------------------------------------------------
// Child processes with their resource usage (sessions, start-up)

/// Spawns `cmd` and waits for it; the wall time from spawn to reaped.
fn run_child(cmd: &mut std::process::Command) -> Duration {
    let started = Instant::now();
    let status = cmd.status().expect("spawn child");
    let wall = started.elapsed();
    assert!(status.success(), "child {cmd:?} ended with {status}");
    wall
}

/// Argument that turns the bench binary into [`rss_helper`].
const RSS_HELPER: &str = "--rss-helper";

/// Peak RSS of `program args…` in KiB, measured by a fresh copy of this binary
/// ([`rss_helper`]).
///
/// Why not `wait4` on a child of the bench itself: Linux records the RSS high-water mark of the
/// address space a process `exec`s *from* in its `maxrss`, and `std` spawns with
/// `vfork`/`posix_spawn`, whose pre-exec address space is the parent's — every child would
/// report at least the bench's own RSS. A small fresh process that `fork`s (its own small
/// image is copied) and `exec`s gives the child's figure; `/bin/true` measured the same way
/// shows what is left of the helper in it.
fn peak_rss_kib(program: &Path, args: &[String], base: &std::process::Command) -> i64 {
    let exe = std::env::current_exe().expect("current exe");
    let mut cmd = std::process::Command::new(exe);
    cmd.arg(RSS_HELPER).arg(program).args(args);
    if let Some(dir) = base.get_current_dir() {
        cmd.current_dir(dir);
    }
    for (key, value) in base.get_envs() {
        match value {
            Some(value) => cmd.env(key, value),
            None => cmd.env_remove(key),
        };
    }
    let out = cmd.stdin(Stdio::null()).output().expect("rss helper");
    assert!(out.status.success(), "rss helper failed: {out:?}");
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .expect("rss helper prints KiB")
}

/// `hooks --rss-helper PROGRAM ARGS…`: fork, exec PROGRAM with stdout/stderr on /dev/null,
/// `wait4` it, print its `ru_maxrss` (KiB) and exit with 0 if it succeeded.
fn rss_helper(argv: &[String]) -> ! {
    use std::ffi::CString;
    let args: Vec<CString> = argv
        .iter()
        .map(|a| CString::new(a.as_bytes()).expect("no NUL in args"))
        .collect();
    let mut ptrs: Vec<*const libc::c_char> = args.iter().map(|a| a.as_ptr()).collect();
    ptrs.push(std::ptr::null());
    let devnull = CString::new("/dev/null").expect("literal");
    // SAFETY: fork in a single-threaded process (this helper starts no threads); the child
    // only calls async-signal-safe functions (open, dup2, execv, _exit) on data prepared
    // before the fork.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        // SAFETY: see above.
        unsafe {
            let fd = libc::open(devnull.as_ptr(), libc::O_WRONLY);
            if fd >= 0 {
                libc::dup2(fd, 1);
                libc::dup2(fd, 2);
            }
            libc::execv(ptrs[0], ptrs.as_ptr());
            libc::_exit(127);
        }
    }
    assert!(pid > 0, "fork failed");
    let mut status: libc::c_int = 0;
    // SAFETY: rusage is a plain C struct for which all-zero bytes are a valid value.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointers to locals; pid is our own unreaped child.
    let reaped = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(reaped, pid, "wait4 failed");
    println!("{}", usage.ru_maxrss);
    let ok = libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0;
    std::process::exit(if ok { 0 } else { 1 });
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

/// Everything the sections share.
struct Ctx {
    plan: Plan,
    rt: tokio::runtime::Runtime,
    fx: Fixture,
    input: PreToolUseInput,
    stdin: Vec<u8>,
    sh_cmd: String,
    py_shim_cmd: String,
    py_real_cmd: String,
    /// Bare medians of the sh hook at N = 1, 2, 4, 8 (fan-out), for the session's floor.
    sh_bare: [Duration; 4],
}

/// One row of the single-hook table.
struct OneRow {
    label: &'static str,
    floor: Vec<Duration>,
    rein: Vec<Duration>,
}

impl OneRow {
    fn print(&self) {
        let f = stats(&self.floor);
        let r = stats(&self.rein);
        // Rounds are interleaved, so floor[i] and rein[i] ran back to back: the median of the
        // pairwise differences is less sensitive to load drifting during the run.
        let mut paired: Vec<f64> = self
            .floor
            .iter()
            .zip(&self.rein)
            .map(|(f, r)| r.as_secs_f64() - f.as_secs_f64())
            .collect();
        paired.sort_unstable_by(f64::total_cmp);
        let paired = paired.get(paired.len() / 2).copied().unwrap_or(0.0);
        let paired = if paired >= 0.0 {
            format!("+{}", ms(Duration::from_secs_f64(paired)))
        } else {
            format!("−{}", ms(Duration::from_secs_f64(-paired)))
        };
        println!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            self.label,
            f.n,
            ms(f.median),
            ms(f.p95),
            ms(r.median),
            ms(r.p95),
            signed_ms(r.median, f.median),
            paired,
            ratio(r.median, f.median)
        );
    }
}

fn expect_for(json: bool, n: usize) -> Expect {
    if json {
        Expect::Allowed(n)
    } else {
        Expect::Ran(n)
    }
}

/// Sections 1 + 2: one hook, bare vs. rein; the sh hook also through `command::run` alone.
fn section_one_hook(ctx: &Ctx) {
    let Ctx {
        rt,
        fx,
        input,
        stdin,
        ..
    } = ctx;
    let one =
        |command: &str| fx.dispatcher(vec![handler(HookEvent::PreToolUse, Some("Bash"), command)]);

    // rein's runner alone: the spec shape the dispatcher builds (process group, env additions
    // and removals, cwd), so "dispatcher − runner" isolates selection, serialization, output
    // parsing, merge and the run log.
    let mut spec = CommandSpec::new(
        CommandForm::Shell(ctx.sh_cmd.clone()),
        fx.project.clone(),
        Duration::from_secs(600),
    );
    spec.env = vec![
        (
            "CLAUDE_PROJECT_DIR".into(),
            fx.project.display().to_string(),
        ),
        ("CLAUDE_CODE_SESSION_ID".into(), SESSION.into()),
        ("AI_AGENT".into(), "rein_bench".into()),
        ("CLAUDE_CODE_SESSION_ATTENDED".into(), "0".into()),
        ("CLAUDE_PID".into(), std::process::id().to_string()),
    ];
    spec.env_remove = vec!["CLAUDECODE".into(), "CLAUDE_ENV_FILE".into()];
    let sh = one(&ctx.sh_cmd);
    let mut sh_samples = interleave(3, 10, ctx.plan.sh, |v| {
        rt.block_on(async {
            match v {
                0 => floor(&ctx.sh_cmd, stdin, 1, false).await,
                1 => runner(&spec, stdin).await,
                _ => fire(&sh, input, Expect::Ran(1)).await,
            }
        })
    });
    let sh_fire = sh_samples.pop().unwrap_or_default();
    let sh_runner = sh_samples.pop().unwrap_or_default();
    let sh_floor = sh_samples.pop().unwrap_or_default();

    let mut rows = Vec::new();
    for (label, command, iters) in [
        ("python3 (pyenv shim)", &ctx.py_shim_cmd, ctx.plan.py_shim),
        ("python3 (real path)", &ctx.py_real_cmd, ctx.plan.py_real),
    ] {
        let d = one(command);
        let mut s = interleave(2, 3, iters, |v| {
            rt.block_on(async {
                if v == 0 {
                    floor(command, stdin, 1, true).await
                } else {
                    fire(&d, input, Expect::Allowed(1)).await
                }
            })
        });
        let rein = s.pop().unwrap_or_default();
        let floor = s.pop().unwrap_or_default();
        rows.push(OneRow { label, floor, rein });
    }

    println!("## One hook: bare spawn (floor) vs. rein `Dispatcher::fire`\n");
    println!(
        "| hook | n | floor median | floor p95 | rein median | rein p95 | overhead (Δ medians) | overhead (paired median) | rein / floor |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    OneRow {
        label: "sh `cat >/dev/null`, `command::run` only",
        floor: sh_floor.clone(),
        rein: sh_runner.clone(),
    }
    .print();
    OneRow {
        label: "sh `cat >/dev/null`",
        floor: sh_floor,
        rein: sh_fire,
    }
    .print();
    for row in &rows {
        row.print();
    }
    println!();
}

/// Section 3: N matching hooks on one event, rein and bare.
fn section_fan_out(ctx: &mut Ctx) {
    println!("## Fan-out: N matching hooks on one PreToolUse (they run concurrently)\n");
    println!(
        "| hook | N | n | bare N concurrent (median) | rein median | rein p95 | rein N / rein 1 | bare N / bare 1 | rein / bare |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    let fans = [1usize, 2, 4, 8];
    let cases = [
        (
            "sh `cat >/dev/null`",
            ctx.sh_cmd.clone(),
            false,
            ctx.plan.fan_sh,
        ),
        (
            "python3 (real path)",
            ctx.py_real_cmd.clone(),
            true,
            ctx.plan.fan_py,
        ),
    ];
    for (label, command, json, iters) in cases {
        let dispatchers: Vec<Dispatcher> = fans
            .iter()
            .map(|&n| ctx.fx.dispatcher(fan(&command, n)))
            .collect();
        let samples = interleave(fans.len() * 2, 3, iters, |v| {
            let n = fans[v / 2];
            ctx.rt.block_on(async {
                if v.is_multiple_of(2) {
                    floor(&command, &ctx.stdin, n, json).await
                } else {
                    fire(&dispatchers[v / 2], &ctx.input, expect_for(json, n)).await
                }
            })
        });
        let rein_one = stats(&samples[1]).median;
        let bare_one = stats(&samples[0]).median;
        for (k, n) in fans.iter().enumerate() {
            let b = stats(&samples[k * 2]);
            let r = stats(&samples[k * 2 + 1]);
            if !json {
                ctx.sh_bare[k] = b.median;
            }
            println!(
                "| {label} | {n} | {} | {} | {} | {} | {} | {} | {} |",
                r.n,
                ms(b.median),
                ms(r.median),
                ms(r.p95),
                ratio(r.median, rein_one),
                ratio(b.median, bare_one),
                ratio(r.median, b.median)
            );
        }
    }
    println!();
}

/// The tool itself in the call sequence: `/bin/bash -c true`, as the Bash tool spawns it.
async fn bash_true() {
    let status = tokio::process::Command::new("/bin/bash")
        .args(["-c", "true"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .await
        .expect("spawn /bin/bash");
    assert!(status.status.success(), "bash -c true failed");
}

/// Section 3b: one tool call's hook phases in-process, shaped like the session below: a
/// PreToolUse phase of 2 concurrent hooks, the tool, a PostToolUse phase of 1 hook.
fn section_call(ctx: &Ctx) {
    let fx = &ctx.fx;
    let sh = &ctx.sh_cmd;
    let pre = fx.dispatcher(vec![
        handler(
            HookEvent::PreToolUse,
            Some("Bash"),
            &format!("{sh} # guard"),
        ),
        handler(
            HookEvent::PreToolUse,
            Some("Bash"),
            &format!("{sh} # audit"),
        ),
    ]);
    let post = fx.dispatcher(vec![handler(
        HookEvent::PostToolUse,
        Some("Bash"),
        &format!("{sh} # log"),
    )]);
    let post_input = fx.post_bash_input();
    let post_stdin = stdin_bytes(&post_input);
    let samples = interleave(3, 5, ctx.plan.fan_sh, |v| {
        ctx.rt.block_on(async {
            let started = Instant::now();
            match v {
                0 => bash_true().await,
                1 => {
                    floor(sh, &ctx.stdin, 2, false).await;
                    bash_true().await;
                    floor(sh, &post_stdin, 1, false).await;
                }
                _ => {
                    {
                        let o = pre.fire::<PreToolUse>(&ctx.input).await;
                        check(&o.common, o.permission.as_ref(), Expect::Ran(2));
                    }
                    bash_true().await;
                    check(
                        &post.fire::<PostToolUse>(&post_input).await.common,
                        None,
                        Expect::Ran(1),
                    );
                }
            }
            started.elapsed()
        })
    });
    let tool = stats(&samples[0]);
    let bare = stats(&samples[1]);
    let rein = stats(&samples[2]);
    println!("## One tool call in-process: Pre (2 hooks) → `bash -c true` → Post (1 hook)\n");
    println!("| sequence | n | median | p95 | hooks' share (median − tool alone) |");
    println!("|---|---|---|---|---|");
    println!(
        "| tool alone (`/bin/bash -c true`) | {} | {} | {} | – |",
        tool.n,
        ms(tool.median),
        ms(tool.p95)
    );
    println!(
        "| bare spawns around the tool | {} | {} | {} | {} |",
        bare.n,
        ms(bare.median),
        ms(bare.p95),
        ms(bare.median.saturating_sub(tool.median))
    );
    println!(
        "| rein `fire` around the tool | {} | {} | {} | {} |",
        rein.n,
        ms(rein.median),
        ms(rein.p95),
        ms(rein.median.saturating_sub(tool.median))
    );
    println!(
        "\nrein / bare for the hook share: {}.\n",
        ratio(
            rein.median.saturating_sub(tool.median),
            bare.median.saturating_sub(tool.median)
        )
    );
}

/// Section 4: 500 handlers, none matching.
fn section_selection(ctx: &Ctx) {
    let fx = &ctx.fx;
    let marker = fx.project.join("selection-ran.flag");
    let touch = format!("touch '{}'", marker.display());
    // Regex matchers that do not accept Bash (the common MCP pattern, and an alternation).
    let regex_miss = |i: usize| {
        let m = if i.is_multiple_of(2) {
            format!("mcp__server{i}__.*")
        } else {
            format!("^(Write|Edit|Notebook{i})$")
        };
        handler(HookEvent::PreToolUse, Some(&m), &format!("{touch} # {i}"))
    };
    // Matchers that do accept Bash, with an `if` that does not hold for `ls -la`.
    let if_miss = |i: usize| {
        let mut h = handler(
            HookEvent::PreToolUse,
            Some("^(Bash|Shell)$"),
            &format!("{touch} # {i}"),
        );
        let rule = format!("Bash(git push --force origin branch-{i}*)");
        h.if_condition = Some(IfCondition::parse(&rule).expect("if rule"));
        h.if_text = Some(rule);
        h
    };
    let mixed: Vec<ConfiguredHandler> = (0..500)
        .map(|i| if i < 250 { regex_miss(i) } else { if_miss(i) })
        .collect();
    let variants = [
        (
            "500: 250 regex matchers not matching + 250 matching with a failing `if`",
            fx.dispatcher(mixed),
        ),
        (
            "500 regex matchers, none matching",
            fx.dispatcher((0..500).map(regex_miss).collect()),
        ),
        (
            "500 matching matchers, each with a failing `if`",
            fx.dispatcher((0..500).map(if_miss).collect()),
        ),
        ("no handlers", fx.dispatcher(Vec::new())),
    ];
    let samples = interleave(variants.len(), 100, ctx.plan.selection, |v| {
        ctx.rt
            .block_on(fire(&variants[v].1, &ctx.input, Expect::Nothing))
    });
    for (_, d) in &variants {
        assert!(
            d.select(&Target::of::<PreToolUse>(&ctx.input)).is_empty(),
            "a handler was selected"
        );
    }
    assert!(!marker.exists(), "a handler ran although none matches");
    let empty = stats(&samples[variants.len() - 1]).median;
    println!(
        "## Selection: 500 handlers, none matching (`Dispatcher::fire`, no process spawned)\n"
    );
    println!("| settings | n | median | p95 | per handler (median − empty) |");
    println!("|---|---|---|---|---|");
    for ((label, _), s) in variants.iter().zip(&samples) {
        let s = stats(s);
        let per = if *label == "no handlers" {
            "–".to_string()
        } else {
            format!(
                "{:.0} ns",
                s.median.saturating_sub(empty).as_secs_f64() * 1e9 / 500.0
            )
        };
        println!(
            "| {label} | {} | {} | {} | {per} |",
            s.n,
            ms(s.median),
            ms(s.p95)
        );
    }
    println!();
}

/// Section 5: `rein -p` sessions and start-up, with peak RSS.
fn section_sessions(ctx: &Ctx) {
    let fx = &ctx.fx;
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
    let path = |p: &Path| p.display().to_string();
    let session_args = |settings: &Path| -> Vec<String> {
        [
            "-p",
            "run the scripted session",
            "--mock-script",
            &path(&session_script),
            "--settings",
            &path(settings),
            "--max-turns",
            "1000",
            "--allowedTools",
            "Bash",
        ]
        .map(str::to_string)
        .to_vec()
    };
    let args_none = session_args(&no_hooks);
    let args_hooks = session_args(&three_hooks);
    let args_startup: Vec<String> = [
        "-p",
        "hi",
        "--mock-script",
        &path(&trivial_script),
        "--settings",
        &path(&no_hooks),
    ]
    .map(str::to_string)
    .to_vec();

    // Check once that the hooked session really runs 3 hooks per call, and the other none.
    let before = run_log_lines(&fx.home);
    run_child(&mut rein.cmd(&args_hooks));
    assert_eq!(
        run_log_lines(&fx.home) - before,
        calls * 3,
        "hook runs in one hooked session"
    );
    let before = run_log_lines(&fx.home);
    run_child(&mut rein.cmd(&args_none));
    assert_eq!(run_log_lines(&fx.home), before, "hook runs without hooks");

    let startup = interleave(2, 5, ctx.plan.startup, |v| {
        if v == 0 {
            run_child(
                std::process::Command::new("/bin/true")
                    .stdin(Stdio::null())
                    .stdout(Stdio::null()),
            )
        } else {
            run_child(&mut rein.cmd(&args_startup))
        }
    });
    let sessions = interleave(2, 1, ctx.plan.session, |v| {
        run_child(&mut rein.cmd(if v == 0 { &args_none } else { &args_hooks }))
    });
    // Peak RSS: a few runs each, the largest.
    let rss = |program: &Path, args: &[String], base: &std::process::Command| {
        (0..3)
            .map(|_| peak_rss_kib(program, args, base))
            .max()
            .unwrap_or(0)
    };
    let plain = std::process::Command::new("/bin/true");
    let rss_true = rss(Path::new("/bin/true"), &[], &plain);
    let rss_startup = rss(&rein.bin, &args_startup, &rein.cmd(&[]));
    let rss_none = rss(&rein.bin, &args_none, &rein.cmd(&[]));
    let rss_hooks = rss(&rein.bin, &args_hooks, &rein.cmd(&[]));

    let t_true = stats(&startup[0]);
    let t_rein = stats(&startup[1]);
    let s_none = stats(&sessions[0]);
    let s_hooks = stats(&sessions[1]);
    println!("## `rein -p` with the mock model (the real binary, release build)\n");
    println!("| run | n | median | p95 | peak RSS |");
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
    row("`/bin/true`", &t_true, rss_true);
    row("`rein -p hi`, no hooks (start-up)", &t_rein, rss_startup);
    row(
        &format!("session: {calls} Bash calls, no hooks"),
        &s_none,
        rss_none,
    );
    row(
        &format!("session: {calls} Bash calls, 3 hooks per call (2 Pre + 1 Post)"),
        &s_hooks,
        rss_hooks,
    );
    let added = s_hooks.median.saturating_sub(s_none.median);
    let per_call = added / u32::try_from(calls).unwrap_or(1);
    println!(
        "\nStart-up: rein − `/bin/true` = {} (medians). Hooks add {} per session = {} per tool \
         call (one PreToolUse phase of 2 concurrent hooks + one PostToolUse phase of 1 hook).",
        signed_ms(t_rein.median, t_true.median),
        ms(added),
        ms(per_call),
    );
    if ctx.sh_bare[0] > Duration::ZERO {
        let call_floor = ctx.sh_bare[1] + ctx.sh_bare[0];
        println!(
            "Bare floor of those two phases (fan-out table, bare 2 concurrent + bare 1): {} → \
             per-call hook cost / floor = {}.",
            ms(call_floor),
            ratio(per_call, call_floor),
        );
    }
    println!();
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some(RSS_HELPER) {
        rss_helper(&args[2..]);
    }
    // `cargo bench` passes `--bench`; `cargo test --benches` does not: then only say how to
    // run it, instead of spending minutes measuring inside a test run.
    if !args.iter().any(|a| a == "--bench") {
        println!("hooks bench: run it with `cargo bench --bench hooks`");
        return;
    }
    let started = Instant::now();
    let fx = Fixture::new();
    let py_real = real_python();
    let input = fx.bash_input("ls -la");
    let mut ctx = Ctx {
        plan: Plan::from_env(),
        rt: tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .expect("tokio runtime"),
        stdin: stdin_bytes(&input),
        input,
        fx,
        sh_cmd: "cat >/dev/null".to_string(),
        py_shim_cmd: format!("python3 -c '{PY_CODE}'"),
        py_real_cmd: format!("{py_real} -c '{PY_CODE}'"),
        sh_bare: [Duration::ZERO; 4],
    };

    println!("# rein hook benchmarks\n");
    println!(
        "Hooks are `/bin/sh -c <command>` in both columns. `python3` on PATH: `{}`; real \
         interpreter: `{py_real}`. Hook input: {} bytes (PreToolUse, Bash `ls -la`).\n",
        which("python3"),
        ctx.stdin.len()
    );
    if ctx.plan.runs("one") {
        section_one_hook(&ctx);
    }
    if ctx.plan.runs("fan") {
        section_fan_out(&mut ctx);
    }
    if ctx.plan.runs("call") {
        section_call(&ctx);
    }
    if ctx.plan.runs("selection") {
        section_selection(&ctx);
    }
    if ctx.plan.runs("session") {
        section_sessions(&ctx);
    }
    println!(
        "Total bench time: {:.1} s.",
        started.elapsed().as_secs_f64()
    );
}
