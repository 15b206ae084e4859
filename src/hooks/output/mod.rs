//! What one command-hook run *meant*: recognising hook JSON on stdout (spec §4.2), validating it
//! against the common fields (§4.3) and the event's `hookSpecificOutput` (§4.4), and applying the
//! exit-code decision procedure (§4.1). [`interpret`] is the single place that decides.
//!
//! Decisions are taken from stdout decoded **strictly** as UTF-8: bytes that are not UTF-8 are
//! never read as an answer (a lossy decode could turn garbage into an `allow`). stderr is only
//! displayed, so it is decoded lossily.
//!
//! The field tables ([`common_fields`] here, each event's `output` column in
//! [`crate::hooks::spec`]) are the one source for both validation and the "Expected schema"
//! text of a validation error. serde cannot say what these messages say (every problem with
//! its path, the expected schema), so validation stays hand-written; once an output is valid,
//! each event module reads its `hookSpecificOutput` with serde.

use serde_json::{Map, Value};

use crate::hooks::command::RawRun;
use crate::hooks::config::{HandlerOrigin, OnFailure};
use crate::hooks::run::{HandlerRun, OutcomeKind, RunStatus};
use crate::hooks::spec::{Field, FieldType, HookEvent};

mod schema;

pub use schema::expected_schema;
use schema::*;

/// Deepest nesting of objects/arrays accepted in hook JSON.
///
/// Why a scan of its own before parsing: serde_json stops at the same depth (its recursion
/// limit), but with a generic "recursion limit exceeded"; the scan names the depth found, costs
/// no allocation, and keeps rein safe should that limit ever be lifted. 128 is serde_json's
/// own default; no real hook output comes close.
pub const MAX_JSON_DEPTH: usize = 128;

/// The text standing in for an empty stderr in reason texts (Claude Code's wording).
pub const NO_STDERR: &str = "No stderr output";

/// Legacy top-level `decision`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LegacyDecision {
    /// PreToolUse: permission *allow*.
    Approve,
    /// A blocking error with `reason` (or `Blocked by hook`).
    Block,
}

/// A validated hook JSON output (spec §4.3). Unknown keys are tolerated and not kept here (the
/// raw value is in [`Interpreted::json`]).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct HookJsonOutput {
    /// `continue` (`false` stops the loop after the current step).
    pub continue_: Option<bool>,
    pub stop_reason: Option<String>,
    pub suppress_output: Option<bool>,
    pub decision: Option<LegacyDecision>,
    pub reason: Option<String>,
    pub system_message: Option<String>,
    pub terminal_sequence: Option<String>,
    /// The validated `hookSpecificOutput` (its `hookEventName` matched the event); each event
    /// module reads it as its typed `Output`.
    pub hook_specific: Option<Map<String, Value>>,
}

impl HookJsonOutput {
    /// `continue: false`.
    pub fn stops_loop(&self) -> bool {
        self.continue_ == Some(false)
    }

    /// The reason text of `decision: "block"` (`reason`, or `Blocked by hook`).
    pub fn block_reason(&self) -> Option<String> {
        match self.decision {
            Some(LegacyDecision::Block) => Some(
                self.reason
                    .clone()
                    .unwrap_or_else(|| "Blocked by hook".to_string()),
            ),
            Some(LegacyDecision::Approve) | None => None,
        }
    }

    /// Legacy `decision: "approve"` (PreToolUse: permission allow).
    pub fn approves(&self) -> bool {
        self.decision == Some(LegacyDecision::Approve)
    }

    /// Whether the output refuses on its own (`decision: "block"`, a PreToolUse
    /// `permissionDecision: "deny"`, a PermissionRequest `decision.behavior: "deny"`): then exit
    /// 2 adds no second blocking error. The keys are read raw: validation already restricted
    /// them to the events that have them.
    pub fn refuses(&self) -> bool {
        if self.decision == Some(LegacyDecision::Block) {
            return true;
        }
        let Some(hso) = &self.hook_specific else {
            return false;
        };
        hso.get("permissionDecision").and_then(Value::as_str) == Some("deny")
            || hso
                .get("decision")
                .and_then(|d| d.get("behavior"))
                .and_then(Value::as_str)
                == Some("deny")
    }
}

