//! Warm python and node hooks: the interpreter is started before the hook fires, so a call
//! pays for running the script, not for starting python or node.
//!
//! **One interpreter per hook command, started once, forks a process per call**, for python and
//! for node. Python's is started exactly as the cold run starts it — the same
//! `/bin/sh -c "<command>"` in its own session, the same argv, cwd and environment — with one addition: an interpreter start hook
//! (`sitecustomize` on `PYTHONPATH`) that stops right after the interpreter has started, says it
//! is ready on stderr (rein reads that off) and serves calls on its stdin, a Unix packet socket
//! from rein. Ahead of each call it forks a session leader that plays the cold run's
//! `/bin/sh -c`: it leads a session and a group of its own, forks the call's process into them
//! and exits at once, so the call's process runs, as a script under a shell does, in a session
//! and a group it does not lead (the server is made a child subreaper, so it reaps the call's
//! process and reports its status: 128 + n and dash's words for a signal). rein makes the
//! call's three pipes as for a spawn, puts the hook's input in the stdin pipe, and sends the go
//! message (the call's environment changes and cwd) with the pipes attached (`SCM_RIGHTS`);
//! the call's process takes it and reports its pid and its group (the group rein kills on a
//! timeout; the pid is the root of the tree of descendants that left the group). It puts
//! the pipes on fds 0–2, makes the environment, cwd and `sys.path` the call's, removes every trace
//! of the server (the modules it imported to serve, its signal handlers and descriptors; `json`,
//! which most hooks import, stays imported), and runs the
//! script as the interpreter's main would (`sys.path[0]`, `__main__`, `__file__`, the traceback of
//! an uncaught exception from the script's frame, `SystemExit`'s status) and ends as the
//! interpreter's exit does (threads joined, atexit handlers, streams flushed) without its module
//! teardown (see `warm_boot/sitecustomize.py`). The script's bytes are read when the call begins
//! (an edit between two calls is seen). So calls back to back all find their process ready, and
//! a call costs the fork of an idle interpreter instead of its start (docs/performance.md).
//!
//! Node: **the same design, through a native helper** (`warm_boot/node_serve.c`, built by
//! build.rs with the system C compiler and written next to the start hook). node cannot fork
//! from JavaScript, and a forked node needs three things the helper does: V8 marks its heap
//! "do not copy on fork" (the server marks every mapping copyable first); the call's process
//! re-makes libuv's loop (`uv_loop_fork`); and it must not run node's own exit, which joins
//! and drains the platform's worker threads, which a fork does not have. So the call's process
//! ends where node would and as node would, with `_exit`: `process.exit()` through
//! `process.reallyExit`; the loop running empty (a libuv prepare handle that sees it one step
//! before node does, then `beforeExit` and `exit` emitted through `node::MakeCallback`, as
//! node emits them); an uncaught exception after node has printed it (its `AtExit` callbacks).
//! The start hook (`--require` in `NODE_OPTIONS`, `warm_boot/boot.cjs`) gives the call's
//! process its own `process.pid`/`ppid` and a fresh `Math.random` seed, which node reads once
//! at its start. The call's process says its exit status before the kernel takes its copy of
//! node's address space down; the first call reports the pages it wrote, and each later waiter
//! copies those while it waits, so the call does not fault on them. A node script that names
//! `worker_threads` runs cold: a worker thread's end waits for the platform's threads; one
//! that reaches them another way fails at once with that reason. A call that finds its
//! interpreter still starting waits for it, at most 2 s or its timeout.
//!
//! `REIN_WARM_HOOKS_MAX` (default 16) caps the interpreters that wait at once; `rein hooks warm`
//! says what each costs (python ~10 MiB, node ~16 MiB proportional set size per hook script).
//!
//! A hook is eligible ([`eligibility`]) when its command is a simple command — words, plain
//! quotes and `$CLAUDE_PROJECT_DIR`, nothing else of the shell's — that runs a script with
//! `python`/`python3`/`python3.N` or `node` and no interpreter flag, or runs a script whose `#!`
//! line names one of them (directly or through `/usr/bin/env`, without flags). Anything else
//! runs cold and says why. `uv run` stays cold: uv resolves and may sync the script's
//! environment on every call, which a pre-started interpreter would skip.
//!
//! At most once per firing: a call runs cold when its server is gone before the call is sent,
//! when the server's socket refuses it, or when its server ends before taking it (the call's
//! process reports its pid before any of the call runs, so a call without a pid report never
//! ran); once the pid has arrived, whatever happens is that call's run, never a second one. A
//! waiting interpreter never outlives rein: it waits on a pipe or socket only rein writes to,
//! and reads EOF (and exits without running anything) when rein is gone, SIGKILL included.

