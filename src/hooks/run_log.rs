//! The run log: one JSON line per handler run (`~/.rein/logs/<session>.jsonl`), echoed to
//! stderr under `--debug hooks`.

use std::fs::OpenOptions;
use std::io::{self, Write};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;
use std::sync::{Mutex, PoisonError};

use serde_json::{Value, json};

use crate::hooks::environment::HookEnvironment;
use crate::hooks::events::Answer;
use crate::hooks::output;
use crate::hooks::run::{OutcomeKind, RunStatus};
use crate::hooks::spec::HookEvent;

fn outcome_word(outcome: &OutcomeKind) -> &'static str {
    match outcome {
        OutcomeKind::Success => "success",
        OutcomeKind::Blocking(_) => "blocking",
        OutcomeKind::NonBlocking(_) => "non_blocking",
        OutcomeKind::Cancelled => "cancelled",
    }
}

/// The permission answer of an output, in one word, for the run log: PreToolUse's
/// `permissionDecision` (or the legacy `decision: approve`), PermissionRequest's
/// `decision.behavior`.
fn decision_word(event: HookEvent, output: &output::HookJsonOutput) -> Option<&'static str> {
    let hso = output.hook_specific.as_ref();
    let word = |v: Option<&Value>| match v.and_then(Value::as_str) {
        Some("allow") => Some("allow"),
        Some("deny") => Some("deny"),
        Some("ask") => Some("ask"),
        Some("defer") => Some("defer"),
        Some(_) | None => None,
    };
    word(hso.and_then(|h| h.get("permissionDecision")))
        .or_else(|| (event == HookEvent::PreToolUse && output.approves()).then_some("allow"))
        .or_else(|| {
            word(
                hso.and_then(|h| h.get("decision"))
                    .and_then(|d| d.get("behavior")),
            )
        })
}

/// The decision of a run in one word: `block` for a blocking outcome, else the permission
/// answer of its output ([`decision_word`]).
pub(crate) fn decision_of(event: HookEvent, answer: &Answer) -> Option<&'static str> {
    match &answer.run.outcome {
        OutcomeKind::Blocking(_) => Some("block"),
        OutcomeKind::Success | OutcomeKind::NonBlocking(_) | OutcomeKind::Cancelled => {
            answer.output.as_ref().and_then(|o| decision_word(event, o))
        }
    }
}

/// The run-log record of one handler run.
fn run_record(event: HookEvent, stdin_bytes: usize, answer: &Answer) -> Value {
    let run = &answer.run;
    let (status, exit_code, signal) = match &run.status {
        RunStatus::Exited(code) => ("exited", Some(*code), None),
        RunStatus::Signaled(sig) => ("signaled", None, Some(*sig)),
        RunStatus::TimedOut => ("timed_out", None, None),
        RunStatus::SpawnFailed(_) => ("spawn_failed", None, None),
        RunStatus::Backgrounded => ("backgrounded", None, None),
        RunStatus::Crashed(_) => ("crashed", None, None),
        RunStatus::RequestFailed(_) => ("request_failed", None, None),
    };
    let error = match &run.status {
        RunStatus::SpawnFailed(e) | RunStatus::Crashed(e) | RunStatus::RequestFailed(e) => {
            Some(e.clone())
        }
        RunStatus::Exited(_)
        | RunStatus::Signaled(_)
        | RunStatus::TimedOut
        | RunStatus::Backgrounded => None,
    };
    let decision = run.decision;
    json!({
        "event": event.as_str(),
        "origin": run.origin.location.to_string(),
        "source": run.origin.source.as_str(),
        "event_key": run.origin.event_key,
        "group": run.origin.group,
        "index": run.origin.index,
        "command": run.command,
        "duration_ms": u64::try_from(run.duration.as_millis()).unwrap_or(u64::MAX),
        "status": status,
        "exit_code": exit_code,
        "signal": signal,
        "timed_out": run.status == RunStatus::TimedOut,
        "error": error,
        "stdin_bytes": stdin_bytes,
        "stdout_bytes": run.stdout_bytes,
        "stderr_bytes": run.stderr_bytes,
        "stdout_capped": run.stdout_capped,
        "stderr_capped": run.stderr_capped,
        "outcome": outcome_word(&run.outcome),
        "decision": decision,
        "warm": run.warm,
        "shadow": run.shadow,
        "would_have": run.withheld,
    })
}

/// Appends one JSON line per run to the run log (`O_APPEND`, one write + flush per line, so
/// concurrent runs never interleave inside a line) and echoes it to stderr under `debug`.
/// A background (`async`) hook gets two lines: `"status": "backgrounded"` when the event
/// proceeds, and its real end (exit, timeout, cancel at shutdown) when it finishes.
pub(crate) fn log_run(
    env: &HookEnvironment,
    event: HookEvent,
    stdin_bytes: usize,
    answer: &Answer,
) {
    let record = run_record(event, stdin_bytes, answer);
    let line = format!("{record}\n");
    tracing::debug!(target: "rein::hooks", run = %record, "hook run");
    if env.debug {
        eprint!("[hook] {line}");
    }
    if let Some(path) = &env.run_log
        && let Err(err) = append_whole_line(path, line.as_bytes())
    {
        tracing::warn!(path = %path.display(), %err, "cannot write the hook run log");
    }
}

/// One writer at a time, so a failed append can be cut back before anyone appends after it.
static APPENDING: Mutex<()> = Mutex::new(());

/// Appends `line` whole or not at all: a write that fails part-way (a full disk) is cut back
/// to where the file ended, and a file left ending inside a line (a crash, a cut that failed)
/// gets a newline first, so the next line is never appended onto a torn one.
fn append_whole_line(path: &Path, line: &[u8]) -> io::Result<()> {
    let _one_at_a_time = APPENDING.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(dir) = path.parent() {
        crate::private_fs::create_dir_all(dir)?;
    }
    // Private (0600, no symlink followed), as every file under rein's home.
    let mut file = OpenOptions::new()
        .create(true)
        .append(true)
        .read(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)?;
    let before = file.metadata()?.len();
    let mut last = [0u8; 1];
    let torn = before > 0 && file.read_at(&mut last, before - 1)? == 1 && last[0] != b'\n';
    let mut bytes = Vec::with_capacity(line.len() + 1);
    if torn {
        bytes.push(b'\n');
    }
    bytes.extend_from_slice(line);
    // One write call for the whole line when it fits: with O_APPEND a reader never sees half
    // a line from us.
    if let Err(err) = file.write_all(&bytes).and_then(|()| file.flush()) {
        let _ = file.set_len(before);
        return Err(err);
    }
    Ok(())
}
