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
use crate::tools::{BoxFuture, Tool, ToolContext, ToolOutcome};

/// Builds the session's provider with another model id.
pub type ModelFactory = Arc<dyn Fn(&str) -> Option<Arc<dyn Model>> + Send + Sync>;

/// Claude Code's model aliases; rein has no mapping of them to a provider's ids, so a
/// definition or hook naming one uses the session's model.
const MODEL_ALIASES: [&str; 5] = ["sonnet", "opus", "haiku", "fable", "inherit"];

/// The model for a definition's or hook's `model`: the session's for none or an alias, else
/// the same provider with that id (when the provider can be rebuilt).
pub(crate) fn pick_model(
    session: &Arc<dyn Model>,
    factory: Option<&ModelFactory>,
    wanted: Option<&str>,
) -> Arc<dyn Model> {
    match (wanted, factory) {
        (Some(id), Some(factory)) if !id.is_empty() && !MODEL_ALIASES.contains(&id) => {
            factory(id).unwrap_or_else(|| Arc::clone(session))
        }
        _ => Arc::clone(session),
    }
}

/// The default deadline of one subagent.
pub const DEFAULT_SUBAGENT_TIMEOUT: Duration = Duration::from_secs(600);

/// Where a definition came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DefinitionSource {
    /// Built into rein.
    BuiltIn,
    /// A `.md` file.
    File(PathBuf),
    /// `--agents JSON`.
    Flag,
}

/// One subagent type.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentDefinition {
    /// `subagent_type` that selects it.
    pub name: String,
    /// When to use it (listed to the model).
    pub description: String,
    /// The subagent's instructions (the file's body).
    pub prompt: String,
    /// The tools it may use; `None` = every tool the session has (but Agent).
    pub tools: Option<Vec<String>>,
    /// A model name, if the definition names one.
    pub model: Option<String>,
    /// rein's deadline for this type.
    pub timeout: Option<Duration>,
    /// Where it came from.
    pub source: DefinitionSource,
}

/// The built-in types: `general-purpose` (every tool) and `Explore` (read-only tools).
pub fn builtin_definitions() -> Vec<AgentDefinition> {
    vec![
        AgentDefinition {
            name: "general-purpose".to_string(),
            description: "General agent for multi-step tasks: searching, reading and changing \
                          code, running commands."
                .to_string(),
            prompt: "You are a subagent. Do the task you are given with the tools you have, \
                     then answer with a concise report of what you found or changed."
                .to_string(),
            tools: None,
            model: None,
            timeout: None,
            source: DefinitionSource::BuiltIn,
        },
        AgentDefinition {
            name: "Explore".to_string(),
            description: "Read-only agent for finding things in the code base.".to_string(),
            prompt: "You are a read-only search subagent. Find what you are asked for and \
                     report where it is; change nothing."
                .to_string(),
            tools: Some(vec![
                "Read".to_string(),
                "Glob".to_string(),
                "Grep".to_string(),
            ]),
            model: None,
            timeout: None,
            source: DefinitionSource::BuiltIn,
        },
    ]
}

