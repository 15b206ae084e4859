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
//! rein is measured as an embedder sees it, through the public API: an [`Engine`] whose model
//! makes one tool call per prompt, and the time of [`Session::run_prompt`] with the hooks under
//! test configured against the same prompt without them. The difference is what the hooks cost
//! a tool call (selection, input serialization, spawn, drain, output parse, merge, run log).
//! Why not the dispatcher alone: a bench is a crate of its own and sees only the public API.
//!
//! Sections:
//! 1. floor: `/bin/sh -c <command>` spawned bare with `tokio::process`, the same stdin bytes
//!    (captured from a real hook run) written, stdout/stderr read, waited for;
//! 2. one PreToolUse hook on a `Read` call (a tool that spawns nothing), against the floor;
//! 3. fan-out: 1, 2, 4, 8 matching hooks on one event, rein and bare; then one `Bash` call with
//!    a PreToolUse phase of 2 hooks and a PostToolUse phase of 1;
//! 4. selection: 500 handlers with regex matchers and `if` rules, none matching, on a `Bash`
//!    call a deny rule then refuses (so nothing at all is spawned);
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
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rein::{
    BoxFuture, ContentBlock, Engine, HookEvent, HookRunEnd, Message, Model, ModelError,
    ModelResponse, Observer, Progress, Session, StopReason, ToolSpec, TurnEnd,
};
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;

/// The python hook: reads all of stdin, prints a PreToolUse allow.
const PY_CODE: &str = "import sys,json;sys.stdin.read();print(json.dumps({\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"allow\",\"permissionDecisionReason\":\"bench\"}}))";

struct Plan {
    sh: usize,
    py_real: usize,
    py_shim: usize,
    fan_sh: usize,
    fan_py: usize,
    selection: usize,
    startup: usize,
    session: usize,
    /// Sections to run (`REIN_BENCH_ONLY=one,fan,http,call,selection,session`); all when unset.
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
// rein through its public API: a model that makes one call per prompt, and what the hooks did

/// The one tool call the model makes per prompt.
#[derive(Clone, Copy, PartialEq)]
enum Call {
    /// `Read` of a small file: in-process, so the prompt spawns nothing but the hooks.
    Read,
    /// `Bash` `true`, allowed by a rule: the tool spawns `/bin/bash`.
    BashTrue,
    /// `Bash` `ls -la`, refused by a deny rule after PreToolUse: nothing is spawned.
    BashRefused,
}

/// Answers a prompt with one tool call and, once its result is in, with a final text.
struct OneCall {
    name: &'static str,
    input: Value,
    next_id: AtomicU64,
}

impl Model for OneCall {
    fn name(&self) -> &str {
        "bench"
    }

    fn complete<'a>(
        &'a self,
        messages: &'a [Message],
        _tools: &'a [ToolSpec],
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        let answered = messages.last().is_some_and(|m| {
            m.content
                .iter()
                .any(|b| matches!(b, ContentBlock::ToolResult { .. }))
        });
        let (content, stop_reason) = if answered {
            (
                vec![ContentBlock::Text {
                    text: "done".into(),
                }],
                StopReason::EndTurn,
            )
        } else {
            let n = self.next_id.fetch_add(1, Ordering::Relaxed);
            (
                vec![ContentBlock::ToolUse {
                    id: format!("toolu_bench_{n:012}"),
                    name: self.name.into(),
                    input: self.input.clone(),
                }],
                StopReason::ToolUse,
            )
        };
        Box::pin(async move {
            Ok(ModelResponse {
                id: None,
                model: "bench".into(),
                content,
                stop_reason,
                usage: None,
            })
        })
    }
}

/// One event's handlers as a session reported them: how many ran, whether each exited 0, and
/// how many answered a PreToolUse allow.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Fired {
    event: &'static str,
    runs: usize,
    all_exited_0: bool,
    allows: usize,
}

/// Keeps what [`Fired`] needs of each hook report, for the check after a prompt.
#[derive(Default)]
struct Recorder(Mutex<Vec<Fired>>);

