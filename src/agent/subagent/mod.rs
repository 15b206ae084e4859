//! Subagents: the `Agent` tool (`Task` is its former name for matchers and permission rules),
//! subagent definitions, and the loop a subagent runs.
//!
//! A subagent is a [`Session`] of its own — its own history, transcript
//! (`<session transcript dir>/<session_id>/subagents/agent-<agent_id>.jsonl`) and tool list —
//! over the parent's hook host and permission gate, shared by `Arc`. So every tool call a
//! subagent makes passes the same pipeline as the parent's: PreToolUse → permission rules and
//! mode → execution → PostToolUse, with `agent_id`/`agent_type` in the hook stdin as Claude
//! Code 2.1.328 writes them (`tests/fixtures/subagents/`). The gate is the parent's, so a
//! subagent never runs in a wider mode than the parent (a definition's `permissionMode` is
//! ignored).
//!
//! Definitions come from `~/.claude/agents/*.md`, then `<project>/.claude/agents/*.md`, then
//! `--agents JSON` (a later one with the same name replaces an earlier one). A file's front
//! matter (`name`, `description`, `tools`, `model`, rein's `timeout` in seconds) is a small
//! YAML subset; a file that does not parse is reported as `file:line: what` and skipped.
//!
//! rein runs subagents in the foreground (the Agent call returns the subagent's report) and
//! does not nest them (a subagent is never offered the Agent tool). Each subagent has a
//! deadline (`timeout` of its definition, else `REIN_SUBAGENT_TIMEOUT_MS`, else 10 minutes);
//! past it the subagent's future is dropped — its running commands' process groups with it —
//! and only its own call fails.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use crate::agent::session::{Session, SessionConfig, SubagentIdentity, TurnEnd};
use crate::hooks::events::subagent_start::SubagentStartInput;
use crate::hooks::events::{BaseInput, SubagentStart};
use crate::hooks::host::{HookHost, fire_observed};
use crate::hooks::spec::HookEvent;
use crate::model::Model;
use crate::permissions::policy::HookAnswer;
use crate::pipeline::{GateVerdict, PermissionGate, PromptAnswer};
use crate::progress::{Observer, Progress};
use crate::tools::input::{Field, FieldKind};
use crate::tools::{BoxFuture, Tool, ToolContext, ToolOutcome};

mod definitions;
mod shared;
mod tool;

pub use definitions::*;
pub(crate) use shared::*;
pub use tool::*;

/// Builds the session's provider with another model id.
pub type ModelFactory = Arc<dyn Fn(&str) -> Option<Arc<dyn Model>> + Send + Sync>;

/// The default deadline of one subagent.
pub const DEFAULT_SUBAGENT_TIMEOUT: Duration = Duration::from_secs(600);

/// The agent id Claude Code uses: `a` and 16 hex digits.
pub fn new_agent_id() -> String {
    let uuid = crate::id::uuid_v4().replace('-', "");
    format!("a{}", &uuid[..16])
}

/// The parts of a session's instructions a subagent gets too: the environment and the memory
/// files (not the session's own system prompt: a subagent has its type's).
#[derive(Debug, Clone)]
pub(crate) struct SubagentInstructions {
    /// The session's working environment.
    pub environment: crate::agent::instructions::Environment,
    /// The session's memory files, in load order.
    pub memory: Vec<crate::agent::instructions::MemoryFile>,
}

