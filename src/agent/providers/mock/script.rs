//! Scripts (`REIN_MOCK_SCRIPT`): a scripted conversation, subagents and hook evaluators, read
//! from JSON with errors that name the element and what is wrong.

use super::*;

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
/// A main-conversation element may add `"delay_ms": N`: the answer comes N milliseconds after
/// the request (a real model's time to answer, for benchmarks).
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
    /// Milliseconds each main turn waits before it answers (`delay_ms`; 0: none).
    pub delays: Vec<u64>,
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

pub(super) const ERROR_KINDS: [ModelErrorKind; 8] = [
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
        let mut delays = Vec::with_capacity(elements.len());
        let mut stripped = Vec::with_capacity(elements.len());
        for (index, element) in elements.iter().enumerate() {
            let mut element = element.clone();
            let delay = match element.as_object_mut().and_then(|m| m.remove("delay_ms")) {
                None => 0,
                Some(Value::Number(n)) if n.as_u64().is_some() => n.as_u64().unwrap_or(0),
                Some(other) => {
                    return Err(element_err(
                        index,
                        format!(
                            "\"delay_ms\" must be a whole number of milliseconds, found {}",
                            crate::json_kind::with_article(&other)
                        ),
                    ));
                }
            };
            delays.push(delay);
            stripped.push(element);
        }
        let turns = parse_turns(&stripped, "")?;
        Ok(MockScript {
            path: path.to_path_buf(),
            turns,
            delays,
            agents,
            hooks,
        })
    }

    pub(super) fn play(&self, index: usize, turn: usize) -> Result<ModelResponse, ModelError> {
        match self.turns.get(index) {
            Some(step) => self.play_turn(step, turn),
            None => self.play_turn(&ScriptTurn::Hang, turn),
        }
    }

    pub(super) fn play_turn(
        &self,
        step: &ScriptTurn,
        turn: usize,
    ) -> Result<ModelResponse, ModelError> {
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

pub(super) fn parse_turn(element: &Value) -> Result<ScriptTurn, String> {
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

pub(super) fn parse_call(call: &Value) -> Result<ScriptCall, String> {
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
