//! The library's front door: [`Engine::builder`] does the wiring the `rein` binary does (settings
//! files, permission rules and mode, the model, the built-in tools), [`Engine::on`] registers
//! typed in-process hooks, and [`Engine::run`] / [`Engine::session`] run sessions.
//!
//! In-process hooks live in one registry the engine shares with every session it starts:
//! registering or unregistering while a session runs takes effect at its next firing.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::agent::agent_hook::HookModels;
use crate::agent::instructions::{PromptOptions, Sources, assemble};
use crate::agent::providers::mock::MockModel;
use crate::agent::session::{DEFAULT_STOP_BLOCK_CAP, Session, SessionConfig, TurnOutcome};
use crate::agent::subagent;
use crate::agent::transcript::{rein_home, transcript_path};
use crate::hooks::dispatch::{Dispatcher, HookEnvironment};
use crate::hooks::environment::{
    ProjectDirNotUtf8, bash_env, removed_env, require_utf8_project_dir,
};
use crate::hooks::events::Event;
use crate::hooks::mcp_tool::McpCaller;
use crate::hooks::registry::{HookReply, MatcherError, Registry, Unregister};
use crate::id::uuid_v4;
use crate::mcp::McpSession;
use crate::mcp::client::{Limits, Status};
use crate::mcp::config::{Approval, Sources as McpSources};
use crate::model::Model;
use crate::permissions::mode::{PermissionMode, resolve_mode};
use crate::permissions::policy::{PermissionPolicy, PolicyPaths};
use crate::pipeline::PolicyGate;
use crate::progress::{Observer, Observers, Progress};
use crate::settings::schema::{Diagnostic, Settings};
use crate::settings::{LoadOptions, load};
use crate::tools::{ReadFilter, Tool, ToolContext, builtin_tools};

/// What can go wrong while building an [`Engine`].
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The project directory does not exist or cannot be resolved.
    #[error("project directory {path}: {source}")]
    ProjectDir {
        /// The directory as given.
        path: PathBuf,
        /// Why it cannot be used.
        source: std::io::Error,
    },
    /// The project directory's path is not valid UTF-8, so hooks cannot be told it unchanged
    /// (Claude Code refuses such a directory too).
    #[error("{}", not_utf8_text(.path))]
    ProjectDirNotUtf8 {
        /// The directory, resolved.
        path: PathBuf,
    },
    /// The permission mode cannot be used (unknown name, disabled by settings, …).
    #[error("permission mode: {0}")]
    PermissionMode(String),
}

fn not_utf8_text(path: &Path) -> String {
    ProjectDirNotUtf8 {
        path: path.to_path_buf(),
    }
    .to_string()
}

/// Builds an [`Engine`]; see [`Engine::builder`].
pub struct EngineBuilder {
    project_dir: PathBuf,
    home: Option<PathBuf>,
    settings: Vec<String>,
    user_settings: bool,
    trust_project: bool,
    model: Option<Arc<dyn Model>>,
    permission_mode: Option<String>,
    allowed_tools: Vec<String>,
    disallowed_tools: Vec<String>,
    observer: Option<Arc<dyn Observer>>,
    prompt: PromptOptions,
    memory_files: bool,
    mcp_configs: Vec<String>,
    stream_events: bool,
}

impl EngineBuilder {
    /// Extra settings, as `--settings` takes them: a file path or inline JSON. Later ones win.
    pub fn settings(mut self, file_or_json: impl Into<String>) -> EngineBuilder {
        self.settings.push(file_or_json.into());
        self
    }

    /// The home directory whose `~/.claude/settings.json` is read and under which rein keeps
    /// transcripts and logs (`~/.rein`). Default: `$HOME`.
    pub fn home(mut self, home: impl Into<PathBuf>) -> EngineBuilder {
        self.home = Some(home.into());
        self
    }

    /// Whether the settings files on disk (user, project, local, managed) are read; default
    /// `true`. With `false` only [`EngineBuilder::settings`] apply.
    pub fn read_settings_files(mut self, read: bool) -> EngineBuilder {
        self.user_settings = read;
        self
    }

    /// Trust the project folder, as `rein --trust` does: its repository-controlled settings
    /// (`.claude/settings.json`, a git-tracked `settings.local.json`) may then add allow rules,
    /// directories and env. Default `false`: a folder recorded by `rein hooks trust` (whose
    /// hooks and scripts have not changed since) is trusted, any other is not.
    pub fn trust_project(mut self, trust: bool) -> EngineBuilder {
        self.trust_project = trust;
        self
    }

