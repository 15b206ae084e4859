//! Compaction of a running session: PreCompact, the summary request, PostCompact and
//! SessionStart `compact`.

use super::*;

impl Session {
    /// Replaces the auto-compaction policy.
    #[allow(dead_code)] // for embedders and tests that set a window of their own
    pub(crate) fn set_compaction(&mut self, policy: CompactPolicy) {
        self.compaction = policy;
    }

    /// Summarises the conversation and continues from the summary (see
    /// [`crate::agent::compact`]): PreCompact (which may block), the summary request,
    /// PostCompact, SessionStart `compact`.
    pub async fn compact(&mut self, trigger: &str, custom: Option<&str>) -> Compacted {
        let pre = self
            .fire::<PreCompact>(PreCompactInput {
                base: self.base(HookEvent::PreCompact),
                hook_event_name: HookEvent::PreCompact,
                trigger: trigger.to_string(),
                custom_instructions: custom.map(str::to_string),
            })
            .await;
        if let Some(reason) = pre.block {
            self.notice(&format!(
                "Compaction blocked by a PreCompact hook: {reason}"
            ));
            return Compacted::Blocked(reason);
        }
        let (older, kept) = compact::split(&self.messages);
        if older.len() < 2 {
            self.notice("Not enough messages to compact.");
            return Compacted::TooShort;
        }
        let kept = kept.cloned();
        let mid_turn = kept.is_none() && self.messages.last().is_some_and(|m| m.role == Role::User);
        let mut request_messages = older.to_vec();
        let ask = ContentBlock::Text {
            text: compact::summary_request(custom, &pre.instructions),
        };
        match request_messages.last_mut() {
            Some(last) if last.role == Role::User => last.content.push(ask),
            Some(_) | None => request_messages.push(Message {
                role: Role::User,
                content: vec![ask],
            }),
        }
        let pre_tokens = self.usage.context_tokens;
        self.notice("Compacting the conversation…");
        let response = self
            .model
            .respond(Request {
                system: self.system.as_deref(),
                ..Request::new(&request_messages, &self.specs)
            })
            .await;
        let response = match response {
            Ok(r) => r,
            Err(err) => {
                let text = format!("Compaction failed: {err}");
                self.notice(&text);
                return Compacted::Failed(text);
            }
        };
        self.usage.record(&response.model, response.usage.as_ref());
        let summary = response_text(&response);
        if summary.trim().is_empty() {
            let text = "Compaction failed: the model returned no summary".to_string();
            self.notice(&text);
            return Compacted::Failed(text);
        }
        let mut content = vec![ContentBlock::Text {
            text: compact::summary_message(&summary, mid_turn),
        }];
        if let Some(kept) = kept {
            content.extend(kept.content);
        }
        let first = Message {
            role: Role::User,
            content,
        };
        self.sink.transcript.compact_boundary(
            &self.sink.line(),
            trigger,
            pre_tokens,
            &first.content,
        );
        self.messages = vec![first];
        self.usage.context_tokens = None;
        self.fire::<PostCompact>(PostCompactInput {
            base: self.base(HookEvent::PostCompact),
            hook_event_name: HookEvent::PostCompact,
            trigger: trigger.to_string(),
            compact_summary: summary.clone(),
        })
        .await;
        self.start_as("compact").await;
        Compacted::Done { summary }
    }
}
