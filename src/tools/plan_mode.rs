//! EnterPlanMode and ExitPlanMode, on the terminal, as Claude Code 2.1.328 runs them
//! (fixture `tests/fixtures/cc-2.1.328/interactive`, run9–run11). Both are deferred behind
//! ToolSearch and only the main agent has them.
//!
//! - EnterPlanMode switches the session to plan mode without asking (`tool_response`
//!   `{"message": …}`; hooks see `plan` from PostToolUse on).
//! - In plan mode the model may write one file besides reading: the plan file,
//!   `<session dir>/plan.md` (rein's place; Claude Code uses `~/.claude/plans/<slug>.md`).
//! - ExitPlanMode outside plan mode is a validation error (no hook fires). In plan mode its
//!   input becomes `{"plan": <the file's text>, "planFilePath": P}` (`{}` when the file was not
//!   written), which PreToolUse and PermissionRequest see; the person reviews the plan: approve
//!   (the session goes on in `default` or `acceptEdits`, PostToolUse sees it), revise with
//!   feedback (refused with Claude Code's text, the turn goes on), or no (the turn stops).

#![deny(missing_docs)]

use std::path::Path;
use std::sync::Arc;

use serde_json::{Value, json};

use super::ask_user::{PersonAnswer, PersonDialog, PlanReview};
use super::{BoxFuture, Tool, ToolContext, ToolOutcome};

/// Claude Code 2.1.328's text for ExitPlanMode outside plan mode.
pub const NOT_IN_PLAN_MODE: &str = "You are not in plan mode. To enter plan mode, call the EnterPlanMode tool first. If your plan was already approved, continue with implementation.";

/// EnterPlanMode's `tool_response.message` (Claude Code 2.1.328).
const ENTERED: &str = "Entered plan mode. You should now focus on exploring the codebase and designing an implementation approach.";

/// The text the model gets after EnterPlanMode (Claude Code 2.1.328's, which PostToolBatch
/// hooks see).
const ENTERED_TEXT: &str = "Entered plan mode. You should now focus on exploring the codebase and designing an implementation approach.\n\nIn plan mode, you should:\n1. Thoroughly explore the codebase to understand existing patterns\n2. Identify similar features and architectural approaches\n3. Consider multiple approaches and their trade-offs\n4. Use AskUserQuestion if you need to clarify the approach\n5. Design a concrete implementation strategy\n6. When ready, use ExitPlanMode to present your plan for approval\n\nRemember: DO NOT write or edit any files yet. This is a read-only exploration and planning phase.";

/// The start of the text of a plan sent back with feedback (Claude Code 2.1.328's).
const REVISE_TEXT: &str = "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). To tell you how to proceed, the user said:\n";

/// rein's note, sent with the next request, on where the plan goes while plan mode is on.
pub fn plan_mode_note(plan_file: &Path) -> String {
    format!(
        "Plan mode is on: the user wants a plan before anything is changed. Only read, search \
         and ask (AskUserQuestion) for now; commands and edits are refused, except that you \
         write your plan, in Markdown, to {} (Write or Edit; it is the one file you may \
         change). When the plan is complete, call ExitPlanMode: the user reads that file and \
         approves it or tells you what to change.",
        plan_file.display()
    )
}

/// A harness note as the model gets it after a result (the wrapper `model::reminder_text`
/// writes; `tools` sits below `model`, so the two words are spelled here).
fn reminder(text: &str) -> String {
    format!("<system-reminder>\n{text}\n</system-reminder>")
}

/// rein's note after the plan was approved.
fn exited_note(plan_file: &Path) -> String {
    format!(
        "Plan mode is off: the user approved leaving it. You may now change files and run \
         commands as the permission mode allows. The plan is in {}.",
        plan_file.display()
    )
}

const ENTER_DESCRIPTION: &str = concat!(
    "Switches the session to plan mode, to work out and agree on an approach before changing \
anything.\n\n\
Use it before a task that is not small: a new feature, a change with several reasonable \
designs, work across many files, or a request whose scope is unclear. Skip it for a typo, a \
one-line fix, or instructions detailed enough to follow as given.\n\n\
In plan mode you read, search and ask questions, write the plan to the plan file named when \
plan mode starts, and then call ExitPlanMode so the user can approve it.",
    super::refusal_note!()
);

const EXIT_DESCRIPTION: &str = concat!(
    "Asks the user to approve your plan and leave plan mode.\n\n\
Call it in plan mode once the plan is written to the plan file (it takes no plan as input: the \
user is shown that file). Use it only for a plan of changes to make, not after research. Do \
not ask for approval any other way (in text, or with AskUserQuestion).\n\n\
If the user approves, you may start changing things. If they ask for changes, their words are \
the result: revise the plan and call this again.",
    super::refusal_note!()
);

/// The EnterPlanMode tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct EnterPlanModeTool;

impl Tool for EnterPlanModeTool {
    fn name(&self) -> &str {
        "EnterPlanMode"
    }

    fn description(&self) -> &str {
        ENTER_DESCRIPTION
    }

    fn input_schema(&self) -> Value {
        json!({
            "$schema": super::SCHEMA_DIALECT,
            "type": "object",
            "properties": {},
            "additionalProperties": false
        })
    }

    fn prepare(&self, _input: Value, _ctx: &ToolContext) -> Result<Value, String> {
        Ok(json!({}))
    }

    fn prepare_touches_files(&self) -> bool {
        false
    }

    fn deferred(&self) -> bool {
        true
    }

    fn main_agent_only(&self) -> bool {
        true
    }

