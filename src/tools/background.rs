//! The background commands of a session (`Bash` with `run_in_background: true`): which are
//! running, how each ended, and the two ways they end besides finishing — a stop (the
//! `TaskStop` tool, a signal to rein, the end of an interactive session, the end of a `-p`
//! session's wait) and rein's own death.
//!
//! Each command leads its own process group (started by [`crate::process::spawn_detached`]);
//! a stop is the runner's TERM → grace → KILL to the group, the same as a hook's.
//!
//! Why a pipe for rein's death: `PR_SET_PDEATHSIG` needs `pre_exec`, which this project does
//! not use. Instead rein holds the only write end of one pipe (close-on-exec, so no child
//! inherits it) and each background command gets a read end as its stdin; the Bash wrapper
//! moves it to a watchdog subshell in the command's group and gives the command `/dev/null`.
//! When rein dies — SIGKILL included — the kernel closes the write end, the watchdog reads EOF
//! and kills its group: SIGTERM, then SIGKILL 2 s later unless the group has emptied (it
//! exits as soon as it is alone).

#![deny(missing_docs)]

use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::watch;

use crate::process::{self, Detached, Ending};

/// Time between SIGTERM and SIGKILL when rein stops a background command.
///
/// Why not the hooks' 1.5 s ([`crate::hooks::command::KILL_GRACE`], measured from Claude Code's
/// hook runner): Claude Code's grace for a background shell is not measured, and a stop on
/// SIGTERM to rein must finish within rein's own shutdown deadline; 500 ms is what rein used
/// for every process before the hooks' grace was measured.
pub const STOP_GRACE: Duration = Duration::from_millis(500);

/// One background command.
#[derive(Debug)]
pub struct BackgroundTask {
    /// The id the model sees (`backgroundTaskId`, `task_id` of `TaskStop`).
    pub id: String,
    /// The command as the model sent it.
    pub command: String,
    /// The model's `description`, if any.
    pub description: Option<String>,
    /// Where its stdout and stderr go.
    pub log: PathBuf,
    /// The id of the tool call that started it, when known.
    pub tool_use_id: Option<String>,
    /// Its process group (= the shell's pid).
    pub pgid: Option<u32>,
    ended: watch::Receiver<Option<Ending>>,
    /// Whether the model has been told how it ended (or needs no telling: it asked for the stop).
    announced: AtomicBool,
}

impl BackgroundTask {
    /// How it ended, or `None` while it runs.
    pub fn ending(&self) -> Option<Ending> {
        self.ended.borrow().clone()
    }

    /// Completes when the shell has ended and been reaped.
    pub async fn ended(&self) {
        let mut ended = self.ended.clone();
        // An error means the reaping task is gone, which only happens after it sent.
        let _ = ended.wait_for(Option::is_some).await;
    }

    /// The text the model and the hooks (`description`, else the command) know it by.
    pub fn label(&self) -> &str {
        self.description.as_deref().unwrap_or(&self.command)
    }

    /// Marks it as one the model needs no notification about (it stopped the task itself).
    pub fn mark_announced(&self) {
        self.announced.store(true, Ordering::SeqCst);
    }

    /// The `<task-notification>` block that tells the model how it ended (Claude Code's
    /// element names and order; the status words `completed`, `failed`, `killed`), or `None`
    /// while it runs.
    pub fn notification(&self) -> Option<String> {
        let (status, summary) = self.outcome()?;
        let tool_use = self
            .tool_use_id
            .as_deref()
            .map(|id| format!("<tool-use-id>{id}</tool-use-id>\n"))
            .unwrap_or_default();
        Some(format!(
            "<task-notification>\n<task-id>{}</task-id>\n{tool_use}<output-file>{}</output-file>\n\
             <status>{status}</status>\n<summary>{summary}</summary>\n</task-notification>",
            self.id,
            self.log.display()
        ))
    }

