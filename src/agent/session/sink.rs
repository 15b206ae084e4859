//! The session's observer: writes progress to the transcript in Claude Code's line order
//! (holding hook firings until the line they follow), then passes it on.

use super::*;

/// Writes progress to the transcript, then passes it on.
pub(super) struct Sink {
    pub(super) transcript: Transcript,
    pub(super) line: Mutex<LineContext>,
    /// `(id, name)` of the last assistant message's tool calls that have no result yet, so an
    /// interruption can still answer each one (a transcript never ends on an unanswered
    /// `tool_use`).
    pub(super) outstanding: Mutex<Vec<(String, String)>>,
    /// The text the model has streamed so far of the reply being received (`None` while no
    /// request is under way), so a turn stopped mid-reply can keep what the person saw.
    pub(super) streaming: Mutex<Option<String>>,
    /// Hook firings whose lines Claude Code writes after the line they are about.
    pub(super) held: Mutex<Held>,
    pub(super) next: Box<dyn Observer>,
}

/// One hook firing, kept until its lines may be written.
pub(super) type Firing = Arc<HookReport>;

/// Claude Code writes a UserPromptSubmit firing after the prompt line, a PostToolUse firing
/// after its tool-result line, and a blocking Stop firing after the feedback line; rein fires
/// them before, so their lines wait here.
#[derive(Default)]
pub(super) struct Held {
    pub(super) prompt: Vec<Firing>,
    pub(super) tool: Vec<Firing>,
    pub(super) stop: Vec<Firing>,
    /// Tool calls a PreToolUse hook refused (their result line names the hook).
    pub(super) refused_by_hook: std::collections::HashSet<String>,
}

impl Sink {
    pub(super) fn set_streaming(&self, value: Option<String>) {
        if let Ok(mut streaming) = self.streaming.lock() {
            *streaming = value;
        }
    }

    pub(super) fn line(&self) -> LineContext {
        match self.line.lock() {
            Ok(l) => l.clone(),
            Err(_) => LineContext::default(),
        }
    }

    pub(super) fn write_firing(&self, ctx: &LineContext, f: &Firing) {
        if is_stop(f) {
            self.transcript.stop_hooks(ctx, f);
        } else {
            self.transcript.hook_decision(f);
        }
    }

    /// Writes the held firings `pick` selects, in the order they fired.
    pub(super) fn release(&self, ctx: &LineContext, pick: impl Fn(&mut Held) -> Vec<Firing>) {
        let firings = match self.held.lock() {
            Ok(mut held) => pick(&mut held),
            Err(_) => Vec::new(),
        };
        for f in &firings {
            self.write_firing(ctx, f);
        }
    }

    pub(super) fn release_all(&self, ctx: &LineContext) {
        self.release(ctx, |h| {
            let mut all = std::mem::take(&mut h.prompt);
            all.append(&mut h.tool);
            all.append(&mut h.stop);
            all
        });
    }