/// What a subagent needs from its parent session.
pub struct SubagentRuntime {
    pub(crate) hooks: Arc<dyn HookHost>,
    pub(crate) gate: Arc<dyn PermissionGate>,
    /// The session's model, its id and its transcript: `/model`, `/clear` and `/resume`
    /// change them while the session runs.
    current: std::sync::RwLock<CurrentSession>,
    pub(crate) models: Option<ModelFactory>,
    /// The session's tools without Agent.
    pub(crate) tools: Vec<Arc<dyn Tool>>,
    pub(crate) definitions: Vec<AgentDefinition>,
    pub(crate) project_dir: PathBuf,
    pub(crate) permission_mode: std::sync::Mutex<String>,
    pub(crate) stop_block_cap: u32,
    pub(crate) default_timeout: Duration,
    /// Where the subagent's notices go (the parent's observer).
    pub(crate) notices: Option<Arc<dyn Observer>>,
    /// The session's read-deny filter, for sessions that have no parent context to copy it
    /// from (an agent hook's).
    pub(crate) read_filter: Option<crate::tools::ReadFilter>,
    /// Serialises interactive permission prompts of the session and its subagents.
    pub(crate) prompt_lock: Arc<tokio::sync::Mutex<()>>,
    /// What a subagent's system prompt holds besides its type's prompt; `None`: the type's
    /// prompt alone.
    pub(crate) instructions: Option<SubagentInstructions>,
    /// Makes "set the cwd, evaluate the rules" one step across the session's gates.
    pub(crate) rules_lock: Arc<std::sync::Mutex<()>>,
}

/// What of the parent session can change while it runs.
#[derive(Clone)]
struct CurrentSession {
    model: Arc<dyn Model>,
    session_id: String,
    transcript_path: PathBuf,
}

impl SubagentRuntime {
    fn current(&self) -> CurrentSession {
        match self.current.read() {
            Ok(c) => c.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    fn update(&self, change: impl FnOnce(&mut CurrentSession)) {
        match self.current.write() {
            Ok(mut c) => change(&mut c),
            Err(poisoned) => change(&mut poisoned.into_inner()),
        }
    }

    /// The parent session's id.
    pub(crate) fn session_id(&self) -> String {
        self.current().session_id
    }

    /// The parent session's transcript.
    pub(crate) fn transcript_path(&self) -> PathBuf {
        self.current().transcript_path
    }
}

impl crate::agent::session::Follows for SubagentRuntime {
    fn session_changed(&self, session_id: &str, transcript_path: &Path) {
        self.update(|c| {
            c.session_id = session_id.to_string();
            c.transcript_path = transcript_path.to_path_buf();
        });
    }

    fn model_changed(&self, model: &Arc<dyn Model>) {
        self.update(|c| c.model = Arc::clone(model));
    }

    fn permission_mode_changed(&self, mode: &str) {
        if let Ok(mut m) = self.permission_mode.lock() {
            *m = mode.to_string();
        }
    }
}

/// `REIN_SUBAGENT_TIMEOUT_MS` (a positive integer), else [`DEFAULT_SUBAGENT_TIMEOUT`].
pub fn subagent_timeout_from_env() -> Duration {
    std::env::var("REIN_SUBAGENT_TIMEOUT_MS")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|ms| *ms > 0)
        .map(Duration::from_millis)
        .unwrap_or(DEFAULT_SUBAGENT_TIMEOUT)
}

/// How a subagent's run ended, for the Agent tool.
pub(crate) struct SubagentReport {
    pub agent_id: String,
    pub agent_type: String,
    pub text: String,
    /// Tool names in first-use order, with how often each was called.
    pub tool_counts: Vec<(String, usize)>,
    /// The model the subagent ran on.
    pub resolved_model: String,
    pub duration: Duration,
    pub end: TurnEnd,
}

impl SubagentRuntime {
    /// The session's gate, for one more session (the parent, a subagent, an agent hook).
    pub(crate) fn shared_gate(&self) -> SharedGate {
        SharedGate {
            gate: Arc::clone(&self.gate),
            prompt_lock: Arc::clone(&self.prompt_lock),
            rules_lock: Arc::clone(&self.rules_lock),
            cwd: std::sync::Mutex::new(None),
        }
    }

    /// The names of every type, sorted as Claude Code lists them (case-insensitive).
    pub fn type_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.definitions.iter().map(|d| d.name.clone()).collect();
        names.sort_by_key(|n| n.to_lowercase());
        names
    }

