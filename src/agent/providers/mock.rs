//! The offline, deterministic mock model (the default provider).
//!
//! Without a script it understands simple English and Chinese requests in the latest user
//! prompt ("read file x" / "读文件 x", "run command ls" / "执行命令 ls", "write hi to a.txt" /
//! "写入 hi 到 a.txt", "edit a.txt replace X with Y", "list files *.rs", "grep PATTERN"). A prompt
//! with several clauses (separated by `;`, `；`, `, then`, ` then `, `，然后`, `然后`) plays them one
//! tool call per turn, in order; after the last result it summarises what happened, saying
//! plainly when a call was refused. With `--mock-script FILE` it plays scripted turns instead
//! (see [`MockScript`]).
//!
//! Which user message is "the prompt": the last user message without tool results that has
//! text outside `<system-reminder>` wrappers (hook context is sent wrapped that way). The step
//! within the prompt is the number of assistant messages after it, so the mock keeps no state
//! between calls and replays identically from a transcript.

use std::path::{Path, PathBuf};
use std::sync::LazyLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use regex::Regex;
use serde_json::{Map, Value, json};

use crate::model::{
    ContentBlock, Message, Model, ModelError, ModelErrorKind, ModelResponse, Role, StopReason,
    ToolSpec, Usage,
};
use crate::tools::BoxFuture;

/// The mock model.
#[derive(Debug, Default)]
pub struct MockModel {
    script: Option<MockScript>,
    /// Calls answered so far; indexes the script.
    calls: AtomicUsize,
}

impl MockModel {
    /// The rule-based mock.
    pub fn new() -> MockModel {
        MockModel::default()
    }

    /// A mock that plays `script`.
    pub fn with_script(script: MockScript) -> MockModel {
        MockModel {
            script: Some(script),
            calls: AtomicUsize::new(0),
        }
    }

    /// Loads and validates a script file.
    pub fn from_script_file(path: &Path) -> Result<MockModel, MockScriptError> {
        Ok(MockModel::with_script(MockScript::load(path)?))
    }

    fn respond(
        &self,
        messages: &[Message],
        tools: &[ToolSpec],
    ) -> Result<ModelResponse, ModelError> {
        let turn = messages
            .iter()
            .filter(|m| m.role == Role::Assistant)
            .count()
            + 1;
        let first = first_user_text(messages);
        // A closure so the early answers (hooks, agents) get their usage too.
        let answer = || match &self.script {
            Some(script) => {
                if tools.is_empty()
                    && let Some(hook) = script.hooks.iter().find(|h| first.contains(&h.matches))
                {
                    return script.play_turn(&hook.answer, turn);
                }
                if let Some(agent) = script.agents.iter().find(|a| first.contains(&a.matches)) {
                    // Stateless: the step is the number of assistant messages so far, so
                    // subagents running at the same time each get their own turns.
                    return match agent.turns.get(turn - 1) {
                        Some(step) => script.play_turn(step, turn),
                        None => script.play(usize::MAX, turn),
                    };
                }
                if first.contains(HOOK_EVALUATOR_MARK) {
                    return Ok(response(
                        turn,
                        vec![ContentBlock::Text {
                            text: MOCK_HOOK_VERDICT.to_string(),
                        }],
                        StopReason::EndTurn,
                    ));
                }
                let index = self.calls.fetch_add(1, Ordering::Relaxed);
                script.play(index, turn)
            }
            None if first.contains(HOOK_EVALUATOR_MARK) => Ok(response(
                turn,
                vec![ContentBlock::Text {
                    text: MOCK_HOOK_VERDICT.to_string(),
                }],
                StopReason::EndTurn,
            )),
            None => Ok(respond_to_prompt(messages, tools, turn)),
        };
        let mut response = answer()?;
        response.usage = Some(estimated_usage(messages, &response));
        Ok(response)
    }

    /// Whether the step that would answer these messages is a scripted `{"hang": true}`.
    fn hangs(&self, messages: &[Message], tools: &[ToolSpec]) -> bool {
        let Some(script) = &self.script else {
            return false;
        };
        let first = first_user_text(messages);
        let turn = messages
            .iter()
            .filter(|m| m.role == Role::Assistant)
            .count();
        if tools.is_empty()
            && let Some(hook) = script.hooks.iter().find(|h| first.contains(&h.matches))
        {
            return hook.answer == ScriptTurn::Hang;
        }
        if let Some(agent) = script.agents.iter().find(|a| first.contains(&a.matches)) {
            return agent.turns.get(turn) == Some(&ScriptTurn::Hang);
        }
        false
    }
}

impl Model for MockModel {
    fn name(&self) -> &str {
        "mock"
    }

    fn complete<'a>(
        &'a self,
        messages: &'a [Message],
        tools: &'a [ToolSpec],
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        Box::pin(async move {
            if self.hangs(messages, tools) {
                // A scripted hang: never answers (the caller's deadline ends it).
                std::future::pending::<()>().await;
            }
            self.respond(messages, tools)
        })
    }
}

/// Text every hook-evaluator request (prompt and agent hooks) starts with; the mock answers
/// such a request with [`MOCK_HOOK_VERDICT`] unless its script says otherwise.
pub const HOOK_EVALUATOR_MARK: &str = "You judge one hook event for rein.";

/// The rule-based mock's verdict for a prompt or agent hook.
pub const MOCK_HOOK_VERDICT: &str = r#"{"ok": true, "reason": "mock model: no objection"}"#;