/// A definition that could not be read; it was skipped.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}:{line}: {message}; agent definition skipped", .path.display())]
pub struct DefinitionError {
    /// The file (or `--agents` for the flag).
    pub path: PathBuf,
    /// 1-based line.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

/// Parses one `.md` agent definition.
pub fn parse_definition(path: &Path, text: &str) -> Result<AgentDefinition, DefinitionError> {
    let err = |line: usize, message: String| DefinitionError {
        path: path.to_path_buf(),
        line,
        message,
    };
    let mut lines = text.lines().enumerate();
    match lines.next() {
        Some((_, first)) if first.trim_end() == "---" => {}
        _ => {
            return Err(err(
                1,
                "expected front matter starting with a `---` line".to_string(),
            ));
        }
    }
    let mut fields: Vec<(usize, String, FieldValue)> = Vec::new();
    let mut body_start = None;
    for (i, raw) in lines.by_ref() {
        let line_no = i + 1;
        let line = raw.trim_end();
        if line == "---" {
            body_start = Some(i + 1);
            break;
        }
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        if let Some(item) = line.trim_start().strip_prefix("- ") {
            if !line.starts_with(' ') && !line.starts_with('-') {
                return Err(err(line_no, format!("unexpected line `{line}`")));
            }
            match fields.last_mut() {
                Some((_, _, FieldValue::List(items))) => items.push(unquote(item.trim())),
                Some((_, key, FieldValue::Scalar(s))) if s.is_empty() => {
                    let key = key.clone();
                    let last = fields.len() - 1;
                    fields[last] = (line_no, key, FieldValue::List(vec![unquote(item.trim())]));
                }
                _ => {
                    return Err(err(
                        line_no,
                        "a list item `- …` outside a list field".to_string(),
                    ));
                }
            }
            continue;
        }
        let Some((key, value)) = line.split_once(':') else {
            return Err(err(
                line_no,
                format!("expected `key: value`, found `{line}`"),
            ));
        };
        let key = key.trim();
        if key.is_empty() || key.contains(' ') || line.starts_with(' ') {
            return Err(err(line_no, format!("invalid key in `{line}`")));
        }
        let value = value.trim();
        let value = if let Some(inner) = value.strip_prefix('[').and_then(|v| v.strip_suffix(']')) {
            FieldValue::List(
                inner
                    .split(',')
                    .map(|s| unquote(s.trim()))
                    .filter(|s| !s.is_empty())
                    .collect(),
            )
        } else {
            FieldValue::Scalar(unquote(value))
        };
        fields.push((line_no, key.to_string(), value));
    }
    let Some(body_start) = body_start else {
        return Err(err(
            text.lines().count().max(1),
            "front matter is not closed by a `---` line".to_string(),
        ));
    };
    let body: Vec<&str> = text.lines().skip(body_start).collect();
    let mut def = AgentDefinition {
        name: String::new(),
        description: String::new(),
        prompt: body.join("\n").trim().to_string(),
        tools: None,
        model: None,
        timeout: None,
        source: DefinitionSource::File(path.to_path_buf()),
    };
    for (line_no, key, value) in fields {
        match (key.as_str(), value) {
            ("name", FieldValue::Scalar(v)) => def.name = v,
            ("description", FieldValue::Scalar(v)) => def.description = v,
            ("tools", FieldValue::Scalar(v)) => def.tools = tool_list(&v),
            ("tools", FieldValue::List(v)) => def.tools = Some(v),
            ("model", FieldValue::Scalar(v)) => {
                def.model = (!v.is_empty() && v != "inherit").then_some(v)
            }
            ("timeout", FieldValue::Scalar(v)) => match v.parse::<f64>() {
                Ok(secs) if secs > 0.0 && secs.is_finite() => {
                    def.timeout = Some(Duration::from_secs_f64(secs))
                }
                _ => {
                    return Err(err(
                        line_no,
                        format!("`timeout` must be a positive number of seconds, found `{v}`"),
                    ));
                }
            },
            ("name" | "description" | "model" | "timeout", FieldValue::List(_)) => {
                return Err(err(line_no, format!("`{key}` must be a single value")));
            }
            // Claude Code's other keys (color, permissionMode, …) are accepted and unused.
            _ => {}
        }
    }
    if def.name.is_empty() {
        return Err(err(1, "front matter has no `name`".to_string()));
    }
    if def.description.is_empty() {
        return Err(err(1, "front matter has no `description`".to_string()));
    }
    Ok(def)
}

enum FieldValue {
    Scalar(String),
    List(Vec<String>),
}

fn unquote(text: &str) -> String {
    let t = text.trim();
    for q in ['"', '\''] {
        if let Some(inner) = t.strip_prefix(q).and_then(|s| s.strip_suffix(q)) {
            return inner.to_string();
        }
    }
    t.to_string()
}

/// `tools: Bash, Read` → `["Bash", "Read"]`; `*` or empty → every tool.
fn tool_list(text: &str) -> Option<Vec<String>> {
    let items: Vec<String> = text
        .split(',')
        .map(|s| unquote(s.trim()))
        .filter(|s| !s.is_empty())
        .collect();
    if items.is_empty() || items.iter().any(|s| s == "*") {
        None
    } else {
        Some(items)
    }
}

/// Reads `dir/*.md` in name order; bad files become errors, the rest load.
pub fn load_dir(dir: &Path) -> (Vec<AgentDefinition>, Vec<DefinitionError>) {
    let mut defs = Vec::new();
    let mut errors = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return (defs, errors);
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "md") && p.is_file())
        .collect();
    paths.sort();
    for path in paths {
        match std::fs::read_to_string(&path) {
            Ok(text) => match parse_definition(&path, &text) {
                Ok(def) => defs.push(def),
                Err(e) => errors.push(e),
            },
            Err(e) => errors.push(DefinitionError {
                path: path.clone(),
                line: 1,
                message: format!("cannot read: {e}"),
            }),
        }
    }
    (defs, errors)
}