use std::collections::HashMap;
use std::ffi::OsString;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use std::time::Duration;

use crate::hooks::command::CommandSpec;
use crate::hooks::config::{CommandHandler, ConfiguredHandler, HandlerKind};
use crate::hooks::dispatch::{Dispatcher, Target};
use crate::process::{self, Prespawned, Program};
use std::os::fd::{AsRawFd, OwnedFd};

/// The interpreter a warm hook runs under.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Interpreter {
    Python,
    Node,
}

impl Interpreter {
    pub fn name(self) -> &'static str {
        match self {
            Interpreter::Python => "python",
            Interpreter::Node => "node",
        }
    }

    /// The variable that carries the start hook.
    fn carrier(self) -> &'static str {
        match self {
            Interpreter::Python => "PYTHONPATH",
            Interpreter::Node => "NODE_OPTIONS",
        }
    }
}

/// Whether a command runs warm, and if not, why not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Warmth {
    Warm(Interpreter),
    Cold(String),
}

/// `REIN_WARM_HOOKS=0` (also `false`, `no`, `off`) turns warm hooks off for the run.
pub fn disabled_by_env() -> bool {
    std::env::var("REIN_WARM_HOOKS").is_ok_and(|v| {
        matches!(
            v.trim().to_ascii_lowercase().as_str(),
            "0" | "false" | "no" | "off"
        )
    })
}

/// Splits a shell command into words if it is a simple command rein can read without a shell:
/// words separated by blanks, `'…'` and `"…"` quoting (no `$`, `` ` `` or `\` inside double
/// quotes), `$CLAUDE_PROJECT_DIR`/`${CLAUDE_PROJECT_DIR}` replaced by `project`. `Err` names the
/// first thing that makes it more than that.
fn simple_words(command: &str, project: &str) -> Result<Vec<String>, String> {
    let text = command
        .replace("${CLAUDE_PROJECT_DIR}", project)
        .replace("$CLAUDE_PROJECT_DIR", project);
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => cur.push(c),
                        None => return Err("an unclosed quote".to_string()),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some(c @ ('$' | '`' | '\\')) => {
                            return Err(format!("shell syntax ({c}) inside double quotes"));
                        }
                        Some(c) => cur.push(c),
                        None => return Err("an unclosed quote".to_string()),
                    }
                }
            }
            '|' | '&' | ';' | '<' | '>' | '(' | ')' | '$' | '`' | '\\' | '*' | '?' | '[' | ']'
            | '{' | '}' | '~' | '!' | '#' | '\n' | '=' => {
                return Err(format!("shell syntax ({c})"));
            }
            c => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        words.push(cur);
    }
    if words.is_empty() {
        return Err("an empty command".to_string());
    }
    Ok(words)
}

/// The interpreter a program name stands for (`python3`, `/usr/bin/python3.11`, `node`).
fn interpreter_of(program: &str) -> Option<Interpreter> {
    let base = program.rsplit('/').next().unwrap_or(program);
    if base == "node" || base == "nodejs" {
        return Some(Interpreter::Node);
    }
    let rest = base.strip_prefix("python")?;
    let version_like = rest.is_empty()
        || rest.strip_prefix('3').is_some_and(|r| {
            r.is_empty() || (r.starts_with('.') && r[1..].chars().all(|c| c.is_ascii_digit()))
        });
    version_like.then_some(Interpreter::Python)
}

