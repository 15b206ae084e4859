//! The Bash tool: `{command, timeout?, description?, run_in_background?}` →
//! `{"stdout","stderr","interrupted","isImage","noOutputExpected"}` (spec §7, §5.4).
//!
//! Each call is a fresh `/bin/bash -c` (not a login shell) in the session's working directory,
//! in its own process group, with stdin at `/dev/null`. It first sources every `CLAUDE_ENV_FILE`
//! a SessionStart hook wrote, then `eval`s the command. An `EXIT` trap writes `pwd -P` to a temp
//! file, and that directory becomes the session cwd: `cd` persists between calls, also when
//! the command fails or calls `exit` (Claude Code records it only on success; a persistent
//! shell would be in the new directory either way).
//!
//! stdout and stderr share one pipe, so the model sees them interleaved as written and
//! `stderr` is always `""` (as recorded from Claude Code). Output beyond 30000 characters is
//! cut after the head with Claude Code's `... [N lines truncated] ...` note; the pipe is drained
//! to the end so the child never blocks on a full pipe.
//!
//! Outcomes: exit 0 → Success; exit N → Failure `Exit code N\n<output>`; a signal counts as
//! exit 128+signal (the shell convention). Timeout → the group gets SIGTERM, then SIGKILL after
//! [`KILL_GRACE`], and a Failure `Command timed out after <T>\n<output>` with `is_interrupt:
//! false` — `is_interrupt` means the user interrupted, which a timeout is not.

use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Map, Value, json};
use tokio::io::AsyncReadExt;

use super::input::{self, Field, FieldKind};
use super::{BoxFuture, Tool, ToolContext, ToolOutcome};

/// Timeout when the model gives none (ms).
pub const DEFAULT_TIMEOUT_MS: u64 = 120_000;
/// Longest timeout honoured; larger values are clamped (ms).
pub const MAX_TIMEOUT_MS: u64 = 600_000;
/// Characters of output kept (Claude Code's `BASH_MAX_OUTPUT_LENGTH` default).
pub const MAX_OUTPUT_CHARS: usize = 30_000;
/// Time between SIGTERM and SIGKILL on timeout.
pub const KILL_GRACE: Duration = Duration::from_secs(2);
/// How long to wait for the pipe to close after the shell exited. A backgrounded grandchild
/// (`server &`) keeps it open; its later output is not part of this call.
const DRAIN_GRACE: Duration = Duration::from_millis(200);
/// Bytes kept in memory; a char is at most 4 bytes, so this always covers the kept head.
const KEPT_BYTES: usize = MAX_OUTPUT_CHARS * 4;
/// The text the model sees for a command that printed nothing.
pub const NO_OUTPUT_TEXT: &str = "(Bash completed with no output)";

const FIELDS: &[Field] = &[
    Field::required("command", FieldKind::String),
    Field::optional("timeout", FieldKind::Integer),
    Field::optional("description", FieldKind::String),
    Field::optional("run_in_background", FieldKind::Boolean),
];

/// `$1` = cwd file, `$2` = the command. Variables are unexported shell locals.
const WRAPPER: &str = r#"__rein_cwd_file=$1
__rein_command=$2
set --
trap 'pwd -P >| "$__rein_cwd_file" 2>/dev/null' EXIT
"#;

const DESCRIPTION: &str = "Executes a given bash command and returns its output.\n\n\
The working directory persists between commands, but shell state (variables, functions) does \
not. stdout and stderr are returned together. Optional `timeout` in milliseconds (default \
120000, max 600000). Output over 30000 characters is truncated. Use `run_in_background` for \
long-running processes such as servers; their output goes to a log file.";

static CALLS: AtomicU64 = AtomicU64::new(0);

/// The Bash tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct BashTool;