    /// A subagent's system prompt: its type's prompt, the subagent notes, the session's
    /// environment and memory files (see [`crate::agent::instructions::subagent_system_prompt`]).
    /// `model` is the model the subagent runs on (its definition's, else the session's).
    pub(crate) fn system_prompt_for(&self, def: &AgentDefinition, model: &str) -> String {
        match &self.instructions {
            Some(i) => {
                let mut environment = i.environment.clone();
                environment.model = model.to_string();
                crate::agent::instructions::subagent_system_prompt(
                    &def.prompt,
                    &environment,
                    &i.memory,
                )
            }
            None => def.prompt.clone(),
        }
    }

    fn definition(&self, name: &str) -> Option<&AgentDefinition> {
        self.definitions.iter().find(|d| d.name == name)
    }

    fn tools_for(&self, def: &AgentDefinition) -> Vec<Arc<dyn Tool>> {
        match &def.tools {
            None => self.tools.clone(),
            Some(names) => self
                .tools
                .iter()
                .filter(|t| names.iter().any(|n| n == t.name()))
                .cloned()
                .collect(),
        }
    }

    /// Runs one subagent to its end (or its deadline). `Err` is the Agent call's error text.
    pub(crate) async fn run(
        &self,
        subagent_type: &str,
        task: &str,
        parent_ctx: &ToolContext,
    ) -> Result<SubagentReport, String> {
        let Some(def) = self.definition(subagent_type) else {
            return Err(format!(
                "Agent type '{subagent_type}' not found. Available agents: {}",
                self.type_names().join(", ")
            ));
        };
        let started = Instant::now();
        let agent_id = new_agent_id();
        let prompt_id = parent_ctx.prompt_id.lock().ok().and_then(|p| p.clone());
        let parent = self.current();
        let agent_transcript = parent
            .transcript_path
            .with_extension("")
            .join("subagents")
            .join(format!("agent-{agent_id}.jsonl"));
        let start = fire_observed::<SubagentStart>(
            self.hooks.as_ref(),
            SubagentStartInput {
                base: BaseInput {
                    session_id: parent.session_id.clone(),
                    transcript_path: parent.transcript_path.to_string_lossy().into_owned(),
                    cwd: parent_ctx.current_dir().to_string_lossy().into_owned(),
                    prompt_id: prompt_id.clone(),
                    permission_mode: None,
                    agent_id: Some(agent_id.clone()),
                    agent_type: Some(def.name.clone()),
                    effort: None,
                },
                hook_event_name: HookEvent::SubagentStart,
            },
            match &self.notices {
                Some(observer) => observer.as_ref() as &dyn Observer,
                None => &Quiet,
            },
            None,
        )
        .await;
        let mut ctx = parent_ctx.snapshot();
        // Why not the parent's `in_context`: the subagent has its own history, so it must read
        // a file itself before it may edit it.
        ctx.in_context = Arc::default();
        if let Ok(mut p) = ctx.prompt_id.lock() {
            *p = prompt_id.clone();
        }
        let tools = self.tools_for(def);
        let config = SessionConfig {
            session_id: parent.session_id.clone(),
            project_dir: self.project_dir.clone(),
            transcript_path: agent_transcript,
            permission_mode: self
                .permission_mode
                .lock()
                .map(|m| m.clone())
                .unwrap_or_else(|p| p.into_inner().clone()),
            max_turns: None,
            stop_block_cap: self.stop_block_cap,
            session_end_budget: Duration::ZERO,
        };
        let model = pick_model(&parent.model, self.models.as_ref(), def.model.as_deref());
        let resolved_model = model.name().to_string();
        let mut session = Session::new(
            config,
            Box::new(SharedHost::borrowed(&self.hooks)),
            model,
            tools,
            Box::new(self.shared_gate()),
            ctx,
            match &self.notices {
                Some(observer) => Box::new(NoticesOnly(Arc::clone(observer))),
                None => Box::new(Quiet),
            },
        )
        .into_subagent(
            SubagentIdentity {
                agent_id: agent_id.clone(),
                agent_type: def.name.clone(),
                parent_transcript: parent.transcript_path.clone(),
            },
            prompt_id,
        );
        session.set_instructions(
            Some(self.system_prompt_for(def, &resolved_model)),
            Vec::new(),
        );
        let deadline = def.timeout.unwrap_or(self.default_timeout);
        let outcome = match tokio::time::timeout(
            deadline,
            session.run_task(None, task, start.common.context),
        )
        .await
        {
            Ok(outcome) => outcome,
            Err(_) => {
                return Err(format!(
                    "Subagent {agent_id} ({}) did not finish within {} ms and was stopped; \
                         its work is lost",
                    def.name,
                    deadline.as_millis()
                ));
            }
        };
        Ok(SubagentReport {
            agent_id,
            agent_type: def.name.clone(),
            text: outcome.result.clone(),
            tool_counts: session.tool_use_summary(),
            resolved_model,
            duration: started.elapsed(),
            end: outcome.end,
        })
    }
}