impl Observer for Recorder {
    fn observe(&self, progress: Progress<'_>) {
        if let Progress::Hook(report) = progress {
            let allows = report
                .runs
                .iter()
                .filter(|r| {
                    r.json
                        .as_ref()
                        .is_some_and(|j| j["hookSpecificOutput"]["permissionDecision"] == "allow")
                })
                .count();
            self.0.lock().unwrap().push(Fired {
                event: report.event,
                runs: report.runs.len(),
                all_exited_0: report.runs.iter().all(|r| r.end == HookRunEnd::Exited(0)),
                allows,
            });
        }
    }
}

/// What a prompt's hooks must have done.
#[derive(Clone, Copy)]
enum Expect {
    /// `n` PreToolUse runs, each exited 0.
    Ran(usize),
    /// `n` PreToolUse runs, each exited 0 and answered allow.
    Allowed(usize),
    /// `pre` PreToolUse runs, then `post` PostToolUse runs, each exited 0.
    PrePost(usize, usize),
    /// No handler ran.
    Nothing,
}

impl Expect {
    fn fired(self) -> Vec<Fired> {
        let fired = |event, runs, allows| Fired {
            event,
            runs,
            all_exited_0: true,
            allows,
        };
        match self {
            Expect::Ran(n) => vec![fired(HookEvent::PreToolUse.as_str(), n, 0)],
            Expect::Allowed(n) => vec![fired(HookEvent::PreToolUse.as_str(), n, n)],
            Expect::PrePost(pre, post) => vec![
                fired(HookEvent::PreToolUse.as_str(), pre, 0),
                fired(HookEvent::PostToolUse.as_str(), post, 0),
            ],
            Expect::Nothing => Vec::new(),
        }
    }
}

/// A started session on an engine configured for one variant of a table.
struct Variant {
    session: Session,
    recorder: Arc<Recorder>,
    call: Call,
    expect: Expect,
}

impl Variant {
    /// One prompt, timed; then checks the turn and what its hooks did.
    async fn prompt(&mut self) -> Duration {
        let started = Instant::now();
        let outcome = self.session.run_prompt("go").await;
        let elapsed = started.elapsed();
        assert_eq!(outcome.end, TurnEnd::Completed, "turn: {outcome:?}");
        let refused = usize::from(self.call == Call::BashRefused);
        assert_eq!(outcome.denials.len(), refused, "denials: {outcome:?}");
        let fired = std::mem::take(&mut *self.recorder.0.lock().unwrap());
        assert_eq!(fired, self.expect.fired(), "hooks of the prompt");
        elapsed
    }
}

// ---------------------------------------------------------------------------------------------
// Fixture: a project and a home; engines configured with inline settings

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
        std::fs::write(
            project.join("notes.txt"),
            "a small file the Read call reads\n",
        )
        .expect("write notes.txt");
        Fixture {
            _tmp: tmp,
            project,
            home,
        }
    }

    /// An engine on the project whose only settings are `{"hooks": hooks}` and whose model
    /// makes `call` once per prompt, with a started session: what one row of a table times.
    fn variant(
        &self,
        rt: &tokio::runtime::Runtime,
        call: Call,
        hooks: Value,
        expect: Expect,
    ) -> Variant {
        let (name, input) = match call {
            Call::Read => (
                "Read",
                json!({"file_path": self.project.join("notes.txt").display().to_string()}),
            ),
            Call::BashTrue => ("Bash", json!({"command": "true"})),
            Call::BashRefused => (
                "Bash",
                json!({"command": "ls -la", "description": "List files in the project directory"}),
            ),
        };
        let recorder = Arc::new(Recorder::default());
        let builder = Engine::builder(&self.project)
            .home(&self.home)
            .read_settings_files(false)
            .settings(json!({ "hooks": hooks }).to_string())
            .model(Arc::new(OneCall {
                name,
                input,
                next_id: AtomicU64::new(0),
            }))
            .observer(Arc::clone(&recorder) as Arc<dyn Observer>);
        let builder = match call {
            Call::Read => builder.allow("Read"),
            Call::BashTrue => builder.allow("Bash(true)"),
            Call::BashRefused => builder.deny("Bash(ls -la)"),
        };
        let engine = builder.build().expect("engine");
        assert!(
            engine.diagnostics().is_empty(),
            "{:?}",
            engine.diagnostics()
        );
        let mut session = engine.session();
        rt.block_on(session.start());
        Variant {
            session,
            recorder,
            call,
            expect,
        }
    }

    /// The stdin a `event` hook gets on `call`, as rein wrote it (captured by a hook).
    fn captured_stdin(
        &self,
        rt: &tokio::runtime::Runtime,
        call: Call,
        event: HookEvent,
    ) -> Vec<u8> {
        let file = self.project.join(format!("stdin-{event}.json"));
        let command = format!("cat > '{}'", file.display());
        let mut hooks = json!({});
        hooks[event.as_str()] = json!([{"hooks": [{"type": "command", "command": command}]}]);
        // Not `Variant::prompt`: nothing is timed here, and the file is the check.
        let mut capture = self.variant(rt, call, hooks, Expect::Nothing);
        rt.block_on(capture.session.run_prompt("go"));
        rt.block_on(capture.session.end("other"));
        std::fs::read(&file).expect("captured stdin")
    }
}

