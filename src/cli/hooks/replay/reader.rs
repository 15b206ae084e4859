//! Reading a transcript (Claude Code's or rein's: the same JSONL shape) as the events a live
//! session fired, one line at a time: memory stays bounded by the calls still waiting for their
//! result, whatever the file's size.
//!
//! rein's rules for what a transcript says happened:
//! - a `user` line whose content is text (not `isMeta`, not a compaction summary) is a prompt:
//!   UserPromptSubmit;
//! - each `tool_use` block of an `assistant` line is a call, replayed when its `tool_result`
//!   arrives (with the line's `toolUseResult` as the recorded `tool_response`), or at the end
//!   of the file without one;
//! - an `assistant` text with no tool call after it, followed by a `user` line or the end of
//!   the file, is the end of a turn: Stop (`stop_hook_active` when the line after the previous
//!   Stop was its feedback, an `isMeta` line). Sidechain (subagent) lines fire no Stop.

use std::collections::HashMap;
use std::io::BufRead;
use std::sync::Arc;

use serde_json::Value;

/// Where a record came from: `file:line`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Loc {
    pub(crate) file: Arc<str>,
    pub(crate) line: u64,
}

impl std::fmt::Display for Loc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

/// The session fields of the line an event came from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct LineBase {
    pub(crate) session_id: Option<String>,
    pub(crate) cwd: Option<String>,
    pub(crate) prompt_id: Option<String>,
    /// A subagent's lines (`isSidechain`) carry its id.
    pub(crate) agent_id: Option<String>,
}

/// How a call ended in the recorded session.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Then {
    /// The tool ran and succeeded; the model-facing text.
    Succeeded(String),
    /// The tool ran and failed; the error text.
    Failed(String),
    /// The call was refused (a hook, a rule, a person); the text the model got.
    Refused(String),
    /// The transcript has no result for it (the session ended first, or the file is cut).
    NoResult,
}

/// One event of the recorded session.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Recorded {
    Prompt {
        loc: Loc,
        base: LineBase,
        text: String,
    },
    Call {
        loc: Loc,
        base: LineBase,
        id: String,
        name: String,
        input: Value,
        then: Then,
        /// The recorded `toolUseResult`, when the tool ran.
        response: Option<Value>,
    },
    Stop {
        loc: Loc,
        base: LineBase,
        last_message: String,
        stop_hook_active: bool,
    },
}

/// A line that could not be read, reported and skipped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BadLine {
    pub(crate) loc: Loc,
    pub(crate) message: String,
}

struct Pending {
    loc: Loc,
    base: LineBase,
    name: String,
    input: Value,
}

struct StopCandidate {
    loc: Loc,
    base: LineBase,
    text: String,
}

/// Streams [`Recorded`] events out of one transcript.
pub(crate) struct Reader<R> {
    input: R,
    file: Arc<str>,
    line: u64,
    buf: Vec<u8>,
    pending: HashMap<String, Pending>,
    /// Calls in the order they were made (results usually come back in this order).
    order: Vec<String>,
    stop: Option<StopCandidate>,
    /// The last Stop was followed by an `isMeta` line: the next Stop is a continuation.
    stop_was_blocked: bool,
    ready: std::collections::VecDeque<Recorded>,
    bad: Vec<BadLine>,
    done: bool,
    /// Bytes read so far (for progress).
    pub(crate) bytes: u64,
}

impl<R: BufRead> Reader<R> {
    pub(crate) fn new(input: R, file: &str) -> Reader<R> {
        Reader {
            input,
            file: Arc::from(file),
            line: 0,
            buf: Vec::new(),
            pending: HashMap::new(),
            order: Vec::new(),
            stop: None,
            stop_was_blocked: false,
            ready: std::collections::VecDeque::new(),
            bad: Vec::new(),
            done: false,
            bytes: 0,
        }
    }

    /// Lines that could not be read since the last call.
    pub(crate) fn take_bad(&mut self) -> Vec<BadLine> {
        std::mem::take(&mut self.bad)
    }

    /// The next event, `None` at the end of the file. A read error ends the file (reported as
    /// a bad line).
    pub(crate) fn next_event(&mut self) -> Option<Recorded> {
        loop {
            if let Some(event) = self.ready.pop_front() {
                return Some(event);
            }
            if self.done {
                return None;
            }
            self.buf.clear();
            match self.input.read_until(b'\n', &mut self.buf) {
                Ok(0) => self.finish(),
                Ok(n) => {
                    self.bytes += n as u64;
                    self.line += 1;
                    let complete = self.buf.last() == Some(&b'\n');
                    let text = std::mem::take(&mut self.buf);
                    self.take_line(&text, complete);
                    self.buf = text;
                }
                Err(e) => {
                    self.line += 1;
                    self.bad.push(BadLine {
                        loc: self.loc(),
                        message: format!("cannot read: {e}; the rest of the file is skipped"),
                    });
                    self.finish();
                }
            }
        }
    }

    fn loc(&self) -> Loc {
        Loc {
            file: Arc::clone(&self.file),
            line: self.line,
        }
    }

    fn finish(&mut self) {
        self.done = true;
        self.flush_stop(false);
        for id in std::mem::take(&mut self.order) {
            if let Some(p) = self.pending.remove(&id) {
                self.ready.push_back(Recorded::Call {
                    loc: p.loc,
                    base: p.base,
                    id,
                    name: p.name,
                    input: p.input,
                    then: Then::NoResult,
                    response: None,
                });
            }
        }
    }