/// The text of the first user message (its text blocks joined), where a subagent's task and a
/// hook evaluator's question are.
fn first_user_text(messages: &[Message]) -> String {
    let Some(first) = messages.iter().find(|m| m.role == Role::User) else {
        return String::new();
    };
    first
        .content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text { text } => Some(text.as_str()),
            ContentBlock::ToolUse { .. } | ContentBlock::ToolResult { .. } => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The mock's token counts: a quarter of the characters of the conversation and of the reply
/// (an estimate, as there is no real tokenizer behind the mock), so `/cost`, the json outputs
/// and auto-compaction work offline too.
fn estimated_usage(messages: &[Message], response: &ModelResponse) -> Usage {
    let chars = |blocks: &[ContentBlock]| -> u64 {
        blocks
            .iter()
            .map(|b| match b {
                ContentBlock::Text { text } => text.len(),
                ContentBlock::ToolUse { name, input, .. } => name.len() + input.to_string().len(),
                ContentBlock::ToolResult { content, .. } => content.len(),
            } as u64)
            .sum()
    };
    let prompt: u64 = messages.iter().map(|m| chars(&m.content)).sum();
    Usage {
        input_tokens: prompt.div_ceil(4),
        output_tokens: chars(&response.content).div_ceil(4),
        ..Usage::default()
    }
}

fn tool_id(turn: usize, index: usize) -> String {
    format!("toolu_mock_{turn}_{index}")
}

fn response(turn: usize, content: Vec<ContentBlock>, stop_reason: StopReason) -> ModelResponse {
    ModelResponse {
        id: Some(format!("msg_mock_{turn}")),
        model: "mock".to_string(),
        content,
        stop_reason,
        usage: None,
    }
}

// ---------------------------------------------------------------------------------------------
// Scripts

/// A scripted conversation: element `i` of the JSON array answers the `i`-th call to
/// `complete`. Elements:
/// - `{"text": "…"}` — a text reply that ends the turn;
/// - `{"tool_use": [{"name": "Bash", "input": {…}, "id"?: "…"}, …]}` — one assistant message
///   with these calls; `"input_raw": "{not json"` instead of `input` yields malformed arguments
///   (`Value::String`), as a real provider would pass them on;
/// - `{"error": "rate_limit", "message"?: "…"}` — the call fails with that `ModelError` kind
///   (`authentication_failed`, `rate_limit`, `overloaded`, `invalid_request`, `model_not_found`,
///   `server_error`, `max_output_tokens`, `unknown`).
///
/// - `{"hang": true}` — the call never answers (for deadlines: a subagent's timeout).
///
/// When the script runs out, the mock ends the turn with a short text.
///
/// The script may instead be an object, to play subagents and hook evaluators too:
///
/// ```json
/// {"turns": [ …the main conversation, as above… ],
///  "agents": [{"match": "TEXT", "turns": [ … ]}],
///  "hooks":  [{"match": "TEXT", "answer": {"text": "{\"ok\": false, \"reason\": \"…\"}"}}]}
/// ```
///
/// A request whose first user message contains an `agents` entry's `match` (a subagent's
/// task, an agent hook's question) is answered from that entry's `turns`, step `k` for the
/// `k`-th assistant message of that conversation (so parallel subagents never share a
/// counter). A request offering no tools whose first user message contains a `hooks` entry's
/// `match` (a prompt hook's question) gets its `answer` (any turn: `text`, `error`, `hang`).
/// A hook question nothing matches gets `{"ok": true, …}`. `turns` answer every other request
/// in call order.
#[derive(Debug, Clone, PartialEq)]
pub struct MockScript {
    /// Where the script was read from (named in messages).
    pub path: PathBuf,
    /// The turns, in the order they are played.
    pub turns: Vec<ScriptTurn>,
    /// Scripted subagents (and agent hooks), by a text in their task.
    pub agents: Vec<ScriptedAgent>,
    /// Scripted prompt-hook answers, by a text in their question.
    pub hooks: Vec<ScriptedHook>,
}

/// A subagent's (or agent hook's) own turns.
#[derive(Debug, Clone, PartialEq)]
pub struct ScriptedAgent {
    /// A text its first user message contains.
    pub matches: String,
    /// Its turns, by step.
    pub turns: Vec<ScriptTurn>,
}

/// A prompt hook's scripted answer.
#[derive(Debug, Clone, PartialEq)]
pub struct ScriptedHook {
    /// A text its question contains.
    pub matches: String,
    /// The answer.
    pub answer: ScriptTurn,
}

/// One scripted model turn.
#[derive(Debug, Clone, PartialEq)]
pub enum ScriptTurn {
    /// A text reply ending the turn.
    Text(String),
    /// One assistant message with these calls.
    ToolUse(Vec<ScriptCall>),
    /// A failed call.
    Error {
        kind: ModelErrorKind,
        message: String,
    },
    /// Never answers.
    Hang,
}

/// One scripted tool call.
#[derive(Debug, Clone, PartialEq)]
pub struct ScriptCall {
    /// The tool_use id; `None` means `toolu_mock_<turn>_<index>`.
    pub id: Option<String>,
    /// The tool name, passed through even if no such tool exists.
    pub name: String,
    /// The arguments (`Value::String` for scripted malformed arguments).
    pub input: Value,
}

/// A script that cannot be used; `Display` names the file and the place.
#[derive(Debug, thiserror::Error)]
pub enum MockScriptError {
    #[error("cannot read mock script {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("mock script {path}:{line}:{column}: invalid JSON: {message}")]
    InvalidJson {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("mock script {path}: expected a JSON array of turns, found {found}")]
    NotArray { path: PathBuf, found: &'static str },
    #[error("mock script {path}: {message}")]
    TopLevel { path: PathBuf, message: String },
    #[error("mock script {path}: element {index}: {message}")]
    Element {
        path: PathBuf,
        index: usize,
        message: String,
    },
}

const ERROR_KINDS: [ModelErrorKind; 8] = [
    ModelErrorKind::AuthenticationFailed,
    ModelErrorKind::RateLimit,
    ModelErrorKind::Overloaded,
    ModelErrorKind::InvalidRequest,
    ModelErrorKind::ModelNotFound,
    ModelErrorKind::ServerError,
    ModelErrorKind::MaxOutputTokens,
    ModelErrorKind::Unknown,
];

impl MockScript {
    /// Reads and validates `path`.
    pub fn load(path: &Path) -> Result<MockScript, MockScriptError> {
        let text = std::fs::read_to_string(path).map_err(|source| MockScriptError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        MockScript::parse(path, &text)
    }

    /// Validates script text; `path` is only used in messages.
    pub fn parse(path: &Path, text: &str) -> Result<MockScript, MockScriptError> {
        let value: Value =
            serde_json::from_str(text).map_err(|err| MockScriptError::InvalidJson {
                path: path.to_path_buf(),
                line: err.line(),
                column: err.column(),
                // serde_json appends "at line L column C", which the message already leads with.
                message: {
                    let text = err.to_string();
                    match text.rsplit_once(" at line ") {
                        Some((head, _)) => head.to_string(),
                        None => text,
                    }
                },
            })?;
        let element_err = |index: usize, message: String| MockScriptError::Element {
            path: path.to_path_buf(),
            index,
            message,
        };
        let parse_turns = |elements: &[Value], prefix: &str| {
            elements
                .iter()
                .enumerate()
                .map(|(index, element)| {
                    parse_turn(element)
                        .map_err(|message| element_err(index, format!("{prefix}{message}")))
                })
                .collect::<Result<Vec<_>, _>>()
        };
        let (elements, agents, hooks) = match &value {
            Value::Array(elements) => (elements.clone(), Vec::new(), Vec::new()),
            Value::Object(map) => {
                if let Some(extra) = map
                    .keys()
                    .find(|k| !["turns", "agents", "hooks"].contains(&k.as_str()))
                {
                    return Err(MockScriptError::TopLevel {
                        path: path.to_path_buf(),
                        message: format!(
                            "unknown key \"{extra}\" (an object script has \"turns\", \"agents\" and \"hooks\")"
                        ),
                    });
                }
                let list = |key: &str| match map.get(key) {
                    None => Ok(Vec::new()),
                    Some(Value::Array(items)) => Ok(items.clone()),
                    Some(other) => Err(element_err(
                        0,
                        format!(
                            "\"{key}\" must be an array, found {}",
                            crate::json_kind::with_article(other)
                        ),
                    )),
                };
                let turns = list("turns")?;
                let mut agents = Vec::new();
                for (i, a) in list("agents")?.iter().enumerate() {
                    let matches = a.get("match").and_then(Value::as_str).ok_or_else(|| {
                        element_err(i, "agents entry needs a \"match\" string".to_string())
                    })?;
                    let Some(Value::Array(turns)) = a.get("turns") else {
                        return Err(element_err(
                            i,
                            "agents entry needs a \"turns\" array".to_string(),
                        ));
                    };
                    agents.push(ScriptedAgent {
                        matches: matches.to_string(),
                        turns: parse_turns(turns, &format!("agents[{i}].turns: "))?,
                    });
                }
                let mut hooks = Vec::new();
                for (i, h) in list("hooks")?.iter().enumerate() {
                    let matches = h.get("match").and_then(Value::as_str).ok_or_else(|| {
                        element_err(i, "hooks entry needs a \"match\" string".to_string())
                    })?;
                    let answer = h.get("answer").ok_or_else(|| {
                        element_err(i, "hooks entry needs an \"answer\" turn".to_string())
                    })?;
                    hooks.push(ScriptedHook {
                        matches: matches.to_string(),
                        answer: parse_turn(answer)
                            .map_err(|m| element_err(i, format!("hooks[{i}].answer: {m}")))?,
                    });
                }
                (turns, agents, hooks)
            }
            other => {
                return Err(MockScriptError::NotArray {
                    path: path.to_path_buf(),
                    found: crate::json_kind::with_article(other),
                });
            }
        };
        let turns = parse_turns(&elements, "")?;
        Ok(MockScript {
            path: path.to_path_buf(),
            turns,
            agents,
            hooks,
        })
    }

    fn play(&self, index: usize, turn: usize) -> Result<ModelResponse, ModelError> {
        match self.turns.get(index) {
            Some(step) => self.play_turn(step, turn),
            None => self.play_turn(&ScriptTurn::Hang, turn),
        }
    }

    fn play_turn(&self, step: &ScriptTurn, turn: usize) -> Result<ModelResponse, ModelError> {
        let step = match step {
            // A hang is handled before `respond`; reaching here means the script ran out.
            ScriptTurn::Hang => None,
            other => Some(other),
        };
        let Some(step) = step else {
            let text = format!(
                "(mock script {} has no more turns; ending the turn)",
                self.path.display()
            );
            return Ok(response(
                turn,
                vec![ContentBlock::Text { text }],
                StopReason::EndTurn,
            ));
        };
        match step {
            ScriptTurn::Text(text) => Ok(response(
                turn,
                vec![ContentBlock::Text { text: text.clone() }],
                StopReason::EndTurn,
            )),
            ScriptTurn::ToolUse(calls) => {
                let content = calls
                    .iter()
                    .enumerate()
                    .map(|(i, call)| ContentBlock::ToolUse {
                        id: call.id.clone().unwrap_or_else(|| tool_id(turn, i)),
                        name: call.name.clone(),
                        input: call.input.clone(),
                    })
                    .collect();
                Ok(response(turn, content, StopReason::ToolUse))
            }
            ScriptTurn::Error { kind, message } => Err(ModelError {
                provider: "mock".to_string(),
                kind: *kind,
                message: message.clone(),
            }),
            ScriptTurn::Hang => Ok(response(turn, Vec::new(), StopReason::EndTurn)),
        }
    }
}

fn parse_turn(element: &Value) -> Result<ScriptTurn, String> {
    let Value::Object(map) = element else {
        return Err(format!(
            "expected an object with \"text\", \"tool_use\" or \"error\", found {}",
            crate::json_kind::with_article(element)
        ));
    };
    if map.get("hang") == Some(&Value::Bool(true)) && map.len() == 1 {
        return Ok(ScriptTurn::Hang);
    }
    let present: Vec<&str> = ["text", "tool_use", "error"]
        .into_iter()
        .filter(|k| map.contains_key(*k))
        .collect();
    let allowed: &[&str] = match present.as_slice() {
        ["text"] => &["text"],
        ["tool_use"] => &["tool_use"],
        ["error"] => &["error", "message"],
        [] => return Err("expected one of \"text\", \"tool_use\" or \"error\"".to_string()),
        _ => {
            return Err(format!(
                "has {} — use exactly one of \"text\", \"tool_use\" or \"error\"",
                present.join(" and ")
            ));
        }
    };
    if let Some(extra) = map.keys().find(|k| !allowed.contains(&k.as_str())) {
        return Err(format!("unknown key \"{extra}\""));
    }
    if let Some(text) = map.get("text") {
        return match text {
            Value::String(text) => Ok(ScriptTurn::Text(text.clone())),
            other => Err(format!(
                "\"text\" must be a string, found {}",
                crate::json_kind::with_article(other)
            )),
        };
    }
    if let Some(error) = map.get("error") {
        let Value::String(name) = error else {
            return Err(format!(
                "\"error\" must be a string, found {}",
                crate::json_kind::with_article(error)
            ));
        };
        let Some(kind) = ERROR_KINDS.into_iter().find(|k| k.as_str() == name) else {
            let names: Vec<&str> = ERROR_KINDS.iter().map(|k| k.as_str()).collect();
            return Err(format!(
                "unknown error kind \"{name}\"; expected one of {}",
                names.join(", ")
            ));
        };
        let message = match map.get("message") {
            None => format!("scripted {name} error"),
            Some(Value::String(message)) => message.clone(),
            Some(other) => {
                return Err(format!(
                    "\"message\" must be a string, found {}",
                    crate::json_kind::with_article(other)
                ));
            }
        };
        return Ok(ScriptTurn::Error { kind, message });
    }
    let calls = match map.get("tool_use") {
        Some(Value::Array(calls)) if !calls.is_empty() => calls,
        Some(Value::Array(_)) => return Err("\"tool_use\" is an empty array".to_string()),
        Some(other) => {
            return Err(format!(
                "\"tool_use\" must be an array of calls, found {}",
                crate::json_kind::with_article(other)
            ));
        }
        None => return Err("expected \"tool_use\"".to_string()),
    };
    calls
        .iter()
        .enumerate()
        .map(|(i, call)| parse_call(call).map_err(|m| format!("tool_use[{i}]: {m}")))
        .collect::<Result<Vec<_>, _>>()
        .map(ScriptTurn::ToolUse)
}

fn parse_call(call: &Value) -> Result<ScriptCall, String> {
    let Value::Object(map) = call else {
        return Err(format!(
            "expected an object, found {}",
            crate::json_kind::with_article(call)
        ));
    };
    if let Some(extra) = map
        .keys()
        .find(|k| !["name", "input", "input_raw", "id"].contains(&k.as_str()))
    {
        return Err(format!("unknown key \"{extra}\""));
    }
    let name = match map.get("name") {
        Some(Value::String(name)) if !name.is_empty() => name.clone(),
        Some(other) => {
            return Err(format!(
                "\"name\" must be a non-empty string, found {}",
                crate::json_kind::with_article(other)
            ));
        }
        None => return Err("missing \"name\"".to_string()),
    };
    let id = match map.get("id") {
        None => None,
        Some(Value::String(id)) => Some(id.clone()),
        Some(other) => {
            return Err(format!(
                "\"id\" must be a string, found {}",
                crate::json_kind::with_article(other)
            ));
        }
    };
    let input = match (map.get("input"), map.get("input_raw")) {
        (Some(_), Some(_)) => return Err("has both \"input\" and \"input_raw\"".to_string()),
        (Some(input), None) => input.clone(),
        (None, Some(Value::String(raw))) => Value::String(raw.clone()),
        (None, Some(other)) => {
            return Err(format!(
                "\"input_raw\" must be a string, found {}",
                crate::json_kind::with_article(other)
            ));
        }
        (None, None) => Value::Object(Map::new()),
    };
    Ok(ScriptCall { id, name, input })
}

// ---------------------------------------------------------------------------------------------
// Understanding prompts

fn regex(pattern: &str) -> Regex {
    // The patterns are constants in this file; a typo is caught by the unit tests.
    Regex::new(pattern).unwrap_or_else(|err| panic!("invalid built-in regex {pattern}: {err}"))
}

static SEPARATOR: LazyLock<Regex> =
    LazyLock::new(|| regex(r"(?i)\s*(?:[;；]|,\s*then\s+|\s+then\s+|，\s*然后|然后)\s*"));
static FILLER: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?i)^(?:(?:please|and|then|first|next|finally|also|now)\s+|请|先|再|然后|最后|接着|并且|帮我|给我|麻烦)+",
    )
});
static EDIT_EN: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?is)^(?:edit|change|modify)\s+(?:the\s+)?(?:file\s+)?(?P<path>\S+?)[,:]?\s+(?:and\s+)?replace\s+(?P<old>.+?)\s+(?:with|by)\s+(?P<new>.+)$",
    )
});
static EDIT_ZH: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?s)^(?:编辑|修改)(?:文件)?\s*(?P<path>[^\s,，]+)\s*[,，]?\s*(?:(?:把|将)\s*(?P<old>.+?)\s*(?:替换为|替换成|改为|改成|换成)|替换\s*(?P<old2>.+?)\s*为)\s*(?P<new>.+)$",
    )
});
static WRITE_EN: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"(?is)^write\s+(?P<content>.+?)\s+(?:to|into)\s+(?:the\s+)?(?:file\s+)?(?P<path>\S+)$")
});
static WRITE_EN_FILE_FIRST: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?is)^(?:create|write)\s+(?:a\s+|the\s+)?file\s+(?P<path>\S+)\s+(?:with|containing)\s+(?P<content>.+)$",
    )
});
static WRITE_ZH: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"(?s)^(?:写入|写)\s*(?P<content>.+?)\s*(?:到|至|进)\s*(?:文件)?\s*(?P<path>\S+)$")
});
static READ_EN: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"(?i)^(?:read|cat|open|view|show)\s+(?:the\s+)?(?:file\s+)?(?P<path>.+)$")
});
static READ_ZH: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"^(?:读取|读|查看|打开|显示)(?:一下)?(?:文件)?\s*[:：]?\s*(?P<path>.+)$")
});
static GLOB_EN: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?i)^(?:list\s+files|list|glob|find\s+files)(?:\s+(?P<pattern>\S+))?(?:\s+in\s+(?P<path>\S+))?$",
    )
});
static GLOB_ZH: LazyLock<Regex> =
    LazyLock::new(|| regex(r"^(?:列出文件|列出|查找文件)\s*(?P<pattern>\S+)?$"));
