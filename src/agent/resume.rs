//! Sessions that go on: finding a project's earlier sessions (`--continue`, `--resume [ID]`)
//! and rebuilding the conversation the model saw from a transcript.
//!
//! The rebuild replays the transcript's lines in order, mirroring how the session built its
//! history: a prompt line starts a user message (preceded by the context still pending, e.g.
//! SessionStart's, and followed by UserPromptSubmit's), tool results gather into one user
//! message, the context tool hooks added is appended to that message before the next
//! assistant line, and Stop feedback is its own user message. What the transcript never held
//! (context from async hooks) is not rebuilt.
//!
//! A transcript cut by a crash ends in a partial line: it is left out with a notice and the
//! session resumes from the last complete entry. Any other unreadable line is named and
//! skipped. A transcript written by a newer rein is loaded as far as it is understood, with a
//! notice.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde_json::Value;

use crate::agent::transcript::{VERSION, encode_cwd};
use crate::model::{ContentBlock, Message, Role};

/// Why a session cannot be resumed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResumeError {
    /// `--resume ID` names no transcript of this project.
    #[error("No conversation found with session ID: {0}")]
    NotFound(String),
    /// `--continue` in a project without sessions.
    #[error("No conversation found to continue (no sessions in {0})")]
    NothingToContinue(PathBuf),
    /// A session id that is not a UUID.
    #[error("Invalid session ID {0:?}: it must be a UUID")]
    InvalidId(String),
}

/// One earlier session of a project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionFile {
    /// Its id (the file's stem).
    pub id: String,
    /// Its transcript.
    pub path: PathBuf,
    /// When it was last written.
    pub modified: SystemTime,
}

/// Whether `id` is a UUID (8-4-4-4-12 hex digits).
pub fn is_uuid(id: &str) -> bool {
    let parts: Vec<&str> = id.split('-').collect();
    let lens = [8, 4, 4, 4, 12];
    parts.len() == 5
        && parts
            .iter()
            .zip(lens)
            .all(|(p, n)| p.len() == n && p.chars().all(|c| c.is_ascii_hexdigit()))
}

/// The project's sessions under `projects` (`<rein home>/projects`, or the transcript
/// directory configured), newest first.
pub fn sessions(projects: &Path, project_dir: &Path) -> Vec<SessionFile> {
    let dir = projects.join(encode_cwd(&project_dir.to_string_lossy()));
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut out: Vec<SessionFile> = entries
        .flatten()
        .filter_map(|e| {
            let path = e.path();
            if path.extension().is_none_or(|x| x != "jsonl") {
                return None;
            }
            let id = path.file_stem()?.to_str()?.to_string();
            let modified = e.metadata().ok()?.modified().ok()?;
            Some(SessionFile { id, path, modified })
        })
        .collect();
    out.sort_by(|a, b| b.modified.cmp(&a.modified).then_with(|| a.id.cmp(&b.id)));
    out
}

/// The transcript of session `id` of this project.
pub fn find(projects: &Path, project_dir: &Path, id: &str) -> Result<SessionFile, ResumeError> {
    if !is_uuid(id) {
        return Err(ResumeError::InvalidId(id.to_string()));
    }
    sessions(projects, project_dir)
        .into_iter()
        .find(|s| s.id == id)
        .ok_or_else(|| ResumeError::NotFound(id.to_string()))
}

/// The newest session of this project.
pub fn latest(projects: &Path, project_dir: &Path) -> Result<SessionFile, ResumeError> {
    sessions(projects, project_dir)
        .into_iter()
        .next()
        .ok_or_else(|| ResumeError::NothingToContinue(project_dir.to_path_buf()))
}

/// The first prompt of a transcript (for the picker), cut to `max` characters.
pub fn first_prompt(path: &Path, max: usize) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    text.lines().find_map(|line| {
        let v: Value = serde_json::from_str(line).ok()?;
        if v["type"] != "user" {
            return None;
        }
        let prompt = v["message"]["content"].as_str()?;
        let one_line = prompt.split_whitespace().collect::<Vec<_>>().join(" ");
        let mut out: String = one_line.chars().take(max).collect();
        if one_line.chars().count() > max {
            out.push('…');
        }
        Some(out)
    })
}

