//! PreToolUse: before the permission step and before the tool runs. The only event whose hooks
//! decide a call's permission (allow / ask / deny / defer) and may rewrite its input.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::hooks::events::{
    Answer, BaseInput, Common, Event, Explained, FoldCx, McpServerRef, tool_event_accessors,
};
use crate::hooks::registry::HookReply;
use crate::hooks::run::OutcomeKind;
use crate::hooks::spec::HookEvent;

/// The event.
#[derive(Debug, Clone, Copy, Default)]
pub struct PreToolUse;

/// PreToolUse's stdin.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PreToolUseInput {
    /// Base fields.
    #[serde(flatten)]
    pub base: BaseInput,
    /// Always `PreToolUse`.
    pub hook_event_name: HookEvent,
    /// The tool's name (`Bash`, `Edit`, `mcp__srv__tool`, …).
    pub tool_name: String,
    /// The tool input, as the tool prepared it (absolute paths).
    pub tool_input: Value,
    /// The id of the call.
    pub tool_use_id: String,
    /// The MCP server behind an `mcp__<server>__<tool>` tool (Claude Code appends it last);
    /// absent for built-in tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp_server: Option<McpServerRef>,
}

/// `hookSpecificOutput.permissionDecision`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
#[allow(missing_docs)]
pub enum HookPermission {
    Allow,
    Deny,
    Ask,
    Defer,
}

/// PreToolUse's `hookSpecificOutput`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PreToolUseOutput {
    /// allow / deny / ask / defer.
    pub permission_decision: Option<HookPermission>,
    /// Why; shown to the model on deny, to the user on ask.
    pub permission_decision_reason: Option<String>,
    /// Replaces the whole tool input.
    pub updated_input: Option<Map<String, Value>>,
    /// Context for the model.
    pub additional_context: Option<String>,
}

/// The merged permission answer of PreToolUse hooks (deny > defer > ask > allow).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PermissionDecision {
    /// Skip the prompt (deny and ask rules still apply).
    Allow {
        /// The hook's reason.
        reason: Option<String>,
    },
    /// Ask a person.
    Ask {
        /// Shown to the person; the model-facing refusal when nobody can be asked.
        reason: Option<String>,
    },
    /// Do not run the call and end the turn.
    Defer {
        /// The hook's reason.
        reason: Option<String>,
    },
    /// Refuse the call.
    Deny {
        /// The hook's reason.
        reason: String,
        /// The exact model-facing error tool_result, e.g.
        /// `PreToolUse:Bash hook error: [cmd]: stderr`.
        text: String,
    },
}

impl PermissionDecision {
    fn rank(&self) -> u8 {
        match self {
            PermissionDecision::Deny { .. } => 4,
            PermissionDecision::Defer { .. } => 3,
            PermissionDecision::Ask { .. } => 2,
            PermissionDecision::Allow { .. } => 1,
        }
    }
}

/// What PreToolUse hooks decided about one call.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PreToolUseOutcome {
    /// Context, notices, loop control, runs.
    pub common: Common,
    /// The merged permission answer; `None`: no hook had an opinion.
    pub permission: Option<PermissionDecision>,
    /// The rewritten tool input (re-validated by the pipeline before use).
    pub updated_input: Option<Value>,
}

impl PreToolUse {
    /// An in-process answer: refuse the call; `reason` is what the model is told.
    pub fn deny(reason: impl Into<String>) -> HookReply {
        HookReply::none()
            .specific("permissionDecision", "deny")
            .specific("permissionDecisionReason", reason.into())
    }

    /// An in-process answer: skip the permission prompt (deny and ask rules still apply).
    pub fn allow() -> HookReply {
        HookReply::none().specific("permissionDecision", "allow")
    }

    /// An in-process answer: ask a person (refused in headless runs), with `reason`.
    pub fn ask(reason: impl Into<String>) -> HookReply {
        HookReply::none()
            .specific("permissionDecision", "ask")
            .specific("permissionDecisionReason", reason.into())
    }

    /// An in-process answer: run the call with `input` instead (validated by the tool again;
    /// the permission step still checks it).
    pub fn rewrite(input: Map<String, Value>) -> HookReply {
        HookReply::none().specific("updatedInput", Value::Object(input))
    }
}

/// This answer's own permission: a blocking error is a deny; then `permissionDecision` (its
/// reason falling back to the top-level `reason`); then the legacy `decision`
/// (`approve` → allow, `block` → deny).
fn own_permission(answer: &Answer, specific: &PreToolUseOutput) -> Option<PermissionDecision> {
    if let Some(reason) = answer.blocking() {
        return Some(PermissionDecision::Deny {
            reason: reason.to_string(),
            text: String::new(),
        });
    }
    let output = answer.output.as_ref()?;
    let reason_or = |r: &Option<String>| r.clone().or_else(|| output.reason.clone());
    if let Some(decision) = specific.permission_decision {
        let reason = reason_or(&specific.permission_decision_reason);
        return Some(match decision {
            HookPermission::Allow => PermissionDecision::Allow { reason },
            HookPermission::Ask => PermissionDecision::Ask { reason },
            HookPermission::Defer => PermissionDecision::Defer { reason },
            HookPermission::Deny => PermissionDecision::Deny {
                reason: reason.unwrap_or_else(|| "Blocked by hook".to_string()),
                text: String::new(),
            },
        });
    }
    if output.approves() {
        return Some(PermissionDecision::Allow {
            reason: output.reason.clone(),
        });
    }
    output
        .block_reason()
        .map(|reason| PermissionDecision::Deny {
            reason,
            text: String::new(),
        })
}

