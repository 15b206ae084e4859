//! The one door every hook point goes through: select handlers (event, matcher, `if`), dedup,
//! run them concurrently, merge their outcomes into a [`Decision`].
//!
//! SKELETON: the API below is the contract the pipeline and the session use; the engine work
//! fills in the body.

use std::path::PathBuf;

use crate::hooks::decision::Decision;
use crate::hooks::event::HookInput;
use crate::settings::schema::Settings;

/// What the dispatcher needs to know about the session to run hooks (spec §5.4).
#[derive(Debug, Clone)]
pub struct HookEnvironment {
    /// `CLAUDE_PROJECT_DIR`; also the fallback cwd.
    pub project_dir: PathBuf,
    /// `CLAUDE_CODE_SESSION_ID`.
    pub session_id: String,
    /// Directory for `CLAUDE_ENV_FILE`s (`<rein home>/session-env/<session>/`).
    pub env_file_dir: PathBuf,
    /// Settings `env`, applied on top of rein's own environment.
    pub extra_env: Vec<(String, String)>,
    /// Append one JSON line per hook run here (`~/.rein/logs/<session>.jsonl`), if set.
    pub run_log: Option<PathBuf>,
    /// `--debug hooks`: print each run to stderr as it happens.
    pub debug: bool,
}

/// Selects, runs and merges hooks.
#[derive(Debug)]
pub struct Dispatcher {
    settings: Settings,
    env: HookEnvironment,
}

impl Dispatcher {
    pub fn new(settings: Settings, env: HookEnvironment) -> Dispatcher {
        Dispatcher { settings, env }
    }

    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    pub fn environment(&self) -> &HookEnvironment {
        &self.env
    }

    /// Fires one event: every selected handler runs concurrently; never fails.
    pub async fn fire(&self, input: &HookInput) -> Decision {
        Decision::empty(input.event())
    }

    /// `CLAUDE_ENV_FILE`s written so far by SessionStart hooks, in configuration order; the
    /// Bash tool sources them before each command.
    pub fn env_files(&self) -> Vec<PathBuf> {
        Vec::new()
    }

    /// Context produced by background (`async`) hooks that finished since the last call;
    /// delivered with the next model request.
    pub fn take_async_context(&self) -> Vec<String> {
        Vec::new()
    }

    /// Ends background hooks still running (SIGTERM, grace, SIGKILL to their groups).
    pub async fn shutdown(&self) {}
}
