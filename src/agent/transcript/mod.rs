//! The session transcript: JSON Lines at `transcript_path`, in Claude Code's line shapes
//! (spec §8), appended and flushed as things happen so a hook reading the file mid-session sees
//! the latest turn.
//!
//! Location: `<rein home>/projects/<encoded-cwd>/<session>.jsonl` where rein home is
//! `$REIN_HOME` or `~/.rein`.
//!
//! Integrity: the file only ever holds complete lines. An append that fails part-way (a full
//! disk, an I/O error) is cut back to the length the file had before it; should that fail too,
//! the file is sealed and nothing more is appended onto the torn line. Either way the session
//! goes on unchanged, and [`Transcript::fault`] says what is missing so the caller can report
//! `transcript incomplete: …` and exit non-zero.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value, json};

use crate::hooks::spec::HookEvent;
use crate::id::uuid_v4;
use crate::model::{ContentBlock, ModelResponse, StopReason};

mod conversation;
mod hook_lines;
mod location;

pub(crate) use conversation::unrender;
use conversation::*;
#[cfg(test)]
pub(crate) use location::*;
pub use location::{encode_cwd, rein_home, timestamp_now, transcript_path};

/// rein's version as written into every line.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Most bytes of a hook's stdout or stderr recorded in one transcript or stream-json line.
///
/// Why: the runner keeps up to 10 MiB of stdout per run, and JSON escaping can grow it sixfold
/// (a NUL becomes `\u0000`); 64 flooding hooks would otherwise write gigabytes per call. What
/// reached the model is recorded whole elsewhere (context entries, tool results, spill files).
pub const STREAM_RECORD_MAX: usize = 10_000;

/// `text` (a hook stream, `total` bytes long before capping) cut to [`STREAM_RECORD_MAX`] bytes
/// on a character boundary, with a note saying how much there was.
pub fn bounded_stream(text: &str, total: u64) -> String {
    if text.len() <= STREAM_RECORD_MAX {
        return text.to_string();
    }
    let mut end = STREAM_RECORD_MAX;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let total = total.max(text.len() as u64);
    format!(
        "{}\n… [{total} bytes in total; truncated here]",
        &text[..end]
    )
}

/// Per-line context the session supplies.
#[derive(Debug, Clone, Default)]
pub struct LineContext {
    pub prompt_id: Option<String>,
    pub permission_mode: Option<String>,
    /// Set in a subagent's transcript: its lines are a side chain (`isSidechain: true`) and
    /// carry `agentId`, as Claude Code writes them.
    pub agent_id: Option<String>,
    /// The model rein asks (assistant lines' `requestedModel`).
    pub requested_model: Option<String>,
    /// The effort level sent with each request (assistant lines' `effort`), if any.
    pub effort: Option<String>,
}

/// How one tool call was let through or refused, as a tool-result line records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolDecision {
    /// The permission mode let it run (`bypassPermissions`).
    AcceptedByMode,
    /// A PreToolUse hook refused it.
    RejectedByHook,
    /// Something rein cannot name in Claude Code's terms: no `permissionDecision` is written.
    Unrecorded,
}

/// One tool result as the model sees it.
#[derive(Debug, Clone, Copy)]
pub struct ToolResultLine<'a> {
    /// The call's id.
    pub tool_use_id: &'a str,
    /// The tool's name.
    pub tool_name: &'a str,
    /// The result text the model sees.
    pub content: &'a str,
    /// Whether the model is told the call failed or was refused.
    pub is_error: bool,
    /// The structured result (`toolUseResult`), when the tool produced one.
    pub tool_use_result: Option<&'a Value>,
    /// How the call got through the gate.
    pub decision: ToolDecision,
}

