//! From one finished run to an [`Answer`]: the judgement of exit code and stdout
//! ([`crate::hooks::output::interpret`]) plus what every event's fold reads from it.

use std::os::unix::fs::OpenOptionsExt;

use serde_json::Value;

use crate::hooks::command::RawRun;
use crate::hooks::config::{HandlerOrigin, OnFailure};
use crate::hooks::events::Answer;
use crate::hooks::output::{self, Interpreted};
use crate::hooks::run::{HandlerRun, OutcomeKind, RunStatus};
use crate::hooks::spec::HookEvent;

/// Interprets one command run with [`output::interpret`] (spec §4.1–4.4) and extracts what
/// [`merge`] needs.
pub(crate) fn interpret(
    event: HookEvent,
    origin: HandlerOrigin,
    text: &str,
    raw: &RawRun,
    on_failure: OnFailure,
) -> Answer {
    let provenance = origin
        .plugin
        .as_ref()
        .map(|p| format!("\nThis hook comes from the {} plugin.", p.id))
        .unwrap_or_default();
    let mut interpreted = output::interpret_from(event, text, raw, on_failure, &provenance);
    if let (RunStatus::Exited(126 | 127), OutcomeKind::NonBlocking(message)) =
        (&raw.status, &mut interpreted.outcome)
        && let Some(hint) = crlf_hint(text)
    {
        message.push('\n');
        message.push_str(&hint);
    }
    for notice in &interpreted.notices {
        tracing::debug!(target: "rein::hooks", command = text, notice = %notice, "hook notice");
    }
    let run = interpreted.to_handler_run(origin, text, raw);
    answer_from(event, interpreted, run)
}

/// A hint for a script whose `#!` line ends in a carriage return (CRLF line endings): the
/// kernel then looks for an interpreter named `/bin/sh\r` and the shell says "not found" about
/// a file that plainly exists. `None` unless the command's first word is such a file.
pub(crate) fn crlf_hint(command: &str) -> Option<String> {
    let first = command.split_whitespace().next()?;
    let path = first.trim_matches(|c| c == '\'' || c == '"');
    if !path.starts_with('/') {
        return None;
    }
    // Why O_NONBLOCK and the regular-file check: the path is whatever the command names, and
    // opening a FIFO for reading would block this runtime thread until a writer appears.
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut head = [0u8; 256];
    let n = std::io::Read::read(&mut file, &mut head).ok()?;
    let line = head[..n].split(|b| *b == b'\n').next()?;
    (line.starts_with(b"#!") && line.ends_with(b"\r")).then(|| {
        format!(
            "hint: {path} has Windows (CRLF) line endings, so its #! interpreter is not found; \
             convert it with: sed -i 's/\\r$//' {path}"
        )
    })
}

/// An answer with nothing but its run.
pub(crate) fn bare(run: HandlerRun) -> Answer {
    Answer {
        run,
        output: None,
        additional_context: None,
        system_message: None,
        success_text: None,
    }
}

pub(crate) fn answer_from(event: HookEvent, interpreted: Interpreted, run: HandlerRun) -> Answer {
    let mut answer = bare(run);
    answer.success_text = interpreted.plain_stdout.filter(|s| !s.is_empty());
    let Some(out) = interpreted.output else {
        return answer;
    };
    let reads_context = event
        .spec()
        .output
        .iter()
        .any(|f| f.name == "additionalContext");
    if reads_context {
        answer.additional_context = out
            .hook_specific
            .as_ref()
            .and_then(|hso| hso.get("additionalContext"))
            .and_then(Value::as_str)
            .map(str::to_string);
    }
    answer.system_message = out.system_message.clone();
    answer.output = Some(out);
    answer
}