    pub(super) fn transcribe(&self, ctx: &LineContext, progress: &Progress<'_>) {
        match *progress {
            Progress::RequestStarted => self.set_streaming(Some(String::new())),
            Progress::TextDelta { text } => {
                if let Ok(mut streaming) = self.streaming.lock()
                    && let Some(so_far) = streaming.as_mut()
                {
                    so_far.push_str(text);
                }
            }
            Progress::SessionStarted { .. }
            | Progress::ToolStart { .. }
            | Progress::StreamEvent { .. }
            | Progress::Notice { .. } => {}
            Progress::Prompt { text, .. } => {
                self.set_streaming(None);
                self.release(ctx, |h| {
                    let mut all = std::mem::take(&mut h.tool);
                    all.append(&mut h.stop);
                    all
                });
                self.transcript.user_prompt(ctx, text);
                self.release(ctx, |h| std::mem::take(&mut h.prompt));
            }
            Progress::Assistant { response, .. } => {
                self.set_streaming(None);
                self.release_all(ctx);
                let calls = response.content.iter().filter_map(|b| match b {
                    ContentBlock::ToolUse { id, name, .. } => Some((id.clone(), name.clone())),
                    ContentBlock::Text { .. }
                    | ContentBlock::SystemNote { .. }
                    | ContentBlock::ToolResult { .. } => None,
                });
                if let Ok(mut outstanding) = self.outstanding.lock() {
                    *outstanding = calls.collect();
                }
                self.transcript.assistant(ctx, response)
            }
            Progress::ToolResult {
                tool_use_id,
                name,
                content,
                is_error,
                status,
                response,
            } => {
                self.release(ctx, |h| {
                    let mut all = std::mem::take(&mut h.prompt);
                    all.append(&mut h.stop);
                    all
                });
                if let Ok(mut outstanding) = self.outstanding.lock() {
                    outstanding.retain(|(id, _)| id != tool_use_id);
                }
                let by_hook = self
                    .held
                    .lock()
                    .is_ok_and(|mut h| h.refused_by_hook.remove(tool_use_id));
                let decision = match status {
                    CallStatus::Refused if by_hook => ToolDecision::RejectedByHook,
                    CallStatus::Succeeded | CallStatus::Failed
                        if ctx.permission_mode.as_deref() == Some("bypassPermissions") =>
                    {
                        ToolDecision::AcceptedByMode
                    }
                    _ => ToolDecision::Unrecorded,
                };
                self.transcript.tool_result(
                    ctx,
                    &ToolResultLine {
                        tool_use_id,
                        tool_name: name,
                        content,
                        is_error,
                        tool_use_result: response,
                        decision,
                    },
                );
                self.release(ctx, |h| {
                    let (mine, rest) = std::mem::take(&mut h.tool)
                        .into_iter()
                        .partition(|f| f.tool_use_id.as_deref() == Some(tool_use_id));
                    h.tool = rest;
                    mine
                });
            }
            Progress::Hook(report) => {
                let firing = Arc::clone(report);
                let Ok(mut held) = self.held.lock() else {
                    return;
                };
                let blocks = report.runs.iter().any(|r| r.outcome.is_blocking());
                match HookEvent::parse(report.event) {
                    Some(HookEvent::UserPromptSubmit) => held.prompt.push(firing),
                    Some(HookEvent::PostToolUse | HookEvent::PostToolUseFailure)
                        if report.tool_use_id.is_some() =>
                    {
                        held.tool.push(firing)
                    }
                    Some(HookEvent::Stop | HookEvent::SubagentStop)
                        if blocks || !report.context.is_empty() =>
                    {
                        held.stop.push(firing)
                    }
                    event => {
                        if event == Some(HookEvent::PreToolUse)
                            && let Some(id) = &report.tool_use_id
                            && blocks
                        {
                            held.refused_by_hook.insert(id.clone());
                        }
                        drop(held);
                        self.write_firing(ctx, &firing);
                    }
                }
            }
            Progress::Feedback { message } => {
                self.release(ctx, |h| {
                    let mut all = std::mem::take(&mut h.prompt);
                    all.append(&mut h.tool);
                    all
                });
                self.transcript.user_blocks(ctx, &message.content);
                self.release(ctx, |h| std::mem::take(&mut h.stop));
            }
        }
    }
}

impl Drop for Sink {
    fn drop(&mut self) {
        let ctx = self.line();
        self.release_all(&ctx);
    }
}

impl Observer for Sink {
    fn observe(&self, progress: Progress<'_>) {
        let ctx = self.line();
        self.transcribe(&ctx, &progress);
        if let Some(text) = self.transcript.take_new_fault_notice() {
            self.next.observe(Progress::Notice { text: &text });
        }
        self.next.observe(progress);
    }
}

/// Stop and SubagentStop firings are written as Claude Code writes Stop's.
fn is_stop(report: &HookReport) -> bool {
    matches!(
        HookEvent::parse(report.event),
        Some(HookEvent::Stop | HookEvent::SubagentStop)
    )
}