/// Why a transcript is missing lines: the first failure and how much was lost.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TranscriptFault {
    /// The transcript file.
    pub path: PathBuf,
    /// The first error (`No space left on device (os error 28)`, …).
    pub reason: String,
    /// Lines that are not in the file.
    pub lines_lost: u64,
    /// A partial line could not be cut back: it is still at the end of the file, and nothing
    /// was appended after it.
    pub sealed: bool,
}

impl std::fmt::Display for TranscriptFault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let lines = if self.lines_lost == 1 {
            "line"
        } else {
            "lines"
        };
        write!(
            f,
            "transcript incomplete: {}: {} {lines} not written ({})",
            self.path.display(),
            self.lines_lost,
            self.reason
        )?;
        if self.sealed {
            f.write_str("; a partial line could not be removed, so nothing was appended after it")?;
        }
        Ok(())
    }
}

/// An append-only file the transcript writes through; a trait so tests can make each step
/// fail.
trait LineFile: Send {
    /// Current length in bytes.
    fn size(&mut self) -> std::io::Result<u64>;
    /// Appends all of `bytes` (`O_APPEND`).
    fn append(&mut self, bytes: &[u8]) -> std::io::Result<()>;
    /// Cuts the file back to `len` bytes.
    fn truncate(&mut self, len: u64) -> std::io::Result<()>;
}

impl LineFile for File {
    fn size(&mut self) -> std::io::Result<u64> {
        Ok(self.metadata()?.len())
    }

    fn append(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        // One write call per line when it fits: with O_APPEND a reader never sees half a line
        // from us.
        self.write_all(bytes)?;
        self.flush()
    }

    fn truncate(&mut self, len: u64) -> std::io::Result<()> {
        self.set_len(len)
    }
}

/// How appending went so far.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Health {
    Whole,
    /// Lines were lost; every line in the file is complete and appends go on.
    Incomplete {
        reason: String,
        lost: u64,
    },
    /// A torn line could not be cut back: no more appends.
    Sealed {
        reason: String,
        lost: u64,
    },
}

struct Inner {
    file: Option<Box<dyn LineFile>>,
    health: Health,
    /// A fault not yet handed out by [`Transcript::take_new_fault_notice`].
    unreported: bool,
    /// The uuid of the last line that is in the file: a lost line is never anyone's parent.
    last_uuid: Option<String>,
    /// Nothing is written (`--no-session-persistence`).
    off: bool,
    /// Tool-use id → uuid of the assistant line that asked for it (`sourceToolAssistantUUID`).
    tool_sources: std::collections::HashMap<String, String>,
    /// Prompts written so far (`turnPosition.turnIndex`).
    prompts: u64,
}

impl std::fmt::Debug for Inner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Inner")
            .field("open", &self.file.is_some())
            .field("health", &self.health)
            .field("last_uuid", &self.last_uuid)
            .finish()
    }
}

/// An append-only JSONL transcript.
#[derive(Debug)]
pub struct Transcript {
    path: PathBuf,
    session_id: String,
    cwd: String,
    /// `entrypoint` of every line (`CLAUDE_CODE_ENTRYPOINT`'s value).
    entrypoint: Mutex<String>,
    /// `gitBranch` of every line.
    git_branch: String,
    inner: Mutex<Inner>,
}

impl Transcript {
    /// Prepares a transcript at `path`; the file (and its directory) is created on first write.
    pub fn new(path: PathBuf, session_id: &str, cwd: &Path) -> Transcript {
        Transcript {
            path,
            session_id: session_id.to_string(),
            cwd: cwd.to_string_lossy().into_owned(),
            entrypoint: Mutex::new(crate::hooks::environment::entrypoint(false)),
            git_branch: git_branch(cwd),
            inner: Mutex::new(Inner {
                file: None,
                health: Health::Whole,
                unreported: false,
                last_uuid: None,
                off: false,
                tool_sources: std::collections::HashMap::new(),
                prompts: 0,
            }),
        }
    }