/// `{"PreToolUse": [...]}` with one handler per command, on `matcher` (distinct commands, so
/// dedup keeps them all).
fn pre_hooks(matcher: &str, commands: &[String]) -> Value {
    let handlers: Vec<Value> = commands
        .iter()
        .map(|c| json!({"type": "command", "command": c}))
        .collect();
    json!({"PreToolUse": [{"matcher": matcher, "hooks": handlers}]})
}

/// `n` distinct copies of `command`.
fn fan(command: &str, n: usize) -> Vec<String> {
    (0..n).map(|i| format!("{command} # hook {i}")).collect()
}

/// Ends each variant's session.
fn end_all(rt: &tokio::runtime::Runtime, variants: &mut [Variant]) {
    for v in variants {
        rt.block_on(v.session.end("other"));
    }
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
    /// The stdin of a PreToolUse hook on the `Read` call.
    stdin: Vec<u8>,
    sh_cmd: String,
    py_shim_cmd: String,
    py_real_cmd: String,
    /// Bare medians of the sh hook at N = 1, 2, 4, 8 (fan-out), for the session's floor.
    sh_bare: [Duration; 4],
}

/// Median of the round-by-round `a[i] − b[i] − c[i]` (rounds are interleaved, so the three ran
/// back to back; the paired figure is less sensitive to load drifting during the run).
fn paired_median(a: &[Duration], b: &[Duration], c: &[Duration]) -> String {
    let mut d: Vec<f64> = a
        .iter()
        .zip(b)
        .zip(c)
        .map(|((a, b), c)| a.as_secs_f64() - b.as_secs_f64() - c.as_secs_f64())
        .collect();
    d.sort_unstable_by(f64::total_cmp);
    let d = d.get(d.len() / 2).copied().unwrap_or(0.0);
    if d >= 0.0 {
        format!("+{}", ms(Duration::from_secs_f64(d)))
    } else {
        format!("−{}", ms(Duration::from_secs_f64(-d)))
    }
}

/// One row of the single-hook table: the floor, the prompt without the hook, with it.
struct OneRow {
    label: &'static str,
    floor: Vec<Duration>,
    base: Vec<Duration>,
    hooked: Vec<Duration>,
}

impl OneRow {
    fn print(&self) {
        let f = stats(&self.floor);
        let b = stats(&self.base);
        let h = stats(&self.hooked);
        let share = h.median.saturating_sub(b.median);
        println!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            self.label,
            f.n,
            ms(f.median),
            ms(f.p95),
            ms(b.median),
            ms(h.median),
            ms(share),
            signed_ms(share, f.median),
            paired_median(&self.hooked, &self.base, &self.floor),
            ratio(share, f.median)
        );
    }
}