/// The file a program word names, as `execvp` would find it: relative to `cwd` when it has a
/// `/`, else in `path`.
fn locate(program: &str, cwd: &Path, path: &str) -> Option<PathBuf> {
    if program.contains('/') {
        let p = cwd.join(program);
        return p.is_file().then_some(p);
    }
    path.split(':')
        .map(|d| {
            if d.is_empty() {
                cwd.to_path_buf()
            } else {
                PathBuf::from(d)
            }
        })
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

/// A script's `#!` interpreter, when it is python or node named plainly or through
/// `/usr/bin/env` with no flags.
fn shebang_interpreter(script: &Path, named: &str) -> Result<Interpreter, String> {
    let mut head = [0u8; 256];
    let n = std::fs::File::open(script)
        .and_then(|mut f| f.read(&mut head))
        .map_err(|e| format!("cannot read {named}: {e}"))?;
    if head[..n].starts_with(b"\x7fELF") {
        return Err(format!(
            "{named} is a compiled program, not a python or node script"
        ));
    }
    let line = head[..n].split(|b| *b == b'\n').next().unwrap_or_default();
    let Some(rest) = line.strip_prefix(b"#!") else {
        return Err(format!("{named} has no #! line naming python or node"));
    };
    let rest = String::from_utf8_lossy(rest);
    let words: Vec<&str> = rest.split_whitespace().collect();
    let named = match words.as_slice() {
        [env, name] if env.ends_with("/env") => *name,
        [interp] => *interp,
        _ => {
            return Err(format!(
                "its #! line `{}` passes flags to the interpreter",
                rest.trim()
            ));
        }
    };
    interpreter_of(named)
        .ok_or_else(|| format!("its #! interpreter `{named}` is not python or node"))
}

/// `Warm(interp)` unless the script is a node script that names `worker_threads`: a forked
/// node has none of node's platform threads, and a worker thread's end waits for their work
/// (warm_boot/boot.cjs makes a worker reached some other way fail with that reason).
fn forks_well(interp: Interpreter, script: &Path) -> Warmth {
    if interp == Interpreter::Node && names_worker_threads(script) {
        return Warmth::Cold(
            "the script uses worker_threads, which a forked node cannot end".to_string(),
        );
    }
    Warmth::Warm(interp)
}

/// Whether the script's bytes name `worker_threads`. Every firing asks (its plan is made per
/// call), so the answer is kept per file and read again only when its size or mtime changes.
fn names_worker_threads(script: &Path) -> bool {
    type Seen = HashMap<PathBuf, (u64, Option<std::time::SystemTime>, bool)>;
    static SEEN: OnceLock<Mutex<Seen>> = OnceLock::new();
    let Ok(meta) = std::fs::metadata(script) else {
        return false;
    };
    let stamp = (meta.len(), meta.modified().ok());
    let seen = SEEN.get_or_init(Mutex::default);
    if let Some((len, modified, named)) = seen
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get(script)
        && (*len, *modified) == stamp
    {
        return *named;
    }
    let named = std::fs::read(script).is_ok_and(|b| b.windows(14).any(|w| w == b"worker_threads"));
    seen.lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(script.to_path_buf(), (stamp.0, stamp.1, named));
    named
}

/// Whether `command` (shell form) can run warm, given where it runs and its `PATH`.
pub fn eligibility(command: &str, project: &str, cwd: &Path, path: &str) -> Warmth {
    let words = match simple_words(command, project) {
        Ok(w) => w,
        Err(why) => {
            return Warmth::Cold(format!(
                "the command uses {why}; only a simple command runs warm"
            ));
        }
    };
    let program = words[0].as_str();
    if program == "uv" || program.ends_with("/uv") {
        return Warmth::Cold(
            "uv resolves the script's environment on every call, which a pre-started interpreter would skip".to_string(),
        );
    }
    if let Some(interp) = interpreter_of(program) {
        return match words.get(1) {
            None => Warmth::Cold(format!("{program} without a script")),
            Some(flag) if flag.starts_with('-') => Warmth::Cold(format!(
                "interpreter flag {flag}: the start hook must run as a plain start does"
            )),
            Some(_) if locate(program, cwd, path).is_none() => {
                Warmth::Cold(format!("{program} is not found on PATH"))
            }
            Some(script) => forks_well(interp, &cwd.join(script)),
        };
    }
    match locate(program, cwd, path) {
        None => Warmth::Cold(format!("{program} is not found")),
        Some(script) => match shebang_interpreter(&script, program) {
            Ok(interp) => forks_well(interp, &script),
            Err(why) => Warmth::Cold(why),
        },
    }
}

/// The variables whose values decide how an interpreter starts; a server serves a call only
/// when they are the same.
fn starts_alike(name: &str) -> bool {
    name == "PATH"
        || name == "HOME"
        || name == "LANG"
        || name == "VIRTUAL_ENV"
        || name.starts_with("LC_")
        || name.starts_with("PYTHON")
        || name.starts_with("NODE_")
        || name.starts_with("PYENV")
        || name.starts_with("UV_")
}

/// One call's process as rein computes it: program, cwd, full environment.
#[derive(Debug, Clone)]
pub struct Launch {
    pub interpreter: Interpreter,
    /// `/bin/sh -c <command>`'s command.
    pub command: String,
    pub cwd: PathBuf,
    /// The whole environment the cold process would get.
    pub env: Vec<(OsString, OsString)>,
}

impl Launch {
    fn key(&self) -> String {
        // A python server serves every call whose words are the same (its argv is theirs);
        // a node server the calls of one command text.
        let program = match self.interpreter {
            Interpreter::Python => {
                let project = self
                    .env
                    .iter()
                    .rev()
                    .find(|(k, _)| k == "CLAUDE_PROJECT_DIR")
                    .map(|(_, v)| v.to_string_lossy().into_owned())
                    .unwrap_or_default();
                simple_words(&self.command, &project)
                    .map(|words| words.join("\u{1}"))
                    .unwrap_or_else(|_| self.command.clone())
            }
            Interpreter::Node => self.command.clone(),
        };
        let mut key = format!(
            "{}\0{}\0{}",
            self.interpreter.name(),
            program,
            self.cwd.display()
        );
        let mut vars: Vec<_> = self
            .env
            .iter()
            .filter(|(k, _)| starts_alike(&k.to_string_lossy()))
            .collect();
        vars.sort();
        for (k, v) in vars {
            key.push('\0');
            key.push_str(&k.to_string_lossy());
            key.push('=');
            key.push_str(&v.to_string_lossy());
        }
        key
    }
}

/// The waiting interpreters, one per launch key.
#[derive(Default)]
struct Pool {
    state: Mutex<PoolState>,
    boot_dir: OnceLock<Option<PathBuf>>,
}

#[derive(Default)]
struct PoolState {
    /// One forking interpreter per launch key, serving every call.
    servers: HashMap<String, Arc<Server>>,
    /// Interpreters being started, with the wake-up for calls that wait for them.
    starting: HashMap<String, Arc<tokio::sync::Notify>>,
    /// Launches whose interpreter did not load the start hook: cold for the rest of the run.
    failed: std::collections::HashSet<String>,
}

fn pool() -> &'static Pool {
    static POOL: OnceLock<Pool> = OnceLock::new();
    POOL.get_or_init(Pool::default)
}