    /// A person is at the terminal: `entrypoint` is `cli` (else `sdk-cli`), as
    /// `CLAUDE_CODE_ENTRYPOINT` is for hooks.
    pub fn set_attended(&self, attended: bool) {
        if let Ok(mut e) = self.entrypoint.lock() {
            *e = crate::hooks::environment::entrypoint(attended);
        }
    }

    fn attended(&self) -> bool {
        self.entrypoint.lock().is_ok_and(|e| e.as_str() == "cli")
    }

    /// Appends after an existing file whose last line has `last_uuid` (a resumed session).
    pub fn continue_after(&self, last_uuid: Option<String>) {
        if let Ok(mut inner) = self.inner.lock() {
            inner.last_uuid = last_uuid;
        }
    }

    /// Writes nothing from now on.
    pub fn disable(&self) {
        if let Ok(mut inner) = self.inner.lock() {
            inner.off = true;
        }
    }

    /// What is missing from the file, if anything is.
    pub fn fault(&self) -> Option<TranscriptFault> {
        let inner = self.inner.lock().ok()?;
        let (reason, lost, sealed) = match &inner.health {
            Health::Whole => return None,
            Health::Incomplete { reason, lost } => (reason, *lost, false),
            Health::Sealed { reason, lost } => (reason, *lost, true),
        };
        Some(TranscriptFault {
            path: self.path.clone(),
            reason: reason.clone(),
            lines_lost: lost,
            sealed,
        })
    }

    /// A one-time notice for the user once the first line was lost (later losses only add to
    /// [`Transcript::fault`]).
    pub fn take_new_fault_notice(&self) -> Option<String> {
        let mut inner = self.inner.lock().ok()?;
        if !std::mem::take(&mut inner.unreported) {
            return None;
        }
        let (reason, sealed) = match &inner.health {
            Health::Whole => return None,
            Health::Incomplete { reason, .. } => (reason.clone(), false),
            Health::Sealed { reason, .. } => (reason.clone(), true),
        };
        let after = if sealed {
            "a partial line could not be removed, so nothing more is written to it"
        } else {
            "that line is left out and the file keeps only complete lines"
        };
        Some(format!(
            "rein: warning: cannot append to the transcript {}: {reason}; {after} (the session goes on)",
            self.path.display()
        ))
    }

    /// `parentUuid`, `isSidechain`, `promptId` (user lines only), `agentId`, `type` — the keys
    /// before the payload.
    fn head(&self, ctx: &LineContext, kind: &str, with_prompt: bool) -> Map<String, Value> {
        let parent = match self.inner.lock() {
            Ok(inner) => inner.last_uuid.clone(),
            Err(_) => None,
        };
        let mut line = Map::new();
        line.insert("parentUuid".into(), json!(parent));
        line.insert("isSidechain".into(), json!(ctx.agent_id.is_some()));
        if with_prompt && let Some(pid) = &ctx.prompt_id {
            line.insert("promptId".into(), json!(pid));
        }
        if let Some(agent_id) = &ctx.agent_id {
            line.insert("agentId".into(), json!(agent_id));
        }
        line.insert("type".into(), json!(kind));
        line
    }

    /// Appends `uuid`, `timestamp` (unless the line has it), the line's own `extra` keys, then
    /// the common tail (`userType`, `entrypoint`, `cwd`, `sessionId`, `version`, `gitBranch`),
    /// and writes the line. The uuid, when the line reached the file.
    fn finish_and_write(
        &self,
        mut line: Map<String, Value>,
        extra: Map<String, Value>,
    ) -> Option<String> {
        let uuid = uuid_v4();
        line.insert("uuid".into(), json!(uuid));
        if !line.contains_key("timestamp") {
            line.insert("timestamp".into(), json!(timestamp_now()));
        }
        line.extend(extra);
        line.insert("userType".into(), json!("external"));
        let entrypoint = self
            .entrypoint
            .lock()
            .map(|e| e.clone())
            .unwrap_or_default();
        line.insert("entrypoint".into(), json!(entrypoint));
        line.insert("cwd".into(), json!(self.cwd));
        line.insert("sessionId".into(), json!(self.session_id));
        line.insert("version".into(), json!(VERSION));
        line.insert("gitBranch".into(), json!(self.git_branch));
        let mut bytes = serde_json::to_vec(&Value::Object(line)).ok()?;
        bytes.push(b'\n');
        let mut inner = self.inner.lock().ok()?;
        if inner.off {
            return None;
        }
        match self.append(&mut inner, &bytes) {
            Ok(()) => {
                inner.last_uuid = Some(uuid.clone());
                Some(uuid)
            }
            Err(lost) => {
                lose_line(&mut inner, lost);
                None
            }
        }
    }

