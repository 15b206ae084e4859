//! Asking a person: the [`Prompter`] trait and [`TtyPrompter`], which asks on `/dev/tty` so a
//! prompt works even when stdin/stdout are pipes. Anything but a clear yes is a no.

use std::fs::OpenOptions;
use std::io::{BufRead, BufReader, Write};

use serde_json::Value;

/// A person's answer to a permission prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PromptAnswer {
    AllowOnce,
    /// Allow, and remember it for the rest of the session
    /// ([`super::policy::PermissionPolicy::remember_session_allow`]).
    AllowAlways,
    Deny,
}

/// Asks whether a tool call may run.
pub trait Prompter: Send + Sync {
    fn ask(&self, tool_name: &str, input: &Value, reason: &str) -> PromptAnswer;
}

/// Prompts on the controlling terminal (`/dev/tty`). No terminal, EOF or a read error → Deny.
#[derive(Debug, Clone, Copy, Default)]
pub struct TtyPrompter;

/// A permission prompt is on the terminal: whatever else draws there (the interactive
/// spinner) waits.
static PROMPTING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether a permission prompt is waiting for an answer on the terminal.
pub fn prompting() -> bool {
    PROMPTING.load(std::sync::atomic::Ordering::Relaxed)
}

/// Held while a prompt writes to and reads from the terminal; what else draws there (the
/// spinner) takes it with `try_lock` and skips a frame when it is held.
pub fn terminal_lock() -> &'static std::sync::Mutex<()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    &LOCK
}

/// Marks a question on the terminal for as long as it lives ([`prompting`]).
pub(crate) struct Prompting;

impl Prompting {
    pub(crate) fn begin() -> Prompting {
        PROMPTING.store(true, std::sync::atomic::Ordering::Relaxed);
        Prompting
    }
}

impl Drop for Prompting {
    fn drop(&mut self) {
        PROMPTING.store(false, std::sync::atomic::Ordering::Relaxed);
    }
}

impl Prompter for TtyPrompter {
    fn ask(&self, tool_name: &str, input: &Value, reason: &str) -> PromptAnswer {
        let _terminal = terminal_lock().lock();
        let _prompting = Prompting::begin();
        let Ok(tty) = OpenOptions::new().read(true).write(true).open("/dev/tty") else {
            return PromptAnswer::Deny;
        };
        let Ok(mut writer) = tty.try_clone() else {
            return PromptAnswer::Deny;
        };
        // A spinner line may be on the screen: the question starts on a clean line.
        let _ = writer.write_all(b"\r\x1b[2K");
        // One key answers: the terminal leaves line mode for the question (echo stays on), and
        // what else was typed (an Enter after the key) is dropped afterwards.
        let _one_key = OneKeyMode::enter(&tty);
        let Ok(mut after) = writer.try_clone() else {
            return PromptAnswer::Deny;
        };
        let answer = prompt_on(
            BufReader::new(OneKey {
                tty,
                answered: false,
            }),
            writer,
            tool_name,
            input,
            reason,
        );
        // The key was echoed without a line break; what comes next starts on its own line.
        let _ = after.write_all(b"\n");
        answer
    }
}

/// The terminal in non-canonical mode (a read returns after one key) until dropped; then the
/// keys typed meanwhile are discarded and the settings restored.
struct OneKeyMode {
    fd: std::os::fd::RawFd,
    saved: Option<libc::termios>,
}

impl OneKeyMode {
    fn enter(tty: &std::fs::File) -> OneKeyMode {
        use std::os::fd::AsRawFd;
        let fd = tty.as_raw_fd();
        // SAFETY: termios is plain data; tcgetattr fills it for a valid fd or fails.
        let mut saved: libc::termios = unsafe { std::mem::zeroed() };
        // SAFETY: `fd` is the open /dev/tty; `saved` is a valid termios to fill.
        if unsafe { libc::tcgetattr(fd, &mut saved) } != 0 {
            return OneKeyMode { fd, saved: None };
        }
        let mut raw = saved;
        raw.c_lflag &= !libc::ICANON;
        raw.c_cc[libc::VMIN] = 1;
        raw.c_cc[libc::VTIME] = 0;
        // SAFETY: valid fd and termios.
        if unsafe { libc::tcsetattr(fd, libc::TCSANOW, &raw) } != 0 {
            return OneKeyMode { fd, saved: None };
        }
        OneKeyMode {
            fd,
            saved: Some(saved),
        }
    }
}

impl Drop for OneKeyMode {
    fn drop(&mut self) {
        if let Some(saved) = &self.saved {
            // SAFETY: the fd is still open (the prompt's File outlives this guard) and `saved`
            // came from tcgetattr.
            unsafe {
                libc::tcflush(self.fd, libc::TCIFLUSH);
                libc::tcsetattr(self.fd, libc::TCSANOW, saved);
            }
        }
    }
}

/// Reads one key from the terminal and ends the "line" there.
struct OneKey {
    tty: std::fs::File,
    answered: bool,
}

impl std::io::Read for OneKey {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.answered || buf.len() < 2 {
            return Ok(0);
        }
        let mut key = [0u8; 1];
        if self.tty.read(&mut key)? == 0 {
            return Ok(0);
        }
        self.answered = true;
        buf[0] = key[0];
        buf[1] = b'\n';
        Ok(if key[0] == b'\n' || key[0] == b'\r' {
            1
        } else {
            2
        })
    }
}

