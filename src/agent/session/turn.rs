//! The turn loop for one prompt: UserPromptSubmit, model rounds, tool rounds, Stop and its
//! block cap, StopFailure, and background notifications between turns.

use super::*;

impl Session {
    /// Runs one prompt to the end of its turn.
    pub async fn run_prompt(&mut self, prompt: &str) -> TurnOutcome {
        self.run_turn(prompt, None).await
    }

    /// Runs a turn that tells the model how background commands ended (the `-p` session's
    /// follow-up, as Claude Code runs one per finished command): `UserPromptSubmit` sees the
    /// `<task-notification>` blocks as the prompt, the model sees them in a system reminder
    /// that says no person wrote them. `None` when no command has ended unannounced.
    pub async fn run_background_notification(&mut self) -> Option<TurnOutcome> {
        // One task per turn: the others that ended stay for the turns after it.
        let task = self.ctx.background.take_first_unannounced()?;
        let notification = task.notification()?;
        let text = format!("{BACKGROUND_NOTICE}\n\n{notification}");
        Some(
            self.run_turn(&notification, Some(system_reminder(&text)))
                .await,
        )
    }

    /// One turn: `prompt` is what UserPromptSubmit and the transcript see; `for_model`, when
    /// given, replaces it in the request.
    pub(super) async fn run_turn(
        &mut self,
        prompt: &str,
        for_model: Option<ContentBlock>,
    ) -> TurnOutcome {
        let prompt_id = uuid_v4();
        self.prompt_id = Some(prompt_id.clone());
        self.turn_id = uuid_v4();
        if let Ok(mut current) = self.ctx.prompt_id.lock() {
            *current = Some(prompt_id.clone());
        }
        self.set_line_context();
        // Plan mode's standing note (where the plan goes), with each prompt while it is on.
        if self.config.permission_mode == "plan"
            && let Some(plan_file) = &self.ctx.plan_file
        {
            self.pending
                .push(crate::tools::plan_mode::plan_mode_note(plan_file));
        }
        let mut outcome = TurnOutcome::begun();

        let ups = self
            .fire::<UserPromptSubmit>(UserPromptSubmitInput {
                base: self.base(HookEvent::UserPromptSubmit),
                hook_event_name: HookEvent::UserPromptSubmit,
                prompt: prompt.to_string(),
            })
            .await;
        if ups.blocked_text.is_some() || ups.block.is_some() {
            let text = ups.blocked_text.clone().unwrap_or_else(|| {
                format!(
                    "UserPromptSubmit operation blocked by hook:\n{}\n\nOriginal prompt: {prompt}",
                    ups.block.clone().unwrap_or_default()
                )
            });
            outcome.result = text.clone();
            outcome.end = TurnEnd::PromptBlocked { text };
            return outcome;
        }
        if ups.common.stop_loop {
            outcome.end = TurnEnd::Stopped {
                reason: ups.common.stop_reason.clone(),
            };
            return outcome;
        }

        // A slash command's body replaces the prompt for the model (UserPromptSubmit saw the
        // prompt as typed, as Claude Code's does).
        let mut command_messages = None;
        let mut command_model = None;
        self.turn_grants.clear();
        if for_model.is_none()
            && let Some((entry, args)) = self.command_for(prompt)
        {
            match self.expand_command(&entry, &args).await {
                command::Expansion::Messages(messages) => {
                    command_messages = Some(messages);
                    command_model = entry.model.clone();
                    self.turn_grants = entry.allowed_tools.clone();
                }
                command::Expansion::Failed(text) => {
                    outcome.result = text.clone();
                    outcome.end = TurnEnd::PromptBlocked { text };
                    return outcome;
                }
            }
        }

        self.sink.observe(Progress::Prompt {
            prompt_id: &prompt_id,
            text: prompt,
        });
        let pending: Vec<ContentBlock> = self.pending.drain(..).map(|t| system_note(&t)).collect();
        let context = ups.common.context.iter().map(|t| system_note(t));
        let mut messages = match command_messages {
            Some(mut messages) => {
                if let Some(first) = messages.first_mut() {
                    first.content.splice(0..0, pending);
                }
                if let Some(last) = messages.last_mut() {
                    last.content.extend(context);
                }
                messages
            }
            None => {
                let mut content = pending;
                content.push(for_model.unwrap_or_else(|| ContentBlock::Text {
                    text: prompt.to_string(),
                }));
                content.extend(context);
                vec![Message {
                    role: Role::User,
                    content,
                }]
            }
        };
        match self.messages.last_mut() {
            // After a stopped tool call the prompt joins the user message of its results, as
            // Claude Code sends it.
            Some(last) if ends_in_interruption(last) && !messages.is_empty() => {
                last.content.extend(messages.remove(0).content)
            }
            Some(_) | None => {}
        }
        self.messages.extend(messages);

        // A command's `model` answers its turn (every request of it, as in Claude Code
        // 2.1.328: fixture `command_model`); the session's model answers the next prompt. An
        // alias (`haiku`, …) has no provider id in rein and keeps the session's model.
        let session_model = match command_model.as_deref() {
            Some(wanted) if wanted != self.model.name() => {
                let picked = crate::agent::subagent::pick_model(
                    &self.model,
                    self.model_factory.as_ref(),
                    Some(wanted),
                );
                (!Arc::ptr_eq(&picked, &self.model))
                    .then(|| std::mem::replace(&mut self.model, picked))
            }
            _ => None,
        };
        self.turn_loop(&mut outcome).await;
        if let Some(model) = session_model {
            self.model = model;
        }
        outcome
    }