    /// Appends one line; on failure says whether the file still holds only whole lines.
    fn append(&self, inner: &mut Inner, bytes: &[u8]) -> Result<(), Lost> {
        if let Health::Sealed { .. } = inner.health {
            return Err(Lost::Sealed);
        }
        let file = match &mut inner.file {
            Some(file) => file,
            None => inner.file.insert(open(&self.path).map_err(Lost::clean)?),
        };
        let before = file.size().map_err(Lost::clean)?;
        let Err(err) = file.append(bytes) else {
            return Ok(());
        };
        // Why cut back rather than finish the line later: the bytes that reached the file are
        // a prefix of a JSON object, which no reader can parse, and the next append would
        // glue a whole line onto it.
        match file.truncate(before) {
            Ok(()) => Err(Lost::clean(err)),
            Err(cut) => Err(Lost::Torn(format!(
                "{err}; cutting the partial line back failed: {cut}"
            ))),
        }
    }
}

/// Why a line is not in the file.
enum Lost {
    /// Nothing of it is in the file.
    Clean(String),
    /// Part of it is, and could not be removed.
    Torn(String),
    /// The file was sealed earlier.
    Sealed,
}

impl Lost {
    fn clean(err: std::io::Error) -> Lost {
        Lost::Clean(err.to_string())
    }
}

/// Records a line that is not in the file; the first loss, and the file becoming sealed, are
/// each announced once.
fn lose_line(inner: &mut Inner, lost: Lost) {
    let was_sealed = matches!(inner.health, Health::Sealed { .. });
    let (first_reason, count) = match &inner.health {
        Health::Whole => (None, 1),
        Health::Incomplete { reason, lost } | Health::Sealed { reason, lost } => {
            (Some(reason.clone()), lost + 1)
        }
    };
    inner.health = match lost {
        Lost::Clean(err) => Health::Incomplete {
            reason: first_reason.unwrap_or(err),
            lost: count,
        },
        Lost::Torn(err) => Health::Sealed {
            reason: first_reason
                .map_or_else(|| err.clone(), |first| format!("{first}; later {err}")),
            lost: count,
        },
        Lost::Sealed => Health::Sealed {
            reason: first_reason.unwrap_or_default(),
            lost: count,
        },
    };
    let sealed_now = !was_sealed && matches!(inner.health, Health::Sealed { .. });
    if count == 1 || sealed_now {
        inner.unreported = true;
    }
}

/// Opens (creating it and its directory) the transcript for appending.
fn open(path: &Path) -> std::io::Result<Box<dyn LineFile>> {
    let file = crate::private_fs::open_append(path)?;
    Ok(Box::new(file))
}