/// `--agents JSON`: `{"name": {"description": …, "prompt": …, "tools"?: […], "model"?: …}}`.
pub fn parse_agents_flag(text: &str) -> Result<Vec<AgentDefinition>, DefinitionError> {
    let flag = PathBuf::from("--agents");
    let err = |line: usize, message: String| DefinitionError {
        path: flag.clone(),
        line,
        message,
    };
    let value: Value =
        serde_json::from_str(text).map_err(|e| err(e.line(), format!("invalid JSON: {e}")))?;
    let Value::Object(map) = value else {
        return Err(err(
            1,
            "expected a JSON object of agents by name".to_string(),
        ));
    };
    let mut defs = Vec::new();
    for (name, spec) in map {
        let Value::Object(spec) = spec else {
            return Err(err(1, format!("agent `{name}`: expected an object")));
        };
        let text_field = |key: &str| spec.get(key).and_then(Value::as_str).map(str::to_string);
        let Some(description) = text_field("description") else {
            return Err(err(
                1,
                format!("agent `{name}`: `description` (a string) is required"),
            ));
        };
        let Some(prompt) = text_field("prompt") else {
            return Err(err(
                1,
                format!("agent `{name}`: `prompt` (a string) is required"),
            ));
        };
        let tools = match spec.get("tools") {
            None | Some(Value::Null) => None,
            Some(Value::Array(items)) => Some(
                items
                    .iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect(),
            ),
            Some(Value::String(s)) => tool_list(s),
            Some(_) => {
                return Err(err(
                    1,
                    format!("agent `{name}`: `tools` must be a list of names"),
                ));
            }
        };
        defs.push(AgentDefinition {
            name,
            description,
            prompt,
            tools,
            model: text_field("model").filter(|m| m != "inherit"),
            timeout: spec
                .get("timeout")
                .and_then(Value::as_f64)
                .filter(|s| *s > 0.0 && s.is_finite())
                .map(Duration::from_secs_f64),
            source: DefinitionSource::Flag,
        });
    }
    Ok(defs)
}

/// Every definition a session offers: built-ins, then user files, project files, the flag
/// (a later one with the same name wins); and what could not be read.
pub fn discover(
    home: &Path,
    project_dir: &Path,
    agents_flag: Option<&str>,
) -> (Vec<AgentDefinition>, Vec<DefinitionError>) {
    let mut all = builtin_definitions();
    let mut errors = Vec::new();
    for dir in [
        home.join(".claude").join("agents"),
        project_dir.join(".claude").join("agents"),
    ] {
        let (defs, errs) = load_dir(&dir);
        all.extend(defs);
        errors.extend(errs);
    }
    if let Some(text) = agents_flag {
        match parse_agents_flag(text) {
            Ok(defs) => all.extend(defs),
            Err(e) => errors.push(e),
        }
    }
    let mut merged: Vec<AgentDefinition> = Vec::new();
    for def in all {
        merged.retain(|d| d.name != def.name);
        merged.push(def);
    }
    (merged, errors)
}

/// The agent id Claude Code uses: `a` and 16 hex digits.
pub fn new_agent_id() -> String {
    let uuid = crate::id::uuid_v4().replace('-', "");
    format!("a{}", &uuid[..16])
}

