//! One tool round: the assistant message's tool calls through the pipeline (consecutive Agent
//! calls concurrently), their results written back into the history.

use super::*;
use crate::pipeline::AllowedToolsGate;

impl Session {
    /// Runs one assistant message's calls in order, then PostToolBatch; appends the results.
    /// `Some(end)` when the loop must stop.
    pub(super) async fn run_calls(
        &mut self,
        calls: &[ToolCall],
        outcome: &mut TurnOutcome,
    ) -> Option<TurnEnd> {
        let base = self.base(HookEvent::PreToolUse);
        let mut grants = std::mem::take(&mut self.turn_grants);
        let mut reports = Vec::with_capacity(calls.len());
        let mut end = None;
        let mut next = 0;
        'calls: while next < calls.len() {
            // Consecutive Agent calls run concurrently (each subagent isolated, each through
            // the whole gate); every other call runs alone, in order.
            let group = if is_agent_call(&calls[next].name) {
                calls[next..]
                    .iter()
                    .take_while(|c| is_agent_call(&c.name))
                    .count()
            } else {
                1
            };
            // The base is rebuilt per call: a Bash `cd` changes the `cwd` later hooks see.
            let mut call_base = base.clone();
            call_base.cwd = self.ctx.current_dir().to_string_lossy().into_owned();
            // The turn's `allowed-tools` (a command's, a skill's started earlier) allow what
            // would otherwise ask.
            // Only a turn that has some pays for the wrapper (every call passes here).
            let granted;
            let gate: &dyn PermissionGate = if grants.is_empty() {
                self.gate.as_ref()
            } else {
                granted = AllowedToolsGate::new(self.gate.as_ref(), &grants, &self.ctx);
                &granted
            };
            let pipeline = ToolPipeline {
                hooks: self.hooks.as_ref(),
                tools: &self.tools,
                gate,
                ctx: &self.ctx,
                observer: &self.sink,
            };
            let group_reports = futures_util::future::join_all(
                calls[next..next + group]
                    .iter()
                    .map(|call| pipeline.run(call, &call_base)),
            )
            .await;
            next += group;
            for report in group_reports {
                grants.extend(skill_grants(&report));
                if report.status == CallStatus::Refused {
                    outcome.denials.push(Denial {
                        tool_name: report.tool_name.clone(),
                        tool_use_id: report.tool_use_id.clone(),
                        tool_input: report.input.clone(),
                    });
                }
                let deferred = report.status == CallStatus::Deferred;
                let stop = report.stop_loop;
                let reason = report.stop_reason.clone();
                reports.push(report);
                if deferred {
                    end = Some(TurnEnd::Deferred);
                    break 'calls;
                }
                if stop && end.is_none() {
                    end = Some(TurnEnd::Stopped { reason });
                }
            }
        }
        let batch = if matches!(end, Some(TurnEnd::Deferred)) {
            None
        } else {
            let mut batch_base = base;
            batch_base.cwd = self.ctx.current_dir().to_string_lossy().into_owned();
            let pipeline = ToolPipeline {
                hooks: self.hooks.as_ref(),
                tools: &self.tools,
                gate: self.gate.as_ref(),
                ctx: &self.ctx,
                observer: &self.sink,
            };
            Some(pipeline.batch(&reports, &batch_base).await)
        };
        self.turn_grants = grants;

        for report in &reports {
            if let Some(mode) = &report.mode_changed {
                self.mode_switched(mode);
            }
            if let Some(response) = &report.response {
                let (added, removed) = changed_lines(&report.tool_name, response);
                self.usage.lines_added += added;
                self.usage.lines_removed += removed;
            }
        }
        let mut content: Vec<ContentBlock> = reports
            .iter()
            .map(|r| ContentBlock::ToolResult {
                tool_use_id: r.tool_use_id.clone(),
                content: r.content.clone(),
                is_error: r.is_error,
            })
            .collect();
        // Calls after a deferred one never ran; the API still needs a result for each.
        for call in calls.iter().skip(reports.len()) {
            content.push(ContentBlock::ToolResult {
                tool_use_id: call.id.clone(),
                content: "Not run: an earlier tool call in this message was deferred".to_string(),
                is_error: true,
            });
        }
        // What a tool sends after its result (the Skill tool's instructions), in call order.
        for r in &reports {
            let follow_ups = self.ctx.take_follow_ups(&r.tool_use_id);
            // A started skill's instructions count as a turn of their own in Claude Code
            // 2.1.328's `num_turns` (fixtures `skill_bang`, `skill_needs_approval`).
            if !follow_ups.is_empty() {
                outcome.num_turns = outcome.num_turns.saturating_add(1);
            }
            content.extend(
                follow_ups
                    .into_iter()
                    .map(|text| ContentBlock::Text { text }),
            );
        }
        for r in &reports {
            self.pending.extend(r.context.iter().cloned());
        }
        if let Some(batch) = batch {
            self.pending.extend(batch.context);
            if batch.stop_loop && end.is_none() {
                end = Some(TurnEnd::Stopped {
                    reason: batch.stop_reason,
                });
            }
        }
        self.messages.push(Message {
            role: Role::User,
            content,
        });
        if let Some(TurnEnd::Deferred) = end {
            outcome.result = String::new();
        }
        end
    }
}

/// The `allowed-tools` a started skill grants for the rest of the turn (its
/// `tool_response.allowedTools`).
fn skill_grants(report: &crate::pipeline::CallReport) -> Vec<String> {
    if report.tool_name != "Skill" || report.status != CallStatus::Succeeded {
        return Vec::new();
    }
    report
        .response
        .as_ref()
        .and_then(|r| r.get("allowedTools"))
        .and_then(serde_json::Value::as_array)
        .map(|rules| {
            rules
                .iter()
                .filter_map(|r| r.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}