/// The branch checked out in the repository holding `dir` (an unborn branch too), `HEAD` when
/// `dir` is in no repository or the head is detached — Claude Code's `gitBranch`.
fn git_branch(dir: &Path) -> String {
    let head = dir.ancestors().find_map(|d| {
        let git = d.join(".git");
        if git.is_dir() {
            return std::fs::read_to_string(git.join("HEAD")).ok();
        }
        // A worktree or submodule: `.git` is a file naming the real git directory.
        let link = std::fs::read_to_string(&git).ok()?;
        let target = link.trim().strip_prefix("gitdir:")?.trim();
        std::fs::read_to_string(d.join(target).join("HEAD")).ok()
    });
    head.as_deref()
        .and_then(|h| h.trim().strip_prefix("ref: refs/heads/"))
        .map_or_else(|| "HEAD".to_string(), str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn huge_hook_streams_are_recorded_in_part() {
        assert_eq!(bounded_stream("short", 5), "short");
        let long = "é".repeat(STREAM_RECORD_MAX);
        let cut = bounded_stream(&long, 30_000_000);
        assert!(cut.len() < STREAM_RECORD_MAX + 64, "{}", cut.len());
        assert!(
            cut.ends_with("[30000000 bytes in total; truncated here]"),
            "{cut:.40}"
        );
    }

    #[test]
    fn encodes_cwd_like_claude_code() {
        assert_eq!(encode_cwd("/home/u/my proj"), "-home-u-my-proj");
        assert_eq!(encode_cwd("/tmp/hs_emp.proj"), "-tmp-hs-emp-proj");
    }

    #[test]
    fn long_cwd_gets_hash_suffix() {
        let long = format!("/{}", "a".repeat(250));
        let enc = encode_cwd(&long);
        assert!(enc.starts_with(&format!("-{}", "a".repeat(199))));
        let suffix = &enc[200..];
        assert!(suffix.starts_with('-'), "{enc}");
        // Java: "abc".hashCode() == 96354 == "22ci" in base 36.
        assert_eq!(java_hash("abc"), 96354);
        assert_eq!(to_base36(96354), "22ci");
        assert_eq!(suffix[1..], to_base36(java_hash(&long).unsigned_abs()));
    }

    #[test]
    fn timestamps_are_civil_utc() {
        assert_eq!(format_timestamp(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(
            format_timestamp(951_782_400_123),
            "2000-02-29T00:00:00.123Z"
        );
        assert_eq!(
            format_timestamp(1_798_761_599_999),
            "2026-12-31T23:59:59.999Z"
        );
    }

    #[test]
    fn lines_chain_parent_uuids_and_survive_unwritable_dir() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p").join("s.jsonl");
        let t = Transcript::new(path.clone(), "sess", dir.path());
        let ctx = LineContext {
            prompt_id: Some("pid".into()),
            permission_mode: Some("default".into()),
            agent_id: None,
            ..LineContext::default()
        };
        t.user_prompt(&ctx, "hello");
        t.tool_result(
            &ctx,
            &ToolResultLine {
                tool_use_id: "toolu_1",
                tool_name: "Bash",
                content: "out",
                is_error: false,
                tool_use_result: Some(&json!({"stdout": "out"})),
                decision: ToolDecision::Unrecorded,
            },
        );
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0]["parentUuid"], Value::Null);
        assert_eq!(lines[1]["parentUuid"], lines[0]["uuid"]);
        assert_eq!(lines[1]["toolUseResult"]["stdout"], "out");

        let blocked = Transcript::new(PathBuf::from("/proc/rein-no/x.jsonl"), "s", dir.path());
        blocked.user_prompt(&ctx, "x");
        blocked.user_prompt(&ctx, "y");
        let fault = blocked.fault().unwrap();
        assert_eq!(fault.lines_lost, 2);
        assert!(!fault.sealed);
        assert!(blocked.take_new_fault_notice().is_some());
        assert!(blocked.take_new_fault_notice().is_none(), "announced once");
    }

    /// A file that takes `room` more bytes, then fails like a full disk; cutting back fails
    /// when `truncate_fails`.
    struct FullDisk {
        bytes: Arc<Mutex<Vec<u8>>>,
        room: Arc<Mutex<usize>>,
        truncate_fails: bool,
    }

    impl LineFile for FullDisk {
        fn size(&mut self) -> std::io::Result<u64> {
            Ok(self.bytes.lock().unwrap().len() as u64)
        }

        fn append(&mut self, bytes: &[u8]) -> std::io::Result<()> {
            let mut room = self.room.lock().unwrap();
            let n = bytes.len().min(*room);
            self.bytes.lock().unwrap().extend_from_slice(&bytes[..n]);
            *room -= n;
            if n < bytes.len() {
                return Err(std::io::Error::from_raw_os_error(libc::ENOSPC));
            }
            Ok(())
        }

        fn truncate(&mut self, len: u64) -> std::io::Result<()> {
            if self.truncate_fails {
                return Err(std::io::Error::from_raw_os_error(libc::EIO));
            }
            self.bytes.lock().unwrap().truncate(len as usize);
            Ok(())
        }
    }

    use std::sync::Arc;

    /// A transcript on a [`FullDisk`], with the disk's bytes and the room left on it.
    type OnFullDisk = (Transcript, Arc<Mutex<Vec<u8>>>, Arc<Mutex<usize>>);

    fn on_full_disk(room: usize, truncate_fails: bool) -> OnFullDisk {
        let bytes = Arc::new(Mutex::new(Vec::new()));
        let room = Arc::new(Mutex::new(room));
        let t = Transcript::new(PathBuf::from("/t/s.jsonl"), "s", Path::new("/p"));
        t.inner.lock().unwrap().file = Some(Box::new(FullDisk {
            bytes: Arc::clone(&bytes),
            room: Arc::clone(&room),
            truncate_fails,
        }));
        (t, bytes, room)
    }

    fn parsed(bytes: &Mutex<Vec<u8>>) -> Vec<Value> {
        let text = String::from_utf8(bytes.lock().unwrap().clone()).unwrap();
        assert!(text.is_empty() || text.ends_with('\n'), "torn: {text:?}");
        text.lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    #[test]
    fn a_line_that_does_not_fit_is_cut_back_and_later_lines_chain_past_it() {
        let ctx = LineContext::default();
        let (t, bytes, room) = on_full_disk(1000, false);
        t.user_prompt(&ctx, "first");
        t.user_prompt(&ctx, &"x".repeat(5000));
        assert_eq!(parsed(&bytes).len(), 1, "the partial line was removed");
        let notice = t.take_new_fault_notice().unwrap();
        assert!(notice.contains("No space left on device"), "{notice}");
        *room.lock().unwrap() = 10_000;
        t.user_prompt(&ctx, "third");
        let lines = parsed(&bytes);
        assert_eq!(lines.len(), 2);
        // The lost line is nobody's parent.
        assert_eq!(lines[1]["parentUuid"], lines[0]["uuid"]);
        let fault = t.fault().unwrap();
        assert_eq!((fault.lines_lost, fault.sealed), (1, false));
        assert_eq!(
            fault.to_string(),
            "transcript incomplete: /t/s.jsonl: 1 line not written (No space left on device \
             (os error 28))"
        );
    }

    #[test]
    fn a_torn_line_that_cannot_be_cut_back_seals_the_file() {
        let ctx = LineContext::default();
        let (t, bytes, room) = on_full_disk(1000, true);
        t.user_prompt(&ctx, "first");
        t.user_prompt(&ctx, &"x".repeat(5000));
        let len = bytes.lock().unwrap().len();
        *room.lock().unwrap() = 100_000;
        t.user_prompt(&ctx, "never appended onto the torn line");
        assert_eq!(
            bytes.lock().unwrap().len(),
            len,
            "nothing appended after the torn line"
        );
        let fault = t.fault().unwrap();
        assert_eq!((fault.lines_lost, fault.sealed), (2, true));
        assert!(
            fault
                .reason
                .contains("cutting the partial line back failed"),
            "{fault}"
        );
        assert!(
            fault.to_string().contains("nothing was appended after it"),
            "{fault}"
        );
    }
}
