//! The Agent tool: its input schema and description (listing the definitions), and a call that
//! starts a subagent and reports its result in Claude Code's `tool_response` shape.

use super::*;

/// The Agent tool's input, in Claude Code's key order.
pub(crate) const AGENT_FIELDS: &[Field] = &[
    Field::required("description", FieldKind::String),
    Field::required("prompt", FieldKind::String),
    Field::optional("subagent_type", FieldKind::String),
    Field::optional("model", FieldKind::String),
    Field::optional("run_in_background", FieldKind::Boolean),
];

/// The Agent tool's input schema (the same for every session: the types are listed in the
/// description).
pub(crate) fn agent_input_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "description": {
                "type": "string",
                "description": "A label of a few words for the task (\"Find the config loader\"); the user and the hooks see it."
            },
            "prompt": {
                "type": "string",
                "description": "The whole task for the subagent, self-contained: it sees nothing of this conversation."
            },
            "subagent_type": {
                "type": "string",
                "description": "Which agent type runs the task (listed in the tool description). Default general-purpose."
            },
            "model": {
                "type": "string",
                "description": "Accepted and ignored: the subagent runs on its type's model, else the session's."
            },
            "run_in_background": {
                "type": "boolean",
                "description": "Accepted and ignored: rein always waits for the subagent's report."
            }
        },
        "required": ["description", "prompt"],
        "additionalProperties": false,
        "$schema": crate::tools::SCHEMA_DIALECT
    })
}

/// The Agent tool.
pub struct AgentTool {
    pub(super) runtime: Arc<SubagentRuntime>,
    pub(super) description: String,
}

impl AgentTool {
    /// The tool over a runtime; its description lists the types.
    pub fn new(runtime: Arc<SubagentRuntime>) -> AgentTool {
        AgentTool {
            description: agent_description(&runtime.definitions),
            runtime,
        }
    }
}

/// The Agent tool's description: what it is for, then one line per agent type.
pub(crate) fn agent_description(definitions: &[AgentDefinition]) -> String {
    {
        let mut description = String::from(
            "Hands a self-contained task to a subagent: a fresh agent with its own \
             conversation, its own instructions and the tools of its type. It cannot see this \
             conversation, so `prompt` must hold everything it needs: the goal, the files or \
             names involved, what to leave alone, and what to report back. Its final message \
             comes back as this tool's result; the user does not see it, so pass on what \
             matters.\n\n\
             Use it for work that is broad but separable (searching a large codebase, a \
             change confined to one area, an independent check), especially to keep long \
             intermediate output out of this conversation. Do small, targeted things \
             yourself with the other tools. Several Agent calls in one reply run at the same \
             time. The subagent's tool calls pass the same hooks and permission rules as \
             yours; a subagent that does not finish within its time limit is stopped and \
             its work is lost.\n\n\
             Agent types (`subagent_type`, default general-purpose):",
        );
        for def in definitions {
            let tools = match &def.tools {
                None => "all tools".to_string(),
                Some(t) => t.join(", "),
            };
            description.push_str(&format!(
                "\n- {}: {} (tools: {tools})",
                def.name, def.description
            ));
        }
        description
    }
}

pub(super) fn tool_stats(counts: &[(String, usize)]) -> Value {
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
        agent_input_schema()
    }

    fn prepare_touches_files(&self) -> bool {
        false
    }

    fn prepare(&self, input: Value, _ctx: &ToolContext) -> Result<Value, String> {
        crate::tools::input::normalise(self.name(), input, AGENT_FIELDS).map(Value::Object)
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
