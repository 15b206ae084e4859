//! The line editor: rustyline on a thread of its own (it blocks in raw mode), with history in
//! `<rein home>/history`, multi-line input (`\` then Enter, or Alt+Enter), and Ctrl+C
//! that clears a typed line or, on an empty one, reports an interrupt.
//!
//! Why rustyline and not reedline: rustyline is a plain blocking `readline` with history,
//! key bindings and a validator (all rein needs), in a handful of small crates; reedline
//! brings crossterm and a larger engine (menus, painters) whose weight shows in start-up
//! time and binary size and which rein would not use.

use std::path::PathBuf;

use rustyline::error::ReadlineError;
use rustyline::history::FileHistory;
use rustyline::validate::{ValidationContext, ValidationResult, Validator};
use rustyline::{
    Cmd, ConditionalEventHandler, Editor, Event, EventContext, EventHandler, KeyCode, KeyEvent,
    Modifiers, Movement, RepeatCount,
};

/// What one read gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Read {
    /// A line (or several, joined by `\n`), as typed.
    Line(String),
    /// Ctrl+C on an empty line.
    Interrupted,
    /// Ctrl+D on an empty line, or the terminal went away.
    Eof,
}

/// `\` at the end of the input continues it on a new line; Tab after a `/` at the start
/// completes a command's name.
struct Helper {
    commands: Vec<String>,
}

impl Validator for Helper {
    fn validate(&self, ctx: &mut ValidationContext) -> rustyline::Result<ValidationResult> {
        if ctx.input().ends_with('\\') {
            Ok(ValidationResult::Incomplete)
        } else {
            Ok(ValidationResult::Valid(None))
        }
    }
}

impl rustyline::completion::Completer for Helper {
    type Candidate = String;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _ctx: &rustyline::Context<'_>,
    ) -> rustyline::Result<(usize, Vec<String>)> {
        let typed = &line[..pos];
        if !typed.starts_with('/') || typed.contains(char::is_whitespace) {
            return Ok((pos, Vec::new()));
        }
        let mut found: Vec<String> = self
            .commands
            .iter()
            .filter(|c| c.starts_with(typed))
            .map(|c| format!("{c} "))
            .collect();
        found.sort();
        found.dedup();
        Ok((0, found))
    }
}
impl rustyline::hint::Hinter for Helper {
    type Hint = String;
}
impl rustyline::highlight::Highlighter for Helper {}
impl rustyline::Helper for Helper {}

/// Ctrl+C: clears a typed line; on an empty line it is an interrupt.
struct ClearOrInterrupt;

impl ConditionalEventHandler for ClearOrInterrupt {
    fn handle(&self, _: &Event, _: RepeatCount, _: bool, ctx: &EventContext) -> Option<Cmd> {
        if ctx.line().is_empty() {
            None
        } else {
            Some(Cmd::Kill(Movement::WholeBuffer))
        }
    }
}

/// Joins the lines of a multi-line input: a `\` before a line break is removed.
pub fn join_continued(input: &str) -> String {
    input.replace("\\\n", "\n")
}

/// The editor thread; reads happen on demand, so nothing reads the terminal while a turn runs
/// (a permission prompt reads it then).
pub struct LineEditor {
    /// The prompt to show, and whether the line goes into the history.
    want: std::sync::mpsc::Sender<(String, bool)>,
    lines: tokio::sync::mpsc::Receiver<Read>,
}

impl LineEditor {
    /// Starts the editor with its history file (created on the first entry).
    pub fn spawn(history: PathBuf, commands: Vec<String>) -> Result<LineEditor, String> {
        let config = rustyline::Config::builder()
            .auto_add_history(false)
            .max_history_size(10_000)
            .map_err(|e| e.to_string())?
            .build();
        let mut editor: Editor<Helper, FileHistory> = Editor::with_config(config)
            .map_err(|e| format!("cannot start the line editor: {e}"))?;
        editor.set_helper(Some(Helper { commands }));
        editor.bind_sequence(
            KeyEvent(KeyCode::Enter, Modifiers::ALT),
            EventHandler::Simple(Cmd::Newline),
        );
        editor.bind_sequence(
            KeyEvent(KeyCode::Char('C'), Modifiers::CTRL),
            EventHandler::Conditional(Box::new(ClearOrInterrupt)),
        );
        // A missing history file is a first session; any other problem only costs the history.
        let _ = editor.load_history(&history);
        let (want, wanted) = std::sync::mpsc::channel::<(String, bool)>();
        let (tx, lines) = tokio::sync::mpsc::channel::<Read>(1);
        std::thread::spawn(move || {
            while let Ok((prompt, remember)) = wanted.recv() {
                let read = match editor.readline(&prompt) {
                    Ok(line) => {
                        let line = join_continued(&line);
                        if remember
                            && !line.trim().is_empty()
                            && editor.add_history_entry(line.as_str()).unwrap_or(false)
                        {
                            if let Some(dir) = history.parent() {
                                let _ = crate::private_fs::create_dir_all(dir);
                            }
                            let _ = editor.append_history(&history);
                            // What was typed is as private as the transcripts.
                            use std::os::unix::fs::PermissionsExt;
                            let _ = std::fs::set_permissions(
                                &history,
                                std::fs::Permissions::from_mode(0o600),
                            );
                        }
                        Read::Line(line)
                    }
                    Err(ReadlineError::Interrupted) => Read::Interrupted,
                    Err(ReadlineError::Eof) => Read::Eof,
                    Err(_) => Read::Eof,
                };
                let eof = read == Read::Eof;
                if tx.blocking_send(read).is_err() || eof {
                    break;
                }
            }
        });
        Ok(LineEditor { want, lines })
    }

    /// Shows `prompt` and reads the next input.
    pub async fn read(&mut self, prompt: &str) -> Read {
        self.read_line(prompt, true).await
    }

    /// Reads an answer to a question (a number from a list): kept out of the history.
    pub async fn read_answer(&mut self, prompt: &str) -> Read {
        self.read_line(prompt, false).await
    }

    async fn read_line(&mut self, prompt: &str, remember: bool) -> Read {
        if self.want.send((prompt.to_string(), remember)).is_err() {
            return Read::Eof;
        }
        self.lines.recv().await.unwrap_or(Read::Eof)
    }
}