/// Section 2: one PreToolUse hook on a `Read` call, against the floor.
fn section_one_hook(ctx: &Ctx) {
    let Ctx { rt, fx, stdin, .. } = ctx;
    let mut rows = Vec::new();
    for (label, command, json, iters) in [
        ("sh `cat >/dev/null`", &ctx.sh_cmd, false, ctx.plan.sh),
        (
            "python3 (pyenv shim)",
            &ctx.py_shim_cmd,
            true,
            ctx.plan.py_shim,
        ),
        (
            "python3 (real path)",
            &ctx.py_real_cmd,
            true,
            ctx.plan.py_real,
        ),
    ] {
        let expect = if json {
            Expect::Allowed(1)
        } else {
            Expect::Ran(1)
        };
        let mut variants = [
            fx.variant(rt, Call::Read, json!({}), Expect::Nothing),
            fx.variant(
                rt,
                Call::Read,
                pre_hooks("Read", std::slice::from_ref(command)),
                expect,
            ),
        ];
        let warmup = if json { 3 } else { 10 };
        let mut s = interleave(3, warmup, iters, |v| {
            rt.block_on(async {
                match v {
                    0 => floor(command, stdin, 1, json).await,
                    _ => variants[v - 1].prompt().await,
                }
            })
        });
        end_all(rt, &mut variants);
        let hooked = s.pop().unwrap_or_default();
        let base = s.pop().unwrap_or_default();
        let floor = s.pop().unwrap_or_default();
        rows.push(OneRow {
            label,
            floor,
            base,
            hooked,
        });
    }

    println!(
        "## One hook: bare spawn (floor) vs. its share of a rein prompt with one `Read` call\n"
    );
    println!(
        "| hook | n | floor median | floor p95 | prompt, no hook | prompt, 1 hook | hook's share (Δ medians) | overhead (share − floor) | overhead (paired median) | share / floor |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for row in &rows {
        row.print();
    }
    println!();
}

/// A loopback HTTP/1.1 policy service answering every POST with a PreToolUse allow; with
/// `close`, every answer carries `Connection: close` and the socket is closed (no reuse).
fn policy_service(close: bool) -> String {
    use std::io::{BufRead, BufReader, Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}/policy", listener.local_addr().expect("addr"));
    let body = json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
        "permissionDecision": "allow", "permissionDecisionReason": "bench"}})
    .to_string();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let body = body.clone();
            std::thread::spawn(move || {
                let _ = stream.set_nodelay(true);
                let mut w = stream.try_clone().expect("clone");
                let mut r = BufReader::new(stream);
                loop {
                    let mut len = 0usize;
                    let mut line = String::new();
                    if r.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    loop {
                        let mut h = String::new();
                        if r.read_line(&mut h).unwrap_or(0) == 0 {
                            return;
                        }
                        if h.trim().is_empty() {
                            break;
                        }
                        if let Some(v) = h.to_ascii_lowercase().strip_prefix("content-length:") {
                            len = v.trim().parse().unwrap_or(0);
                        }
                    }
                    let mut buf = vec![0; len];
                    if r.read_exact(&mut buf).is_err() {
                        return;
                    }
                    let conn = if close { "Connection: close\r\n" } else { "" };
                    let head = format!(
                        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n{conn}\r\n",
                        body.len()
                    );
                    // One write: head and body in two meet Nagle and delayed ACKs (40 ms).
                    if w.write_all(format!("{head}{body}").as_bytes()).is_err() {
                        return;
                    }
                    if close {
                        return;
                    }
                }
            });
        }
    });
    url
}

/// Section: one PreToolUse decision from a loopback policy service (http hook, connection
/// reuse on and off) against the same decision from a command hook.
fn section_http(ctx: &Ctx) {
    let Ctx { rt, fx, .. } = ctx;
    let keep = policy_service(false);
    let close = policy_service(true);
    let allow = r#"cat >/dev/null; echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"bench"}}'"#;
    let http = |url: &str| json!({"PreToolUse": [{"matcher": "Read", "hooks": [{"type": "http", "url": url}]}]});
    let mut variants = [
        fx.variant(rt, Call::Read, json!({}), Expect::Nothing),
        fx.variant(
            rt,
            Call::Read,
            pre_hooks("Read", &[allow.to_string()]),
            Expect::Allowed(1),
        ),
        fx.variant(rt, Call::Read, http(&keep), Expect::Allowed(1)),
        fx.variant(rt, Call::Read, http(&close), Expect::Allowed(1)),
    ];
    let s = interleave(4, 10, ctx.plan.sh, |v| rt.block_on(variants[v].prompt()));
    end_all(rt, &mut variants);
    let base = stats(&s[0]);
    println!(
        "## One PreToolUse decision: http hook to a loopback policy service vs. a command hook\n"
    );
    println!(
        "Each prompt makes one `Read` call whose PreToolUse hook answers allow. \"Share\" is the \
         prompt's median minus the median of the same prompt without hooks.\n"
    );
    println!("| hook | n | prompt median | prompt p95 | hook's share | share / command hook's |");
    println!("|---|---|---|---|---|---|");
    let cmd_share = stats(&s[1]).median.saturating_sub(base.median);
    for (label, samples) in [
        ("none", &s[0]),
        ("command (`/bin/sh`: cat, echo JSON)", &s[1]),
        ("http, connection reused (one client per session)", &s[2]),
        ("http, new connection per call (`Connection: close`)", &s[3]),
    ] {
        let st = stats(samples);
        let share = st.median.saturating_sub(base.median);
        println!(
            "| {label} | {} | {} | {} | {} | {} |",
            st.n,
            ms(st.median),
            ms(st.p95),
            ms(share),
            ratio(share, cmd_share)
        );
    }
    println!();
}