static GREP_EN: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r#"(?i)^(?:grep|search\s+for|search)\s+(?P<pattern>"[^"]+"|'[^']+'|\S+)(?:\s+in\s+(?P<path>\S+))?$"#,
    )
});
static GREP_ZH: LazyLock<Regex> = LazyLock::new(|| regex(r"^(?:搜索|查找)\s*(?P<pattern>\S+)$"));
static BASH_EN: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?is)^(?:run|execute|exec)\s+(?:the\s+)?(?:(?:shell\s+)?(?:command|cmd)\b)?\s*:?\s*(?P<cmd>.+)$",
    )
});
static BASH_ZH: LazyLock<Regex> =
    LazyLock::new(|| regex(r"(?s)^(?:执行|运行)(?:一下)?(?:命令|指令)?\s*[:：]?\s*(?P<cmd>.+)$"));
static HOOK_CONTEXT: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"^[A-Za-z]+(?::\S+)? hook (?:blocking error|additional context|success|error)\b")
});
static LINE_NUMBER: LazyLock<Regex> = LazyLock::new(|| regex(r"^\s*\d+(?:\t|→)"));

/// How Claude Code prefixes a Stop hook's feedback to the model.
const STOP_FEEDBACK: &str = "Stop hook feedback:";

/// A tool call the mock decided on.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedCall {
    /// The tool name (`Read`, `Bash`, …).
    pub name: String,
    /// The tool input in Claude Code's shape, paths as the user wrote them.
    pub input: Value,
}

