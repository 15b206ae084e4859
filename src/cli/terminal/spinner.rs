//! The spinner on stderr while a turn runs: what is running now — a hook's `statusMessage`
//! while its hooks run, `Running <tool>` while a tool runs, `Thinking` while the model is
//! asked. It pauses while the reply's text streams, and only draws on a terminal.

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::progress::{Observer, Progress};

#[derive(Debug, Default)]
struct Inner {
    /// A turn is running.
    running: bool,
    /// Text is streaming to stdout: no drawing until the next tool or hook.
    paused: bool,
    /// What the turn does now.
    doing: String,
    /// The statusMessage of the hooks running now.
    hook: Option<String>,
    /// The spinner line is on the screen.
    drawn: bool,
    frame: usize,
}

/// Shared between the session's observer, the dispatcher's status sink and the drawing task.
#[derive(Debug, Clone, Default)]
pub struct SpinnerState {
    inner: Arc<Mutex<Inner>>,
    /// Draws at all (stderr is a terminal).
    enabled: bool,
}

const FRAMES_UTF8: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
const FRAMES_ASCII: [&str; 4] = ["|", "/", "-", "\\"];

impl SpinnerState {
    /// A spinner that draws when `enabled`; with `utf8` it uses braille frames.
    pub fn new(enabled: bool) -> SpinnerState {
        SpinnerState {
            inner: Arc::new(Mutex::new(Inner::default())),
            enabled,
        }
    }

    fn with<T>(&self, f: impl FnOnce(&mut Inner) -> T) -> Option<T> {
        self.inner.lock().ok().map(|mut i| f(&mut i))
    }

    /// A turn starts.
    pub fn start(&self, doing: &str) {
        self.with(|i| {
            i.running = true;
            i.paused = false;
            i.doing = doing.to_string();
        });
    }

    /// The turn ended: the line is cleared.
    pub fn stop(&self) {
        self.with(|i| {
            i.running = false;
            i.hook = None;
        });
        self.clear();
    }

    /// Hooks with a `statusMessage` started (`Some`) or finished (`None`).
    pub fn hook_status(&self, text: Option<&str>) {
        self.with(|i| {
            i.hook = text.map(str::to_string);
            if text.is_some() {
                i.paused = false;
            }
        });
    }

    /// Removes the spinner line if it is drawn (before anything else prints). Never while a
    /// permission prompt holds the terminal: that line is the prompt's.
    pub fn clear(&self) {
        let Ok(_terminal) = crate::permissions::prompt::terminal_lock().try_lock() else {
            return;
        };
        let drawn = self.with(|i| std::mem::take(&mut i.drawn)).unwrap_or(false);
        if drawn {
            let mut err = std::io::stderr().lock();
            let _ = err.write_all(b"\r\x1b[2K");
            let _ = err.flush();
        }
    }

    /// The line the spinner shows now, if it shows one (for tests and the drawing task).
    pub fn line(&self, utf8: bool) -> Option<String> {
        self.with(|i| {
            if !i.running
                || (i.paused && i.hook.is_none())
                || crate::permissions::prompt::prompting()
            {
                return None;
            }
            let frame = if utf8 {
                FRAMES_UTF8[i.frame % FRAMES_UTF8.len()]
            } else {
                FRAMES_ASCII[i.frame % FRAMES_ASCII.len()]
            };
            let what = i.hook.clone().unwrap_or_else(|| i.doing.clone());
            Some(format!("{frame} {what}…"))
        })
        .flatten()
    }

    /// Draws every 100 ms while a turn runs; ends when the runtime does.
    pub fn spawn_drawing(&self, utf8: bool, color: bool) {
        if !self.enabled {
            return;
        }
        let state = self.clone();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_millis(100));
            loop {
                tick.tick().await;
                let line = state.line(utf8);
                let Some(line) = line else {
                    state.clear();
                    continue;
                };
                let Ok(_terminal) = crate::permissions::prompt::terminal_lock().try_lock() else {
                    continue;
                };
                if crate::permissions::prompt::prompting() {
                    continue;
                }
                state.with(|i| {
                    i.frame = i.frame.wrapping_add(1);
                    i.drawn = true;
                });
                let line = super::paint(color, "2", &line);
                let mut err = std::io::stderr().lock();
                let _ = write!(err, "\r\x1b[2K{line}");
                let _ = err.flush();
            }
        });
    }
}

impl Observer for SpinnerState {
    fn observe(&self, progress: Progress<'_>) {
        // Nothing is printed for these: the spinner stays as it is.
        if matches!(
            progress,
            Progress::RequestStarted | Progress::StreamEvent { .. }
        ) {
            return;
        }
        // Whatever prints next must not land on the spinner's line.
        self.clear();
        match progress {
            Progress::ToolStart { name, .. } => {
                let name: String = name.chars().take(60).collect();
                self.with(|i| {
                    i.doing = format!("Running {name}");
                    i.paused = false;
                });
            }
            Progress::TextDelta { .. } => {
                self.with(|i| i.paused = true);
            }
            Progress::ToolResult { .. } | Progress::Assistant { .. } => {
                self.with(|i| i.doing = "Thinking".to_string());
            }
            Progress::SessionStarted { .. }
            | Progress::Prompt { .. }
            | Progress::Hook { .. }
            | Progress::Feedback { .. }
            | Progress::Notice { .. }
            | Progress::RequestStarted
            | Progress::StreamEvent { .. } => {}
        }
    }
}