impl Tool for BashTool {
    fn name(&self) -> &str {
        "Bash"
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "command": {"type": "string", "description": "The command to execute"},
                "timeout": {"type": "number", "description": "Optional timeout in milliseconds (max 600000)"},
                "description": {"type": "string", "description": "Clear, concise description of what this command does in 5-10 words"},
                "run_in_background": {"type": "boolean", "description": "Set to true to run this command in the background."}
            },
            "required": ["command"],
            "additionalProperties": false,
            "$schema": "http://json-schema.org/draft-07/schema#"
        })
    }

    fn prepare(&self, input: Value, _ctx: &ToolContext) -> Result<Value, String> {
        let map = input::normalise(self.name(), input, FIELDS)?;
        if map
            .get("timeout")
            .and_then(Value::as_i64)
            .is_some_and(|t| t <= 0)
        {
            return Err(input::validation_error(
                self.name(),
                &["The parameter `timeout` must be a positive number of milliseconds".into()],
            ));
        }
        Ok(Value::Object(map))
    }

    fn execute<'a>(&'a self, input: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutcome> {
        Box::pin(async move {
            let Some(command) = input.get("command").and_then(Value::as_str) else {
                return failure(input::validation_error(
                    "Bash",
                    &["The required parameter `command` is missing".into()],
                ));
            };
            let timeout_ms = input
                .get("timeout")
                .and_then(Value::as_u64)
                .unwrap_or(DEFAULT_TIMEOUT_MS)
                .min(MAX_TIMEOUT_MS);
            let background = input
                .get("run_in_background")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            if background {
                run_background(command, ctx).await
            } else {
                run_foreground(command, Duration::from_millis(timeout_ms), ctx).await
            }
        })
    }

    fn render(&self, response: &Value) -> Option<String> {
        let stdout = response.get("stdout")?.as_str()?;
        let stderr = response.get("stderr").and_then(Value::as_str).unwrap_or("");
        let text = match (stdout.is_empty(), stderr.is_empty()) {
            (true, true) => NO_OUTPUT_TEXT.to_string(),
            (false, true) => stdout.to_string(),
            (true, false) => stderr.to_string(),
            (false, false) => format!("{stdout}\n{stderr}"),
        };
        Some(text)
    }
}

/// The `BashOutput` response for `stdout`.
pub fn bash_response(stdout: &str) -> Value {
    let mut map = Map::new();
    map.insert("stdout".into(), Value::from(stdout));
    map.insert("stderr".into(), Value::from(""));
    map.insert("interrupted".into(), Value::Bool(false));
    map.insert("isImage".into(), Value::Bool(false));
    map.insert("noOutputExpected".into(), Value::Bool(false));
    Value::Object(map)
}

fn unique_name(kind: &str) -> PathBuf {
    let n = CALLS.fetch_add(1, Ordering::Relaxed);
    std::env::temp_dir().join(format!("rein-bash-{kind}-{}-{n}", std::process::id()))
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// The script run by `bash -c`: the wrapper, the env files, the command.
fn script(ctx: &ToolContext) -> String {
    let mut script = WRAPPER.to_string();
    let env_files = match ctx.env_files.lock() {
        Ok(files) => files.clone(),
        Err(_) => Vec::new(),
    };
    for file in env_files {
        let path = shell_quote(&file.to_string_lossy());
        script.push_str(&format!("[ -r {path} ] && . {path} >/dev/null 2>&1\n"));
    }
    script.push_str("eval \"$__rein_command\"\n");
    script
}

/// The directory the command starts in: the session cwd, or the project dir if it is gone.
fn start_dir(ctx: &ToolContext) -> PathBuf {
    let cwd = ctx.current_dir();
    if cwd.is_dir() {
        cwd
    } else {
        ctx.project_dir.clone()
    }
}

fn shell_command(
    command: &str,
    cwd_file: &std::path::Path,
    ctx: &ToolContext,
) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new("/bin/bash");
    cmd.arg("-c")
        .arg(script(ctx))
        .arg("bash")
        .arg(cwd_file)
        .arg(command)
        .current_dir(start_dir(ctx))
        .envs(ctx.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .stdin(Stdio::null())
        .process_group(0);
    cmd
}

/// Output read so far; shared so a reader abandoned after [`DRAIN_GRACE`] leaves its data.
#[derive(Debug, Default)]
struct Collected {
    kept: Vec<u8>,
    /// Newlines in bytes beyond `kept`.
    dropped_newlines: usize,
    /// Whether any bytes were dropped.
    dropped_any: bool,
}

async fn collect(fd: OwnedFd, into: Arc<Mutex<Collected>>) {
    let Ok(mut receiver) = tokio::net::unix::pipe::Receiver::from_owned_fd(fd) else {
        return;
    };
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match receiver.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        let Ok(mut c) = into.lock() else { return };
        let room = KEPT_BYTES.saturating_sub(c.kept.len());
        let (keep, drop) = buf[..n].split_at(room.min(n));
        c.kept.extend_from_slice(keep);
        if !drop.is_empty() {
            c.dropped_any = true;
            c.dropped_newlines += drop.iter().filter(|&&b| b == b'\n').count();
        }
    }
}

