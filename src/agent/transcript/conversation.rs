//! The conversation's lines: prompts, user text and blocks, tool results, assistant messages
//! (whole or interrupted) and the compaction boundary, in Claude Code's shapes.

use super::*;

impl Transcript {
    /// The user's prompt (`message.content` is the prompt string, as Claude Code writes it),
    /// with `promptSource`, `turnOrigin` and `turnPosition` as Claude Code 2.1.328 writes them
    /// for a `-p` prompt (`sdk`; `user` at the terminal).
    pub fn user_prompt(&self, ctx: &LineContext, text: &str) {
        let turn = match self.inner.lock() {
            Ok(mut inner) => {
                inner.prompts += 1;
                inner.prompts
            }
            Err(_) => 1,
        };
        let origin = if self.attended() { "user" } else { "sdk" };
        let mut line = self.head(ctx, "user", true);
        line.insert("message".into(), json!({"role": "user", "content": text}));
        let mut extra = Map::new();
        if ctx.agent_id.is_none() {
            if let Some(mode) = &ctx.permission_mode {
                extra.insert("permissionMode".into(), json!(mode));
            }
            extra.insert("promptSource".into(), json!(origin));
            extra.insert("turnOrigin".into(), json!(origin));
            extra.insert(
                "turnPosition".into(),
                json!({"promptIndex": 0, "turnIndex": turn}),
            );
        }
        self.finish_and_write(line, extra);
    }

    /// A user-role text line no hook or model produced: the `[Request interrupted by user for
    /// tool use]` note after a stopped tool, or `[Request interrupted by user]` after a stopped
    /// reply, as the model is sent it.
    pub fn user_text(&self, ctx: &LineContext, text: &str) {
        let mut line = self.head(ctx, "user", true);
        line.insert(
            "message".into(),
            json!({"role": "user", "content": [{"type": "text", "text": text}]}),
        );
        self.finish_and_write(line, Map::new());
    }

    /// A user-role text message rein adds on its own (Stop feedback, reminders): `isMeta`, as
    /// Claude Code marks the messages no person typed. `content` keeps the exact blocks the
    /// model was sent in the user message, so a resumed session sends them again unchanged;
    /// system notes are left out (their hook attachments hold them, as in Claude Code's
    /// transcript), and a message of notes only writes no line.
    pub fn user_blocks(&self, ctx: &LineContext, blocks: &[ContentBlock]) {
        let content: Vec<Value> = blocks
            .iter()
            .filter(|b| !matches!(b, ContentBlock::SystemNote { .. }))
            .map(block_json)
            .collect();
        if content.is_empty() {
            return;
        }
        let mut line = self.head(ctx, "user", true);
        line.insert(
            "message".into(),
            json!({"role": "user", "content": content}),
        );
        line.insert("isMeta".into(), json!(true));
        self.finish_and_write(line, Map::new());
    }

    /// One tool result as the model sees it, with the structured `toolUseResult` if the tool
    /// produced one, and the keys Claude Code adds to a tool-result line
    /// (`sourceToolAssistantUUID`, `permissionDecision`, …).
    pub fn tool_result(&self, ctx: &LineContext, r: &ToolResultLine<'_>) {
        // Claude Code's block key order: a result that ran starts with `tool_use_id`, an error
        // it made itself ends with it; Bash results always carry `is_error`
        // ([`crate::model::success_marks_is_error`]).
        let mut block = Map::new();
        if !r.is_error {
            block.insert("tool_use_id".into(), json!(r.tool_use_id));
        }
        block.insert("type".into(), json!("tool_result"));
        block.insert("content".into(), json!(r.content));
        if r.is_error || crate::model::success_marks_is_error(r.tool_name) {
            block.insert("is_error".into(), json!(r.is_error));
        }
        if r.is_error {
            block.insert("tool_use_id".into(), json!(r.tool_use_id));
        }
        let result = match r.tool_use_result {
            Some(v) => v.clone(),
            None if r.is_error => json!(format!("Error: {}", r.content)),
            None => json!(r.content),
        };
        let source = self
            .inner
            .lock()
            .ok()
            .and_then(|inner| inner.tool_sources.get(r.tool_use_id).cloned());
        let mut line = self.head(ctx, "user", true);
        line.insert(
            "message".into(),
            json!({"role": "user", "content": [Value::Object(block)]}),
        );
        let mut extra = Map::new();
        extra.insert("toolUseResult".into(), result);
        if r.decision == ToolDecision::RejectedByHook {
            extra.insert("toolDenialKind".into(), json!("permission-rule"));
        }
        if r.tool_name == "Bash" && !r.is_error {
            // rein runs commands without a sandbox.
            extra.insert("sandboxed".into(), json!(false));
        }
        if let Some(source) = source {
            extra.insert("sourceToolAssistantUUID".into(), json!(source));
        }
        match r.decision {
            ToolDecision::AcceptedByMode => {
                extra.insert(
                    "permissionDecision".into(),
                    json!({"decision": "accept", "source": "config", "reasonType": "mode"}),
                );
            }
            ToolDecision::RejectedByHook => {
                extra.insert(
                    "permissionDecision".into(),
                    json!({"decision": "reject", "source": "hook", "reasonType": "hook",
                           "reasonCode": "hook:PreToolUse"}),
                );
            }
            ToolDecision::Unrecorded => {}
        }
        self.finish_and_write(line, extra);
    }