const PYTHON_BOOT: &str = include_str!("warm_boot/sitecustomize.py");
const NODE_BOOT: &str = include_str!("warm_boot/boot.cjs");
/// rein's native helper for node (`warm_boot/node_serve.c`, built by build.rs).
#[cfg(rein_node_helper)]
const NODE_HELPER: Option<&[u8]> =
    Some(include_bytes!(concat!(env!("OUT_DIR"), "/node_serve.node")));
#[cfg(not(rein_node_helper))]
const NODE_HELPER: Option<&[u8]> = None;

/// The start hooks, in rein's private temporary directory (0700, files 0600), written once.
fn boot_dir() -> Option<&'static Path> {
    pool()
        .boot_dir
        .get_or_init(|| {
            let dir = crate::private_fs::temp_dir().ok()?.join("warm");
            let write =
                |name: &str, bytes: &[u8]| crate::private_fs::write(&dir.join(name), bytes).ok();
            write("sitecustomize.py", PYTHON_BOOT.as_bytes())?;
            write("boot.cjs", NODE_BOOT.as_bytes())?;
            if let Some(helper) = NODE_HELPER {
                write("node_serve.node", helper)?;
            }
            Some(dir)
        })
        .as_deref()
}

/// The start hook's variable for `launch`: its own value plus rein's hook.
fn carrier_value(launch: &Launch, dir: &Path) -> (String, OsString) {
    let name = launch.interpreter.carrier();
    let current = launch
        .env
        .iter()
        .rev()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.clone());
    let ours = match launch.interpreter {
        Interpreter::Python => dir.as_os_str().to_os_string(),
        Interpreter::Node => {
            let mut s = OsString::from("--require ");
            s.push(dir.join("boot.cjs"));
            s
        }
    };
    let value = match (launch.interpreter, current) {
        (_, None) => ours,
        (Interpreter::Python, Some(cur)) => {
            let mut v = ours;
            v.push(":");
            v.push(cur);
            v
        }
        (Interpreter::Node, Some(cur)) => {
            let mut v = cur;
            v.push(" ");
            v.push(ours);
            v
        }
    };
    (name.to_string(), value)
}

/// What the start hooks write to stderr once the interpreter has started and is waiting: the
/// proof that the hook was loaded (an interpreter that ignored it would run the script now, and
/// is killed instead of being used).
const READY: &[u8] = b"\0rein-warm-ready\n";

/// How long an interpreter may take to start before it is given up.
const START_LIMIT: std::time::Duration = std::time::Duration::from_secs(20);

/// The longest a call waits for an interpreter still starting before it runs cold: a few cold
/// starts of a loaded machine. An interpreter that ignores the start hook is only found out
/// after [`START_LIMIT`]; no call waits that long for it.
const WAIT_FOR_START: std::time::Duration = std::time::Duration::from_secs(2);