/// A conversation rebuilt from a transcript.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Rebuilt {
    /// The messages, as the next request will send them.
    pub messages: Vec<Message>,
    /// Context entries recorded after the last message that the model has not seen yet.
    pub pending: Vec<String>,
    /// The uuid of the last complete line (the parent of the next line written).
    pub last_uuid: Option<String>,
    /// The bytes of the file that hold complete lines (a torn tail is beyond it).
    pub complete_len: u64,
    /// One line per problem met (a torn last line, a skipped line, a newer version).
    pub notices: Vec<String>,
}

/// Rebuilds the conversation from a transcript's bytes; `path` is only named in notices.
pub fn rebuild_bytes(path: &Path, bytes: &[u8]) -> Rebuilt {
    let mut out = Rebuilt::default();
    let mut state = Replay::default();
    let mut newer: Option<String> = None;
    let mut offset = 0usize;
    let mut number = 0usize;
    while offset < bytes.len() {
        number += 1;
        let (line, next, whole) = match bytes[offset..].iter().position(|b| *b == b'\n') {
            Some(end) => (&bytes[offset..offset + end], offset + end + 1, true),
            None => (&bytes[offset..], bytes.len(), false),
        };
        let parsed = serde_json::from_slice::<Value>(line);
        match (parsed, whole) {
            (Ok(v), true) => {
                if let Some(version) = v["version"].as_str()
                    && newer.is_none()
                    && is_newer(version, VERSION)
                {
                    newer = Some(version.to_string());
                }
                if let Some(uuid) = v["uuid"].as_str() {
                    out.last_uuid = Some(uuid.to_string());
                }
                state.line(&v);
                out.complete_len = next as u64;
            }
            (_, false) => {
                out.notices.push(format!(
                    "rein: the transcript {} ends in a partial line (line {number}, {} bytes; \
                     rein was probably stopped while writing it); resuming from the last \
                     complete entry",
                    path.display(),
                    line.len()
                ));
            }
            (Err(err), true) if line.iter().all(u8::is_ascii_whitespace) => {
                let _ = err;
                out.complete_len = next as u64;
            }
            (Err(err), true) => {
                out.notices.push(format!(
                    "rein: {}:{number}: not a JSON line ({err}); skipped",
                    path.display()
                ));
                out.complete_len = next as u64;
            }
        }
        offset = next;
    }
    if let Some(version) = newer {
        out.notices.push(format!(
            "rein: the transcript {} was written by rein {version}, newer than this rein \
             ({VERSION}); lines it does not understand are left out",
            path.display()
        ));
    }
    state.finish();
    out.messages = state.messages;
    out.pending = state.pending;
    out
}

/// `a` > `b` as dotted version numbers (non-numeric parts compare as 0).
fn is_newer(a: &str, b: &str) -> bool {
    let parse = |v: &str| -> Vec<u64> {
        v.split(['.', '-', '+'])
            .take(3)
            .map(|p| p.parse().unwrap_or(0))
            .collect()
    };
    parse(a) > parse(b)
}

/// The replay state: see the module doc.
#[derive(Default)]
struct Replay {
    messages: Vec<Message>,
    /// Context for the next message (SessionStart's, tool hooks').
    pending: Vec<String>,
    /// UserPromptSubmit context, recorded before its prompt line.
    prompt_context: Vec<String>,
    /// Whether the last message is a user message of tool results still gathering.
    gathering_results: bool,
    /// The last message is a prompt no assistant line has followed yet.
    after_prompt: bool,
}

fn note(text: &str) -> ContentBlock {
    crate::agent::session::system_note(text)
}

impl Replay {
    fn line(&mut self, v: &Value) {
        match v["type"].as_str() {
            Some("user") => self.user(v),
            Some("assistant") => self.assistant(v),
            Some("attachment") => self.attachment(&v["attachment"], v),
            Some("system")
                if v["subtype"] == "compact_boundary" || v["subtype"] == "conversation_cleared" =>
            {
                // The conversation starts over from the summary line that follows.
                self.messages.clear();
                self.pending.clear();
                self.prompt_context.clear();
                self.gathering_results = false;
                self.after_prompt = false;
            }
            _ => {}
        }
    }

