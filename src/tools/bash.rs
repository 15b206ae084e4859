//! The Bash tool: `{command, timeout?, description?, run_in_background?}` →
//! `{"stdout","stderr","interrupted","isImage","noOutputExpected"}` (spec §7, §5.4).
//!
//! Each call is a fresh `/bin/bash -c` (not a login shell) in the session's working directory,
//! run by [`crate::process`] in its own process group, with stdin at `/dev/null`. It first
//! sources every `CLAUDE_ENV_FILE` a SessionStart hook wrote, then `eval`s the command. An
//! `EXIT` trap writes `pwd -P` to a temp file, and that directory becomes the session cwd: `cd`
//! persists between calls, also when the command fails or calls `exit` (Claude Code records it
//! only on success; a persistent shell would be in the new directory either way).
//!
//! stdout and stderr share one pipe, so the model sees them interleaved as written and
//! `stderr` is always `""` (as recorded from Claude Code). A successful command's output beyond
//! 30000 characters is saved to a file and the model gets Claude Code's `<persisted-output>`
//! notice with a 2 KB preview; a failed command's is cut after the head with the
//! `... [N lines truncated] ...` note. The pipe is drained to the end so the child never blocks
//! on a full pipe. `timeout` is any positive number of milliseconds (`1500.5`), at most
//! [`MAX_TIMEOUT_MS`]. `run_in_background` commands are tracked in
//! [`crate::tools::background`]. Once the shell has exited, a
//! backgrounded descendant still holding the pipe gets [`DRAIN_GRACE`] and is then left running.
//!
//! Outcomes: exit 0 → Success; exit N → Failure `Exit code N\n<output>`; a signal counts as
//! exit 128+signal (the shell convention). Timeout → the group gets SIGTERM, then SIGKILL after
//! [`KILL_GRACE`], and a Failure `Command timed out after <T>\n<output>` with `is_interrupt:
//! false` — `is_interrupt` means the user interrupted, which a timeout is not.

#![deny(missing_docs)]

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde_json::{Map, Value, json};

use super::input::{self, Field, FieldKind};
use super::{BoxFuture, Tool, ToolContext, ToolOutcome};
use crate::byte_size::format_size;
use crate::process::{
    self, AfterLinger, Captured, Ending, Job, Limits, Output, Program, Stdin, Tee,
};

/// Timeout when the model gives none (ms).
pub const DEFAULT_TIMEOUT_MS: u64 = 120_000;
/// Longest timeout honoured; larger values are clamped (ms).
pub const MAX_TIMEOUT_MS: u64 = 600_000;
/// Characters of output kept (Claude Code's `BASH_MAX_OUTPUT_LENGTH` default).
pub const MAX_OUTPUT_CHARS: usize = 30_000;
/// Time between SIGTERM and SIGKILL to the command's process group on timeout.
///
/// Why it differs from the hooks' [`crate::hooks::command::KILL_GRACE`]: each keeps the value it
/// had before both ran on [`crate::process`]; Claude Code's own grace is not measured yet.
pub const KILL_GRACE: Duration = Duration::from_secs(2);
/// How long to wait for the pipe to close after the shell exited. A backgrounded grandchild
/// (`server &`) keeps it open; its later output is not part of this call, and it is left
/// running.
pub const DRAIN_GRACE: Duration = Duration::from_millis(200);
/// Bytes of a successful command's output saved to a file when it prints more than
/// [`MAX_OUTPUT_CHARS`] (Claude Code's 64 MB); past it the saved file says it holds only the
/// start, in Claude Code's words. The output goes to the file as it is printed: memory holds
/// only [`MEMORY_CAP_BYTES`].
pub const PERSIST_LIMIT_BYTES: usize = 64 * 1024 * 1024;
/// Bytes of output kept in memory: room for [`MAX_OUTPUT_CHARS`] characters of four bytes
/// each, all the model ever sees of it.
pub const MEMORY_CAP_BYTES: usize = 128 * 1024;
/// Bytes of a saved output shown in the model's preview (Claude Code's 2000).
pub const PREVIEW_BYTES: usize = 2000;
/// The text the model sees for a command that printed nothing.
pub const NO_OUTPUT_TEXT: &str = "(Bash completed with no output)";