/// Starts a server for `launch` in the background, unless one is waiting or starting already,
/// or this launch failed to start warm before (it then stays cold for the session).
pub fn prestart(launch: Launch) {
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return;
    };
    let key = launch.key();
    {
        let mut state = pool().state.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(server) = state.servers.get(&key)
            && server.dead.load(Ordering::Acquire)
        {
            state.servers.remove(&key);
        }
        if state.servers.contains_key(&key)
            || state.starting.contains_key(&key)
            || state.failed.contains(&key)
        {
            return;
        }
        if state.servers.len() + state.starting.len() >= max_waiting() {
            tracing::debug!(command = %launch.command, max = max_waiting(), "REIN_WARM_HOOKS_MAX interpreters wait already; this hook runs cold");
            return;
        }
        state
            .starting
            .insert(key.clone(), Arc::new(tokio::sync::Notify::new()));
    }
    runtime.spawn(async move {
        let started = start_server(&launch).await;
        let mut state = pool().state.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(started) = state.starting.remove(&key) {
            // Calls waiting for it look again (and run cold if it did not start).
            started.notify_waiters();
        }
        match started {
            Ok(server) => {
                tracing::debug!(command = %launch.command, interpreter = launch.interpreter.name(), rss_kib = ?server.rss_kib(), "a warm hook's interpreter waits");
                state.servers.insert(key, Arc::new(server));
            }
            Err(StartError::NoStartHook(why)) => {
                tracing::debug!(command = %launch.command, %why, "the interpreter ignores rein's start hook; it runs cold");
                state.failed.insert(key);
            }
            Err(StartError::Other(why)) => {
                tracing::debug!(command = %launch.command, %why, "a warm hook's interpreter did not start; the next call tries again");
            }
        }
    });
}

/// The most interpreters that wait at once (`REIN_WARM_HOOKS_MAX`, default 16); a hook whose
/// interpreter would be one more runs cold. Each waiting hook script costs ~10 MiB (python) or
/// ~16 MiB (node) proportional set size (docs/performance.md).
pub fn max_waiting() -> usize {
    std::env::var("REIN_WARM_HOOKS_MAX")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(16)
}

/// Why a server could not be started.
enum StartError {
    /// The interpreter started without loading the start hook: never warm for this launch.
    NoStartHook(String),
    /// Anything else (it was killed, it took too long): the next call tries again.
    Other(String),
}

/// The interpreter of `launch` started as its cold run starts it, with the start hook added
/// and `socket` as its stdin.
fn spawn_interpreter(launch: &Launch, socket: OwnedFd) -> Result<Prespawned, StartError> {
    let dir = boot_dir().ok_or(StartError::Other(
        "no private directory for the start hooks".to_string(),
    ))?;
    let (carrier, value) = carrier_value(launch, dir);
    let env: Vec<(String, String)> = launch
        .env
        .iter()
        .filter(|(k, _)| k.to_str() != Some(carrier.as_str()))
        .map(|(k, v)| {
            (
                k.to_string_lossy().into_owned(),
                v.to_string_lossy().into_owned(),
            )
        })
        .chain(std::iter::once((
            carrier.clone(),
            value.to_string_lossy().into_owned(),
        )))
        .collect();
    let remove: Vec<String> = std::env::vars_os()
        .map(|(k, _)| k.to_string_lossy().into_owned())
        .collect();
    let mut program = Program::new("/bin/sh", &launch.cwd)
        .arg("-c")
        .arg(launch.command.as_str());
    program.new_session = true;
    program.env = &env;
    program.env_remove = &remove;
    process::prespawn_with_stdin(&program, socket).map_err(|e| StartError::Other(format!("{e:?}")))
}

/// Waits for the start hook's ready line on the interpreter's stderr.
async fn await_ready(process: &mut Prespawned) -> Result<(), StartError> {
    match process.read_stderr(READY.len(), START_LIMIT).await {
        Ok(bytes) if bytes == READY => Ok(()),
        // Dropping the process kills it.
        Ok(bytes) => Err(StartError::NoStartHook(format!(
            "its stderr began {:?}",
            String::from_utf8_lossy(&bytes)
        ))),
        // Silent for this long: an interpreter that ignored the start hook and now waits in
        // the script for its input. Never again for this launch.
        Err(e) if e.kind() == std::io::ErrorKind::TimedOut => Err(StartError::NoStartHook(
            format!("not ready after {} s", START_LIMIT.as_secs()),
        )),
        Err(e) => Err(StartError::Other(format!(
            "the interpreter did not get ready: {e}"
        ))),
    }
}