    /// A hook's model-facing entries: what the line's `rendered` says the model was sent
    /// (Claude Code's shape, rein ≥ this version), else the `content` of a
    /// `hook_additional_context` (earlier rein versions, which wrote the entries there).
    fn attachment(&mut self, a: &Value, line: &Value) {
        let entries: Vec<String> = match line["rendered"].as_array() {
            Some(items) => items
                .iter()
                .filter_map(crate::agent::transcript::unrender)
                .collect(),
            None if a["type"] == "hook_additional_context" => a["content"]
                .as_array()
                .map(|c| {
                    c.iter()
                        .filter_map(|e| e.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default(),
            None => return,
        };
        if entries.is_empty() {
            return;
        }
        match a["hookEvent"].as_str() {
            // Written after the prompt line (Claude Code's order): the entries follow the
            // prompt in its message.
            Some("UserPromptSubmit") if self.after_prompt => {
                let blocks = entries.iter().map(|t| note(t));
                if let Some(last) = self.messages.last_mut() {
                    last.content.extend(blocks);
                }
            }
            // Written before the prompt line (earlier rein versions).
            Some("UserPromptSubmit") => self.prompt_context.extend(entries),
            // Stop's additional context is part of the feedback line; its blocking errors are
            // system notes of that message, recorded after it. (A rein before the notes wrote
            // them into the line as reminders: those are not added twice.)
            Some("Stop") | Some("SubagentStop") if line["renderedRole"] == "system" => {
                if let Some(last) = self.messages.last_mut()
                    && last.role == Role::User
                {
                    for entry in entries {
                        let old = format!("<system-reminder>\n{entry}\n</system-reminder>");
                        let written = last
                            .content
                            .iter()
                            .any(|b| matches!(b, ContentBlock::Text { text } if *text == old));
                        if !written {
                            last.content.push(note(&entry));
                        }
                    }
                }
            }
            Some("Stop") | Some("SubagentStop") => {}
            _ => self.pending.extend(entries),
        }
    }

    fn user(&mut self, v: &Value) {
        let content = &v["message"]["content"];
        if let Some(prompt) = content.as_str() {
            let mut blocks: Vec<ContentBlock> = self.pending.drain(..).map(|t| note(&t)).collect();
            blocks.push(ContentBlock::Text {
                text: prompt.to_string(),
            });
            blocks.extend(self.prompt_context.drain(..).map(|t| note(&t)));
            match self.messages.last_mut() {
                // A prompt after a stopped tool call joins the message of its results.
                Some(last) if crate::agent::session::ends_in_interruption(last) => {
                    last.content.extend(blocks)
                }
                Some(_) | None => self.push_user(blocks),
            }
            self.gathering_results = false;
            self.after_prompt = true;
            return;
        }
        let Some(items) = content.as_array() else {
            return;
        };
        let blocks: Vec<ContentBlock> = items
            .iter()
            .filter_map(|b| serde_json::from_value::<ContentBlock>(b.clone()).ok())
            .collect();
        if blocks.is_empty() {
            return;
        }
        self.after_prompt = false;
        let results = blocks
            .iter()
            .all(|b| matches!(b, ContentBlock::ToolResult { .. }));
        if results
            && self.gathering_results
            && let Some(last) = self.messages.last_mut()
        {
            last.content.extend(blocks);
            return;
        }
        // The note after the results of a stopped tool call belongs to their message; the one
        // after a reply stopped before any text, to the prompt's.
        let note = Message {
            role: Role::User,
            content: blocks.clone(),
        };
        if crate::agent::session::ends_in_interruption(&note)
            && blocks.len() == 1
            && let Some(last) = self.messages.last_mut()
            && (self.gathering_results || last.role == Role::User)
        {
            last.content.extend(blocks);
            self.gathering_results = false;
            return;
        }
        self.push_user(blocks);
        self.gathering_results = results;
    }

    fn push_user(&mut self, blocks: Vec<ContentBlock>) {
        self.messages.push(Message {
            role: Role::User,
            content: blocks,
        });
    }

    /// Context recorded since the last user message reached the model with the next request,
    /// appended to that message (as the session's `deliver_pending` does).
    fn deliver(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        let blocks: Vec<ContentBlock> = self.pending.drain(..).map(|t| note(&t)).collect();
        match self.messages.last_mut() {
            Some(last) if last.role == Role::User => last.content.extend(blocks),
            Some(_) | None => self.push_user(blocks),
        }
    }

    fn assistant(&mut self, v: &Value) {
        self.deliver();
        let content: Vec<ContentBlock> = v["message"]["content"]
            .as_array()
            .map(|items| {
                items
                    .iter()
                    .filter_map(|b| serde_json::from_value::<ContentBlock>(b.clone()).ok())
                    .collect()
            })
            .unwrap_or_default();
        self.messages.push(Message {
            role: Role::Assistant,
            content,
        });
        self.gathering_results = false;
        self.after_prompt = false;
    }

    /// A transcript never ends on unanswered tool calls in a session that ended cleanly; one
    /// that crashed may. Each unanswered call gets an error result so the API accepts the
    /// history.
    fn finish(&mut self) {
        let Some(last) = self.messages.last() else {
            return;
        };
        if last.role != Role::Assistant {
            return;
        }
        let unanswered: Vec<ContentBlock> = last
            .content
            .iter()
            .filter_map(|b| match b {
                ContentBlock::ToolUse { id, .. } => Some(ContentBlock::ToolResult {
                    tool_use_id: id.clone(),
                    content: crate::agent::session::INTERRUPTED_TOOL_USE.to_string(),
                    is_error: true,
                }),
                ContentBlock::Text { .. }
                | ContentBlock::SystemNote { .. }
                | ContentBlock::ToolResult { .. } => None,
            })
            .collect();
        if !unanswered.is_empty() {
            self.push_user(unanswered);
        }
    }
}

/// A transcript read for `/resume ID`: the conversation and what SessionStart tells about it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Loaded {
    /// The conversation.
    pub rebuilt: Rebuilt,
    /// The last reply's age and the context size it reported.
    pub facts: crate::agent::session::ResumeFacts,
}

/// Reads the transcript at `path` to go on with it: rebuilds the conversation, and cuts a torn
/// last line off the file (new lines are appended to it; glued onto the torn tail they would be
/// unreadable too). The error names what failed.
pub fn load(path: &Path) -> Result<Loaded, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let rebuilt = rebuild_bytes(path, &bytes);
    if (rebuilt.complete_len as usize) < bytes.len() {
        std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .and_then(|f| f.set_len(rebuilt.complete_len))
            .map_err(|e| {
                format!(
                    "cannot cut the partial last line off {}: {e}",
                    path.display()
                )
            })?;
    }
    let complete = bytes.get(..rebuilt.complete_len as usize).unwrap_or(&bytes);
    let facts = last_reply_facts(complete, SystemTime::now());
    Ok(Loaded { rebuilt, facts })
}

/// The age of the last assistant line (by its `timestamp`) at `now`, and the context size its
/// `message.usage` reported (prompt, cache and reply tokens).
pub fn last_reply_facts(bytes: &[u8], now: SystemTime) -> crate::agent::session::ResumeFacts {
    let mut facts = crate::agent::session::ResumeFacts::default();
    for line in bytes.split(|b| *b == b'\n') {
        let Ok(v) = serde_json::from_slice::<Value>(line) else {
            continue;
        };
        if v["type"] != "assistant" {
            continue;
        }
        if let Some(at) = v["timestamp"].as_str().and_then(parse_timestamp) {
            facts.seconds_since_last_response =
                Some(now.duration_since(at).map(|d| d.as_secs()).unwrap_or(0));
        }
        let usage = &v["message"]["usage"];
        if usage.is_object() {
            let n = |k: &str| usage[k].as_u64().unwrap_or(0);
            facts.context_tokens = Some(
                n("input_tokens")
                    + n("cache_creation_input_tokens")
                    + n("cache_read_input_tokens")
                    + n("output_tokens"),
            );
        }
    }
    facts
}

/// Parses `YYYY-MM-DDTHH:MM:SS[.fff]Z` (the transcripts' timestamps).
pub fn parse_timestamp(text: &str) -> Option<SystemTime> {
    let text = text.strip_suffix('Z')?;
    let (date, time) = text.split_once('T')?;
    let mut d = date.splitn(3, '-').map(|p| p.parse::<i64>().ok());
    let (y, m, day) = (d.next()??, d.next()??, d.next()??);
    let (hms, frac) = time.split_once('.').unwrap_or((time, ""));
    let mut t = hms.splitn(3, ':').map(|p| p.parse::<i64>().ok());
    let (hh, mm, ss) = (t.next()??, t.next()??, t.next()??);
    if !(1..=12).contains(&m) || !(1..=31).contains(&day) || hh > 23 || mm > 59 || ss > 60 {
        return None;
    }
    let millis: u64 = if frac.is_empty() {
        0
    } else {
        let digits: String = frac.chars().take(3).collect();
        format!("{digits:0<3}").parse().ok()?
    };
    // Days from the civil date (proleptic Gregorian), after H. Hinnant's algorithm.
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = days * 86_400 + hh * 3600 + mm * 60 + ss;
    let secs = u64::try_from(secs).ok()?;
    Some(SystemTime::UNIX_EPOCH + std::time::Duration::from_millis(secs * 1000 + millis))
}