/// Splits a prompt into clauses (see the module doc for the separators).
pub fn split_clauses(prompt: &str) -> Vec<String> {
    SEPARATOR
        .split(prompt.trim())
        .map(|clause| FILLER.replace(clause.trim(), "").trim().to_string())
        .filter(|clause| !clause.is_empty())
        .collect()
}

/// The tool call one clause asks for, if the mock understands it.
pub fn parse_clause(clause: &str) -> Option<PlannedCall> {
    let call = |name: &str, input: Value| {
        Some(PlannedCall {
            name: name.to_string(),
            input,
        })
    };
    for re in [&*EDIT_EN, &*EDIT_ZH] {
        if let Some(c) = re.captures(clause) {
            let old = c.name("old").or_else(|| c.name("old2"))?.as_str();
            return call(
                "Edit",
                json!({
                    "file_path": path_arg(&c["path"]),
                    "old_string": unescape(&unquote(old)),
                    "new_string": unescape(&unquote(&c["new"])),
                }),
            );
        }
    }
    for re in [&*WRITE_EN_FILE_FIRST, &*WRITE_EN, &*WRITE_ZH] {
        if let Some(c) = re.captures(clause) {
            return call(
                "Write",
                json!({
                    "file_path": path_arg(&c["path"]),
                    "content": unescape(&unquote(&c["content"])),
                }),
            );
        }
    }
    for re in [&*GLOB_EN, &*GLOB_ZH] {
        if let Some(c) = re.captures(clause) {
            let pattern = c
                .name("pattern")
                .map_or("*".to_string(), |p| unquote(p.as_str()));
            let mut input = json!({ "pattern": pattern });
            if let (Some(path), Some(map)) = (c.name("path"), input.as_object_mut()) {
                map.insert("path".into(), json!(path_arg(path.as_str())));
            }
            return call("Glob", input);
        }
    }
    for re in [&*GREP_EN, &*GREP_ZH] {
        if let Some(c) = re.captures(clause) {
            let mut input = json!({ "pattern": unquote(&c["pattern"]) });
            if let (Some(path), Some(map)) = (c.name("path"), input.as_object_mut()) {
                map.insert("path".into(), json!(path_arg(path.as_str())));
            }
            return call("Grep", input);
        }
    }
    for re in [&*READ_EN, &*READ_ZH] {
        if let Some(c) = re.captures(clause) {
            return call("Read", json!({ "file_path": path_arg(&c["path"]) }));
        }
    }
    for re in [&*BASH_EN, &*BASH_ZH] {
        if let Some(c) = re.captures(clause) {
            let command = c["cmd"].trim().trim_end_matches('。').trim();
            let command = strip_pair(command, '`', '`').unwrap_or(command);
            if command.is_empty() {
                return None;
            }
            return call("Bash", json!({ "command": command }));
        }
    }
    None
}

