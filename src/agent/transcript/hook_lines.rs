//! What hooks leave in the transcript: attachment lines for hook decisions, the Stop hooks'
//! summary, and run attachments (additional context, blocking errors).

use super::*;
use crate::progress::{HookReport, HookRunEnd, HookRunOutcome, HookRunReport};

impl Transcript {
    /// Hook `attachment` lines for one event firing, as Claude Code 2.1.328 writes them:
    /// - one `hook_success`/`hook_non_blocking_error`/`hook_cancelled`/`hook_blocking_error`
    ///   per handler run, except on PreToolUse (whose refusal is the tool result) and Stop
    ///   (see [`Transcript::stop_hooks`]), and except a UserPromptSubmit success with nothing
    ///   on stdout; a plain-stdout success carries its text as `content` and, rendered, as the
    ///   model saw it;
    /// - one `hook_additional_context` for the merged additional context (`content`: what the
    ///   hooks gave; `rendered`: what the model was sent);
    /// - one `hook_system_message` per user-facing message.
    ///
    /// `hook_name` is [`crate::hooks::events::hook_name`] of the firing.
    pub fn hook_decision(&self, decision: &HookReport) {
        let event = decision.event;
        let hook_name = decision.hook_name.as_str();
        let tool_use_id = decision.tool_use_id.as_deref();
        let ctx = LineContext::default();
        let firing = uuid_v4();
        let run_id = tool_use_id.unwrap_or(&firing);
        let success_prefix = format!("{hook_name} hook success: ");
        let context_name = if decision.tool_event {
            hook_name
        } else {
            event
        };
        let context_prefix = format!("{context_name} hook additional context: ");
        let mut context: Vec<&String> = decision.context.iter().collect();
        if event != HookEvent::PreToolUse.as_str() {
            for run in &decision.runs {
                let mut attachment = run_attachment(run, hook_name, event, Some(run_id));
                let mut extra = Map::new();
                if matches!(run.outcome, HookRunOutcome::Success) {
                    let text = run.stdout.trim();
                    let shown = context.iter().position(|e| {
                        !text.is_empty() && e.strip_prefix(&success_prefix) == Some(text)
                    });
                    if let Some(i) = shown {
                        let entry = context.remove(i);
                        attachment.insert("content".into(), json!(text));
                        extra.insert("rendered".into(), rendered(entry));
                        extra.insert("renderedRole".into(), json!("system"));
                    } else if event == HookEvent::UserPromptSubmit.as_str() {
                        continue;
                    }
                }
                self.write_attachment(&ctx, attachment, extra);
            }
        }
        if !context.is_empty() {
            let raw: Vec<&str> = context
                .iter()
                .map(|e| e.strip_prefix(&context_prefix).unwrap_or(e))
                .collect();
            let context_id = if event == HookEvent::SessionStart.as_str() {
                "SessionStart".to_string()
            } else if event == HookEvent::UserPromptSubmit.as_str() {
                format!("hook-{}", uuid_v4())
            } else {
                run_id.to_string()
            };
            let mut a = Map::new();
            a.insert("type".into(), json!("hook_additional_context"));
            a.insert("content".into(), json!(raw));
            a.insert("hookName".into(), json!(context_name));
            a.insert("toolUseID".into(), json!(context_id));
            a.insert("hookEvent".into(), json!(event));
            let shown: Vec<Value> = context.iter().map(|e| rendered_one(e)).collect();
            let mut extra = Map::new();
            extra.insert("rendered".into(), Value::Array(shown));
            extra.insert("renderedRole".into(), json!("system"));
            self.write_attachment(&ctx, a, extra);
        }
        for message in &decision.user_messages {
            let mut a = Map::new();
            a.insert("type".into(), json!("hook_system_message"));
            a.insert("content".into(), json!(message));
            a.insert("hookName".into(), json!(hook_name));
            insert_tool_use_id(&mut a, Some(run_id));
            a.insert("hookEvent".into(), json!(event));
            self.write_attachment(&ctx, a, Map::new());
        }
    }

