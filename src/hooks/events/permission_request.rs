//! PermissionRequest: a permission prompt would be shown. Hooks may answer for the person:
//! allow (optionally rewriting the input and adding permission rules) or deny.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::hooks::events::{
    Answer, BaseInput, Common, Event, Explained, FoldCx, McpServerRef, tool_event_accessors,
};
use crate::hooks::spec::HookEvent;

/// The event.
#[derive(Debug, Clone, Copy, Default)]
pub struct PermissionRequest;

/// PermissionRequest's stdin. No `tool_use_id` (spec §9.1 #13).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PermissionRequestInput {
    /// Base fields.
    #[serde(flatten)]
    pub base: BaseInput,
    /// Always `PermissionRequest`.
    pub hook_event_name: HookEvent,
    /// The tool's name.
    pub tool_name: String,
    /// The tool input.
    pub tool_input: Value,
    /// Rules the prompt would offer to add.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permission_suggestions: Option<Vec<Value>>,
    /// The MCP server behind an `mcp__<server>__<tool>` tool (Claude Code appends it last);
    /// absent for built-in tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp_server: Option<McpServerRef>,
}

/// `hookSpecificOutput.decision`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "behavior", rename_all = "lowercase")]
pub enum PermissionRequestAnswer {
    /// Approve the call.
    #[serde(rename_all = "camelCase")]
    Allow {
        /// Replaces the whole tool input.
        updated_input: Option<Map<String, Value>>,
        /// Permission updates to apply.
        #[serde(default)]
        updated_permissions: Vec<Value>,
    },
    /// Refuse the call.
    Deny {
        /// The model-facing refusal.
        message: Option<String>,
        /// Also interrupt the turn.
        #[serde(default)]
        interrupt: bool,
    },
}

/// PermissionRequest's `hookSpecificOutput`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct PermissionRequestOutput {
    /// Required by validation; `None` only when the hook printed no `hookSpecificOutput`.
    pub decision: Option<PermissionRequestAnswer>,
}

/// The merged answer of PermissionRequest hooks.
#[derive(Debug, Clone, PartialEq)]
pub enum PermissionRequestDecision {
    /// Approve; deny rules are still checked on the (rewritten) input.
    Allow {
        /// The `updatedInput` of the last allowing answer that had one.
        updated_input: Option<Value>,
        /// The `updatedPermissions` of every allowing answer.
        updated_permissions: Vec<Value>,
    },
    /// Refuse; `message` is the model-facing text.
    Deny {
        /// The model-facing refusal.
        message: String,
        /// Also interrupt the turn.
        interrupt: bool,
    },
}

/// What PermissionRequest hooks decided.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PermissionRequestOutcome {
    /// Context, notices, loop control, runs.
    pub common: Common,
    /// `None`: no hook answered; the person is asked (headless: refused).
    pub decision: Option<PermissionRequestDecision>,
}

impl Event for PermissionRequest {
    const EVENT: HookEvent = HookEvent::PermissionRequest;
    type Input = PermissionRequestInput;
    type Output = PermissionRequestOutput;
    type Outcome = PermissionRequestOutcome;
    const FIELDS: &'static [&'static str] = &["tool_name", "tool_input", "permission_suggestions"];

    tool_event_accessors!(PermissionRequestInput);

    fn common(outcome: &mut PermissionRequestOutcome) -> &mut Common {
        &mut outcome.common
    }

    /// Deny > allow. A blocking error is a deny with message `[cmd]: stderr`; the **first**
    /// deny's message wins. An allow takes the `updatedInput` of the last allowing answer that
    /// has one and the `updatedPermissions` of all allowing answers.
    fn fold(outcome: &mut PermissionRequestOutcome, answer: &Answer, _cx: FoldCx<'_>) {
        let this = match answer.blocking() {
            Some(reason) => Some(PermissionRequestDecision::Deny {
                message: reason.to_string(),
                interrupt: false,
            }),
            None => answer
                .specific::<PermissionRequestOutput>()
                .decision
                .map(|d| match d {
                    PermissionRequestAnswer::Allow {
                        updated_input,
                        updated_permissions,
                    } => PermissionRequestDecision::Allow {
                        updated_input: updated_input.map(Value::Object),
                        updated_permissions,
                    },
                    PermissionRequestAnswer::Deny { message, interrupt } => {
                        PermissionRequestDecision::Deny {
                            message: message
                                .or_else(|| answer.output.as_ref().and_then(|o| o.reason.clone()))
                                .unwrap_or_else(|| "Permission denied by hook".to_string()),
                            interrupt,
                        }
                    }
                }),
        };
        match (&mut outcome.decision, this) {
            (Some(PermissionRequestDecision::Deny { .. }), _) | (_, None) => {}
            (
                slot @ (None | Some(PermissionRequestDecision::Allow { .. })),
                Some(deny @ PermissionRequestDecision::Deny { .. }),
            ) => {
                *slot = Some(deny);
            }
            (None, Some(allow @ PermissionRequestDecision::Allow { .. })) => {
                outcome.decision = Some(allow);
            }
            (
                Some(PermissionRequestDecision::Allow {
                    updated_input,
                    updated_permissions,
                }),
                Some(PermissionRequestDecision::Allow {
                    updated_input: new_input,
                    updated_permissions: new_permissions,
                }),
            ) => {
                if new_input.is_some() {
                    *updated_input = new_input;
                }
                updated_permissions.extend(new_permissions);
            }
        }
    }

    fn sample_input(base: BaseInput, tool: &str) -> PermissionRequestInput {
        PermissionRequestInput {
            base,
            hook_event_name: HookEvent::PermissionRequest,
            tool_name: tool.to_string(),
            tool_input: Value::Object(Map::new()),
            permission_suggestions: None,
            mcp_server: McpServerRef::sample(tool),
        }
    }

    fn explain(outcome: &PermissionRequestOutcome, _input: &PermissionRequestInput) -> Explained {
        let mut model = Vec::new();
        let summary = match &outcome.decision {
            Some(PermissionRequestDecision::Deny { message, interrupt }) => {
                model.push((
                    "error tool_result (the tool does not run)".to_string(),
                    message.clone(),
                ));
                format!(
                    "deny{}: {message}",
                    if *interrupt { " and interrupt" } else { "" }
                )
            }
            Some(PermissionRequestDecision::Allow { updated_input, .. }) => {
                if let Some(ui) = updated_input {
                    model.push((
                        "the tool runs with this input instead".to_string(),
                        ui.to_string(),
                    ));
                }
                "allow (the tool runs without asking; deny rules still apply)".to_string()
            }
            None => "no decision (the user is asked; headless runs refuse)".to_string(),
        };
        Explained {
            model,
            user: Vec::new(),
            summary,
            blocks: matches!(
                outcome.decision,
                Some(PermissionRequestDecision::Deny { .. })
            ),
        }
        .with_common(&outcome.common)
    }
}