/// The combined output as the model sees it: trailing newlines trimmed, capped at
/// [`MAX_OUTPUT_CHARS`] with a note counting the lines cut.
fn finish_output(c: &Collected) -> String {
    let text = String::from_utf8_lossy(&c.kept);
    let text = if c.dropped_any {
        text.as_ref()
    } else {
        text.trim_end_matches(['\n', '\r'])
    };
    match text.char_indices().nth(MAX_OUTPUT_CHARS) {
        None if !c.dropped_any => text.to_string(),
        cut => {
            let at = cut.map_or(text.len(), |(i, _)| i);
            let (head, rest) = text.split_at(at);
            let rest = rest.trim_end_matches(['\n', '\r']);
            let mut lines = if rest.is_empty() {
                0
            } else {
                rest.split('\n').count()
            };
            lines += c.dropped_newlines;
            format!("{head}\n\n... [{lines} lines truncated] ...")
        }
    }
}

/// Kills the command's process group if the call is dropped mid-run (the turn was cancelled),
/// so no orphan keeps running. Disarmed once the shell has exited normally: what it left in
/// the background (`server &`) was meant to stay.
struct GroupGuard(Option<i32>);

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if let Some(pgid) = self.0 {
            kill_group(pgid, libc::SIGKILL);
        }
    }
}

fn kill_group(pid: i32, signal: i32) {
    // SAFETY: killpg only sends a signal; a stale pgid yields ESRCH, which we ignore.
    unsafe {
        libc::killpg(pid, signal);
    }
}

