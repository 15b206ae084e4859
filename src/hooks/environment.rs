//! The environment of a command hook (spec §5.4): its variables, the ones removed from rein's
//! own environment, its working directory, `${CLAUDE_PROJECT_DIR}` in exec-form arguments.

use std::path::{Path, PathBuf};

use crate::hooks::config::PluginRef;

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
    /// Where texts over [`crate::hooks::spill::SPILL_THRESHOLD`] characters are written
    /// (`~/.rein/projects/<slug>/<session>/tool-results/`). `None`: a `rein-hook-output/<session>`
    /// directory under the system temp dir. (Added to the skeleton contract.)
    pub output_dir: Option<PathBuf>,
    /// `CLAUDE_CODE_SESSION_ATTENDED`: whether a person is attending (false for headless runs).
    /// (Added to the skeleton contract.)
    pub attended: bool,
    /// The home directory (last-resort cwd, `~` in `if` rules). `None`: `$HOME`.
    /// (Added to the skeleton contract.)
    pub home: Option<PathBuf>,
    /// `allowedHttpHookUrls` and `httpHookAllowedEnvVars` from the settings.
    pub http_policy: crate::hooks::http::HttpHookPolicy,
}

impl HookEnvironment {
    /// An environment with no extra env, no run log, not attended, default output dir.
    pub fn new(
        project_dir: impl Into<PathBuf>,
        session_id: impl Into<String>,
        env_file_dir: impl Into<PathBuf>,
    ) -> HookEnvironment {
        HookEnvironment {
            project_dir: project_dir.into(),
            session_id: session_id.into(),
            env_file_dir: env_file_dir.into(),
            extra_env: Vec::new(),
            run_log: None,
            debug: false,
            output_dir: None,
            attended: false,
            home: None,
            http_policy: crate::hooks::http::HttpHookPolicy::default(),
        }
    }

    /// The same environment for session `session_id`: its `CLAUDE_CODE_SESSION_ID`, and the
    /// env-file directory and run log named after a session (the old id's last path component
    /// is replaced) follow it; `output_dir` is the new session's.
    pub fn for_session(&self, session_id: &str, output_dir: Option<PathBuf>) -> HookEnvironment {
        let old = self.session_id.as_str();
        let renamed = |path: &Path, name: String| match path.parent() {
            Some(parent) => parent.join(name),
            None => PathBuf::from(name),
        };
        let env_file_dir = if self.env_file_dir.file_name().is_some_and(|n| n == old) {
            renamed(&self.env_file_dir, session_id.to_string())
        } else {
            self.env_file_dir.clone()
        };
        let run_log = self.run_log.as_ref().map(|log| {
            if log.file_stem().is_some_and(|n| n == old) {
                renamed(log, format!("{session_id}.jsonl"))
            } else {
                log.clone()
            }
        });
        HookEnvironment {
            session_id: session_id.to_string(),
            env_file_dir,
            run_log,
            output_dir,
            ..self.clone()
        }
    }

    pub(crate) fn home_dir(&self) -> PathBuf {
        match &self.home {
            Some(home) => home.clone(),
            None => std::env::var_os("HOME")
                .map(PathBuf::from)
                .unwrap_or_else(|| PathBuf::from("/")),
        }
    }

    pub(crate) fn spill_dir(&self) -> PathBuf {
        match &self.output_dir {
            Some(dir) => dir.clone(),
            None => std::env::temp_dir()
                .join("rein-hook-output")
                .join(&self.session_id),
        }
    }
}

/// A project directory whose path is not valid UTF-8.
///
/// Why rein refuses it: hooks are told the project directory as text — `CLAUDE_PROJECT_DIR`,
/// `cwd` and `transcript_path` in their JSON input, `${CLAUDE_PROJECT_DIR}` in exec-form
/// arguments — and JSON cannot carry such a path unchanged. A lossy copy names a directory that
/// does not exist, so a guard script is "not found" (exit 127, a non-blocking error) and the
/// call it exists to deny runs. Claude Code 2.1.328 refuses to start there too (`Error: Can't
/// access working directory <path>: Path "<path>" does not exist`, exit 1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectDirNotUtf8 {
    /// The directory.
    pub path: PathBuf,
}