fn strip_pair(text: &str, open: char, close: char) -> Option<&str> {
    text.strip_prefix(open)?.strip_suffix(close)
}

/// Removes one pair of surrounding quotes or backticks.
fn unquote(text: &str) -> String {
    let text = text.trim();
    for (open, close) in [
        ('"', '"'),
        ('\'', '\''),
        ('`', '`'),
        ('“', '”'),
        ('「', '」'),
    ] {
        if text.chars().count() >= 2
            && let Some(inner) = strip_pair(text, open, close)
        {
            return inner.to_string();
        }
    }
    text.to_string()
}

/// A path as given, minus quotes and a trailing sentence mark.
fn path_arg(text: &str) -> String {
    let path = unquote(text);
    let trimmed = path.trim_end_matches(['。', '，', ',', '!', '！', '?', '？']);
    let trimmed = if trimmed.len() > 1 && trimmed.ends_with('.') && !trimmed.ends_with("..") {
        &trimmed[..trimmed.len() - 1]
    } else {
        trimmed
    };
    if trimmed.is_empty() {
        path
    } else {
        trimmed.to_string()
    }
}

/// `\n` and `\t` in written text become a newline and a tab, so a one-line prompt can write
/// several lines.
fn unescape(text: &str) -> String {
    text.replace("\\n", "\n").replace("\\t", "\t")
}