    /// The model; default: the deterministic offline mock.
    pub fn model(mut self, model: Arc<dyn Model>) -> EngineBuilder {
        self.model = Some(model);
        self
    }

    /// The permission mode (`default`, `acceptEdits`, `plan`, `dontAsk`, `bypassPermissions`);
    /// default: what the settings say, else `default`.
    pub fn permission_mode(mut self, mode: impl Into<String>) -> EngineBuilder {
        self.permission_mode = Some(mode.into());
        self
    }

    /// An allow rule, as `--allowedTools` takes it (`Bash(git *)`, `Read`).
    pub fn allow(mut self, rule: impl Into<String>) -> EngineBuilder {
        self.allowed_tools.push(rule.into());
        self
    }

    /// A deny rule, as `--disallowedTools` takes it.
    pub fn deny(mut self, rule: impl Into<String>) -> EngineBuilder {
        self.disallowed_tools.push(rule.into());
        self
    }

    /// Receives what every session of the engine reports as it goes (tool calls, results,
    /// hook runs, notices).
    pub fn observer(mut self, observer: Arc<dyn Observer>) -> EngineBuilder {
        self.observer = Some(observer);
        self
    }

    /// Replaces rein's own system prompt (and its environment section), as
    /// `--system-prompt` does. The memory files and [`EngineBuilder::append_system_prompt`]
    /// texts still follow it.
    pub fn system_prompt(mut self, text: impl Into<String>) -> EngineBuilder {
        self.prompt.replace = Some(text.into());
        self
    }

    /// Adds a text at the end of the system prompt, after the memory files, as
    /// `--append-system-prompt` does. Several calls add several texts, in order.
    pub fn append_system_prompt(mut self, text: impl Into<String>) -> EngineBuilder {
        self.prompt.append.push(text.into());
        self
    }

    /// Answers in an output style ([`crate::agent::output_style`]): one of
    /// [`crate::agent::output_style::Styles::discover`]'s, or one built in code.
    pub fn output_style(mut self, style: crate::agent::output_style::OutputStyle) -> EngineBuilder {
        self.prompt.output_style = Some(style);
        self
    }

    /// More MCP servers, as `--mcp-config` takes them: a file path or inline JSON
    /// (`{"mcpServers": {…}}`). They start with the servers of `~/.claude.json` and the
    /// approved ones of `.mcp.json` (see [`Engine::start_mcp_servers`]).
    pub fn mcp_config(mut self, file_or_json: impl Into<String>) -> EngineBuilder {
        self.mcp_configs.push(file_or_json.into());
        self
    }

    /// Whether sessions read the memory files (`~/.claude/CLAUDE.md` under
    /// [`EngineBuilder::home`], then `CLAUDE.md`, `.claude/CLAUDE.md` and `CLAUDE.local.md`
    /// from `/` down to the project directory, with their `@imports`) into the system prompt
    /// and announce each with `InstructionsLoaded`; default `true`, as the `rein` binary does.
    /// `CLAUDE_CODE_DISABLE_CLAUDE_MDS=1` turns them off either way.
    pub fn memory_files(mut self, read: bool) -> EngineBuilder {
        self.memory_files = read;
        self
    }

    /// Whether the observer gets every event of the model's replies as
    /// [`Progress::StreamEvent`] (what `--include-partial-messages` prints); default `false`.
    pub fn stream_events(mut self, on: bool) -> EngineBuilder {
        self.stream_events = on;
        self
    }

    /// Loads the settings and resolves the permission mode. Problems in settings files do not
    /// fail the build: they are in [`Engine::diagnostics`], and the rest applies as in Claude
    /// Code.
    pub fn build(self) -> Result<Engine, EngineError> {
        let project_dir =
            std::fs::canonicalize(&self.project_dir).map_err(|source| EngineError::ProjectDir {
                path: self.project_dir.clone(),
                source,
            })?;
        require_utf8_project_dir(&project_dir)
            .map_err(|e| EngineError::ProjectDirNotUtf8 { path: e.path })?;
        let mut opts = LoadOptions::from_env(
            project_dir.clone(),
            project_dir.clone(),
            self.settings.clone(),
        );
        if let Some(home) = &self.home {
            opts.home = home.clone();
            opts.config_dir = None;
        }
        if !self.user_settings {
            opts.setting_sources = Some(Vec::new());
            opts.managed_dir = project_dir.join(".rein-no-managed-settings");
        }
        opts.repo_trusted = self.trust_project || {
            let rein = rein_home_under(&opts.home);
            crate::settings::trust::state(&rein, &project_dir)
                == crate::settings::trust::TrustState::Trusted
        };
        let settings = load(&opts);
        let (mode, _warnings) = resolve_mode(
            false,
            self.permission_mode.as_deref(),
            &settings.permissions,
        )
        .map_err(|e| EngineError::PermissionMode(e.to_string()))?;
        let home = self.home.clone().unwrap_or_else(|| opts.home.clone());
        Ok(Engine {
            project_dir,
            home,
            settings,
            registry: Registry::new(),
            model: self
                .model
                .unwrap_or_else(|| Arc::new(MockModel::new()) as Arc<dyn Model>),
            mode,
            allowed_tools: self.allowed_tools,
            disallowed_tools: self.disallowed_tools,
            observer: self.observer,
            prompt: self.prompt,
            memory_files: self.memory_files,
            mcp_configs: self.mcp_configs,
            stream_events: self.stream_events,
            config_dir: opts.config_dir.clone(),
            mcp: tokio::sync::OnceCell::new(),
        })
    }
}