impl std::fmt::Display for ProjectDirNotUtf8 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Can't access working directory {}: its path is not valid UTF-8 ({:?}); hooks \
             receive the project directory as text (CLAUDE_PROJECT_DIR, the JSON on their \
             stdin), which cannot carry it unchanged. Rename the directory, or start rein from \
             one whose path is UTF-8 (Claude Code refuses it too)",
            self.path.display(),
            self.path.as_os_str()
        )
    }
}

impl std::error::Error for ProjectDirNotUtf8 {}

/// `Ok` when `project_dir` can be given to hooks unchanged (its path is UTF-8).
pub fn require_utf8_project_dir(project_dir: &Path) -> Result<(), ProjectDirNotUtf8> {
    match project_dir.to_str() {
        Some(_) => Ok(()),
        None => Err(ProjectDirNotUtf8 {
            path: project_dir.to_path_buf(),
        }),
    }
}

pub(crate) fn substitute_project_dir(text: &str, project: &str) -> String {
    text.replace("${CLAUDE_PROJECT_DIR}", project)
}

/// The hook's working directory: the input's cwd if it exists, else the project dir, else
/// home (spec §5.4).
pub(crate) fn hook_cwd(cwd: &Path, project: &Path, home: &Path) -> PathBuf {
    [cwd, project]
        .into_iter()
        .find(|p| p.is_dir())
        .unwrap_or(home)
        .to_path_buf()
}

/// The variables that tell a child process an agent session runs it, set for command hooks and
/// for the Bash tool's commands alike, with the values Claude Code 2.1.328 gives them (recorded
/// in `tests/fixtures/cc-2.1.328/env_cwd/`). `attended`: a person is at the terminal (the
/// interactive loop); `CLAUDE_CODE_ENTRYPOINT` is then `cli`, else `sdk-cli`, and an entry point
/// inherited from the caller is kept (`cli` becomes `sdk-cli` when headless), as Claude Code does.
///
/// Why `CLAUDECODE=1` although rein is not Claude Code: published hooks and tools read it to
/// learn that an agent runs them (and behave as they do under Claude Code); `AI_AGENT` still
/// names rein.
pub(crate) fn agent_env(attended: bool) -> Vec<(String, String)> {
    vec![
        ("CLAUDECODE".into(), "1".into()),
        ("CLAUDE_CODE_ENTRYPOINT".into(), entrypoint(attended)),
        ("CLAUDE_CODE_CHILD_SESSION".into(), "1".into()),
        ("COREPACK_ENABLE_AUTO_PIN".into(), "0".into()),
        ("NoDefaultCurrentDirectoryInExePath".into(), "1".into()),
    ]
}

/// `CLAUDE_CODE_ENTRYPOINT` as [`agent_env`] sets it (also the transcript's `entrypoint`).
pub(crate) fn entrypoint(attended: bool) -> String {
    match std::env::var("CLAUDE_CODE_ENTRYPOINT") {
        Ok(inherited) if inherited == "cli" && !attended => "sdk-cli".to_string(),
        Ok(inherited) if !inherited.is_empty() => inherited,
        _ => if attended { "cli" } else { "sdk-cli" }.to_string(),
    }
}

/// `AI_AGENT`: rein's own identity (`rein_<version>`).
fn ai_agent() -> (String, String) {
    (
        "AI_AGENT".into(),
        format!("rein_{}", env!("CARGO_PKG_VERSION")),
    )
}