impl Event for PreToolUse {
    const EVENT: HookEvent = HookEvent::PreToolUse;
    type Input = PreToolUseInput;
    type Output = PreToolUseOutput;
    type Outcome = PreToolUseOutcome;
    const FIELDS: &'static [&'static str] = &["tool_name", "tool_input", "tool_use_id"];

    tool_event_accessors!(PreToolUseInput);

    fn tool_use_id(input: &PreToolUseInput) -> Option<&str> {
        Some(&input.tool_use_id)
    }

    fn common(outcome: &mut PreToolUseOutcome) -> &mut Common {
        &mut outcome.common
    }

    /// 1. **Permission**: deny > defer > ask > allow; a blocking error counts as deny; among
    ///    answers of the winning rank the **first** in configuration order gives the reason.
    /// 2. **updatedInput**: the **last** answer that has one and whose own decision is allow,
    ///    ask or absent (not deny/defer, not blocking).
    fn fold(outcome: &mut PreToolUseOutcome, answer: &Answer, _cx: FoldCx<'_>) {
        let specific: PreToolUseOutput = answer.specific();
        let own = own_permission(answer, &specific);
        if let Some(p) = &own
            && outcome
                .permission
                .as_ref()
                .is_none_or(|best| p.rank() > best.rank())
        {
            outcome.permission = Some(p.clone());
        }
        if let Some(updated) = specific.updated_input
            && matches!(
                own,
                None | Some(PermissionDecision::Allow { .. } | PermissionDecision::Ask { .. })
            )
        {
            outcome.updated_input = Some(Value::Object(updated));
        }
    }

    fn failure_notice(answer: &Answer, cx: FoldCx<'_>) -> Option<String> {
        match &answer.run.outcome {
            OutcomeKind::NonBlocking(text) => Some(format!("{} hook error: {text}", cx.hook_name)),
            OutcomeKind::Cancelled => {
                Some("A hook didn't answer in time, so it didn't check this action.".to_string())
            }
            OutcomeKind::Success | OutcomeKind::Blocking(_) => None,
        }
    }

    /// A deny carries its model-facing text `PreToolUse:<Tool> hook error: <reason>`.
    fn finish(outcome: &mut PreToolUseOutcome, _input: &PreToolUseInput, cx: FoldCx<'_>) {
        if let Some(PermissionDecision::Deny { reason, text }) = &mut outcome.permission {
            *text = format!("{} hook error: {reason}", cx.hook_name);
        }
    }

    fn sample_input(base: BaseInput, tool: &str) -> PreToolUseInput {
        PreToolUseInput {
            base,
            hook_event_name: HookEvent::PreToolUse,
            tool_name: tool.to_string(),
            tool_input: Value::Object(Map::new()),
            tool_use_id: crate::hooks::new_tool_use_id(),
            mcp_server: McpServerRef::sample(tool),
        }
    }

    fn explain(outcome: &PreToolUseOutcome, input: &PreToolUseInput) -> Explained {
        let mut model = Vec::new();
        let summary = match &outcome.permission {
            Some(PermissionDecision::Deny { text, reason }) => {
                model.push((
                    "error tool_result (the tool does not run)".to_string(),
                    text.clone(),
                ));
                format!("deny: {}", reason.trim_end())
            }
            Some(PermissionDecision::Ask { reason }) => {
                model.push((
                    "error tool_result in a headless run (-p), unless a PermissionRequest hook allows it; on a terminal the user is asked".to_string(),
                    reason.clone().unwrap_or_else(|| crate::permissions::headless_denial_text(&input.tool_name)),
                ));
                format!(
                    "ask{}",
                    reason
                        .as_ref()
                        .map(|r| format!(": {r}"))
                        .unwrap_or_default()
                )
            }
            Some(PermissionDecision::Defer { reason }) => {
                model.push((
                    "the tool does not run and the session stops at this call".to_string(),
                    reason
                        .clone()
                        .unwrap_or_else(|| "Tool call deferred by a PreToolUse hook".to_string()),
                ));
                "defer".to_string()
            }
            Some(PermissionDecision::Allow { reason }) => format!(
                "allow (no permission prompt; deny and ask rules still apply){}",
                reason
                    .as_ref()
                    .map(|r| format!(": {r}"))
                    .unwrap_or_default()
            ),
            None => "no permission decision (the permission rules and mode decide)".to_string(),
        };
        if let Some(ui) = &outcome.updated_input {
            model.push((
                "the tool runs with this input instead".to_string(),
                ui.to_string(),
            ));
        }
        Explained {
            model,
            user: Vec::new(),
            summary,
            // In a headless run `ask` refuses too, unless a PermissionRequest hook allows.
            blocks: matches!(
                outcome.permission,
                Some(
                    PermissionDecision::Deny { .. }
                        | PermissionDecision::Ask { .. }
                        | PermissionDecision::Defer { .. }
                )
            ),
        }
        .with_common(&outcome.common)
    }
}