/// What stdout was recognised as (spec §4.2).
#[derive(Debug, Clone, PartialEq)]
pub enum Recognised {
    /// Not hook JSON; the text is `stdout.trim()` (lossy if stdout was not UTF-8).
    Plain(String),
    /// `{"async": true, …}`: the hook asked to be backgrounded.
    AsyncMarker(Value),
    /// A valid hook output.
    Json(Value, Box<HookJsonOutput>),
    /// Looked like hook JSON but is not acceptable; the full user-facing error text. `json` is
    /// the parsed value when it did parse.
    Invalid {
        message: String,
        json: Option<Value>,
    },
}

/// The interpretation of one run.
#[derive(Debug, Clone, PartialEq)]
pub struct Interpreted {
    /// Success / Blocking(reason) / NonBlocking(user text) / Cancelled.
    pub outcome: OutcomeKind,
    /// The validated JSON output. `Some` exactly when its fields must be applied — whatever the
    /// outcome (e.g. exit 2 with JSON context: `Blocking` *and* `Some`).
    pub output: Option<HookJsonOutput>,
    /// The parsed stdout JSON, when stdout parsed as a JSON object (also when it was then
    /// rejected or ignored), for logs and `HandlerRun::json`.
    pub json: Option<Value>,
    /// Exit 0 with plain-text stdout: `stdout.trim()`, the hook's "success" content (only some
    /// events show it to the model, spec §4.1 step 7a).
    pub plain_stdout: Option<String>,
    /// stdout was the `{"async":true}` marker: success, nothing else processed.
    pub backgrounded: bool,
    /// User-facing diagnostics that change nothing (a capped stream, JSON applied despite a
    /// failing exit code, keys an event does not read, …); for `--debug hooks` and
    /// `rein hooks test`.
    pub notices: Vec<String>,
}

impl Interpreted {
    fn new(outcome: OutcomeKind) -> Interpreted {
        Interpreted {
            outcome,
            output: None,
            json: None,
            plain_stdout: None,
            backgrounded: false,
            notices: Vec::new(),
        }
    }

    /// The per-handler record for [`crate::hooks::decision::Decision::runs`].
    pub fn to_handler_run(&self, origin: HandlerOrigin, command: &str, raw: &RawRun) -> HandlerRun {
        HandlerRun {
            origin,
            command: command.to_string(),
            status: raw.status.clone(),
            outcome: self.outcome.clone(),
            duration: raw.duration,
            stdout: String::from_utf8_lossy(&raw.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&raw.stderr).into_owned(),
            stdout_bytes: raw.stdout_bytes,
            stderr_bytes: raw.stderr_bytes,
            stdout_capped: raw.stdout_capped,
            stderr_capped: raw.stderr_capped,
            json: self.json.clone(),
            decision: None,
            warm: raw.warm,
            matcher: None,
            shadow: false,
            withheld: None,
        }
    }
}