/// A session's hook host, gate and tools with the Agent tool added, all sharing one
/// [`SubagentRuntime`].
pub(crate) struct Wired {
    pub hooks: Box<dyn HookHost>,
    pub gate: Box<dyn PermissionGate>,
    pub tools: Vec<Arc<dyn Tool>>,
    pub runtime: Arc<SubagentRuntime>,
}

/// What subagents get besides the session's parts.
pub(crate) struct SubagentSetup {
    /// Every type the session offers ([`discover`]).
    pub definitions: Vec<AgentDefinition>,
    /// Builds another model of the session's provider (a definition's `model`).
    pub models: Option<ModelFactory>,
    /// Where subagents' user-facing notices go.
    pub notices: Option<Arc<dyn Observer>>,
    /// The session's read-deny filter (Grep and Glob of an agent hook use it too).
    pub read_filter: Option<crate::tools::ReadFilter>,
    /// The environment and memory files for subagents' system prompts.
    pub instructions: Option<SubagentInstructions>,
}

/// Adds the Agent tool to a session's parts (placed first, as Claude Code lists it).
pub(crate) fn wire(
    hooks: Box<dyn HookHost>,
    gate: Box<dyn PermissionGate>,
    model: Arc<dyn Model>,
    tools: Vec<Arc<dyn Tool>>,
    config: &SessionConfig,
    setup: SubagentSetup,
) -> Wired {
    let SubagentSetup {
        definitions,
        models,
        notices,
        read_filter,
        instructions,
    } = setup;
    let hooks: Arc<dyn HookHost> = Arc::from(hooks);
    let gate: Arc<dyn PermissionGate> = Arc::from(gate);
    let runtime = Arc::new(SubagentRuntime {
        hooks: Arc::clone(&hooks),
        gate: Arc::clone(&gate),
        current: std::sync::RwLock::new(CurrentSession {
            model,
            session_id: config.session_id.clone(),
            transcript_path: config.transcript_path.clone(),
        }),
        models,
        // A subagent cannot ask the person (Claude Code 2.1.328 keeps these tools to the
        // main agent).
        tools: tools
            .iter()
            .filter(|t| !t.main_agent_only())
            .cloned()
            .collect(),
        definitions,
        project_dir: config.project_dir.clone(),
        permission_mode: std::sync::Mutex::new(config.permission_mode.clone()),
        stop_block_cap: config.stop_block_cap,
        default_timeout: subagent_timeout_from_env(),
        notices,
        read_filter,
        instructions,
        prompt_lock: Arc::new(tokio::sync::Mutex::new(())),
        rules_lock: Arc::new(std::sync::Mutex::new(())),
    });
    let mut all: Vec<Arc<dyn Tool>> = vec![Arc::new(AgentTool::new(Arc::clone(&runtime)))];
    all.extend(tools);
    Wired {
        hooks: Box::new(SharedHost {
            host: hooks,
            owner: true,
        }),
        gate: Box::new(runtime.shared_gate()),
        tools: all,
        runtime,
    }
}
