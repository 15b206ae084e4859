//! The terminal's status line: the `statusLine` command of the settings, fed the session's
//! state as JSON on stdin the way Claude Code 2.1.328 feeds it (fixture
//! `tests/fixtures/cc-2.1.328/status_line`), its output shown above the input prompt.
//!
//! When: as the terminal starts and after each prompt or command, before the next input
//! prompt — the moments Claude Code runs it (once when drawn, once after each reply). Claude
//! Code keeps the line in a footer under its input box; rein's terminal is a line editor, so
//! each drawing is printed above the prompt and scrolls with the conversation.
//!
//! Rules: what the command prints is shown line by line (colours kept), indented by two
//! spaces plus `padding`, at most [`MAX_LINES`] lines. A command that exits non-zero, is
//! killed or runs past [`TIMEOUT`] shows nothing (Claude Code shows nothing either); rein says
//! why once, in one dim line, and again only after it worked in between. A repository's
//! `statusLine` runs only in a trusted folder, like its hooks.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::agent::session::Session;
use crate::process::{AfterLinger, Ending, Job, Limits, Output, Program, Stdin};
use crate::settings::schema::Settings;

/// Longest a drawing may take; the prompt waits for it.
pub const TIMEOUT: Duration = Duration::from_secs(5);
/// Lines shown at most.
pub const MAX_LINES: usize = 10;
/// Bytes of output read at most.
const OUTPUT_CAP: usize = 16 * 1024;

/// A configured status line.
#[derive(Debug, Clone)]
pub struct StatusLine {
    command: String,
    padding: u16,
    project_dir: PathBuf,
    add_dirs: Vec<PathBuf>,
    settings_env: Vec<(String, String)>,
    started: Instant,
    /// The last drawing failed and that was said.
    failing: bool,
}

impl StatusLine {
    /// The status line the settings configure (the loader has already held back a
    /// repository's in a folder that is not trusted).
    pub fn from_settings(
        settings: &Settings,
        project_dir: &Path,
        add_dirs: &[PathBuf],
    ) -> Option<StatusLine> {
        let (spec, _, _) = settings.status_line.as_ref()?;
        Some(StatusLine {
            command: spec.command.clone(),
            padding: spec.padding,
            project_dir: project_dir.to_path_buf(),
            add_dirs: add_dirs.to_vec(),
            settings_env: settings.env.clone(),
            started: Instant::now(),
            failing: false,
        })
    }

    /// What the command reads: Claude Code 2.1.328's keys in its order, from the session's
    /// state.
    pub fn input(&self, session: &Session) -> Value {
        let usage = session.usage();
        let cwd = session.current_dir();
        let window = session.context_window();
        let used = usage.context_tokens;
        let style = session
            .output_style()
            .map_or(crate::agent::output_style::DEFAULT, |s| s.name.as_str());
        let mut input = serde_json::Map::new();
        input.insert("session_id".into(), json!(session.session_id()));
        input.insert("transcript_path".into(), json!(session.transcript_path()));
        input.insert("cwd".into(), json!(cwd));
        if let Some(id) = session.prompt_id() {
            input.insert("prompt_id".into(), json!(id));
        }
        if let Some(level) = session.effort() {
            input.insert("effort".into(), json!({"level": level}));
        }
        input.insert(
            "model".into(),
            json!({"id": session.model_name(), "display_name": session.model_name()}),
        );
        input.insert(
            "workspace".into(),
            json!({
                "current_dir": cwd,
                "project_dir": self.project_dir,
                "added_dirs": self.add_dirs,
            }),
        );
        input.insert("version".into(), json!(crate::cli::sdk::SPEAKS_CLAUDE_CODE));
        input.insert("output_style".into(), json!({"name": style}));
        input.insert(
            "cost".into(),
            json!({
                "total_cost_usd": crate::agent::cost::total_usd(&usage.by_model),
                "total_duration_ms": self.started.elapsed().as_millis() as u64,
                "total_api_duration_ms": usage.api_ms,
                "total_lines_added": usage.lines_added,
                "total_lines_removed": usage.lines_removed,
            }),
        );
        input.insert(
            "context_window".into(),
            json!({
                "total_input_tokens": usage.total.prompt_tokens(),
                "total_output_tokens": usage.total.output_tokens,
                "context_window_size": window,
                "current_usage": usage.last.map(|u| json!({
                    "input_tokens": u.input_tokens,
                    "output_tokens": u.output_tokens,
                    "cache_creation_input_tokens": u.cache_creation_input_tokens,
                    "cache_read_input_tokens": u.cache_read_input_tokens,
                })),
                "used_percentage": used.map(|t| percent(t, window)),
                "remaining_percentage": used.map(|t| 100 - percent(t, window)),
            }),
        );
        input.insert(
            "exceeds_200k_tokens".into(),
            json!(used.is_some_and(|t| t > 200_000)),
        );
        input.insert("fast_mode".into(), json!(false));
        input.insert("rein_version".into(), json!(env!("CARGO_PKG_VERSION")));
        Value::Object(input)
    }