/// Section 3: N matching hooks on one PreToolUse, rein and bare.
fn section_fan_out(ctx: &mut Ctx) {
    println!("## Fan-out: N matching hooks on one PreToolUse (they run concurrently)\n");
    println!(
        "| hook | N | n | bare N concurrent (median) | rein share (median − no hooks) | rein N / rein 1 | bare N / bare 1 | rein / bare |"
    );
    println!("|---|---|---|---|---|---|---|---|");
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
        let rt = &ctx.rt;
        // Variant 0: the prompt without hooks; then bare N and rein N for each N.
        let mut variants: Vec<Variant> =
            std::iter::once(ctx.fx.variant(rt, Call::Read, json!({}), Expect::Nothing))
                .chain(fans.iter().map(|&n| {
                    let expect = if json {
                        Expect::Allowed(n)
                    } else {
                        Expect::Ran(n)
                    };
                    ctx.fx
                        .variant(rt, Call::Read, pre_hooks("Read", &fan(&command, n)), expect)
                }))
                .collect();
        let samples = interleave(1 + fans.len() * 2, 3, iters, |v| {
            rt.block_on(async {
                if v == 0 {
                    variants[0].prompt().await
                } else if v % 2 == 1 {
                    floor(&command, &ctx.stdin, fans[v / 2], json).await
                } else {
                    variants[v / 2].prompt().await
                }
            })
        });
        end_all(rt, &mut variants);
        let base = stats(&samples[0]).median;
        let share = |k: usize| stats(&samples[2 + k * 2]).median.saturating_sub(base);
        let bare = |k: usize| stats(&samples[1 + k * 2]).median;
        for (k, n) in fans.iter().enumerate() {
            if !json {
                ctx.sh_bare[k] = bare(k);
            }
            println!(
                "| {label} | {n} | {} | {} | {} | {} | {} | {} |",
                samples[1 + k * 2].len(),
                ms(bare(k)),
                ms(share(k)),
                ratio(share(k), share(0)),
                ratio(bare(k), bare(0)),
                ratio(share(k), bare(k))
            );
        }
    }
    println!();
}