    /// Pending and async context, merged into the last user message.
    pub(super) fn deliver_pending(&mut self) {
        let mut entries: Vec<String> = self.pending.drain(..).collect();
        entries.extend(self.hooks.take_async_context());
        let mut blocks: Vec<ContentBlock> = entries.iter().map(|t| system_note(t)).collect();
        // Background commands that ended while the model was working (or, interactively,
        // while the person was typing): told at the next request.
        blocks.extend(
            self.ctx
                .background
                .take_unannounced()
                .iter()
                .filter_map(|t| t.notification())
                .map(|n| system_reminder(&format!("{BACKGROUND_NOTICE}\n\n{n}"))),
        );
        if blocks.is_empty() {
            return;
        }
        match self.messages.last_mut() {
            Some(last) if last.role == Role::User => last.content.extend(blocks),
            Some(_) | None => self.messages.push(Message {
                role: Role::User,
                content: blocks,
            }),
        }
    }

    pub(super) async fn turn_loop(&mut self, outcome: &mut TurnOutcome) {
        let mut stop_hook_active = false;
        let mut stop_blocks: u32 = 0;
        loop {
            if let Some(max) = self.config.max_turns
                && outcome.requests >= max
            {
                outcome.end = TurnEnd::MaxTurns;
                return;
            }
            if let Some(budget) = self.budget_reached() {
                outcome.end = TurnEnd::BudgetReached(budget);
                return;
            }
            if self.context_full() {
                self.compact("auto", None).await;
            }
            self.deliver_pending();
            let specs = self.offered_specs();
            let sink = &self.sink;
            let on_text = move |text: &str| sink.observe(Progress::TextDelta { text });
            let streamed = std::sync::atomic::AtomicBool::new(false);
            let on_event = |event: &serde_json::Value| {
                streamed.store(true, std::sync::atomic::Ordering::Relaxed);
                sink.observe(Progress::StreamEvent { event });
            };
            let request = Request {
                system: self.system.as_deref(),
                messages: &self.messages,
                tools: &specs,
                on_text: Some(&on_text),
                on_event: if self.stream_events {
                    Some(&on_event)
                } else {
                    None
                },
            };
            self.sink.observe(Progress::RequestStarted);
            let asked = std::time::Instant::now();
            let answer = self.model.respond(request).await;
            let waited = asked.elapsed().as_millis() as u64;
            outcome.api_ms += waited;
            self.usage.api_ms += waited;
            let response = match answer {
                Ok(r) => {
                    // A model that does not stream (the mock, an embedder's own): its reply's
                    // events, built whole, before the reply.
                    if self.stream_events && !streamed.load(std::sync::atomic::Ordering::Relaxed) {
                        crate::agent::providers::events::replay(&r, &|event| {
                            sink.observe(Progress::StreamEvent { event })
                        });
                    }
                    r
                }
                Err(err)
                    if err.kind == crate::model::ModelErrorKind::Overloaded
                        && self.fallback.is_some() =>
                {
                    if let Some(fallback) = self.fallback.take() {
                        self.notice(&format!(
                            "{} is overloaded ({}); switching to the fallback model {} for the rest of the session",
                            self.model.name(),
                            err.message,
                            fallback.name()
                        ));
                        self.adopt_model(&fallback);
                    }
                    continue;
                }
                Err(err) => {
                    self.fire::<StopFailure>(StopFailureInput {
                        base: self.base(HookEvent::StopFailure),
                        hook_event_name: HookEvent::StopFailure,
                        error: err.kind.as_str().to_string(),
                        error_details: Some(err.message.clone()),
                        last_assistant_message: if outcome.result.is_empty() {
                            None
                        } else {
                            Some(outcome.result.clone())
                        },
                    })
                    .await;
                    outcome.end = TurnEnd::ModelFailed(err);
                    return;
                }
            };
            outcome.requests += 1;
            let calls = response
                .content
                .iter()
                .filter(|b| matches!(b, ContentBlock::ToolUse { .. }))
                .count();
            outcome.num_turns += u32::try_from(calls.max(1)).unwrap_or(u32::MAX);
            outcome.model_stop_reason = Some(response.stop_reason);
            self.usage.record(&response.model, response.usage.as_ref());
            if response.usage.is_none() && self.compaction.auto && !self.blind_noticed {
                self.blind_noticed = true;
                self.notice(&format!(
                    "The model provider reported no token usage, so rein cannot tell how full \
                     the context of {} is: automatic compaction is off for this session \
                     (/compact still works).",
                    response.model
                ));
            }
            if let Some(usage) = &response.usage {
                outcome.usage.add(usage);
                add_model_usage(&mut outcome.model_usage, &response.model, usage);
            }
            let text = response_text(&response);
            let display = self.message_display(&text).await;
            self.sink.observe(Progress::Assistant {
                response: &response,
                display: display.as_deref(),
            });
            if !text.is_empty() {
                outcome.result = text.clone();
            }
            let calls: Vec<ToolCall> = response
                .content
                .iter()
                .filter_map(|b| match b {
                    ContentBlock::ToolUse { id, name, input } => Some(ToolCall {
                        id: id.clone(),
                        name: name.clone(),
                        input: input.clone(),
                    }),
                    ContentBlock::Text { .. }
                    | ContentBlock::SystemNote { .. }
                    | ContentBlock::ToolResult { .. } => None,
                })
                .collect();
            self.messages.push(Message {
                role: Role::Assistant,
                content: response.content.clone(),
            });

            // Claude Code 2.1.328 stops here, before the reply's calls run (fixture
            // `agent_sdk/max_budget`); the calls get a result that says so, so the conversation
            // stays one the API takes.
            if !calls.is_empty()
                && let Some(budget) = self.budget_reached()
            {
                self.messages.push(Message {
                    role: Role::User,
                    content: calls
                        .iter()
                        .map(|c| ContentBlock::ToolResult {
                            tool_use_id: c.id.clone(),
                            content: format!("Not run: the session reached its budget (${budget})"),
                            is_error: true,
                        })
                        .collect(),
                });
                outcome.end = TurnEnd::BudgetReached(budget);
                return;
            }
            if !calls.is_empty() {
                if let Some(end) = self.run_calls(&calls, outcome).await {
                    outcome.end = end;
                    return;
                }
                continue;
            }
            if text.trim().is_empty() {
                // Why: exit 0 with nothing printed would otherwise look like rein lost the answer.
                self.notice(&format!(
                    "The model ({}) sent an empty reply: no text and no tool calls.",
                    self.model.name()
                ));
            }

            let (common, feedback) = self.fire_stop(stop_hook_active, text).await;
            if common.stop_loop {
                outcome.end = TurnEnd::Stopped {
                    reason: common.stop_reason.clone(),
                };
                return;
            }
            if feedback.is_none() && common.context.is_empty() {
                outcome.end = TurnEnd::Completed;
                return;
            }
            if stop_blocks >= self.config.stop_block_cap {
                let event = if self.subagent.is_some() {
                    "SubagentStop"
                } else {
                    "Stop"
                };
                self.notice(&format!(
                    "{event} hooks kept the turn going {} times in a row; ending the turn \
                     (CLAUDE_CODE_STOP_HOOK_BLOCK_CAP raises the limit)",
                    self.config.stop_block_cap
                ));
                outcome.end = TurnEnd::Completed;
                outcome.stop_capped = true;
                return;
            }
            stop_blocks += 1;
            stop_hook_active = true;
            if feedback.is_none() {
                outcome.num_turns = outcome.num_turns.saturating_sub(1);
            }
            let mut content = Vec::new();
            if let Some(text) = feedback {
                content.push(ContentBlock::Text { text });
            }
            // Stop's additional context comes wrapped as a reminder of the user message (its
            // fold wraps it); its blocking errors are system notes (fixture `ctx_place2`).
            content.extend(common.context.iter().map(|t| {
                if t.starts_with("<system-reminder>") {
                    ContentBlock::Text { text: t.clone() }
                } else {
                    system_note(t)
                }
            }));
            let message = Message {
                role: Role::User,
                content,
            };
            self.sink.observe(Progress::Feedback { message: &message });
            self.messages.push(message);
        }
    }