    fn execute<'a>(&'a self, _input: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutcome> {
        Box::pin(async move {
            ctx.request_mode("plan");
            if let Some(plan_file) = &ctx.plan_file {
                ctx.follow_up(reminder(&plan_mode_note(plan_file)));
            }
            ToolOutcome::Success {
                response: json!({"message": ENTERED}),
                content: ENTERED_TEXT.to_string(),
            }
        })
    }

    fn render(&self, response: &Value) -> Option<String> {
        response.get("message")?.as_str()?;
        Some(ENTERED_TEXT.to_string())
    }
}

/// The ExitPlanMode tool, its plan reviewed through `dialog`.
pub struct ExitPlanModeTool {
    dialog: Arc<dyn PersonDialog>,
}

impl ExitPlanModeTool {
    /// The tool, asking through `dialog`.
    pub fn new(dialog: Arc<dyn PersonDialog>) -> ExitPlanModeTool {
        ExitPlanModeTool { dialog }
    }
}

/// Claude Code 2.1.328's text for an approved plan (with the plan file's text, or without).
fn approved_text(plan: Option<&str>, path: &str) -> String {
    match plan {
        Some(plan) => format!(
            "User has approved your plan. You can now start coding. Start with updating your todo list if applicable\n\nYour plan has been saved to: {path}\nYou can refer back to it if needed during implementation.\n\n## Approved Plan:\n{plan}"
        ),
        None => "User has approved exiting plan mode. You can now proceed.".to_string(),
    }
}

impl Tool for ExitPlanModeTool {
    fn name(&self) -> &str {
        "ExitPlanMode"
    }

    fn description(&self) -> &str {
        EXIT_DESCRIPTION
    }

    fn input_schema(&self) -> Value {
        // Claude Code 2.1.328's shape (fixture run10-schemas.json): no plan parameter.
        json!({
            "$schema": super::SCHEMA_DIALECT,
            "type": "object",
            "properties": {
                "allowedPrompts": {
                    "description": "Not used.",
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "tool": {"type": "string", "enum": ["Bash"]},
                            "prompt": {"type": "string"}
                        },
                        "required": ["tool", "prompt"],
                        "additionalProperties": false
                    }
                }
            },
            "additionalProperties": {}
        })
    }

    fn post_tool_input(&self, _prepared: &Value, sent: &Value) -> Value {
        sent.clone()
    }

    fn prepare(&self, _input: Value, ctx: &ToolContext) -> Result<Value, String> {
        if ctx.mode() != "plan" {
            return Err(NOT_IN_PLAN_MODE.to_string());
        }
        let Some(path) = &ctx.plan_file else {
            return Ok(json!({}));
        };
        match std::fs::read_to_string(path) {
            Ok(plan) => Ok(json!({"plan": plan, "planFilePath": path.display().to_string()})),
            Err(_) => Ok(json!({})),
        }
    }

    fn deferred(&self) -> bool {
        true
    }

    fn main_agent_only(&self) -> bool {
        true
    }

    fn asks_person(&self) -> Option<&str> {
        Some("rein needs your approval for the plan")
    }

    fn ask_person<'a>(&'a self, input: Value, ctx: &'a ToolContext) -> BoxFuture<'a, PersonAnswer> {
        Box::pin(async move {
            let plan = input
                .get("plan")
                .and_then(Value::as_str)
                .map(str::to_string);
            let path = ctx.plan_file.clone().unwrap_or_default();
            let dialog = Arc::clone(&self.dialog);
            let review =
                tokio::task::spawn_blocking(move || dialog.review_plan(plan.as_deref(), &path))
                    .await
                    .unwrap_or(PlanReview::Stop);
            match review {
                PlanReview::Approve { mode } => {
                    ctx.request_mode(&mode);
                    PersonAnswer::Proceed(input)
                }
                PlanReview::Revise(feedback) => {
                    PersonAnswer::Refuse(format!("{REVISE_TEXT}{feedback}"))
                }
                PlanReview::Stop => PersonAnswer::Stop,
            }
        })
    }

    fn execute<'a>(&'a self, input: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutcome> {
        Box::pin(async move {
            // Approved by the person (who chose the mode) or by a PermissionRequest hook
            // (then the session goes on in the default mode).
            let mode = ctx
                .take_mode_request()
                .unwrap_or_else(|| "default".to_string());
            ctx.request_mode(&mode);
            let path = ctx.plan_file.clone().unwrap_or_default();
            if ctx.plan_file.is_some() {
                ctx.follow_up(reminder(&exited_note(&path)));
            }
            let plan = input.get("plan").and_then(Value::as_str);
            let shown = path.display().to_string();
            ToolOutcome::Success {
                response: json!({"plan": plan, "isAgent": false, "filePath": shown}),
                content: approved_text(plan, &shown),
            }
        })
    }

    fn render(&self, response: &Value) -> Option<String> {
        let path = response.get("filePath")?.as_str()?;
        Some(approved_text(
            response.get("plan").and_then(Value::as_str),
            path,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn approved_texts_are_claude_codes() {
        // Fixture interactive/run11 (with a plan) and run9 (none written).
        assert_eq!(
            approved_text(Some("# Plan B\n\n- step\n"), "/p/plan.md"),
            "User has approved your plan. You can now start coding. Start with updating your todo list if applicable\n\nYour plan has been saved to: /p/plan.md\nYou can refer back to it if needed during implementation.\n\n## Approved Plan:\n# Plan B\n\n- step\n"
        );
        assert_eq!(
            approved_text(None, "/p/plan.md"),
            "User has approved exiting plan mode. You can now proceed."
        );
    }
}