/// Interprets one finished run of the command hook `command_text` (as configured; exec form:
/// command and args joined by spaces) on `event`. The procedure, first match wins (spec §4.1):
///
/// 0. `onFailure: "block"` is ignored on Stop, SubagentStop, TaskCompleted, TeammateIdle
///    (`EventSpec::on_failure`; the caller passes `Continue` for async hooks). "Blocks on
///    failure" below means it is `Block` after that.
/// 1. **Could not start** (`SpawnFailed`, also `Crashed`): text
///    `Error occurred while executing hook command: <err>` → `NonBlocking(text)`; blocks on
///    failure → `Blocking("[<cmd>]: failed; blocking because onFailure is \"block\"\n<text>")`.
/// 2. **Timed out** → `Cancelled` (stdout/stderr discarded); blocks on failure →
///    `Blocking("[<cmd>]: timed out; blocking because onFailure is \"block\"")`. A run ended by
///    the caller's cancel (`raw.cancelled`, a turn abort) is always `Cancelled`.
/// 3. `Backgrounded` status → `Success`, nothing processed. Otherwise the exit code is the
///    process's; **death by a signal counts as exit 1**.
/// 4. Recognise stdout ([`recognise`], spec §4.2): plain text / async marker / valid JSON /
///    invalid.
/// 5. **Async marker** (`{"async":true}`) → `Success`, `backgrounded`, nothing else processed.
/// 6. **Blocks on failure and exit ∉ {0, 2}** → `Blocking("[<cmd>]: failed; blocking because
///    onFailure is \"block\"\n<stderr>")`; any JSON is ignored.
/// 7. **Invalid JSON** (unparseable `{…}`, schema failure, wrong `hookEventName`, not UTF-8,
///    too deep, capped): exit 2 → `Blocking("[<cmd>]: <stderr or No stderr output>")`; blocks
///    on failure → `Blocking("[<cmd>]: failed; blocking because onFailure is \"block\"\n<error>")`;
///    else `NonBlocking(<error>)`. None of the output is applied.
/// 8. **Valid JSON**, any exit code: `output` is applied. `decision: "block"` →
///    `Blocking(reason or "Blocked by hook")`; else exit 2 and the output does not refuse on its
///    own ([`HookJsonOutput::refuses`]) → `Blocking("[<cmd>]: <stderr or No stderr output>")`;
///    else `Success` (a failing exit code adds a notice).
/// 9. **Plain text, exit 0** → `Success`, `plain_stdout = stdout.trim()`.
/// 10. **Plain text, exit 2** → `Blocking("[<cmd>]: <stderr verbatim, or No stderr output>")`;
///     except on Stop/SubagentStop/TaskCompleted/TeammateIdle with empty stdout and a stderr
///     matching `no such file|can't open` (case-insensitive), downgraded to
///     `NonBlocking("Hook script appears to be missing: <stderr>")`.
/// 11. **Plain text, any other exit** → `NonBlocking("Failed with non-blocking status code:
///     <stderr.trim() or No stderr output>")`.
#[cfg(test)]
pub fn interpret(
    event: HookEvent,
    command_text: &str,
    raw: &RawRun,
    on_failure: OnFailure,
) -> Interpreted {
    interpret_from(event, command_text, raw, on_failure, "")
}