/// A python or node interpreter that has started once and forks one child per call (see
/// `warm_boot/sitecustomize.py`, `warm_boot/node_serve.c`): rein sends each call's go message
/// with the call's three pipes over a Unix packet socket; the child reports its pid, the
/// server its wait status.
struct Server {
    /// The hook command it was started for.
    command: String,
    interpreter: Interpreter,
    /// The interpreter itself; dropping it kills it.
    process: Mutex<Prespawned>,
    socket: OwnedFd,
    /// The environment it was started with (without the start hook's variable).
    env: Vec<(OsString, OsString)>,
    calls: Arc<Mutex<HashMap<u64, Waiting>>>,
    next_call: AtomicU64,
    /// The server is gone (its socket ended): no call is sent to it again.
    dead: Arc<AtomicBool>,
}

/// What a call sent to a [`Server`] waits for.
#[derive(Default)]
struct Waiting {
    /// The call's process runs (its pid), or `None`: it never started (the pipes did not
    /// arrive), so the call may run cold.
    pid: Option<tokio::sync::oneshot::Sender<Option<(u32, u32)>>>,
    exit: Option<tokio::sync::oneshot::Sender<i32>>,
}

impl Server {
    /// Resident memory of the waiting interpreter, from `/proc`.
    fn rss_kib(&self) -> Option<u64> {
        let pid = self
            .process
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pid()?;
        resident_kib(pid)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // Ends the socket for both sides (the reader thread holds a second descriptor), so
        // the server reads EOF and exits, and the reader thread ends.
        // SAFETY: shutdown on a descriptor we own; an error leaves nothing to clean up.
        unsafe {
            libc::shutdown(self.socket.as_raw_fd(), libc::SHUT_RDWR);
        }
    }
}

/// A `/proc/<pid>/…` memory figure in KiB: `VmRSS` of `status`, `Pss` of `smaps_rollup`.
fn proc_kib(pid: u32, file: &str, field: &str) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/{file}")).ok()?;
    let line = text.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn resident_kib(pid: u32) -> Option<u64> {
    proc_kib(pid, "status", "VmRSS:")
}

/// What the interpreters waiting for one hook command cost.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WaitingCost {
    /// The hook command.
    pub command: String,
    pub interpreter: Interpreter,
    /// Its processes: the server (and the `/bin/sh` that started it) and the process it
    /// forked for the next call.
    pub processes: usize,
    /// Their resident memory, summed (pages they share counted once per process).
    pub rss_kib: u64,
    /// Their proportional share (each shared page split between its sharers): what they cost
    /// the machine together.
    pub pss_kib: u64,
}

fn cost_of(command: &str, interpreter: Interpreter, root: u32) -> WaitingCost {
    let mut pids = vec![root];
    pids.extend(process::descendants(root));
    WaitingCost {
        command: command.to_string(),
        interpreter,
        processes: pids.len(),
        rss_kib: pids.iter().filter_map(|p| resident_kib(*p)).sum(),
        pss_kib: pids
            .iter()
            .filter_map(|p| proc_kib(*p, "smaps_rollup", "Pss:"))
            .sum(),
    }
}

/// What each interpreter waiting for a call costs, by hook command.
pub fn waiting_memory() -> Vec<WaitingCost> {
    let state = pool().state.lock().unwrap_or_else(PoisonError::into_inner);
    let mut out: Vec<WaitingCost> = state
        .servers
        .values()
        .filter_map(|server| {
            let pid = server
                .process
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .pid()?;
            Some(cost_of(&server.command, server.interpreter, pid))
        })
        .collect();
    out.sort_by(|a, b| a.command.cmp(&b.command));
    out
}