    /// How it ended, once it has: its status word (`completed`, `failed`, `killed`) and a
    /// one-line summary.
    pub fn outcome(&self) -> Option<(&'static str, String)> {
        let ending = self.ending()?;
        let label = self.label();
        Some(match ending {
            Ending::Exited(0) => (
                "completed",
                format!("Background command \"{label}\" completed (exit code 0)"),
            ),
            Ending::Exited(code) => (
                "failed",
                format!("Background command \"{label}\" failed with exit code {code}"),
            ),
            Ending::Signaled(signal) => (
                "failed",
                format!("Background command \"{label}\" was killed by signal {signal}"),
            ),
            Ending::TimedOut | Ending::Cancelled => (
                "killed",
                format!("Background command \"{label}\" was stopped"),
            ),
            Ending::SpawnFailed(err, _)
            | Ending::OutputPipeFailed(err)
            | Ending::WaitFailed(err) => (
                "failed",
                format!("Background command \"{label}\" failed: {err}"),
            ),
        })
    }

    /// Its entry in the `background_tasks` list of Stop's stdin (Claude Code's shape).
    pub fn stop_entry(&self) -> serde_json::Value {
        serde_json::json!({
            "id": self.id,
            "type": "shell",
            "status": if self.ending().is_some() { "completed" } else { "running" },
            "description": self.label(),
            "command": self.command,
        })
    }

    /// Stops it: TERM → [`STOP_GRACE`] → KILL to its group, then waits (≤ the grace) for the
    /// reaping. Returns at once when it has already ended.
    pub async fn stop(&self) {
        if self.ending().is_some() {
            return;
        }
        if let Some(pgid) = self.pgid {
            process::kill_group_until(pgid, STOP_GRACE, self.ended()).await;
        }
        let _ = tokio::time::timeout(STOP_GRACE, self.ended()).await;
    }
}

/// The background commands of one session.
pub struct BackgroundTasks {
    tasks: Mutex<Vec<Arc<BackgroundTask>>>,
    /// `(read end, write end)` of the death pipe; `None` if it could not be made (the commands
    /// then get `/dev/null` and do not outlive a SIGKILLed rein only by chance).
    death_pipe: Option<(OwnedFd, OwnedFd)>,
    /// Told when a task starts and when it ends ([`BackgroundTasks::listen`]).
    listener: Mutex<Option<Arc<TaskListener>>>,
}

impl std::fmt::Debug for BackgroundTasks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BackgroundTasks")
            .field("tasks", &self.tasks)
            .field("death_pipe", &self.death_pipe)
            .finish_non_exhaustive()
    }
}