/// [`interpret`] for a handler whose exit-2 refusal names where it came from: `provenance` is
/// appended to the `[<cmd>]: <stderr>` text (a plugin hook's `\nThis hook comes from the
/// <id> plugin.`, as Claude Code 2.1.328 words it; fixtures `plugin_hooks`, `plugin_hook_nonl`).
pub fn interpret_from(
    event: HookEvent,
    command_text: &str,
    raw: &RawRun,
    on_failure: OnFailure,
    provenance: &str,
) -> Interpreted {
    // Step 0.
    let block_on_failure = match on_failure {
        OnFailure::Block => event.spec().on_failure,
        OnFailure::Continue => false,
    };
    let stderr = String::from_utf8_lossy(&raw.stderr).into_owned();
    // Claude Code 2.1.328 trims the detail (a hook's stderr ends in a newline; the model sees
    // none; fixture `tests/fixtures/cc-2.1.328/texts_more`).
    let failed_blocking = |detail: &str| {
        format!(
            "[{command_text}]: failed; blocking because onFailure is \"block\"\n{}",
            detail.trim()
        )
    };
    let exit2_reason = || {
        if stderr.trim().is_empty() {
            format!("[{command_text}]: {NO_STDERR}{provenance}")
        } else {
            format!("[{command_text}]: {stderr}{provenance}")
        }
    };

    // Steps 1–3.
    let code = match &raw.status {
        RunStatus::SpawnFailed(err) | RunStatus::Crashed(err) | RunStatus::RequestFailed(err) => {
            let text = format!("Error occurred while executing hook command: {err}");
            let outcome = if block_on_failure {
                OutcomeKind::Blocking(failed_blocking(&text))
            } else {
                OutcomeKind::NonBlocking(text)
            };
            return Interpreted::new(outcome);
        }
        RunStatus::TimedOut => {
            let outcome = if block_on_failure && !raw.cancelled {
                OutcomeKind::Blocking(format!(
                    "[{command_text}]: timed out; blocking because onFailure is \"block\""
                ))
            } else {
                OutcomeKind::Cancelled
            };
            let mut interpreted = Interpreted::new(outcome);
            interpreted.notices.push(if raw.cancelled {
                format!("[{command_text}]: cancelled; its process group was killed")
            } else {
                format!(
                    "[{command_text}]: timed out after {:.1} s; its process group was killed",
                    raw.duration.as_secs_f64()
                )
            });
            return interpreted;
        }
        RunStatus::Backgrounded => {
            let mut interpreted = Interpreted::new(OutcomeKind::Success);
            interpreted.backgrounded = true;
            return interpreted;
        }
        RunStatus::Exited(code) => *code,
        RunStatus::Signaled(_) => 1,
    };

    let mut notices = Vec::new();
    if let RunStatus::Signaled(signal) = raw.status {
        notices.push(format!(
            "[{command_text}]: killed by signal {signal}; treated as exit code 1"
        ));
    }
    if raw.stderr_capped {
        notices.push(format!(
            "[{command_text}]: stderr was {} bytes; only the first {} were kept",
            raw.stderr_bytes,
            raw.stderr.len()
        ));
    }
    if raw.lingering_killed {
        notices.push(format!(
            "[{command_text}]: exited but a process it started kept stdout/stderr open; its \
             process group was killed"
        ));
    }

    // Step 4.
    let recognised = recognise(event, raw);
    let (outcome, mut interpreted) = match recognised {
        // Step 5.
        Recognised::AsyncMarker(json) => {
            let mut interpreted = Interpreted::new(OutcomeKind::Success);
            interpreted.backgrounded = true;
            interpreted.json = Some(json);
            (OutcomeKind::Success, interpreted)
        }
        // Step 6.
        recognised if block_on_failure && code != 0 && code != 2 => {
            let mut interpreted = Interpreted::new(OutcomeKind::Success);
            if let Recognised::Json(json, _)
            | Recognised::Invalid {
                json: Some(json), ..
            } = recognised
            {
                interpreted.json = Some(json);
            }
            (OutcomeKind::Blocking(failed_blocking(&stderr)), interpreted)
        }
        // Step 7.
        Recognised::Invalid { message, json } => {
            let outcome = if code == 2 {
                OutcomeKind::Blocking(exit2_reason())
            } else if block_on_failure {
                OutcomeKind::Blocking(failed_blocking(&message))
            } else {
                OutcomeKind::NonBlocking(message.clone())
            };
            let mut interpreted = Interpreted::new(OutcomeKind::Success);
            interpreted.json = json;
            if code == 2 || block_on_failure {
                interpreted.notices.push(message);
            }
            (outcome, interpreted)
        }
        // Step 8.
        Recognised::Json(json, output) => {
            let outcome = if let Some(reason) = output.block_reason() {
                OutcomeKind::Blocking(reason)
            } else if code == 2 && !output.refuses() {
                OutcomeKind::Blocking(exit2_reason())
            } else {
                OutcomeKind::Success
            };
            let mut interpreted = Interpreted::new(OutcomeKind::Success);
            if code != 0 && code != 2 {
                interpreted.notices.push(format!(
                    "[{command_text}]: exited with status {code}; its JSON output was applied \
                     anyway (as Claude Code does)"
                ));
            }
            let unread = unread_keys(event, &json);
            interpreted
                .notices
                .extend(unread.iter().take(MAX_LISTED).map(|key| {
                    format!(
                        "[{command_text}]: `{}` is not read on {event}; ignored",
                        preview(key, QUOTE_MAX_CHARS)
                    )
                }));
            if unread.len() > MAX_LISTED {
                interpreted.notices.push(format!(
                    "[{command_text}]: {} more keys are not read on {event}; ignored",
                    unread.len() - MAX_LISTED
                ));
            }
            interpreted.json = Some(json);
            interpreted.output = Some(*output);
            (outcome, interpreted)
        }
        Recognised::Plain(text) => {
            if raw.stdout_capped {
                notices.push(format!(
                    "[{command_text}]: stdout was {} bytes; only the first {} were kept",
                    raw.stdout_bytes,
                    raw.stdout.len()
                ));
            }
            if std::str::from_utf8(&raw.stdout).is_err() && !raw.stdout_capped {
                notices.push(format!(
                    "[{command_text}]: stdout is not valid UTF-8; shown with replacement \
                     characters"
                ));
            }
            let mut interpreted = Interpreted::new(OutcomeKind::Success);
            let outcome = match code {
                // Step 9.
                0 => {
                    interpreted.plain_stdout = Some(text);
                    OutcomeKind::Success
                }
                // Step 10.
                2 => {
                    if stop_like(event) && text.is_empty() && looks_like_missing_script(&stderr) {
                        OutcomeKind::NonBlocking(format!(
                            "Hook script appears to be missing: {}",
                            stderr.trim()
                        ))
                    } else {
                        OutcomeKind::Blocking(exit2_reason())
                    }
                }
                // Step 11.
                _ => OutcomeKind::NonBlocking(format!(
                    "Failed with non-blocking status code: {}",
                    if stderr.trim().is_empty() {
                        NO_STDERR
                    } else {
                        stderr.trim()
                    }
                )),
            };
            (outcome, interpreted)
        }
    };
    interpreted.outcome = outcome;
    notices.append(&mut interpreted.notices);
    interpreted.notices = notices;
    interpreted
}