/// Section 3b: one `Bash` call with a PreToolUse phase of 2 concurrent hooks and a PostToolUse
/// phase of 1, shaped like the session below.
fn section_call(ctx: &Ctx) {
    let Ctx { rt, fx, .. } = ctx;
    let sh = &ctx.sh_cmd;
    let pre_stdin = fx.captured_stdin(rt, Call::BashTrue, HookEvent::PreToolUse);
    let post_stdin = fx.captured_stdin(rt, Call::BashTrue, HookEvent::PostToolUse);
    let mut hooks = pre_hooks("Bash", &[format!("{sh} # guard"), format!("{sh} # audit")]);
    hooks["PostToolUse"] = json!([{"matcher": "Bash", "hooks": [
        {"type": "command", "command": format!("{sh} # log")}
    ]}]);
    let mut variants = [
        fx.variant(rt, Call::BashTrue, json!({}), Expect::Nothing),
        fx.variant(rt, Call::BashTrue, hooks, Expect::PrePost(2, 1)),
    ];
    let samples = interleave(3, 5, ctx.plan.fan_sh, |v| {
        rt.block_on(async {
            match v {
                0 => variants[0].prompt().await,
                1 => {
                    let started = Instant::now();
                    floor(sh, &pre_stdin, 2, false).await;
                    variants[0].prompt().await;
                    floor(sh, &post_stdin, 1, false).await;
                    started.elapsed()
                }
                _ => variants[1].prompt().await,
            }
        })
    });
    end_all(rt, &mut variants);
    let tool = stats(&samples[0]);
    let bare = stats(&samples[1]);
    let rein = stats(&samples[2]);
    println!("## One `Bash` call: Pre (2 hooks) → `bash -c true` → Post (1 hook)\n");
    println!("| sequence | n | median | p95 | hooks' share (median − prompt alone) |");
    println!("|---|---|---|---|---|");
    println!(
        "| prompt, no hooks | {} | {} | {} | – |",
        tool.n,
        ms(tool.median),
        ms(tool.p95)
    );
    println!(
        "| bare spawns around that prompt (2 concurrent, then 1) | {} | {} | {} | {} |",
        bare.n,
        ms(bare.median),
        ms(bare.p95),
        ms(bare.median.saturating_sub(tool.median))
    );
    println!(
        "| prompt with the 3 hooks | {} | {} | {} | {} |",
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
    let Ctx { rt, fx, .. } = ctx;
    let marker = fx.project.join("selection-ran.flag");
    let touch = format!("touch '{}'", marker.display());
    // Regex matchers that do not accept Bash (the common MCP pattern, and an alternation).
    let regex_miss = |i: usize| {
        let matcher = if i.is_multiple_of(2) {
            format!("mcp__server{i}__.*")
        } else {
            format!("^(Write|Edit|Notebook{i})$")
        };
        json!({"matcher": matcher, "hooks": [
            {"type": "command", "command": format!("{touch} # {i}")}
        ]})
    };
    // Matchers that do accept Bash, with an `if` that does not hold for `ls -la`.
    let if_miss = |i: usize| {
        json!({"matcher": "^(Bash|Shell)$", "hooks": [{
            "type": "command",
            "command": format!("{touch} # {i}"),
            "if": format!("Bash(git push --force origin branch-{i}*)")
        }]})
    };
    let groups = |f: &dyn Fn(usize) -> Value, range: std::ops::Range<usize>| -> Vec<Value> {
        range.map(f).collect()
    };
    let mixed: Vec<Value> = groups(&regex_miss, 0..250)
        .into_iter()
        .chain(groups(&if_miss, 250..500))
        .collect();
    let settings = [
        (
            "500: 250 regex matchers not matching + 250 matching with a failing `if`",
            json!({ "PreToolUse": mixed }),
        ),
        (
            "500 regex matchers, none matching",
            json!({ "PreToolUse": groups(&regex_miss, 0..500) }),
        ),
        (
            "500 matching matchers, each with a failing `if`",
            json!({ "PreToolUse": groups(&if_miss, 0..500) }),
        ),
        ("no handlers", json!({})),
    ];
    let mut variants: Vec<Variant> = settings
        .iter()
        .map(|(_, hooks)| fx.variant(rt, Call::BashRefused, hooks.clone(), Expect::Nothing))
        .collect();
    let samples = interleave(variants.len(), 100, ctx.plan.selection, |v| {
        rt.block_on(variants[v].prompt())
    });
    end_all(rt, &mut variants);
    assert!(!marker.exists(), "a handler ran although none matches");
    let empty = stats(&samples[variants.len() - 1]).median;
    println!(
        "## Selection: 500 handlers, none matching (a refused `Bash` call: no process spawned)\n"
    );
    println!("| settings | n | median | p95 | per handler (median − empty) |");
    println!("|---|---|---|---|---|");
    for ((label, _), s) in settings.iter().zip(&samples) {
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
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let stdin = fx.captured_stdin(&rt, Call::Read, HookEvent::PreToolUse);
    let mut ctx = Ctx {
        plan: Plan::from_env(),
        rt,
        stdin,
        fx,
        sh_cmd: "cat >/dev/null".to_string(),
        py_shim_cmd: format!("python3 -c '{PY_CODE}'"),
        py_real_cmd: format!("{py_real} -c '{PY_CODE}'"),
        sh_bare: [Duration::ZERO; 4],
    };

    println!("# rein hook benchmarks\n");
    println!(
        "Hooks are `/bin/sh -c <command>` in both columns. `python3` on PATH: `{}`; real \
         interpreter: `{py_real}`. Hook input: {} bytes (PreToolUse, `Read` of a file).\n",
        which("python3"),
        ctx.stdin.len()
    );
    if ctx.plan.runs("one") {
        section_one_hook(&ctx);
    }
    if ctx.plan.runs("fan") {
        section_fan_out(&mut ctx);
    }
    if ctx.plan.runs("http") {
        section_http(&ctx);
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