fn is_chinese(text: &str) -> bool {
    text.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c))
}

/// Hook context: a `<system-reminder>` wrapper, or a bare hook text (`PostToolUse:Bash hook
/// additional context: …`) in case a caller sends it unwrapped.
fn is_reminder(text: &str) -> bool {
    let text = text.trim_start();
    text.starts_with("<system-reminder>") || HOOK_CONTEXT.is_match(text)
}

/// The text inside a `<system-reminder>` wrapper (or the bare text).
fn strip_reminder(text: &str) -> &str {
    let text = text.trim();
    let text = text.strip_prefix("<system-reminder>").unwrap_or(text);
    text.strip_suffix("</system-reminder>")
        .unwrap_or(text)
        .trim()
}

/// Index and text of the prompt (see the module doc).
fn find_prompt(messages: &[Message]) -> Option<(usize, String)> {
    messages.iter().enumerate().rev().find_map(|(i, m)| {
        if m.role != Role::User
            || m.content
                .iter()
                .any(|b| matches!(b, ContentBlock::ToolResult { .. }))
        {
            return None;
        }
        let texts: Vec<&str> = m
            .content
            .iter()
            .filter_map(|b| match b {
                ContentBlock::Text { text } if !is_reminder(text) && !text.trim().is_empty() => {
                    Some(text.as_str())
                }
                ContentBlock::Text { .. }
                | ContentBlock::ToolUse { .. }
                | ContentBlock::ToolResult { .. } => None,
            })
            .collect();
        (!texts.is_empty()).then(|| (i, texts.join("\n")))
    })
}

/// A call issued after the prompt and its result, if it came back.
struct Step<'a> {
    name: &'a str,
    input: &'a Value,
    result: Option<(&'a str, bool)>,
}

fn steps_after(messages: &[Message]) -> Vec<Step<'_>> {
    let mut steps: Vec<(&str, Step<'_>)> = Vec::new();
    for message in messages {
        for block in &message.content {
            match block {
                ContentBlock::ToolUse { id, name, input } => steps.push((
                    id.as_str(),
                    Step {
                        name,
                        input,
                        result: None,
                    },
                )),
                ContentBlock::ToolResult {
                    tool_use_id,
                    content,
                    is_error,
                } => {
                    if let Some((_, step)) = steps.iter_mut().find(|(id, _)| id == tool_use_id) {
                        step.result = Some((content.as_str(), *is_error));
                    }
                }
                ContentBlock::Text { .. } => {}
            }
        }
    }
    steps.into_iter().map(|(_, step)| step).collect()
}

/// Hook context (`<system-reminder>` texts) that arrived since the last assistant message.
fn fresh_hook_notes(messages: &[Message]) -> Vec<String> {
    let start = messages
        .iter()
        .rposition(|m| m.role == Role::Assistant)
        .map_or(0, |i| i + 1);
    messages[start..]
        .iter()
        .filter(|m| m.role == Role::User)
        .flat_map(|m| m.content.iter())
        .filter_map(|b| match b {
            ContentBlock::Text { text } if is_reminder(text) => {
                Some(first_lines(strip_reminder(text), 3, 300))
            }
            ContentBlock::Text { .. }
            | ContentBlock::ToolUse { .. }
            | ContentBlock::ToolResult { .. } => None,
        })
        .collect()
}