/// The environment of the Bash tool's commands on top of rein's own: settings `env`, then the
/// session's variables as Claude Code 2.1.328 sets them for its Bash tool (no
/// `CLAUDE_PROJECT_DIR` there, `GIT_EDITOR=true` so a `git commit` never opens an editor,
/// `CLAUDE_EFFORT` when an effort level is sent to the model).
pub fn bash_env(
    settings_env: &[(String, String)],
    session_id: &str,
    attended: bool,
    effort: Option<&str>,
) -> Vec<(String, String)> {
    let mut vars: Vec<(String, String)> = settings_env.to_vec();
    vars.push(ai_agent());
    vars.extend(agent_env(attended));
    vars.push(("CLAUDE_CODE_SESSION_ID".into(), session_id.to_string()));
    vars.push((
        "CLAUDE_CODE_SESSION_ATTENDED".into(),
        if attended { "1" } else { "0" }.into(),
    ));
    vars.push(("CLAUDE_PID".into(), std::process::id().to_string()));
    vars.push(("GIT_EDITOR".into(), "true".into()));
    if let Some(level) = effort {
        vars.push(("CLAUDE_EFFORT".into(), level.to_string()));
    }
    vars
}

/// Variables set for every command hook on top of rein's environment and settings `env`:
/// Claude Code's (see [`agent_env`]), `AI_AGENT=rein_<version>`, and `CLAUDE_EFFORT` when the
/// event's input carries an effort level.
pub(crate) fn hook_env(
    env: &HookEnvironment,
    env_file: Option<&Path>,
    effort: Option<&str>,
    plugin: Option<&PluginRef>,
) -> Vec<(String, String)> {
    // Why OTEL_* from settings `env` is dropped too: Claude Code applies settings `env` to its
    // own process, whose OTEL_* its subprocesses then do not inherit.
    let mut vars: Vec<(String, String)> = env
        .extra_env
        .iter()
        .filter(|(k, _)| !k.starts_with("OTEL_"))
        .cloned()
        .collect();
    vars.push(ai_agent());
    vars.extend(agent_env(env.attended));
    vars.push((
        "CLAUDE_PROJECT_DIR".into(),
        env.project_dir.to_string_lossy().into_owned(),
    ));
    vars.push(("CLAUDE_CODE_SESSION_ID".into(), env.session_id.clone()));
    vars.push((
        "CLAUDE_CODE_SESSION_ATTENDED".into(),
        if env.attended { "1" } else { "0" }.into(),
    ));
    vars.push(("CLAUDE_PID".into(), std::process::id().to_string()));
    if let Some(level) = effort {
        vars.push(("CLAUDE_EFFORT".into(), level.to_string()));
    }
    if let Some(plugin) = plugin {
        // A plugin's hooks find their own files and state through these (Claude Code 2.1.328
        // sets both; fixture `plugin_hooks/rec/*.env`).
        vars.push((
            "CLAUDE_PLUGIN_ROOT".into(),
            plugin.root.to_string_lossy().into_owned(),
        ));
        vars.push((
            "CLAUDE_PLUGIN_DATA".into(),
            plugin.data.to_string_lossy().into_owned(),
        ));
    }
    if let Some(file) = env_file {
        vars.push((
            "CLAUDE_ENV_FILE".into(),
            file.to_string_lossy().into_owned(),
        ));
    }
    vars
}

/// Variables removed from the inherited environment: every `OTEL_*` (spec §5.4), and a
/// `CLAUDE_ENV_FILE`/`CLAUDE_EFFORT` inherited from an enclosing session (rein sets its own
/// when it has one, and a child must not see the caller's otherwise).
pub fn removed_env() -> Vec<String> {
    let mut names: Vec<String> = std::env::vars_os()
        .filter_map(|(k, _)| k.into_string().ok())
        .filter(|k| k.starts_with("OTEL_"))
        .collect();
    names.push("CLAUDE_ENV_FILE".into());
    names.push("CLAUDE_EFFORT".into());
    names.push("CLAUDE_PLUGIN_ROOT".into());
    names.push("CLAUDE_PLUGIN_DATA".into());
    names
}