/// Waits until no interpreter is starting (at most the start limit).
pub async fn settle() {
    let deadline = tokio::time::Instant::now() + START_LIMIT;
    while !pool()
        .state
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .starting
        .is_empty()
        && tokio::time::Instant::now() < deadline
    {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

async fn start_server(launch: &Launch) -> Result<Server, StartError> {
    let (ours, theirs) =
        process::packet_pair().map_err(|e| StartError::Other(format!("socketpair: {e}")))?;
    let mut process = spawn_interpreter(launch, theirs)?;
    await_ready(&mut process).await?;
    let reader = ours
        .try_clone()
        .map_err(|e| StartError::Other(format!("dup: {e}")))?;
    let calls: Arc<Mutex<HashMap<u64, Waiting>>> = Arc::default();
    let dead = Arc::new(AtomicBool::new(false));
    {
        let calls = Arc::clone(&calls);
        let dead = Arc::clone(&dead);
        std::thread::Builder::new()
            .name("rein-warm-server".to_string())
            .spawn(move || read_reports(&reader, &calls, &dead))
            .map_err(|e| StartError::Other(format!("thread: {e}")))?;
    }
    Ok(Server {
        command: launch.command.clone(),
        interpreter: launch.interpreter,
        process: Mutex::new(process),
        socket: ours,
        env: launch.env.clone(),
        calls,
        next_call: AtomicU64::new(1),
        dead,
    })
}

/// The server's reports, until its socket ends: `P <call> <pid> <group>` (the child runs) and
/// `X <call> <wait status>` (it has been reaped), `E <call>` (the call's pipes did not arrive).
fn read_reports(socket: &OwnedFd, calls: &Mutex<HashMap<u64, Waiting>>, dead: &AtomicBool) {
    let mut buf = [0u8; 128];
    loop {
        let n = match process::recv_packet(socket, &mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let text = String::from_utf8_lossy(&buf[..n]);
        let mut words = text.split(' ');
        let (Some(kind), Some(Ok(call))) = (words.next(), words.next().map(str::parse::<u64>))
        else {
            continue;
        };
        let value = words.next().and_then(|w| w.parse::<i64>().ok());
        let group = words.next().and_then(|w| w.parse::<i64>().ok());
        let mut calls = calls.lock().unwrap_or_else(PoisonError::into_inner);
        match (kind, value) {
            ("P", Some(pid)) => {
                // `P <call> <pid> <group>`: the group is the session's leader's (it exited).
                if let Some(tx) = calls.get_mut(&call).and_then(|w| w.pid.take())
                    && let Ok(pid) = u32::try_from(pid)
                    && let Ok(group) = u32::try_from(group.unwrap_or(i64::from(pid)))
                {
                    let _ = tx.send(Some((group, pid)));
                }
            }
            ("X", Some(status)) => {
                if let Some(tx) = calls.remove(&call).and_then(|w| w.exit)
                    && let Ok(status) = i32::try_from(status)
                {
                    let _ = tx.send(status);
                }
            }
            ("E", None) => {
                if let Some(tx) = calls.remove(&call).and_then(|w| w.pid) {
                    let _ = tx.send(None);
                }
            }
            // Dropping the senders tells the waiting call.
            _ => {
                calls.remove(&call);
            }
        }
    }
    dead.store(true, Ordering::Release);
    // Every call still waiting learns that no report will come.
    calls.lock().unwrap_or_else(PoisonError::into_inner).clear();
}

/// The go message's JSON object.
fn go_body(
    server_env: &[(OsString, OsString)],
    call: &Launch,
    dir: &Path,
) -> serde_json::Map<String, serde_json::Value> {
    let spare: HashMap<&OsString, &OsString> = server_env.iter().map(|(k, v)| (k, v)).collect();
    let wanted: HashMap<&OsString, &OsString> = call.env.iter().map(|(k, v)| (k, v)).collect();
    let mut set = serde_json::Map::new();
    for (k, v) in &wanted {
        if spare.get(k) != Some(v) {
            set.insert(
                k.to_string_lossy().into_owned(),
                v.to_string_lossy().into_owned().into(),
            );
        }
    }
    let carrier = call.interpreter.carrier();
    // The start hook's variable goes back to the call's value (or away).
    let mut unset: Vec<String> = spare
        .keys()
        .filter(|k| !wanted.contains_key(*k))
        .map(|k| k.to_string_lossy().into_owned())
        .collect();
    match wanted.iter().find(|(k, _)| k.to_str() == Some(carrier)) {
        Some((_, v)) => {
            set.insert(carrier.to_string(), v.to_string_lossy().into_owned().into());
        }
        None => unset.push(carrier.to_string()),
    }
    let mut body = serde_json::Map::new();
    body.insert("set".into(), set.into());
    body.insert("unset".into(), unset.into());
    body.insert("cwd".into(), call.cwd.to_string_lossy().into());
    body.insert("dir".into(), dir.to_string_lossy().into());
    body
}

/// A warm start for one call.
#[derive(Debug)]
pub enum Claimed {
    /// A child a server forked for this call, and how much of the hook's input is in
    /// its stdin already.
    Forked(process::Forked, usize),
}

/// A warm start for `call`: `Ok(None)` when there is none ready (the call then runs cold).
/// `Err` when a server took the call but did not start its process in time: the call may run
/// still, so it is not run again (at most once), and fails with that text.
///
/// `limit` is the hook's timeout: the call waits at most that long (and at most
/// [`WAIT_FOR_START`]) for an interpreter still starting, and at most that long for a server to
/// start the call's process.
pub async fn claim(
    call: &Launch,
    stdin: &[u8],
    limit: Duration,
) -> Result<Option<Claimed>, String> {
    let key = call.key();
    let Some(dir) = boot_dir() else {
        return Ok(None);
    };
    let mut waited = false;
    let server = loop {
        let starting = {
            let state = pool().state.lock().unwrap_or_else(PoisonError::into_inner);
            let found = state.servers.get(&key).cloned();
            match (&found, state.starting.get(&key)) {
                // Being started: the rest of its start costs less than a whole cold start
                // (and does not compete with one for the CPU), so the call waits for it.
                (None, Some(notify)) if !waited => {
                    let notify = Arc::clone(notify);
                    drop(state);
                    notify
                }
                _ => break found,
            }
        };
        // Why create the future before waiting: it then sees a wake-up that comes at once.
        let notified = starting.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        let still_starting = pool()
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .starting
            .contains_key(&key);
        if still_starting {
            let _ = tokio::time::timeout(limit.min(WAIT_FOR_START), notified).await;
        }
        waited = true;
    };
    let Some(server) = server else {
        return Ok(None);
    };
    if server.dead.load(Ordering::Acquire) {
        return Ok(None);
    }
    let Ok((ends, theirs)) = process::forked_pipes() else {
        return Ok(None);
    };
    let id = server.next_call.fetch_add(1, Ordering::Relaxed);
    let (pid_tx, pid_rx) = tokio::sync::oneshot::channel();
    let (exit_tx, exit_rx) = tokio::sync::oneshot::channel();
    server
        .calls
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(
            id,
            Waiting {
                pid: Some(pid_tx),
                exit: Some(exit_tx),
            },
        );
    let mut body = go_body(&server.env, call, dir);
    body.insert("id".into(), id.into());
    let packet = serde_json::Value::Object(body).to_string();
    // The input waits in the pipe when the child starts: no round trip before it can read.
    let prefilled = ends.prefill(stdin);
    if let Err(e) = process::send_packet(&server.socket, packet.as_bytes(), &theirs) {
        // Not delivered: nothing ran, the call runs cold.
        server
            .calls
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&id);
        tracing::debug!(command = %call.command, error = %e, "the warm hook server did not take the call; it runs cold");
        return Ok(None);
    }
    // The child has its own copies now; the pipes end when it (and what it starts) is done.
    drop(theirs);
    match tokio::time::timeout(limit.min(START_LIMIT), pid_rx).await {
        Ok(Ok(Some((group, pid)))) => Ok(Some(Claimed::Forked(
            ends.forked(group, pid, exit_rx),
            prefilled,
        ))),
        // The server refused the call before starting anything: it runs cold.
        Ok(Ok(None)) => Ok(None),
        // The server ended before any of its processes said it took the call. The call's
        // process reports its pid before any of the call runs, so the call never ran: it
        // runs cold (a server killed just before the call, its socket not yet
        // closed, takes the packet into a queue nobody reads).
        Ok(Err(_)) => {
            tracing::debug!(command = %call.command, "the warm hook server ended before it took the call; it runs cold");
            Ok(None)
        }
        Err(_) => Err(format!(
            "the warm {} interpreter did not start the call's process within {:?}",
            call.interpreter.name(),
            limit.min(START_LIMIT)
        )),
    }
}

/// The interpreter `command` runs warm under, when warm hooks are on for it and it is
/// eligible ([`eligibility`]).
pub(crate) fn for_handler(
    handler: &ConfiguredHandler,
    command: &CommandHandler,
    spec: &CommandSpec,
    project: &str,
) -> Option<Interpreter> {
    if !handler.warm || command.args.is_some() || disabled_by_env() {
        return None;
    }
    let path = spec.variable("PATH").unwrap_or_default();
    match eligibility(&command.command, project, &spec.cwd, &path) {
        Warmth::Warm(interp) => Some(interp),
        Warmth::Cold(_) => None,
    }
}

/// Starts, in the background, one pre-started interpreter for each command handler that
/// runs warm ([`crate::hooks::warm`]); a session with no such handler starts nothing.
pub(crate) fn warm_up(dispatcher: &Dispatcher) {
    if disabled_by_env() {
        return;
    }
    let env = dispatcher.environment();
    let Some(cwd) = env.project_dir.to_str().map(str::to_string) else {
        return;
    };
    let mut launches = Vec::new();
    for handler in dispatcher.handlers() {
        let (Some(event), HandlerKind::Command(command), None) =
            (handler.event, &handler.kind, &handler.inactive)
        else {
            continue;
        };
        if command.is_async || command.async_rewake {
            continue;
        }
        let target = Target {
            event,
            match_value: None,
            tool: None,
            cwd: &cwd,
            effort: None,
            tool_use_id: None,
        };
        let plan = dispatcher.plan(handler, command, &target, None, Duration::ZERO);
        if let Some(launch) = plan.spec.warm_launch() {
            launches.push(launch);
        }
    }
    if launches.is_empty() {
        return;
    }
    for launch in launches {
        prestart(launch);
    }
}