fn respond_to_prompt(messages: &[Message], tools: &[ToolSpec], turn: usize) -> ModelResponse {
    let Some((prompt_index, prompt)) = find_prompt(messages) else {
        return response(
            turn,
            vec![ContentBlock::Text {
                text: help_text(false),
            }],
            StopReason::EndTurn,
        );
    };
    let zh = is_chinese(&prompt);
    let offered = |name: &str| tools.is_empty() || tools.iter().any(|t| t.name == name);
    // A Stop hook's feedback arrives as a user message; its request may follow a `REASON: `
    // label, so each line is tried whole and after its last `: `.
    let stop_feedback = prompt
        .trim_start()
        .strip_prefix(STOP_FEEDBACK)
        .map(|rest| rest.trim().to_string());
    let clauses: Vec<String> = match &stop_feedback {
        None => split_clauses(&prompt),
        Some(feedback) => feedback
            .lines()
            .flat_map(split_clauses)
            .map(|clause| {
                if parse_clause(&clause).is_some() {
                    return clause;
                }
                match clause.rsplit_once(": ") {
                    Some((_, tail)) => FILLER.replace(tail.trim(), "").trim().to_string(),
                    None => clause,
                }
            })
            .collect(),
    };
    let mut plan = Vec::new();
    let mut unavailable = Vec::new();
    for clause in clauses {
        match parse_clause(&clause) {
            Some(call) if offered(&call.name) => plan.push(call),
            Some(call) => unavailable.push(call.name),
            None => {}
        }
    }
    let later = &messages[prompt_index + 1..];
    let step = later.iter().filter(|m| m.role == Role::Assistant).count();
    let history = steps_after(later);
    let notes: Vec<String> = fresh_hook_notes(messages)
        .into_iter()
        .map(|note| {
            if zh {
                format!("收到钩子反馈：{note}")
            } else {
                format!("Hook feedback noted: {note}")
            }
        })
        .collect();

    if let Some(next) = plan.get(step) {
        let mut content = Vec::new();
        let mut text = Vec::new();
        if let Some(last) = history.last()
            && let Some((error, true)) = last.result
        {
            text.push(error_line(last, error, zh));
            text.push(if zh {
                "继续下一步。".to_string()
            } else {
                "Moving on to the next step.".to_string()
            });
        }
        text.extend(notes);
        if !text.is_empty() {
            content.push(ContentBlock::Text {
                text: text.join("\n"),
            });
        }
        content.push(ContentBlock::ToolUse {
            id: tool_id(turn, 0),
            name: next.name.clone(),
            input: next.input.clone(),
        });
        return response(turn, content, StopReason::ToolUse);
    }

    let mut lines: Vec<String> = history.iter().map(|s| step_line(s, zh)).collect();
    lines.extend(notes);
    for name in &unavailable {
        lines.push(if zh {
            format!("{name} 工具不可用，已跳过。")
        } else {
            format!("The {name} tool is not available, so I skipped that step.")
        });
    }
    if history.is_empty() && unavailable.is_empty() {
        lines.push(match &stop_feedback {
            Some(feedback) if zh => format!(
                "收到 Stop 钩子反馈：{}。我在离线模式下无法继续处理。",
                first_lines(feedback, 1, 300)
            ),
            Some(feedback) => format!(
                "Stop hook feedback received: {}. There is nothing more I can do offline.",
                first_lines(feedback, 1, 300)
            ),
            None => help_text(zh),
        });
    }
    response(
        turn,
        vec![ContentBlock::Text {
            text: lines.join("\n"),
        }],
        StopReason::EndTurn,
    )
}

fn help_text(zh: bool) -> String {
    if zh {
        "我是 rein 的离线模拟模型。我可以：读文件 Cargo.toml；执行命令 ls -la；写入 hello 到 a.txt；\
         编辑 a.txt 把 X 替换为 Y；列出文件 *.rs；搜索 PATTERN。用“；”或“然后”连接多个步骤。"
            .to_string()
    } else {
        "I'm rein's offline mock model. I can read files (\"read file Cargo.toml\"), run commands \
         (\"run command ls -la\"), write files (\"write hello to a.txt\"), edit files (\"edit a.txt \
         replace X with Y\"), list files (\"list files *.rs\") and search (\"grep PATTERN\"). \
         Chain steps with \";\" or \", then\"."
            .to_string()
    }
}

/// What a call was about: the command, the file or the pattern.
fn label(step: &Step<'_>) -> String {
    let field = match step.name {
        "Bash" => "command",
        "Read" | "Write" | "Edit" => "file_path",
        _ => "pattern",
    };
    step.input
        .get(field)
        .and_then(Value::as_str)
        .map_or_else(|| step.name.to_string(), str::to_string)
}

/// Whether an error text reads like a refusal (hook or permission) rather than a failure.
/// Only the first line counts: a command's own output ("Permission denied") comes later.
fn is_refusal(error: &str) -> bool {
    let lower = error
        .trim()
        .lines()
        .next()
        .unwrap_or_default()
        .to_lowercase();
    [
        "hook",
        "denied",
        "permission",
        "blocked",
        "refused",
        "not allowed",
    ]
    .iter()
    .any(|w| lower.contains(w))
}