    /// Runs the command on the session's [`StatusLine::input`]; returns the text to print
    /// (each line indented), or the one line saying why nothing is shown (once per failure
    /// streak, dim where `color`), or nothing.
    pub async fn draw(&mut self, session: &Session, color: bool) -> Option<String> {
        let bytes = serde_json::to_vec(&self.input(session)).unwrap_or_default();
        let mut env = crate::hooks::environment::bash_env(
            &self.settings_env,
            session.session_id(),
            true,
            session.effort(),
        );
        env.push((
            "CLAUDE_PROJECT_DIR".into(),
            self.project_dir.to_string_lossy().into_owned(),
        ));
        if let Some((cols, rows)) = terminal_size() {
            env.push(("COLUMNS".into(), cols.to_string()));
            env.push(("LINES".into(), rows.to_string()));
        }
        let cwd = session.current_dir();
        let cwd = if cwd.is_dir() {
            cwd
        } else {
            self.project_dir.clone()
        };
        let program = Program {
            env: &env,
            ..Program::new("/bin/sh", &cwd)
                .arg("-c")
                .arg(self.command.as_str())
        };
        let job = Job {
            program,
            stdin: Stdin::Bytes(&bytes),
            output: Output::Separate {
                stdout_cap: OUTPUT_CAP,
                stderr_cap: 1024,
            },
            limits: Limits {
                timeout: TIMEOUT,
                kill_grace: Duration::from_millis(200),
                linger: Duration::from_millis(200),
                after_linger: AfterLinger::KillGroup,
            },
        };
        let run = crate::process::run(job, std::future::pending(), None).await;
        let why = match &run.ending {
            Ending::Exited(0) => None,
            Ending::Exited(code) => Some(format!("exited {code}")),
            Ending::Signaled(sig) => Some(format!("was killed by signal {sig}")),
            Ending::TimedOut => Some(format!("ran past {} s and was stopped", TIMEOUT.as_secs())),
            Ending::Cancelled => Some("was stopped".to_string()),
            Ending::SpawnFailed(e, _) | Ending::OutputPipeFailed(e) | Ending::WaitFailed(e) => {
                Some(format!("could not run: {e}"))
            }
        };
        if let Some(why) = why {
            if self.failing {
                return None;
            }
            self.failing = true;
            let stderr = String::from_utf8_lossy(&run.stderr.bytes);
            let stderr = stderr.lines().next().unwrap_or("").trim();
            let said = if stderr.is_empty() {
                String::new()
            } else {
                format!(": {stderr}")
            };
            return Some(super::paint(
                color,
                "2",
                &format!("status line: `{}` {why}{said}; nothing shown", self.command),
            ));
        }
        self.failing = false;
        let text = String::from_utf8_lossy(&run.stdout.bytes);
        let indent = " ".repeat(2 + usize::from(self.padding));
        let lines: Vec<String> = text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .take(MAX_LINES)
            .map(|l| format!("{indent}{l}"))
            .collect();
        (!lines.is_empty()).then(|| lines.join("\n"))
    }
}

fn percent(used: u64, window: u64) -> u64 {
    if window == 0 {
        return 100;
    }
    (used.saturating_mul(100) / window).min(100)
}

/// The terminal's columns and rows, when stdout is a terminal.
fn terminal_size() -> Option<(u16, u16)> {
    // SAFETY: TIOCGWINSZ fills the winsize struct we pass and reads nothing else.
    let mut size: libc::winsize = unsafe { std::mem::zeroed() };
    // SAFETY: fd 1 is ours; the ioctl writes only into `size`.
    let ok = unsafe { libc::ioctl(1, libc::TIOCGWINSZ, &mut size) } == 0;
    (ok && size.ws_col > 0).then_some((size.ws_col, size.ws_row))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentages_stay_within_0_and_100() {
        assert_eq!(percent(0, 1000), 0);
        assert_eq!(percent(250, 1000), 25);
        assert_eq!(percent(5000, 1000), 100);
        assert_eq!(percent(1, 0), 100);
    }
}