pub(crate) const FIELDS: &[Field] = &[
    Field::required("command", FieldKind::String),
    Field::optional("timeout", FieldKind::Number),
    Field::optional("description", FieldKind::String),
    Field::optional("run_in_background", FieldKind::Boolean),
];

/// `$1` = cwd file, `$2` = the command. Variables are unexported shell locals.
const WRAPPER: &str = r#"__rein_cwd_file=$1
__rein_command=$2
set --
trap 'pwd -P >| "$__rein_cwd_file" 2>/dev/null' EXIT
"#;

const DESCRIPTION: &str = concat!(
    "Runs a command with /bin/bash in the session's working directory and returns what it \
printed (stdout and stderr together, in the order written).\n\n\
Use it for builds, tests, git, package managers and the project's own programs. To look at \
a file use Read, to find files Glob, to search contents Grep, to change files Edit or Write: \
their results are bounded and easier to check than cat, find, grep, sed or echo >.\n\n\
How it behaves:\n\
- Every call starts a fresh (non-login) shell. A `cd` carries over to the next call; \
variables, aliases and functions do not. Quote paths that contain spaces.\n\
- stdin is empty: interactive programs (editors, pagers, prompts) get no input, so pass \
flags such as --yes or --no-pager.\n\
- `timeout` is in milliseconds: default 120000 (2 minutes), at most 600000 (10 minutes); a \
larger value counts as 600000. When it runs out, the command and its children are stopped \
(TERM, then KILL 2 s later) and you get what it printed so far.\n\
- A command that exits non-zero comes back as an error starting with `Exit code N`, then its \
output.\n\
- Output over 30000 characters: for a successful command the whole output is saved to a file \
and you get its path with a preview (Read the file for the rest); for a failed command only \
the start is kept, with a note saying how many lines were cut.\n\
- `run_in_background: true` starts the command and answers at once with a task id and the \
file its output goes to. Use it for servers, watchers and anything that does not end by \
itself; Read the file to see its output, stop it with TaskStop. You are told when it ends.\n\
- Join dependent steps with && in one call; independent commands can be separate calls in \
the same reply.",
    super::refusal_note!()
);

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
                "command": {
                    "type": "string",
                    "description": "The command line to run, as you would type it in bash."
                },
                "timeout": {
                    "type": "number",
                    "exclusiveMinimum": 0,
                    "description": "Milliseconds before the command is stopped. Default 120000; values above 600000 count as 600000."
                },
                "description": {
                    "type": "string",
                    "description": "What the command does, in a few words (\"Run the unit tests\"). The user and the hooks see it."
                },
                "run_in_background": {
                    "type": "boolean",
                    "description": "true: start the command, answer at once with a task id and its output file, and let it run. Default false."
                }
            },
            "required": ["command"],
            "additionalProperties": false,
            "$schema": super::SCHEMA_DIALECT
        })
    }

    fn prepare_touches_files(&self) -> bool {
        false
    }

    fn prepare(&self, input: Value, _ctx: &ToolContext) -> Result<Value, String> {
        let map = input::normalise(self.name(), input, FIELDS)?;
        if map
            .get("timeout")
            .and_then(Value::as_f64)
            .is_some_and(|t| t <= 0.0)
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
            // Why f64: Claude Code's `timeout` is any number of milliseconds (`1500.5`).
            let timeout_ms = input
                .get("timeout")
                .and_then(Value::as_f64)
                .filter(|t| t.is_finite() && *t > 0.0)
                .unwrap_or(DEFAULT_TIMEOUT_MS as f64)
                .min(MAX_TIMEOUT_MS as f64);
            let background = input
                .get("run_in_background")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            let description = input.get("description").and_then(Value::as_str);
            if background {
                run_background(command, description, ctx).await
            } else {
                let timeout = Duration::from_secs_f64(timeout_ms / 1000.0);
                let mut outcome = run_foreground(command, timeout, ctx).await;
                if let ToolOutcome::Success {
                    response: Value::Object(map),
                    ..
                } = &mut outcome
                {
                    map.insert(
                        "noOutputExpected".into(),
                        Value::Bool(no_output_expected(command)),
                    );
                }
                outcome
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

/// Commands that print nothing when they succeed (Claude Code 2.1.328's list, measured one
/// by one: fixture `no_output_expected`; `true` and `sleep` are not on it).
const SILENT_COMMANDS: &[&str] = &[
    "mv", "cp", "rm", "mkdir", "rmdir", "chmod", "chown", "chgrp", "touch", "ln", "cd", "export",
    "unset", "wait",
];

/// `tool_response.noOutputExpected`: every simple command of the line is a silent one
/// (`cd . && touch x` is; `mkdir d; ls` and `touch f | cat` are not).
pub fn no_output_expected(command: &str) -> bool {
    let parsed = crate::permissions::bash::parse(command);
    parsed.unchecked.is_none()
        && !parsed.parts.is_empty()
        && parsed.parts.iter().all(|part| {
            part.argv
                .first()
                .is_some_and(|name| SILENT_COMMANDS.contains(&name.as_str()))
        })
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

/// A fresh file name in rein's private temporary directory (0700, random name, so no other
/// user can plant a file or symlink there); the system temp dir only if that cannot be made.
fn unique_name(kind: &str) -> PathBuf {
    crate::private_fs::temp_path(&format!("bash-{kind}")).unwrap_or_else(|_| {
        let n = CALLS.fetch_add(1, Ordering::Relaxed);
        std::env::temp_dir().join(format!("rein-bash-{kind}-{}-{n}", std::process::id()))
    })
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

/// `/bin/bash -c <script> bash <cwd file> <command>` in `dir` with the settings env.
fn bash_program<'a>(
    script: &'a str,
    dir: &'a Path,
    cwd_file: &'a Path,
    command: &'a str,
    ctx: &'a ToolContext,
) -> Program<'a> {
    let mut program = Program::new("/bin/bash", dir)
        .arg("-c")
        .arg(script)
        .arg("bash")
        .arg(cwd_file)
        .arg(command);
    program.env = &ctx.env;
    program.env_remove = &ctx.env_remove;
    program
}

/// The combined output as the model sees it: trailing newlines trimmed, capped at
/// [`MAX_OUTPUT_CHARS`] with a note counting the lines cut.
fn finish_output(c: &Captured) -> String {
    let text = String::from_utf8_lossy(&c.bytes);
    let dropped_any = c.capped();
    let text = if dropped_any {
        text.as_ref()
    } else {
        text.trim_end_matches(['\n', '\r'])
    };
    match text.char_indices().nth(MAX_OUTPUT_CHARS) {
        None if !dropped_any => text.to_string(),
        cut => {
            let at = cut.map_or(text.len(), |(i, _)| i);
            let (head, rest) = text.split_at(at);
            let rest = rest.trim_end_matches(['\n', '\r']);
            let lines = if rest.is_empty() {
                0
            } else {
                rest.split('\n').count()
            };
            let dropped = usize::try_from(c.dropped_newlines).unwrap_or(usize::MAX);
            let lines = lines.saturating_add(dropped);
            format!("{head}\n\n... [{lines} lines truncated] ...")
        }
    }
}

/// A new file for a command's whole output, private to the user (`O_EXCL`, mode 0600), in
/// the session's `tool-results` folder (else the temp folder); `None` if it cannot be made.
fn new_output_file(ctx: &ToolContext) -> Option<(PathBuf, Tee)> {
    let dir = match &ctx.output_dir {
        Some(dir) => dir.clone(),
        None => crate::private_fs::temp_dir().ok()?.to_path_buf(),
    };
    // Claude Code's name: a short random id.
    let path = dir.join(format!("{}.txt", crate::id::short_id(9)));
    let opened =
        crate::private_fs::create_dir_all(&dir).and_then(|()| crate::private_fs::create_new(&path));
    match opened {
        Ok(file) => Some((
            path,
            Tee {
                file,
                limit: PERSIST_LIMIT_BYTES as u64,
            },
        )),
        Err(err) => {
            tracing::warn!(path = %path.display(), %err, "cannot make a file for a Bash output");
            None
        }
    }
}

async fn run_foreground(command: &str, timeout: Duration, ctx: &ToolContext) -> ToolOutcome {
    let cwd_file = unique_name("cwd");
    let (script, dir) = (script(ctx), start_dir(ctx));
    let output_file = new_output_file(ctx);
    let job = Job {
        program: bash_program(&script, &dir, &cwd_file, command, ctx),
        stdin: Stdin::Null,
        output: match &output_file {
            Some((_, tee)) => Output::MergedTee {
                cap: MEMORY_CAP_BYTES,
                tee,
            },
            None => Output::Merged {
                cap: MEMORY_CAP_BYTES,
            },
        },
        limits: Limits {
            timeout,
            kill_grace: KILL_GRACE,
            linger: DRAIN_GRACE,
            after_linger: AfterLinger::Leave,
        },
    };
    // No cancel future: an interrupted call is a dropped future, which kills the group.
    let run = process::run(job, std::future::pending(), None).await;
    let failed = match run.ending {
        Ending::OutputPipeFailed(e) => return failure(format!("Failed to run bash: {e}")),
        Ending::SpawnFailed(e, _) => return failure(format!("Failed to run /bin/bash: {e}")),
        Ending::Exited(0) => None,
        Ending::Exited(code) => Some(format!("Exit code {code}")),
        // The shell convention: a signal counts as exit 128 + signal.
        Ending::Signaled(signal) => Some(format!("Exit code {}", 128 + signal)),
        // `Cancelled` cannot happen (no cancel future); were it to, it is a stop all the same.
        Ending::TimedOut | Ending::Cancelled => Some(format!(
            "Command timed out after {}",
            human_duration(timeout)
        )),
        Ending::WaitFailed(e) => Some(format!("Failed to wait for bash: {e}")),
    };
    update_cwd(&cwd_file, ctx);
    let saved = output_file.map(|(path, tee)| {
        drop(tee);
        path
    });
    if failed.is_none()
        && let Some(persisted) = persist_output(&run.stdout, saved.as_deref(), ctx)
    {
        return persisted;
    }
    if let Some(path) = saved {
        let _ = std::fs::remove_file(path);
    }
    let output = finish_output(&run.stdout);

    if let Some(head) = failed {
        return failure(if output.is_empty() {
            head
        } else {
            format!("{head}\n{output}")
        });
    }
    let response = bash_response(&output);
    let content = BashTool.render(&response).unwrap_or_default();
    ToolOutcome::Success { response, content }
}

fn human_duration(d: Duration) -> String {
    let micros = d.as_micros();
    if micros.is_multiple_of(1_000_000) {
        format!("{}s", micros / 1_000_000)
    } else if micros.is_multiple_of(1000) {
        format!("{}ms", micros / 1000)
    } else {
        format!("{}ms", d.as_secs_f64() * 1000.0)
    }
}

/// A successful command's output over [`MAX_OUTPUT_CHARS`]: saved to a file, and the model
/// gets Claude Code's `<persisted-output>` notice with a 2 KB preview; the response (what
/// PostToolUse hooks see) carries the first [`MAX_OUTPUT_CHARS`] characters as `stdout`, with
/// `persistedOutputPath` and `persistedOutputSize`. `None` when the output fits (`teed`, the
/// file that received it as it was printed, is then removed), or when it cannot be saved (the
/// caller then truncates it with a note).
fn persist_output(c: &Captured, teed: Option<&Path>, ctx: &ToolContext) -> Option<ToolOutcome> {
    let text = String::from_utf8_lossy(&c.bytes);
    if !c.capped() && text.chars().nth(MAX_OUTPUT_CHARS).is_none() {
        if let Some(path) = teed {
            let _ = std::fs::remove_file(path);
        }
        return None;
    }
    let (path, kept) = match teed {
        Some(path) if c.tee_error.is_none() => (path.to_path_buf(), c.teed),
        // No file took the output as it came (or the disk filled): save what memory holds.
        _ => {
            if let Some(path) = teed {
                let _ = std::fs::remove_file(path);
            }
            let (path, tee) = new_output_file(ctx)?;
            if let Err(err) = (&tee.file).write_all(&c.bytes) {
                tracing::warn!(path = %path.display(), %err, "cannot save a long Bash output");
                let _ = std::fs::remove_file(&path);
                return None;
            }
            (path, c.bytes.len() as u64)
        }
    };
    let saved = if kept < c.total {
        let limit = format_size(kept);
        format!(
            "Output exceeded the {limit} persist limit; only the first {limit} were saved to: {}",
            path.display()
        )
    } else {
        format!(
            "Output too large ({}). Full output saved to: {}",
            format_size(c.total),
            path.display()
        )
    };
    let mut end = PREVIEW_BYTES.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    // A preview ending on a whole line reads better, when one is not too far back.
    if let Some(nl) = text[..end].rfind('\n')
        && end < text.len()
        && nl >= end / 2
    {
        end = nl;
    }
    let more = if end < text.len() { "\n...\n" } else { "\n" };
    let content = format!(
        "<persisted-output>\n{saved}\n\nPreview (first {}):\n{}{more}</persisted-output>",
        format_size(PREVIEW_BYTES as u64),
        &text[..end]
    );
    // What hooks see (Claude Code 2.1.328, fixture texts_more): the output's first
    // MAX_OUTPUT_CHARS characters, with where the whole was saved and its size.
    let head: String = text.chars().take(MAX_OUTPUT_CHARS).collect();
    let mut response = bash_response(&head);
    if let Value::Object(map) = &mut response {
        map.insert(
            "persistedOutputPath".into(),
            Value::from(path.to_string_lossy().into_owned()),
        );
        map.insert("persistedOutputSize".into(), Value::from(c.total));
    }
    Some(ToolOutcome::Success { response, content })
}

/// Stores the directory the command ended in, if it exists.
fn update_cwd(cwd_file: &Path, ctx: &ToolContext) {
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

/// The wrapper's first lines for a background command: the death-pipe watchdog (see
/// [`crate::tools::background`]). Its stdin is the pipe rein alone writes to; at EOF (rein is
/// gone, however it ended) it kills the command's group, itself last. The command gets
/// `/dev/null`, as in the foreground.
///
/// Why the explicit `0<&0`: bash gives an `&` command `/dev/null` unless it redirects stdin.
/// Why the watchdog outlives the shell: whatever the command left running in its group is
/// still killed when rein goes. After the SIGTERM it looks every 0.1 s for another member of
/// its group (through `/proc`, builtins only) and exits as soon as there is none, so no rein
/// process outlives rein by more than that; what is still there after 2 s gets SIGKILL. Without
/// `/proc` it waits the whole 2 s.
const WATCHDOG: &str = r#"{ read -r _; trap '' TERM; kill -TERM -- -$$; n=0; while [ $n -lt 20 ]; do sleep 0.1; n=$((n+1)); [ -d /proc/self ] || continue; o=; for s in /proc/[0-9]*/stat; do [ "$s" = "/proc/$BASHPID/stat" ] && continue; read -r l < "$s" 2>/dev/null || continue; l=${l##*) }; set -- $l; [ "$3" = "$$" ] && { o=1; break; }; done; [ -z "$o" ] && exit 0; done; kill -KILL -- -$$; } 0<&0 >/dev/null 2>&1 &
exec </dev/null
"#;

async fn run_background(
    command: &str,
    description: Option<&str>,
    ctx: &ToolContext,
) -> ToolOutcome {
    let n = CALLS.fetch_add(1, Ordering::Relaxed);
    let id = format!("bash_{}_{n}", std::process::id());
    let log = unique_name(&id).with_extension("log");
    let (out, err) = match crate::private_fs::create_new(&log).and_then(|f| Ok((f.try_clone()?, f)))
    {
        Ok(files) => files,
        Err(e) => return failure(format!("Failed to create {}: {e}", log.display())),
    };
    // The cwd of a background command does not become the session's.
    let cwd_file = unique_name("bg-cwd");
    let dir = start_dir(ctx);
    let watchdog = ctx.background.death_pipe_reader();
    let script = match watchdog {
        Some(_) => {
            let base = script(ctx);
            let (head, rest) = base.split_at(WRAPPER.len());
            format!("{head}{WATCHDOG}{rest}")
        }
        None => script(ctx),
    };
    let program = bash_program(&script, &dir, &cwd_file, command, ctx);
    match process::spawn_detached(&program, watchdog, out, err) {
        Ok(detached) => {
            ctx.background.register(
                id.clone(),
                command.to_string(),
                description.map(str::to_string),
                log.clone(),
                super::current_call_id(),
                detached,
                move || {
                    let _ = std::fs::remove_file(cwd_file);
                },
            );
        }
        Err(e) => return failure(format!("Failed to run /bin/bash: {e}")),
    }
    let mut response = bash_response("");
    if let Value::Object(map) = &mut response {
        map.insert("backgroundTaskId".into(), Value::from(id.as_str()));
    }
    let content = format!(
        "Command running in background with ID: {id}. Output is being written to: {}. \
         rein tells you when it ends; Read that file for its output so far.",
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