/// Shares one permission gate between a session and its subagents.
///
/// Every method is forwarded (a default left in place would silently skip a check). Each
/// session has its own working directory, so relative rules resolve where that session's shell
/// is: the cwd is set and the rules evaluated as one step under a lock shared by all the
/// session's gates. Interactive prompts are taken one at a time: parallel subagents may ask at
/// once, and a person answers one question after the other.
pub(crate) struct SharedGate {
    gate: Arc<dyn PermissionGate>,
    prompt_lock: Arc<tokio::sync::Mutex<()>>,
    rules_lock: Arc<std::sync::Mutex<()>>,
    cwd: std::sync::Mutex<Option<PathBuf>>,
}

impl SharedGate {
    /// Runs `f` on the gate with this session's working directory in place.
    fn at_cwd<T>(&self, f: impl FnOnce(&dyn PermissionGate) -> T) -> T {
        let _one_at_a_time = self
            .rules_lock
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let cwd = self
            .cwd
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone();
        if let Some(cwd) = cwd {
            self.gate.follow_cwd(&cwd);
        }
        f(self.gate.as_ref())
    }
}

impl PermissionGate for SharedGate {
    fn evaluate(&self, tool: &str, input: &Value, hook: Option<&HookAnswer>) -> GateVerdict {
        self.at_cwd(|g| g.evaluate(tool, input, hook))
    }
    fn check_deny(&self, tool: &str, input: &Value) -> Option<String> {
        self.at_cwd(|g| g.check_deny(tool, input))
    }
    fn suggestions(&self, tool: &str, input: &Value) -> Vec<Value> {
        self.at_cwd(|g| g.suggestions(tool, input))
    }
    fn check_ask(&self, tool: &str, input: &Value) -> Option<String> {
        self.at_cwd(|g| g.check_ask(tool, input))
    }
    fn apply_hook_updates(&self, updates: &[Value]) -> Vec<String> {
        self.at_cwd(|g| g.apply_hook_updates(updates))
    }
    fn prompt<'a>(
        &'a self,
        tool: &'a str,
        input: &'a Value,
        reason: &'a str,
    ) -> BoxFuture<'a, PromptAnswer> {
        Box::pin(async move {
            let _one_at_a_time = self.prompt_lock.lock().await;
            self.gate.prompt(tool, input, reason).await
        })
    }
    fn follow_cwd(&self, cwd: &std::path::Path) {
        *self
            .cwd
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(cwd.to_path_buf());
    }
    fn can_prompt(&self) -> bool {
        self.gate.can_prompt()
    }
}

/// Shares one hook host between a session and its subagents. Only the session's own handle
/// (`owner`) takes the context of finished background hooks and shuts the host down at the
/// session's end; a subagent's handle leaves both to the parent (a subagent ending must not
/// end the session's background hooks, nor swallow context meant for the parent).
pub(crate) struct SharedHost {
    host: Arc<dyn HookHost>,
    owner: bool,
}

impl SharedHost {
    /// A subagent's (or agent hook's) handle on the session's host.
    pub(crate) fn borrowed(host: &Arc<dyn HookHost>) -> SharedHost {
        SharedHost {
            host: Arc::clone(host),
            owner: false,
        }
    }
}

impl HookHost for SharedHost {
    fn fire_erased<'a>(
        &'a self,
        firing: &'a dyn crate::hooks::events::Firing,
    ) -> BoxFuture<'a, Box<dyn std::any::Any + Send>> {
        self.host.fire_erased(firing)
    }
    fn env_files(&self) -> Vec<PathBuf> {
        self.host.env_files()
    }
    fn take_async_context(&self) -> Vec<String> {
        if self.owner {
            self.host.take_async_context()
        } else {
            Vec::new()
        }
    }
    fn shutdown(&self) -> BoxFuture<'_, ()> {
        if self.owner {
            self.host.shutdown()
        } else {
            Box::pin(async {})
        }
    }
    fn switch_session(&self, session_id: &str, output_dir: Option<PathBuf>) {
        if self.owner {
            self.host.switch_session(session_id, output_dir);
        }
    }
}

/// An observer that drops everything (a subagent's progress goes to its own transcript only).
pub(crate) struct Quiet;