/// rein as a library: settings, hooks, permissions and a model, ready to run sessions.
///
/// ```no_run
/// use rein::HookReply;
/// use rein::events::PreToolUse;
///
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// let engine = rein::Engine::builder(".").build()?;
/// let _guard = engine.on::<PreToolUse, _, _>("Bash", |input| async move {
///     let command = input.tool_input["command"].as_str().unwrap_or_default();
///     if command.contains("rm -rf") {
///         PreToolUse::deny("rm -rf is not allowed here")
///     } else {
///         HookReply::none()
///     }
/// })?;
/// let outcome = engine.run("run command rm -rf build").await;
/// println!("{}", outcome.result);
/// # Ok(())
/// # }
/// ```
pub struct Engine {
    project_dir: PathBuf,
    home: PathBuf,
    settings: Settings,
    registry: Registry,
    model: Arc<dyn Model>,
    mode: PermissionMode,
    allowed_tools: Vec<String>,
    disallowed_tools: Vec<String>,
    observer: Option<Arc<dyn Observer>>,
    prompt: PromptOptions,
    memory_files: bool,
    mcp_configs: Vec<String>,
    stream_events: bool,
    /// `CLAUDE_CONFIG_DIR` as the settings were read with it (where `.claude.json` is).
    config_dir: Option<PathBuf>,
    /// The MCP servers, once started; shared by every session of the engine.
    mcp: tokio::sync::OnceCell<Arc<McpSession>>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("project_dir", &self.project_dir)
            .field("mode", &self.mode)
            .field("in_process_hooks", &self.registry.len())
            .finish_non_exhaustive()
    }
}

/// Forwards progress to the engine's observer (sessions own their observer box).
struct Forward(Arc<dyn Observer>);

impl Observer for Forward {
    fn observe(&self, progress: crate::progress::Progress<'_>) {
        self.0.observe(progress);
    }
}

impl Engine {
    /// Starts building an engine for the project at `project_dir`.
    pub fn builder(project_dir: impl Into<PathBuf>) -> EngineBuilder {
        EngineBuilder {
            project_dir: project_dir.into(),
            home: None,
            settings: Vec::new(),
            user_settings: true,
            trust_project: false,
            model: None,
            permission_mode: None,
            allowed_tools: Vec::new(),
            disallowed_tools: Vec::new(),
            observer: None,
            prompt: PromptOptions::default(),
            memory_files: true,
            mcp_configs: Vec::new(),
            stream_events: false,
        }
    }

    /// Registers an in-process hook for event `E`: `handler` gets the event's typed input and
    /// answers with a [`HookReply`]. It runs after the configured hooks of the event, in
    /// registration order, under the event's default timeout; a panic or an error costs only
    /// its own answer.
    ///
    /// `matcher` is written as in settings: `"*"` for all, `"Bash|Edit"`, a regex. One that does
    /// not compile, or one other than `"*"` on an event with nothing to match, is an error
    /// rather than a hook that never (or always) fires. Dropping the returned handle
    /// unregisters the hook ([`Unregister::forget`] keeps it for the engine's life).
    pub fn on<E, F, Fut>(&self, matcher: &str, handler: F) -> Result<Unregister, MatcherError>
    where
        E: Event,
        F: Fn(E::Input) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = HookReply> + Send + 'static,
    {
        self.registry.on::<E, F, Fut>(matcher, handler)
    }