    /// One model response: `message` is the API message with the provider's `usage`, then
    /// `requestedModel`, `effort` and `madeBy` as Claude Code writes them.
    pub fn assistant(&self, ctx: &LineContext, response: &ModelResponse) {
        let stop_reason = match response.stop_reason {
            StopReason::EndTurn => "end_turn",
            StopReason::ToolUse => "tool_use",
            StopReason::MaxTokens => "max_tokens",
            StopReason::Other => "stop_sequence",
        };
        self.assistant_line(ctx, response, Some(stop_reason));
    }

    /// The part of a reply the person stopped while it streamed: an assistant line with
    /// `stop_reason: null`, as Claude Code 2.1.328 writes it.
    pub fn interrupted_assistant(&self, ctx: &LineContext, response: &ModelResponse) {
        self.assistant_line(ctx, response, None);
    }

    pub(super) fn assistant_line(
        &self,
        ctx: &LineContext,
        response: &ModelResponse,
        stop_reason: Option<&str>,
    ) {
        let id = response
            .id
            .clone()
            .unwrap_or_else(|| format!("msg_rein_{}", uuid_v4().replace('-', "")));
        let content: Vec<Value> = response.content.iter().map(block_json).collect();
        let mut message = json!({
            "id": id,
            "type": "message",
            "role": "assistant",
            "model": response.model,
            "content": content,
            "stop_reason": stop_reason,
            "stop_sequence": null,
        });
        // Claude Code's key order: input, cache creation, cache read, output.
        if let Some(usage) = &response.usage
            && let Ok(value) = serde_json::to_value(usage)
        {
            message["usage"] = value;
        }
        let mut line = self.head(ctx, "assistant", false);
        line.insert("message".into(), message);
        if let Some(model) = &ctx.requested_model {
            line.insert("requestedModel".into(), json!(model));
        }
        // `type` follows the message and its request keys in Claude Code's assistant lines.
        line.shift_remove("type");
        line.insert("type".into(), json!("assistant"));
        let mut extra = Map::new();
        if let Some(effort) = &ctx.effort {
            extra.insert("effort".into(), json!(effort));
            extra.insert("perTurnEffort".into(), json!(effort));
        }
        extra.insert("madeBy".into(), json!("model"));
        let ids: Vec<String> = response
            .content
            .iter()
            .filter_map(|b| match b {
                ContentBlock::ToolUse { id, .. } => Some(id.clone()),
                ContentBlock::Text { .. }
                | ContentBlock::SystemNote { .. }
                | ContentBlock::ToolResult { .. } => None,
            })
            .collect();
        if let Some(uuid) = self.finish_and_write(line, extra)
            && let Ok(mut inner) = self.inner.lock()
        {
            for id in ids {
                inner.tool_sources.insert(id, uuid.clone());
            }
        }
    }

    /// A compaction: a `system` line (`subtype: compact_boundary`) after which the
    /// conversation starts over, then the user line the compacted conversation starts with
    /// (`isCompactSummary: true`).
    pub fn compact_boundary(
        &self,
        ctx: &LineContext,
        trigger: &str,
        pre_tokens: Option<u64>,
        first: &[ContentBlock],
    ) {
        let mut line = self.head(ctx, "system", false);
        line.insert("subtype".into(), json!("compact_boundary"));
        line.insert("content".into(), json!("Conversation compacted"));
        line.insert(
            "compactMetadata".into(),
            json!({"trigger": trigger, "preTokens": pre_tokens}),
        );
        self.finish_and_write(line, Map::new());
        let content: Vec<Value> = first.iter().map(block_json).collect();
        let mut line = self.head(ctx, "user", true);
        line.insert(
            "message".into(),
            json!({"role": "user", "content": content}),
        );
        line.insert("isCompactSummary".into(), json!(true));
        self.finish_and_write(line, Map::new());
    }
}

pub(super) fn block_json(block: &ContentBlock) -> Value {
    serde_json::to_value(block).unwrap_or(Value::Null)
}

/// A model-facing entry as Claude Code's `rendered` records it: one system reminder.
pub(super) fn rendered_one(entry: &str) -> Value {
    json!({"content": format!("<system-reminder>\n{entry}\n</system-reminder>")})
}

pub(super) fn rendered(entry: &str) -> Value {
    json!([rendered_one(entry)])
}

/// The model-facing entry a `rendered` item holds (the reminder's inside).
pub(crate) fn unrender(item: &Value) -> Option<String> {
    let text = item["content"].as_str()?;
    let inner = text
        .strip_prefix("<system-reminder>\n")
        .and_then(|t| t.strip_suffix("\n</system-reminder>"))
        .unwrap_or(text);
    Some(inner.to_string())
}

pub(super) fn insert_tool_use_id(a: &mut Map<String, Value>, tool_use_id: Option<&str>) {
    if let Some(id) = tool_use_id {
        a.insert("toolUseID".into(), json!(id));
    }
}