impl Observer for Quiet {
    fn observe(&self, _progress: Progress<'_>) {}
}

/// Passes every progress event on to a shared observer (the session's, also reached by its
/// subagents).
pub(crate) struct SharedObserver(pub Arc<dyn Observer>);

impl Observer for SharedObserver {
    fn observe(&self, progress: Progress<'_>) {
        self.0.observe(progress);
    }
}

/// A subagent's view of the parent's observer: only user-facing notices (a hook's error, the
/// SubagentStop cap) reach the user; the subagent's conversation stays in its transcript.
struct NoticesOnly(Arc<dyn Observer>);

impl Observer for NoticesOnly {
    fn observe(&self, progress: Progress<'_>) {
        if let Progress::Notice { .. } = progress {
            self.0.observe(progress);
        }
    }
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
    pub(crate) permission_mode: String,
    pub(crate) stop_block_cap: u32,
    pub(crate) default_timeout: Duration,
    /// Where the subagent's notices go (the parent's observer).
    pub(crate) notices: Option<Arc<dyn Observer>>,
    /// The session's read-deny filter, for sessions that have no parent context to copy it
    /// from (an agent hook's).
    pub(crate) read_filter: Option<crate::tools::ReadFilter>,
    /// Serialises interactive permission prompts of the session and its subagents.
    pub(crate) prompt_lock: Arc<tokio::sync::Mutex<()>>,
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
            permission_mode: self.permission_mode.clone(),
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
        let deadline = def.timeout.unwrap_or(self.default_timeout);
        let outcome = match tokio::time::timeout(
            deadline,
            session.run_task(Some(&def.prompt), task, start.common.context),
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

/// The Agent tool.
pub struct AgentTool {
    runtime: Arc<SubagentRuntime>,
    description: String,
}

impl AgentTool {
    /// The tool over a runtime; its description lists the types.
    pub fn new(runtime: Arc<SubagentRuntime>) -> AgentTool {
        let mut description = String::from(
            "Start a subagent for a self-contained task. It works with its own conversation \
             and tools and answers with one report, which you receive as this tool's result; \
             the user does not see it. Give it everything it needs in `prompt`. Several Agent \
             calls in one message run at the same time.\n\nAgent types (`subagent_type`, \
             default general-purpose):",
        );
        for def in &runtime.definitions {
            let tools = match &def.tools {
                None => "all tools".to_string(),
                Some(t) => t.join(", "),
            };
            description.push_str(&format!(
                "\n- {}: {} (tools: {tools})",
                def.name, def.description
            ));
        }
        AgentTool {
            runtime,
            description,
        }
    }
}

fn tool_stats(counts: &[(String, usize)]) -> Value {
    let count = |names: &[&str]| -> usize {
        counts
            .iter()
            .filter(|(n, _)| names.contains(&n.as_str()))
            .map(|(_, c)| c)
            .sum()
    };
    let known = ["Read", "Grep", "Glob", "Bash", "Edit", "Write"];
    let other: usize = counts
        .iter()
        .filter(|(n, _)| !known.contains(&n.as_str()))
        .map(|(_, c)| c)
        .sum();
    json!({
        "readCount": count(&["Read"]),
        "searchCount": count(&["Grep", "Glob"]),
        "bashCount": count(&["Bash"]),
        "editFileCount": count(&["Edit", "Write"]),
        "linesAdded": 0,
        "linesRemoved": 0,
        "otherToolCount": other,
    })
}

impl Tool for AgentTool {
    fn name(&self) -> &str {
        "Agent"
    }

    fn aliases(&self) -> &[&str] {
        &["Task"]
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "description": {"type": "string", "description": "A short (3-5 word) label for the task"},
                "prompt": {"type": "string", "description": "The whole task for the subagent"},
                "subagent_type": {"type": "string", "description": "Which agent type runs it"},
                "model": {"type": "string", "description": "Ignored by rein: the subagent uses the session's model"},
                "run_in_background": {"type": "boolean", "description": "Ignored by rein: subagents always run in the foreground"}
            },
            "required": ["description", "prompt"],
            "additionalProperties": false
        })
    }

    fn prepare_touches_files(&self) -> bool {
        false
    }