fn error_line(step: &Step<'_>, error: &str, zh: bool) -> String {
    let error = first_lines(error, 5, 500);
    let what = label(step);
    match (is_refusal(&error), zh) {
        (true, false) => format!(
            "The tool call was refused: {} `{what}` was blocked: {error}",
            step.name
        ),
        (false, false) => format!("The {} call `{what}` failed: {error}", step.name),
        (true, true) => format!("工具调用被拒绝：{} `{what}` 被阻止：{error}", step.name),
        (false, true) => format!("{} `{what}` 执行失败：{error}", step.name),
    }
}

fn step_line(step: &Step<'_>, zh: bool) -> String {
    let what = label(step);
    let Some((content, is_error)) = step.result else {
        return if zh {
            format!("{} `{what}` 没有返回结果。", step.name)
        } else {
            format!("{} `{what}` returned no result.", step.name)
        };
    };
    if is_error {
        return error_line(step, content, zh);
    }
    match step.name {
        "Read" => {
            let lines: Vec<&str> = content
                .lines()
                .map(|l| LINE_NUMBER.find(l).map_or(l, |m| &l[m.end()..]))
                .collect();
            let first = lines.first().copied().unwrap_or_default().trim_end();
            match zh {
                false => format!(
                    "{what}: {} line{}; first line: {first}",
                    lines.len(),
                    if lines.len() == 1 { "" } else { "s" }
                ),
                true => format!("{what}：共 {} 行；第一行：{first}", lines.len()),
            }
        }
        "Bash" => {
            let output = first_lines(content, 20, 2000);
            match (output.is_empty(), zh) {
                (true, false) => format!("`{what}` finished with no output."),
                (false, false) => format!("`{what}` printed:\n{output}"),
                (true, true) => format!("`{what}` 执行完毕，没有输出。"),
                (false, true) => format!("`{what}` 的输出：\n{output}"),
            }
        }
        _ => {
            let output = first_lines(content, 5, 500);
            format!("{} `{what}`: {output}", step.name)
        }
    }
}

/// At most `max_lines` lines and `max_chars` characters of `text`, trimmed.
fn first_lines(text: &str, max_lines: usize, max_chars: usize) -> String {
    let text = text.trim();
    let mut out: String = text.lines().take(max_lines).collect::<Vec<_>>().join("\n");
    let mut cut = out.chars().count() > max_chars;
    if cut {
        out = out.chars().take(max_chars).collect();
    }
    cut |= text.lines().count() > max_lines;
    if cut {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(clause: &str) -> (String, Value) {
        let call = parse_clause(clause).unwrap_or_else(|| panic!("not understood: {clause}"));
        (call.name, call.input)
    }

    #[test]
    fn builtin_regexes_compile() {
        for re in [
            &*SEPARATOR,
            &*FILLER,
            &*EDIT_EN,
            &*EDIT_ZH,
            &*WRITE_EN,
            &*WRITE_EN_FILE_FIRST,
            &*WRITE_ZH,
            &*READ_EN,
            &*READ_ZH,
            &*GLOB_EN,
            &*GLOB_ZH,
            &*GREP_EN,
            &*GREP_ZH,
            &*BASH_EN,
            &*BASH_ZH,
            &*HOOK_CONTEXT,
            &*LINE_NUMBER,
        ] {
            assert!(!re.as_str().is_empty());
        }
    }

    #[test]
    fn clauses_in_both_languages() {
        let cases: Vec<(&str, &str, Value)> = vec![
            (
                "read file package.json",
                "Read",
                json!({"file_path": "package.json"}),
            ),
            (
                "读文件 package.json",
                "Read",
                json!({"file_path": "package.json"}),
            ),
            (
                "读取文件 ./src/main.rs",
                "Read",
                json!({"file_path": "./src/main.rs"}),
            ),
            ("run command whoami", "Bash", json!({"command": "whoami"})),
            ("执行命令 rm -rf /", "Bash", json!({"command": "rm -rf /"})),
            ("运行命令 ls -la", "Bash", json!({"command": "ls -la"})),
            (
                "write hello to a.txt",
                "Write",
                json!({"file_path": "a.txt", "content": "hello"}),
            ),
            (
                "写入 hello 到 a.txt",
                "Write",
                json!({"file_path": "a.txt", "content": "hello"}),
            ),
            (
                "edit a.txt replace foo with bar",
                "Edit",
                json!({"file_path": "a.txt", "old_string": "foo", "new_string": "bar"}),
            ),
            (
                "编辑 a.txt 把 foo 替换为 bar",
                "Edit",
                json!({"file_path": "a.txt", "old_string": "foo", "new_string": "bar"}),
            ),
            ("list files *.rs", "Glob", json!({"pattern": "*.rs"})),
            (
                "grep TODO in src",
                "Grep",
                json!({"pattern": "TODO", "path": "src"}),
            ),
        ];
        for (clause, name, input) in cases {
            assert_eq!(parsed(clause), (name.to_string(), input), "{clause}");
        }
        assert_eq!(parse_clause("tell me a joke"), None);
    }

    #[test]
    fn separators() {
        assert_eq!(
            split_clauses("读文件 ./Cargo.toml；执行命令 whoami；执行命令 rm -rf /"),
            vec![
                "读文件 ./Cargo.toml",
                "执行命令 whoami",
                "执行命令 rm -rf /"
            ]
        );
        assert_eq!(
            split_clauses("read file a, then run command ls then run command pwd; read file b"),
            vec![
                "read file a",
                "run command ls",
                "run command pwd",
                "read file b"
            ]
        );
        assert_eq!(
            split_clauses("读文件 a，然后执行命令 ls 然后 执行命令 pwd"),
            vec!["读文件 a", "执行命令 ls", "执行命令 pwd"]
        );
    }
}
