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

impl Prompter for TtyPrompter {
    fn ask(&self, tool_name: &str, input: &Value, reason: &str) -> PromptAnswer {
        let Ok(tty) = OpenOptions::new().read(true).write(true).open("/dev/tty") else {
            return PromptAnswer::Deny;
        };
        let Ok(writer) = tty.try_clone() else {
            return PromptAnswer::Deny;
        };
        prompt_on(BufReader::new(tty), writer, tool_name, input, reason)
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
        "Without trust these settings do not raise permissions (deny and ask rules and hooks \
         still apply).\nTrust this folder? [y] yes, remember  [o] this run only  [n] no > ",
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