/// The prompt dialogue over any reader/writer: shows the tool, a summary of the input and the
/// reason, then reads one line. `y`/`yes` → AllowOnce, `a`/`always` → AllowAlways, anything
/// else (including EOF and errors) → Deny.
pub fn prompt_on(
    mut reader: impl BufRead,
    mut writer: impl Write,
    tool_name: &str,
    input: &Value,
    reason: &str,
) -> PromptAnswer {
    let text = format!(
        "\nrein wants to use {}: {}\n  ({})\n[y] allow once  [a] always for this session  [n] deny > ",
        sanitize(tool_name),
        input_summary(tool_name, input),
        sanitize(reason)
    );
    if writer
        .write_all(text.as_bytes())
        .and_then(|()| writer.flush())
        .is_err()
    {
        return PromptAnswer::Deny;
    }
    let mut line = String::new();
    match reader.read_line(&mut line) {
        Ok(0) | Err(_) => PromptAnswer::Deny,
        Ok(_) => match line.trim().to_ascii_lowercase().as_str() {
            "y" | "yes" => PromptAnswer::AllowOnce,
            "a" | "always" => PromptAnswer::AllowAlways,
            _ => PromptAnswer::Deny,
        },
    }
}

/// A one-glance description of the call: the command, path or URL, else compact JSON (capped).
pub fn input_summary(tool_name: &str, input: &Value) -> String {
    let field = match tool_name {
        "Bash" => Some("command"),
        "Read" | "Write" | "Edit" | "MultiEdit" => Some("file_path"),
        "NotebookEdit" => Some("notebook_path"),
        "WebFetch" => Some("url"),
        "Glob" | "Grep" => Some("pattern"),
        _ => None,
    };
    let text = match field.and_then(|f| input.get(f)).and_then(Value::as_str) {
        Some(s) => s.to_string(),
        None => input.to_string(),
    };
    const MAX: usize = 500;
    let mut text = sanitize(&text);
    if text.chars().count() > MAX {
        text = text.chars().take(MAX).collect::<String>() + "…";
    }
    text
}

/// Replaces control characters (except newline and tab) so model-chosen text cannot drive the
/// terminal (escape sequences could hide or fake parts of the prompt).
/// The answer to the folder-trust question.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrustAnswer {
    /// Trust, and record it (`rein hooks trust`).
    Remember,
    /// Trust for this run only.
    ThisRun,
    /// Do not trust.
    No,
}

/// Asks on `/dev/tty` whether to trust the project folder, showing `lines` (what its
/// repository-controlled settings would do). No terminal, EOF or an error → No.
pub fn ask_trust(project: &str, heading: &str, lines: &[String]) -> TrustAnswer {
    let Ok(tty) = OpenOptions::new().read(true).write(true).open("/dev/tty") else {
        return TrustAnswer::No;
    };
    let Ok(writer) = tty.try_clone() else {
        return TrustAnswer::No;
    };
    ask_trust_on(BufReader::new(tty), writer, project, heading, lines)
}

/// [`ask_trust`] over any reader/writer: `y` → Remember, `o` → ThisRun, anything else → No.
pub fn ask_trust_on(
    mut reader: impl BufRead,
    mut writer: impl Write,
    project: &str,
    heading: &str,
    lines: &[String],
) -> TrustAnswer {
    let mut text = format!("\n{} {}\n", sanitize(heading), sanitize(project));
    for l in lines {
        text.push_str(&format!("  {}\n", sanitize(l).replace('\n', " ")));
    }
    text.push_str(
        "Trusting applies these settings: the hooks run and the permissions apply. Not \
         trusting ends rein here; nothing of this folder runs.\n\
         Trust this folder? [y] yes, remember  [o] yes, this run only  [n] no, exit > ",
    );
    if writer
        .write_all(text.as_bytes())
        .and_then(|()| writer.flush())
        .is_err()
    {
        return TrustAnswer::No;
    }
    let mut line = String::new();
    match reader.read_line(&mut line) {
        Ok(0) | Err(_) => TrustAnswer::No,
        Ok(_) => match line.trim().to_ascii_lowercase().as_str() {
            "y" | "yes" => TrustAnswer::Remember,
            "o" | "once" => TrustAnswer::ThisRun,
            _ => TrustAnswer::No,
        },
    }
}

fn sanitize(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_control() && c != '\n' && c != '\t' {
                '\u{FFFD}'
            } else {
                c
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn answer(typed: &str) -> (PromptAnswer, String) {
        let mut out = Vec::new();
        let a = prompt_on(
            typed.as_bytes(),
            &mut out,
            "Bash",
            &json!({"command": "ls\u{1b}[2J"}),
            "why",
        );
        (a, String::from_utf8_lossy(&out).into_owned())
    }

    #[test]
    fn answers() {
        assert_eq!(answer("y\n").0, PromptAnswer::AllowOnce);
        assert_eq!(answer("A\n").0, PromptAnswer::AllowAlways);
        assert_eq!(answer("n\n").0, PromptAnswer::Deny);
        assert_eq!(answer("maybe\n").0, PromptAnswer::Deny);
        assert_eq!(answer("").0, PromptAnswer::Deny);
        let shown = answer("y\n").1;
        assert!(
            shown.contains("rein wants to use Bash: ls\u{FFFD}[2J"),
            "{shown}"
        );
        assert!(shown.contains("[y] allow once  [a] always for this session  [n] deny"));
    }
}