    fn take_line(&mut self, bytes: &[u8], complete: bool) {
        let trimmed = bytes.trim_ascii();
        if trimmed.is_empty() {
            return;
        }
        let value: Value = match serde_json::from_slice(trimmed) {
            Ok(v) => v,
            Err(e) => {
                let message = if complete {
                    format!("not a JSON line ({e}); skipped")
                } else {
                    format!("the file ends inside this line ({e}); skipped")
                };
                self.bad.push(BadLine {
                    loc: self.loc(),
                    message,
                });
                return;
            }
        };
        let Some(obj) = value.as_object() else {
            self.bad.push(BadLine {
                loc: self.loc(),
                message: "not a JSON object; skipped".to_string(),
            });
            return;
        };
        let text_of = |key: &str| obj.get(key).and_then(Value::as_str).map(str::to_string);
        let sidechain = obj.get("isSidechain").and_then(Value::as_bool) == Some(true);
        let base = LineBase {
            session_id: text_of("sessionId"),
            cwd: text_of("cwd"),
            prompt_id: text_of("promptId"),
            agent_id: if sidechain { text_of("agentId") } else { None },
        };
        let content = obj.get("message").and_then(|m| m.get("content"));
        match obj.get("type").and_then(Value::as_str) {
            Some("user") => {
                let meta = obj.get("isMeta").and_then(Value::as_bool) == Some(true)
                    || obj.get("isCompactSummary").and_then(Value::as_bool) == Some(true);
                self.flush_stop(meta);
                match content {
                    Some(Value::String(text)) if !meta => {
                        self.stop_was_blocked = false;
                        self.ready.push_back(Recorded::Prompt {
                            loc: self.loc(),
                            base,
                            text: text.clone(),
                        });
                    }
                    Some(Value::Array(blocks)) => {
                        let mut prompt = Vec::new();
                        for block in blocks {
                            match block.get("type").and_then(Value::as_str) {
                                Some("tool_result") => self.result(obj, block),
                                Some("text") if !meta => {
                                    if let Some(t) = block.get("text").and_then(Value::as_str) {
                                        prompt.push(t.to_string());
                                    }
                                }
                                _ => {}
                            }
                        }
                        if !prompt.is_empty() {
                            self.stop_was_blocked = false;
                            self.ready.push_back(Recorded::Prompt {
                                loc: self.loc(),
                                base,
                                text: prompt.join("\n"),
                            });
                        }
                    }
                    _ => {}
                }
            }
            Some("assistant") => {
                let Some(Value::Array(blocks)) = content else {
                    return;
                };
                for block in blocks {
                    match block.get("type").and_then(Value::as_str) {
                        Some("tool_use") => {
                            self.stop = None;
                            let id = block
                                .get("id")
                                .and_then(Value::as_str)
                                .unwrap_or_default()
                                .to_string();
                            let name = block
                                .get("name")
                                .and_then(Value::as_str)
                                .unwrap_or_default()
                                .to_string();
                            let input = block.get("input").cloned().unwrap_or(Value::Null);
                            if !self.pending.contains_key(&id) {
                                self.order.push(id.clone());
                            }
                            self.pending.insert(
                                id,
                                Pending {
                                    loc: self.loc(),
                                    base: base.clone(),
                                    name,
                                    input,
                                },
                            );
                        }
                        Some("text") if !sidechain => {
                            let text = block
                                .get("text")
                                .and_then(Value::as_str)
                                .unwrap_or_default();
                            self.stop = Some(StopCandidate {
                                loc: self.loc(),
                                base: base.clone(),
                                text: text.to_string(),
                            });
                        }
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }

    /// A pending Stop happened: emit it. `feedback`: the line after it is a hook's feedback
    /// (the next Stop continues a blocked one).
    fn flush_stop(&mut self, feedback: bool) {
        if let Some(stop) = self.stop.take() {
            self.ready.push_back(Recorded::Stop {
                loc: stop.loc,
                base: stop.base,
                last_message: stop.text,
                stop_hook_active: self.stop_was_blocked,
            });
            self.stop_was_blocked = feedback;
        }
    }

    fn result(&mut self, line: &serde_json::Map<String, Value>, block: &Value) {
        let Some(id) = block.get("tool_use_id").and_then(Value::as_str) else {
            return;
        };
        let Some(p) = self.pending.remove(id) else {
            return;
        };
        self.order.retain(|o| o != id);
        let text = result_text(block.get("content"));
        let is_error = block.get("is_error").and_then(Value::as_bool) == Some(true);
        let refused = line
            .get("permissionDecision")
            .and_then(|d| d.get("decision"))
            .and_then(Value::as_str)
            == Some("reject")
            || line.contains_key("toolDenialKind")
            || (is_error && is_refusal_text(&text));
        let then = if refused {
            Then::Refused(text)
        } else if is_error {
            Then::Failed(text)
        } else {
            Then::Succeeded(text)
        };
        let response = match &then {
            Then::Succeeded(_) | Then::Failed(_) => line.get("toolUseResult").cloned(),
            Then::Refused(_) | Then::NoResult => None,
        };
        self.ready.push_back(Recorded::Call {
            loc: p.loc,
            base: p.base,
            id: id.to_string(),
            name: p.name,
            input: p.input,
            then,
            response,
        });
    }
}

/// A tool_result's content as text (a string, or the text blocks of an array).
fn result_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// Texts Claude Code and rein give the model for a refused call, for transcripts that do not
/// mark the refusal on the line.
fn is_refusal_text(text: &str) -> bool {
    let text = text.trim_start();
    text.starts_with("PreToolUse:")
        || text.starts_with("PermissionRequest:")
        || text.starts_with("Permission to use ")
        || text.starts_with(crate::pipeline::USER_REJECTED_TEXT)
        || text.contains("requested permissions to ")
        || text.contains("denied by your permission settings")
}