    /// Stop's `background_tasks`: the background commands still running.
    pub(super) fn running_background(&self) -> Vec<serde_json::Value> {
        self.ctx
            .background
            .running()
            .iter()
            .map(|t| t.stop_entry())
            .collect()
    }

    /// Fires Stop, or SubagentStop in a subagent; the shared part of the outcome and the
    /// feedback the turn continues with, if any.
    pub(super) async fn fire_stop(
        &self,
        stop_hook_active: bool,
        text: String,
    ) -> (crate::hooks::events::Common, Option<String>) {
        if let Some(identity) = &self.subagent {
            let stop = self
                .fire::<SubagentStop>(SubagentStopInput {
                    base: self.base(HookEvent::SubagentStop),
                    hook_event_name: HookEvent::SubagentStop,
                    stop_hook_active,
                    agent_transcript_path: self
                        .config
                        .transcript_path
                        .to_string_lossy()
                        .into_owned(),
                    last_assistant_message: Some(text),
                    background_tasks: self.running_background(),
                    session_crons: Vec::new(),
                })
                .await;
            let _ = identity;
            return (stop.common, stop.feedback);
        }
        let stop = self
            .fire::<Stop>(StopInput {
                base: self.base(HookEvent::Stop),
                hook_event_name: HookEvent::Stop,
                stop_hook_active,
                last_assistant_message: Some(text),
                background_tasks: self.running_background(),
                session_crons: Vec::new(),
            })
            .await;
        let feedback = stop.feedback.clone().or_else(|| {
            stop.block
                .as_ref()
                .map(|b| format!("Stop hook feedback:\n{b}"))
        });
        (stop.common, feedback)
    }

    /// Fires MessageDisplay for a reply with text (not in a subagent: its messages are not
    /// shown); what its hooks want shown instead, if anything.
    pub(super) async fn message_display(&self, text: &str) -> Option<String> {
        if text.is_empty() || self.subagent.is_some() {
            return None;
        }
        let input = MessageDisplayInput {
            base: self.base(HookEvent::MessageDisplay),
            hook_event_name: HookEvent::MessageDisplay,
            turn_id: self.turn_id.clone(),
            message_id: uuid_v4(),
            index: 0,
            is_final: true,
            delta: text.to_string(),
        };
        self.fire::<MessageDisplay>(input).await.display_content
    }
}