    /// Problems found in the settings files (each with file, line and column).
    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.settings.diagnostics
    }

    /// The project directory (canonical).
    pub fn project_dir(&self) -> &Path {
        &self.project_dir
    }

    /// A new headless session (no one can be asked: calls that need approval are refused);
    /// call [`Session::start`], then [`Session::run_prompt`] as often as needed, then
    /// [`Session::end`].
    pub fn session(&self) -> Session {
        let session_id = uuid_v4();
        let rein = rein_home_under(&self.home);
        let transcript = transcript_path(&rein, &self.project_dir, &session_id);
        let env = HookEnvironment {
            project_dir: self.project_dir.clone(),
            session_id: session_id.clone(),
            env_file_dir: rein.join("session-env").join(&session_id),
            extra_env: self.settings.env.clone(),
            run_log: Some(rein.join("logs").join(format!("{session_id}.jsonl"))),
            debug: false,
            output_dir: Some(transcript.with_extension("").join("tool-results")),
            attended: false,
            http_policy: self.settings.http_policy.clone(),
            home: Some(self.home.clone()),
        };
        let mut dispatcher =
            Dispatcher::with_registry(self.settings.handlers.clone(), env, self.registry.clone());
        dispatcher.warm_up();
        let mcp = self.mcp.get().cloned();
        if let Some(mcp) = &mcp {
            dispatcher.set_mcp_caller(Arc::clone(mcp) as Arc<dyn McpCaller>);
        }
        let hook_models = HookModels::new(Arc::clone(&self.model), None);
        dispatcher.set_model_hooks(hook_models.clone());
        let paths = PolicyPaths {
            cwd: self.project_dir.clone(),
            project_dir: self.project_dir.clone(),
            home: self.home.clone(),
            additional_dirs: Vec::new(),
            // rein's files for this project (a Bash output saved to `tool-results`).
            readable_dirs: transcript_path(&rein, &self.project_dir, "x")
                .parent()
                .map(|d| vec![d.to_path_buf()])
                .unwrap_or_default(),
        };
        let (policy, _warnings) = PermissionPolicy::from_settings(
            &self.settings.permissions,
            self.mode,
            &self.allowed_tools,
            &self.disallowed_tools,
            paths,
        );
        let mut ctx = ToolContext::new(self.project_dir.clone());
        ctx.env = bash_env(&self.settings.env, &session_id, false, self.model.effort());
        ctx.env_remove = removed_env();
        ctx.read_filter = Some({
            let policy = policy.clone();
            ReadFilter(Arc::new(move |p: &std::path::Path| policy.read_denied(p)))
        });
        let mut observers = Observers::new();
        if let Some(observer) = &self.observer {
            observers.push(Box::new(Forward(Arc::clone(observer))));
        }
        let config = SessionConfig {
            session_id,
            project_dir: self.project_dir.clone(),
            transcript_path: transcript,
            permission_mode: self.mode.as_str().to_string(),
            max_turns: None,
            stop_block_cap: DEFAULT_STOP_BLOCK_CAP,
            session_end_budget: dispatcher.session_end_phase_budget(),
        };
        let mut tools: Vec<Arc<dyn Tool>> = builtin_tools();
        if let Some(mcp) = &mcp {
            tools.extend(mcp.tools());
        }
        let tool_names: Vec<String> = tools.iter().map(|t| t.name().to_string()).collect();
        let prompt = assemble(&Sources {
            options: &self.prompt,
            cwd: &self.project_dir,
            additional_dirs: &[],
            home: Some(self.home.clone()),
            memory_files: self.memory_files,
            model: self.model.name(),
            tools: &tool_names,
        });
        if let Some(observer) = &self.observer {
            for notice in &prompt.memory.notices {
                observer.observe(Progress::Notice { text: notice });
            }
        }
        // Why errors are dropped here: the engine has no place to print them; `rein -p`
        // reports them, and a bad file only costs its own agent.
        let (definitions, _errors) = subagent::discover(&self.home, &self.project_dir, &[], None);
        let wired = subagent::wire(
            Box::new(dispatcher),
            Box::new(PolicyGate::new(policy, None)),
            Arc::clone(&self.model),
            tools,
            &config,
            subagent::SubagentSetup {
                definitions,
                models: None,
                notices: self.observer.clone(),
                read_filter: ctx.read_filter.clone(),
                instructions: Some(subagent::SubagentInstructions {
                    environment: prompt.environment.clone(),
                    memory: prompt.memory.files.clone(),
                }),
            },
        );
        hook_models.attach(&wired.runtime);
        let mut session = Session::new(
            config,
            wired.hooks,
            Arc::clone(&self.model),
            wired.tools,
            wired.gate,
            ctx,
            Box::new(observers),
        );
        session.set_prompt(prompt);
        session.set_stream_events(self.stream_events);
        session
    }

    /// Runs one prompt in a fresh session (SessionStart, the turn, SessionEnd) and returns how
    /// the turn ended. Lines the transcript could not keep (a full disk) reach the observer as a
    /// notice; to act on them, run the session yourself ([`Engine::session`]) and ask
    /// [`Session::transcript_fault`].
    pub async fn run(&self, prompt: &str) -> TurnOutcome {
        self.start_mcp_servers().await;
        let mut session = self.session();
        session.start().await;
        let outcome = session.run_prompt(prompt).await;
        session.end("other").await;
        outcome
    }
}