/// Events whose exit-2 "script missing" case is downgraded (spec §4.1 step 7b): exactly those
/// where `onFailure` does not apply.
fn stop_like(event: HookEvent) -> bool {
    !event.spec().on_failure
}

fn looks_like_missing_script(stderr: &str) -> bool {
    let lower = stderr.to_lowercase();
    lower.contains("no such file") || lower.contains("can't open")
}

/// Recognises stdout per spec §4.2 and validates it for `event`.
///
/// 1. `s = stdout.trim()`; not starting with `{` → plain text.
/// 2. Capped stdout, stdout that is not UTF-8, or JSON nested deeper than [`MAX_JSON_DEPTH`]
///    → invalid (never an answer), unless the rules of 4. would make it plain text anyway.
/// 3. Parses: `{"async": true}` → async marker; otherwise validated (§4.3/§4.4, wrong
///    `hookEventName` voids it).
/// 4. Does not parse: `s` not ending in `}` → plain text (trailing text); ≥ 2 non-empty lines
///    that are each a JSON object that is `{}` or not a valid output → plain text (several
///    documents); else invalid ("looks like a JSON object but is not valid JSON").
pub fn recognise(event: HookEvent, raw: &RawRun) -> Recognised {
    let lossy = String::from_utf8_lossy(&raw.stdout);
    let s = lossy.trim();
    if !s.starts_with('{') {
        return Recognised::Plain(s.to_string());
    }
    if raw.stdout_capped {
        return Recognised::Invalid {
            message: validation_message(
                "(root)",
                &format!(
                    "stdout was {} bytes, more than the {}-byte cap; a truncated JSON output is \
                     never used",
                    raw.stdout_bytes,
                    raw.stdout.len()
                ),
                None,
                s,
                event,
            ),
            json: None,
        };
    }
    let text = match std::str::from_utf8(&raw.stdout) {
        Ok(text) => text.trim(),
        Err(err) => {
            if !s.ends_with('}') {
                return Recognised::Plain(s.to_string());
            }
            return Recognised::Invalid {
                message: validation_message(
                    "(root)",
                    &format!(
                        "stdout is not valid UTF-8 (first bad byte at offset {}); hook JSON must \
                         be UTF-8",
                        err.valid_up_to()
                    ),
                    None,
                    s,
                    event,
                ),
                json: None,
            };
        }
    };
    let depth = nesting_depth(text.as_bytes());
    if depth > MAX_JSON_DEPTH {
        if !text.ends_with('}') {
            return Recognised::Plain(text.to_string());
        }
        return Recognised::Invalid {
            message: validation_message(
                "(root)",
                &format!(
                    "JSON is nested {depth} levels deep; at most {MAX_JSON_DEPTH} are accepted"
                ),
                None,
                &preview(text, 200),
                event,
            ),
            json: None,
        };
    }
    match serde_json::from_str::<Value>(text) {
        Ok(value) => {
            if let Value::Object(map) = &value
                && map.get("async") == Some(&Value::Bool(true))
            {
                return Recognised::AsyncMarker(value);
            }
            match validate(event, &value) {
                Ok(output) => Recognised::Json(value, Box::new(output)),
                Err(Rejection::WrongEvent { got }) => Recognised::Invalid {
                    message: format!(
                        "Hook returned incorrect event name: expected '{event}' but got '{}'. \
                         Full stdout: {}",
                        preview(&got, QUOTE_MAX_CHARS),
                        preview(text, ECHO_MAX_CHARS)
                    ),
                    json: Some(value),
                },
                Err(Rejection::Schema(issues)) => {
                    let (path, message) = join_issues(&issues);
                    Recognised::Invalid {
                        message: validation_message(&path, &message, Some(&value), text, event),
                        json: Some(value),
                    }
                }
            }
        }
        Err(err) => {
            if !text.ends_with('}') {
                return Recognised::Plain(text.to_string());
            }
            if several_documents(event, text) {
                return Recognised::Plain(text.to_string());
            }
            Recognised::Invalid {
                message: validation_message(
                    "(root)",
                    &format!("looks like a JSON object but is not valid JSON: {err}"),
                    None,
                    text,
                    event,
                ),
                json: None,
            }
        }
    }
}