    /// A Stop (or SubagentStop) firing, as Claude Code 2.1.328 writes it: one
    /// `hook_blocking_error` attachment per blocking run (`blockingError: {blockingError,
    /// command}`), then a `system` line `stop_hook_summary`. A Stop that let the turn end
    /// writes only the summary.
    pub fn stop_hooks(&self, ctx: &LineContext, decision: &HookReport) {
        let event = decision.event;
        let firing = uuid_v4();
        let actx = LineContext::default();
        let mut errors = Vec::new();
        let mut infos = Vec::new();
        for run in &decision.runs {
            let mut info = Map::new();
            info.insert("command".into(), json!(run.command));
            if let HookRunOutcome::Blocking(reason) = &run.outcome {
                errors.push(reason.clone());
                let mut a = Map::new();
                a.insert("type".into(), json!("hook_blocking_error"));
                a.insert("hookName".into(), json!(event));
                a.insert("toolUseID".into(), json!(firing));
                a.insert("hookEvent".into(), json!(event));
                a.insert(
                    "blockingError".into(),
                    json!({"blockingError": reason, "command": run.command}),
                );
                let shown_as = format!(
                    "{} hook blocking error from command: \"{}\": ",
                    event, run.command
                );
                let mut extra = Map::new();
                if let Some(entry) = decision.context.iter().find(|e| e.starts_with(&shown_as)) {
                    extra.insert("rendered".into(), rendered(entry));
                    extra.insert("renderedRole".into(), json!("system"));
                }
                self.write_attachment(&actx, a, extra);
            } else {
                info.insert("durationMs".into(), json!(run.duration.as_millis() as u64));
            }
            infos.push(Value::Object(info));
        }
        let context_prefix = format!("{} hook additional context: ", event);
        let raw: Vec<&str> = decision
            .context
            .iter()
            .filter_map(|e| {
                let e = e
                    .strip_prefix("<system-reminder>\n")
                    .and_then(|e| e.strip_suffix("\n</system-reminder>"))
                    .unwrap_or(e);
                e.strip_prefix(&context_prefix)
            })
            .collect();
        let mut line = self.head(ctx, "system", false);
        line.insert("subtype".into(), json!("stop_hook_summary"));
        line.insert("hookCount".into(), json!(decision.runs.len()));
        line.insert("hookInfos".into(), Value::Array(infos));
        line.insert("hookErrors".into(), json!(errors));
        line.insert("failedHookErrorIndexes".into(), json!([]));
        line.insert("hookAdditionalContext".into(), json!(raw));
        line.insert("preventedContinuation".into(), json!(decision.stop_loop));
        line.insert(
            "stopReason".into(),
            json!(decision.stop_reason.clone().unwrap_or_default()),
        );
        line.insert(
            "hasOutput".into(),
            json!(!errors.is_empty() || !raw.is_empty()),
        );
        line.insert("level".into(), json!("suggestion"));
        // Claude Code writes this line's timestamp before its uuid.
        line.insert("timestamp".into(), json!(timestamp_now()));
        let mut extra = Map::new();
        extra.insert("toolUseID".into(), json!(firing));
        self.finish_and_write(line, extra);
    }

    pub(super) fn write_attachment(
        &self,
        ctx: &LineContext,
        attachment: Map<String, Value>,
        extra: Map<String, Value>,
    ) {
        let mut line = self.head(ctx, "attachment", false);
        line.insert("attachment".into(), Value::Object(attachment));
        // `type` follows the attachment in Claude Code's attachment lines.
        line.shift_remove("type");
        line.insert("type".into(), json!("attachment"));
        self.finish_and_write(line, extra);
    }
}

pub(super) fn run_attachment(
    run: &HookRunReport,
    hook_name: &str,
    event: &str,
    tool_use_id: Option<&str>,
) -> Map<String, Value> {
    let (kind, content) = match &run.outcome {
        HookRunOutcome::Success => ("hook_success", String::new()),
        HookRunOutcome::Blocking(reason) => ("hook_blocking_error", reason.clone()),
        HookRunOutcome::NonBlocking(text) => ("hook_non_blocking_error", text.clone()),
        HookRunOutcome::Cancelled => ("hook_cancelled", String::new()),
    };
    let exit_code = match run.end {
        HookRunEnd::Exited(code) => json!(code),
        HookRunEnd::Signaled => json!(1),
        HookRunEnd::Other => Value::Null,
    };
    let mut a = Map::new();
    a.insert("type".into(), json!(kind));
    a.insert("hookName".into(), json!(hook_name));
    insert_tool_use_id(&mut a, tool_use_id);
    a.insert("hookEvent".into(), json!(event));
    a.insert("content".into(), json!(content));
    a.insert(
        "stdout".into(),
        json!(bounded_stream(&run.stdout, run.stdout_bytes)),
    );
    a.insert(
        "stderr".into(),
        json!(bounded_stream(&run.stderr, run.stderr_bytes)),
    );
    a.insert("exitCode".into(), exit_code);
    a.insert("command".into(), json!(run.command));
    a.insert("durationMs".into(), json!(run.duration.as_millis() as u64));
    a
}