impl Engine {
    /// Starts the MCP servers the configuration names, once for the engine's life: those of
    /// `~/.claude.json` (under [`EngineBuilder::home`]), those of [`EngineBuilder::mcp_config`],
    /// and the project's `.mcp.json` servers that the settings approve
    /// (`enabledMcpjsonServers`, `enableAllProjectMcpServers`; the library asks no one, so an
    /// unapproved one stays stopped). Sessions made afterwards offer their tools
    /// (`mcp__<server>__<tool>`) and `mcp_tool` hooks can call them. [`Engine::run`] calls
    /// this itself; call it before [`Engine::session`] to give a session the tools.
    ///
    /// Problems (a bad config, a server that is not approved or fails to start) reach the
    /// [`Observer`] as notices; the servers that did start are used. The servers end with
    /// [`Engine::shutdown`], or are killed when the engine is dropped.
    pub async fn start_mcp_servers(&self) {
        self.mcp
            .get_or_init(|| async {
                let (session, notices) = self.launch_mcp().await;
                if let Some(observer) = &self.observer {
                    for notice in &notices {
                        observer.observe(Progress::Notice { text: notice });
                    }
                }
                Arc::new(session)
            })
            .await;
    }

    /// The names and states (`connected`, `failed`, `pending`, …) of the MCP servers, once
    /// started.
    pub fn mcp_servers(&self) -> Vec<(String, String)> {
        self.mcp
            .get()
            .map(|mcp| {
                mcp.servers()
                    .servers()
                    .iter()
                    .map(|s| (s.config.name.clone(), s.status().word().to_string()))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Ends the MCP servers (TERM, a grace, KILL to each server's process group).
    pub async fn shutdown(&self) {
        if let Some(mcp) = self.mcp.get() {
            mcp.shutdown().await;
        }
    }

    async fn launch_mcp(&self) -> (McpSession, Vec<String>) {
        let lookup = crate::mcp::config::env_lookup(&self.settings.env);
        let sources = McpSources {
            project_dir: self.project_dir.clone(),
            user_file: McpSources::user_file(&self.home, self.config_dir.as_deref()),
            flag_configs: self.mcp_configs.clone(),
            strict: false,
        };
        let loaded = crate::mcp::config::load(&sources, &lookup);
        let mut notices: Vec<String> = loaded
            .problems
            .iter()
            .map(|p| format!("rein: {p}"))
            .collect();
        let approval = Approval {
            enabled: self.settings.mcp_approval.enabled.clone(),
            disabled: self.settings.mcp_approval.disabled.clone(),
            enable_all: self.settings.mcp_approval.enable_all,
        };
        let plans = crate::mcp::plan(&loaded, &approval);
        for p in &plans {
            if p.hold == Some(Status::Pending) {
                notices.push(format!(
                    "rein: MCP server \"{}\" from {} is not approved, so it was not started; \
                     approve it with \"enabledMcpjsonServers\": [\"{}\"] in \
                     .claude/settings.local.json",
                    p.config.name, p.config.location.file, p.config.name
                ));
            }
        }
        if plans.is_empty() {
            return (McpSession::default(), notices);
        }
        let session = McpSession::start(
            plans,
            &Limits::from_env(&lookup),
            &self.project_dir,
            &self.settings.env,
            crate::mcp::max_output_tokens(&lookup),
        )
        .await;
        for s in session.servers().servers() {
            if let Status::Failed(why) = s.status() {
                notices.push(format!(
                    "rein: MCP server \"{}\" failed to start: {why}",
                    s.config.name
                ));
            }
            for note in s.notes() {
                notices.push(format!("rein: {note}"));
            }
        }
        (session, notices)
    }
}

/// `<home>/.rein` unless `REIN_HOME` says otherwise (as the binary resolves it).
fn rein_home_under(home: &Path) -> PathBuf {
    match std::env::var_os("REIN_HOME") {
        Some(_) => rein_home(),
        None => home.join(".rein"),
    }
}