/// Keys of a valid output that `event` does not read (tolerated, as in Claude Code, but worth
/// telling the hook's author): unknown top-level keys and `hookSpecificOutput` keys of other
/// events, as dotted paths.
pub fn unread_keys(event: HookEvent, json: &Value) -> Vec<String> {
    let mut unread = Vec::new();
    let Some(map) = json.as_object() else {
        return unread;
    };
    for key in map.keys() {
        let known =
            key == "hookSpecificOutput" || key == "async" || COMMON.iter().any(|f| f.name == key);
        if !known {
            unread.push(key.clone());
        }
    }
    if let Some(hso) = map.get("hookSpecificOutput").and_then(Value::as_object) {
        for key in hso.keys() {
            let known = key == "hookEventName" || event.spec().output.iter().any(|f| f.name == key);
            if !known {
                unread.push(format!("hookSpecificOutput.{key}"));
            }
        }
    }
    unread
}

/// Most characters of a hook's output echoed in an error text. Why: Claude Code echoes it all,
/// but a 10 MiB echo helps nobody; the rest is summarised as a byte count.
pub const ECHO_MAX_CHARS: usize = 10_000;

/// Most characters of one value (an invalid enum string, an event name, a key) quoted inside a
/// message; the whole output is echoed separately, under [`ECHO_MAX_CHARS`].
const QUOTE_MAX_CHARS: usize = 200;

/// Most schema problems or unread keys listed one by one; the rest are counted. Why: a 10 MiB
/// output of a million wrong array items would otherwise become a 50 MB message.
const MAX_LISTED: usize = 20;

/// The start of a huge text, for error messages.
fn preview(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        Some((index, _)) => format!("{}… ({} bytes)", &text[..index], text.len()),
        None => text.to_string(),
    }
}

/// ≥ 2 non-empty lines, each a JSON object that is `{}` or not a valid hook output.
fn several_documents(event: HookEvent, text: &str) -> bool {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    lines.len() >= 2
        && lines
            .iter()
            .all(|line| match serde_json::from_str::<Value>(line) {
                Ok(Value::Object(map)) => {
                    map.is_empty() || validate(event, &Value::Object(map)).is_err()
                }
                Ok(_) | Err(_) => false,
            })
}

/// Deepest object/array nesting in JSON-ish bytes (strings skipped), without recursion.
pub(crate) fn nesting_depth(bytes: &[u8]) -> usize {
    let mut depth = 0usize;
    let mut max = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for &b in bytes {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' | b'[' => {
                depth += 1;
                max = max.max(depth);
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    max
}

fn validation_message(
    path: &str,
    message: &str,
    value: Option<&Value>,
    text: &str,
    event: HookEvent,
) -> String {
    let shown = match value {
        Some(value) => serde_json::to_string_pretty(value).unwrap_or_else(|_| text.to_string()),
        None => text.to_string(),
    };
    let shown = preview(&shown, ECHO_MAX_CHARS);
    format!(
        "Hook JSON output validation failed — {path}: {message}\n\nThe hook's output was: \
         {shown}\n\nExpected schema:\n{}",
        expected_schema(event)
    )
}

fn join_issues(issues: &[Issue]) -> (String, String) {
    match issues {
        [] => ("(root)".to_string(), "invalid".to_string()),
        [only] => (only.path.clone(), only.message.clone()),
        [first, rest @ ..] => {
            let mut message = first.message.clone();
            for issue in rest.iter().take(MAX_LISTED - 1) {
                message.push_str(&format!("; {}: {}", issue.path, issue.message));
            }
            if issues.len() > MAX_LISTED {
                message.push_str(&format!("; and {} more", issues.len() - MAX_LISTED));
            }
            (first.path.clone(), message)
        }
    }
}