    fn prepare(&self, input: Value, _ctx: &ToolContext) -> Result<Value, String> {
        let Value::Object(map) = &input else {
            return Err("InputValidationError: Agent expects an object".to_string());
        };
        for key in ["description", "prompt"] {
            match map.get(key) {
                Some(Value::String(_)) => {}
                Some(_) => {
                    return Err(format!(
                        "InputValidationError: Agent failed due to the following issue:\nThe parameter `{key}` type is expected as `string` but provided as another type"
                    ));
                }
                None => {
                    return Err(format!(
                        "InputValidationError: Agent failed due to the following issue:\nThe required parameter `{key}` is missing"
                    ));
                }
            }
        }
        if let Some(v) = map.get("subagent_type")
            && !v.is_string()
        {
            return Err("InputValidationError: Agent failed due to the following issue:\nThe parameter `subagent_type` type is expected as `string` but provided as another type".to_string());
        }
        Ok(input)
    }

    fn execute<'a>(&'a self, input: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutcome> {
        Box::pin(async move {
            let text = |k: &str| {
                input
                    .get(k)
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string()
            };
            let prompt = text("prompt");
            let subagent_type = match input.get("subagent_type").and_then(Value::as_str) {
                Some(t) if !t.is_empty() => t.to_string(),
                _ => "general-purpose".to_string(),
            };
            let report = match self.runtime.run(&subagent_type, &prompt, ctx).await {
                Ok(r) => r,
                Err(error) => {
                    return ToolOutcome::Failure {
                        error,
                        is_interrupt: false,
                    };
                }
            };
            if let TurnEnd::ModelFailed(e) = &report.end {
                return ToolOutcome::Failure {
                    error: format!(
                        "Subagent {} failed: model request failed: {e}",
                        report.agent_id
                    ),
                    is_interrupt: false,
                };
            }
            let tools_used: Vec<&str> =
                report.tool_counts.iter().map(|(n, _)| n.as_str()).collect();
            let tool_uses: usize = report.tool_counts.iter().map(|(_, c)| c).sum();
            let mut response = Map::new();
            response.insert("status".into(), json!("completed"));
            response.insert("prompt".into(), json!(prompt));
            response.insert("agentId".into(), json!(report.agent_id));
            response.insert("agentType".into(), json!(report.agent_type));
            response.insert("toolsUsed".into(), json!(tools_used));
            // Claude Code's shape: a block naming the tools used (when any), then the report.
            let tools_line = (!tools_used.is_empty()).then(|| {
                format!(
                    "<tools-used-before-summary>{}</tools-used-before-summary>\n",
                    tools_used.join(", ")
                )
            });
            let mut blocks = Vec::new();
            if let Some(line) = &tools_line {
                blocks.push(json!({"type": "text", "text": line}));
            }
            blocks.push(json!({"type": "text", "text": report.text}));
            response.insert("content".into(), Value::Array(blocks));
            response.insert("resolvedModel".into(), json!(report.resolved_model));
            response.insert(
                "totalDurationMs".into(),
                json!(report.duration.as_millis() as u64),
            );
            response.insert("totalToolUseCount".into(), json!(tool_uses));
            response.insert("toolStats".into(), tool_stats(&report.tool_counts));
            response.insert("canContinueAgent".into(), json!(false));
            let content = format!(
                "{}{}\nagentId: {}\n<usage>tool_uses: {}\nduration_ms: {}</usage>",
                tools_line.as_deref().unwrap_or(""),
                report.text,
                report.agent_id,
                tool_uses,
                report.duration.as_millis()
            );
            ToolOutcome::Success {
                response: Value::Object(response),
                content,
            }
        })
    }

    fn render(&self, response: &Value) -> Option<String> {
        let blocks = response.get("content")?.as_array()?;
        let texts: Vec<&str> = blocks
            .iter()
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect();
        Some(texts.concat())
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
        tools: tools.clone(),
        definitions,
        project_dir: config.project_dir.clone(),
        permission_mode: config.permission_mode.clone(),
        stop_block_cap: config.stop_block_cap,
        default_timeout: subagent_timeout_from_env(),
        notices,
        read_filter,
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