/// A task started or ended (see [`BackgroundTasks::listen`]).
#[derive(Debug, Clone, Copy)]
pub enum TaskEvent<'a> {
    /// Just registered.
    Started(&'a BackgroundTask),
    /// Its process ended (its [`BackgroundTask::outcome`] is known).
    Ended(&'a BackgroundTask),
}

/// What [`BackgroundTasks::listen`] takes.
pub type TaskListener = dyn Fn(TaskEvent<'_>) + Send + Sync;

impl Default for BackgroundTasks {
    fn default() -> BackgroundTasks {
        BackgroundTasks::new()
    }
}

impl BackgroundTasks {
    /// An empty set, with its death pipe.
    pub fn new() -> BackgroundTasks {
        let death_pipe = match std::io::pipe() {
            Ok((read, write)) => Some((OwnedFd::from(read), OwnedFd::from(write))),
            Err(err) => {
                tracing::warn!(%err, "no death pipe: background commands will not see rein die");
                None
            }
        };
        BackgroundTasks {
            tasks: Mutex::new(Vec::new()),
            death_pipe,
            listener: Mutex::new(None),
        }
    }

    /// Calls `listener` when a task starts and when it ends (stream-json's `task_started` and
    /// `task_notification` lines). One listener; a later call replaces it.
    pub fn listen(&self, listener: Arc<TaskListener>) {
        if let Ok(mut l) = self.listener.lock() {
            *l = Some(listener);
        }
    }

    /// A read end of the death pipe, for one background command's stdin.
    pub fn death_pipe_reader(&self) -> Option<OwnedFd> {
        self.death_pipe
            .as_ref()
            .and_then(|(read, _)| read.try_clone().ok())
    }

    /// Tracks a started command; a task of its own reaps it.
    #[expect(
        clippy::too_many_arguments,
        reason = "one call site, each argument named there"
    )]
    pub fn register(
        &self,
        id: String,
        command: String,
        description: Option<String>,
        log: PathBuf,
        tool_use_id: Option<String>,
        detached: Detached,
        on_end: impl FnOnce() + Send + 'static,
    ) -> Arc<BackgroundTask> {
        let (tx, rx) = watch::channel(None);
        let task = Arc::new(BackgroundTask {
            id,
            command,
            description,
            log,
            tool_use_id,
            pgid: detached.pid(),
            ended: rx,
            announced: AtomicBool::new(false),
        });
        let listener = self.listener.lock().ok().and_then(|l| l.clone());
        if let Some(listener) = &listener {
            listener(TaskEvent::Started(&task));
        }
        let ended = Arc::clone(&task);
        tokio::spawn(async move {
            let ending = detached.wait().await;
            on_end();
            let _ = tx.send(Some(ending));
            if let Some(listener) = listener {
                listener(TaskEvent::Ended(&ended));
            }
        });
        if let Ok(mut tasks) = self.tasks.lock() {
            tasks.push(Arc::clone(&task));
        }
        task
    }

    /// The command with this id.
    pub fn get(&self, id: &str) -> Option<Arc<BackgroundTask>> {
        self.tasks
            .lock()
            .ok()
            .and_then(|tasks| tasks.iter().find(|t| t.id == id).cloned())
    }

    /// The commands still running, in start order.
    pub fn running(&self) -> Vec<Arc<BackgroundTask>> {
        match self.tasks.lock() {
            Ok(tasks) => tasks
                .iter()
                .filter(|t| t.ending().is_none())
                .cloned()
                .collect(),
            Err(_) => Vec::new(),
        }
    }

    /// The commands that have ended since the last call and that the model has not been told
    /// about, in start order; each is returned once.
    pub fn take_unannounced(&self) -> Vec<Arc<BackgroundTask>> {
        match self.tasks.lock() {
            Ok(tasks) => tasks
                .iter()
                .filter(|t| t.ending().is_some() && !t.announced.swap(true, Ordering::SeqCst))
                .cloned()
                .collect(),
            Err(_) => Vec::new(),
        }
    }

    /// The first command that has ended and that the model has not been told about, marked
    /// told; the others stay for later.
    pub fn take_first_unannounced(&self) -> Option<Arc<BackgroundTask>> {
        let tasks = self.tasks.lock().ok()?;
        tasks
            .iter()
            .find(|t| t.ending().is_some() && !t.announced.swap(true, Ordering::SeqCst))
            .cloned()
    }

    /// Whether a command has ended that the model has not been told about.
    pub fn has_unannounced(&self) -> bool {
        match self.tasks.lock() {
            Ok(tasks) => tasks
                .iter()
                .any(|t| t.ending().is_some() && !t.announced.load(Ordering::SeqCst)),
            Err(_) => false,
        }
    }

    /// Waits until one of the running commands ends, at most `ceiling` (`None`: no limit).
    /// Returns `false` when the ceiling passed first; `true` at once when none is running.
    pub async fn wait_any(&self, ceiling: Option<Duration>) -> bool {
        let running = self.running();
        if running.is_empty() {
            return true;
        }
        let any = futures_util::future::select_all(running.iter().map(|t| Box::pin(t.ended())));
        match ceiling {
            Some(ceiling) => tokio::time::timeout(ceiling, any).await.is_ok(),
            None => {
                any.await;
                true
            }
        }
    }

    /// Stops every running command, all at once.
    pub async fn stop_all(&self) {
        let running = self.running();
        futures_util::future::join_all(running.iter().map(|t| t.stop())).await;
    }
}