async fn run_foreground(command: &str, timeout: Duration, ctx: &ToolContext) -> ToolOutcome {
    let cwd_file = unique_name("cwd");
    let (reader, writer) = match std::io::pipe() {
        Ok(pipe) => pipe,
        Err(e) => return failure(format!("Failed to run bash: {e}")),
    };
    let writer2 = match writer.try_clone() {
        Ok(w) => w,
        Err(e) => return failure(format!("Failed to run bash: {e}")),
    };
    let mut cmd = shell_command(command, &cwd_file, ctx);
    cmd.stdout(writer).stderr(writer2);
    let spawned = cmd.spawn();
    // Drop our copies of the write end, or the pipe never reports EOF.
    drop(cmd);
    let mut child = match spawned {
        Ok(child) => child,
        Err(e) => return failure(format!("Failed to run /bin/bash: {e}")),
    };
    let pgid = child.id().map(|id| id as i32);
    let mut guard = GroupGuard(pgid);
    let collected = Arc::new(Mutex::new(Collected::default()));
    let mut reader_task = tokio::spawn(collect(OwnedFd::from(reader), collected.clone()));

    let status = tokio::select! {
        status = child.wait() => Some(status),
        () = tokio::time::sleep(timeout) => None,
    };
    let timed_out = status.is_none();
    let status = match status {
        Some(status) => status,
        None => {
            if let Some(pgid) = pgid {
                kill_group(pgid, libc::SIGTERM);
            }
            let status = match tokio::time::timeout(KILL_GRACE, child.wait()).await {
                Ok(status) => status,
                Err(_) => {
                    if let Some(pgid) = pgid {
                        kill_group(pgid, libc::SIGKILL);
                    }
                    child.wait().await
                }
            };
            // Grandchildren that ignored SIGTERM go too.
            if let Some(pgid) = pgid {
                kill_group(pgid, libc::SIGKILL);
            }
            status
        }
    };
    guard.0 = None;
    if tokio::time::timeout(DRAIN_GRACE, &mut reader_task)
        .await
        .is_err()
    {
        reader_task.abort();
    }
    let output = match collected.lock() {
        Ok(c) => finish_output(&c),
        Err(_) => String::new(),
    };
    update_cwd(&cwd_file, ctx);

    let with_output = |head: String| {
        if output.is_empty() {
            head
        } else {
            format!("{head}\n{output}")
        }
    };
    if timed_out {
        return failure(with_output(format!(
            "Command timed out after {}",
            human_duration(timeout)
        )));
    }
    let code = match status {
        Ok(status) => exit_code(status),
        Err(e) => return failure(with_output(format!("Failed to wait for bash: {e}"))),
    };
    if code != 0 {
        return failure(with_output(format!("Exit code {code}")));
    }
    let response = bash_response(&output);
    let content = BashTool.render(&response).unwrap_or_default();
    ToolOutcome::Success { response, content }
}

fn exit_code(status: std::process::ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => code,
        (None, Some(signal)) => 128 + signal,
        (None, None) => 1,
    }
}

fn human_duration(d: Duration) -> String {
    let ms = d.as_millis();
    if ms.is_multiple_of(1000) {
        format!("{}s", ms / 1000)
    } else {
        format!("{ms}ms")
    }
}

/// Stores the directory the command ended in, if it exists.
fn update_cwd(cwd_file: &std::path::Path, ctx: &ToolContext) {
    let Ok(text) = std::fs::read_to_string(cwd_file) else {
        return;
    };
    let _ = std::fs::remove_file(cwd_file);
    let dir = PathBuf::from(text.trim_end_matches('\n'));
    if dir.is_absolute()
        && dir.is_dir()
        && let Ok(mut cwd) = ctx.cwd.lock()
    {
        *cwd = dir;
    }
}

async fn run_background(command: &str, ctx: &ToolContext) -> ToolOutcome {
    let n = CALLS.fetch_add(1, Ordering::Relaxed);
    let id = format!("bash_{}_{n}", std::process::id());
    let log = std::env::temp_dir().join(format!("rein-{id}.log"));
    let (out, err) = match std::fs::File::create(&log).and_then(|f| Ok((f.try_clone()?, f))) {
        Ok(files) => files,
        Err(e) => return failure(format!("Failed to create {}: {e}", log.display())),
    };
    // The cwd of a background command does not become the session's.
    let cwd_file = unique_name("bg-cwd");
    let mut cmd = shell_command(command, &cwd_file, ctx);
    cmd.stdout(out).stderr(err);
    match cmd.spawn() {
        Ok(mut child) => {
            tokio::spawn(async move {
                let _ = child.wait().await;
                let _ = std::fs::remove_file(cwd_file);
            });
        }
        Err(e) => return failure(format!("Failed to run /bin/bash: {e}")),
    }
    let mut response = bash_response("");
    if let Value::Object(map) = &mut response {
        map.insert("backgroundTaskId".into(), Value::from(id.as_str()));
    }
    let content = format!(
        "Command running in background with ID: {id}. Output is being written to: {}",
        log.display()
    );
    ToolOutcome::Success { response, content }
}

fn failure(error: String) -> ToolOutcome {
    ToolOutcome::Failure {
        error,
        is_interrupt: false,
    }
}
