//! The interruption rules: what the history and transcript keep when a person stops a turn
//! (mid-reply, mid-tool, with tool calls unanswered), and the notes the model is told.

use super::*;

impl Session {
    /// Records that rein was interrupted (SIGINT/SIGTERM) while the turn was running: each tool
    /// call of the last assistant message that has no result yet gets an error result
    /// [`INTERRUPTED_TOOL_USE`] — in the transcript and in the history — so the record never
    /// ends on an unanswered `tool_use`. The call's future was already dropped, which killed its
    /// process group; no PostToolUse/PostToolUseFailure hook fires for it (rule documented in
    /// docs/reliability.md). Call it before [`Session::end`].
    /// Returns how many calls it answered so.
    pub(crate) fn interrupted(&mut self) -> usize {
        let outstanding = match self.sink.outstanding.lock() {
            Ok(mut o) => std::mem::take(&mut *o),
            Err(_) => Vec::new(),
        };
        if outstanding.is_empty() {
            return 0;
        }
        let mut content = Vec::with_capacity(outstanding.len());
        for (id, name) in &outstanding {
            self.sink.observe(Progress::ToolResult {
                tool_use_id: id,
                name,
                content: INTERRUPTED_TOOL_USE,
                is_error: true,
                status: CallStatus::Interrupted,
                response: None,
            });
            content.push(ContentBlock::ToolResult {
                tool_use_id: id.clone(),
                content: INTERRUPTED_TOOL_USE.to_string(),
                is_error: true,
            });
        }
        self.messages.push(Message {
            role: Role::User,
            content,
        });
        outstanding.len()
    }

    /// Adds `text` to the conversation as the user's (after an interrupted turn, the note the
    /// model reads next time), without a transcript line.
    pub(crate) fn note_for_model(&mut self, text: &str) {
        let block = ContentBlock::Text {
            text: text.to_string(),
        };
        match self.messages.last_mut() {
            Some(last) if last.role == Role::User => last.content.push(block),
            Some(_) | None => self.messages.push(Message {
                role: Role::User,
                content: vec![block],
            }),
        }
    }

    /// The person stopped the turn (Ctrl+C at the terminal) while tool calls ran: as Claude
    /// Code 2.1.328 does, no hook fires for them (their process groups are already gone);
    /// each unanswered call gets the result [`STOPPED_TOOL_RESULT`] and a text block
    /// `[Request interrupted by user for tool use]` follows in the same user message (in the
    /// transcript too). The next prompt joins that message.
    ///
    /// Stopped while the model's reply streamed and no tool ran (run5 of the fixture): no hook
    /// fires (no Stop, no StopFailure); the text streamed so far stays in the conversation as
    /// the assistant's (its transcript line has `stop_reason: null`), then a user text
    /// `[Request interrupted by user]` that the next prompt joins.
    pub(crate) fn stopped_by_user(&mut self) {
        let outstanding = match self.sink.outstanding.lock() {
            Ok(mut o) => std::mem::take(&mut *o),
            Err(_) => Vec::new(),
        };
        let streaming = match self.sink.streaming.lock() {
            Ok(mut s) => s.take(),
            Err(_) => None,
        };
        if outstanding.is_empty() {
            if let Some(partial) = streaming {
                self.stopped_while_streaming(partial);
            }
            return;
        }
        let mut content = Vec::with_capacity(outstanding.len() + 1);
        for (id, name) in &outstanding {
            self.sink.observe(Progress::ToolResult {
                tool_use_id: id,
                name,
                content: STOPPED_TOOL_RESULT,
                is_error: true,
                status: CallStatus::Interrupted,
                response: None,
            });
            content.push(ContentBlock::ToolResult {
                tool_use_id: id.clone(),
                content: STOPPED_TOOL_RESULT.to_string(),
                is_error: true,
            });
        }
        let note = format!("{INTERRUPTED_TOOL_USE}\n");
        self.sink.transcript.user_text(&self.sink.line(), &note);
        content.push(ContentBlock::Text { text: note });
        self.messages.push(Message {
            role: Role::User,
            content,
        });
    }

    /// See [`Session::stopped_by_user`]: `partial` is the reply's text streamed so far.
    pub(super) fn stopped_while_streaming(&mut self, partial: String) {
        let ctx = self.sink.line();
        if !partial.is_empty() {
            let content = vec![ContentBlock::Text { text: partial }];
            self.sink.transcript.interrupted_assistant(
                &ctx,
                &ModelResponse {
                    id: None,
                    model: self.model.name().to_string(),
                    content: content.clone(),
                    stop_reason: StopReason::EndTurn,
                    usage: None,
                },
            );
            self.messages.push(Message {
                role: Role::Assistant,
                content,
            });
        }
        let note = format!("{INTERRUPTED_BY_USER}\n");
        self.sink.transcript.user_text(&ctx, &note);
        self.note_for_model(&note);
    }
}
