//! Session lifecycle: SessionStart at open, the memory announcement (InstructionsLoaded),
//! SessionEnd within its budget at the end.

use super::*;

impl Session {
    pub(super) fn notice(&self, text: &str) {
        self.sink.observe(Progress::Notice { text });
    }

    /// Fires SessionStart (`source: startup`); its context goes in front of the first prompt,
    /// and the env files its hooks wrote are handed to the Bash tool.
    pub async fn start(&mut self) {
        self.start_as("startup").await;
    }

    /// The first SessionStart of a run, as Claude Code 2.1.328 sends it
    /// (fixtures `tests/fixtures/cc-2.1.328/interactive/`): an interactive `startup` names the
    /// model (a `-p` one does not); a `resume` (`-c`, `-r ID`) or `fork` (with
    /// `--fork-session`) carries `facts` about the resumed conversation and no model.
    pub(crate) async fn open(&mut self, source: &str, interactive: bool, facts: ResumeFacts) {
        let resumed = source == "resume" || source == "fork";
        let estimated_cache_write_usd = if resumed {
            facts
                .context_tokens
                .and_then(|tokens| crate::agent::cost::cache_write_usd(self.model.name(), tokens))
        } else {
            None
        };
        if resumed {
            self.usage.context_tokens = facts.context_tokens;
        }
        self.start_with(SessionStartInput {
            base: self.base(HookEvent::SessionStart),
            hook_event_name: HookEvent::SessionStart,
            source: source.to_string(),
            model: (interactive && source == "startup").then(|| self.model.name().to_string()),
            seconds_since_last_response: facts.seconds_since_last_response.filter(|_| resumed),
            context_tokens: facts.context_tokens.filter(|_| resumed),
            prompt_cache_likely_expired: facts
                .seconds_since_last_response
                .filter(|_| resumed)
                .map(|s| s >= PROMPT_CACHE_TTL_SECS),
            estimated_cache_write_usd,
        })
        .await;
    }

    /// [`Session::start`] with another `source`: `resume` after [`Session::resume_from`],
    /// `clear`, `compact`.
    pub(crate) async fn start_as(&mut self, source: &str) {
        self.start_with(SessionStartInput {
            base: self.base(HookEvent::SessionStart),
            hook_event_name: HookEvent::SessionStart,
            source: source.to_string(),
            model: None,
            seconds_since_last_response: None,
            context_tokens: None,
            prompt_cache_likely_expired: None,
            estimated_cache_write_usd: None,
        })
        .await;
    }

    /// Fires SessionStart with `input`, then what follows it (see [`Session::start`]).
    pub(super) async fn start_with(&mut self, input: SessionStartInput) {
        let source = input.source.clone();
        let outcome = self.fire::<SessionStart>(input).await;
        self.pending.extend(outcome.common.context);
        if let Ok(mut files) = self.ctx.env_files.lock() {
            *files = self.hooks.env_files();
        }
        let reason = if source == "compact" {
            "compact"
        } else {
            "session_start"
        };
        self.announce_memory(reason).await;
        self.sink.observe(Progress::SessionStarted {
            session_id: &self.config.session_id,
            model: self.model.name(),
        });
    }

    /// Fires InstructionsLoaded for each memory file (`reason` replaces `session_start` for
    /// top-level files, e.g. `compact`; imports keep `include`).
    pub(super) async fn announce_memory(&self, reason: &str) {
        for file in &self.memory {
            let load_reason = if file.load_reason == "include" {
                "include"
            } else {
                reason
            };
            self.fire::<InstructionsLoaded>(InstructionsLoadedInput {
                base: self.base(HookEvent::InstructionsLoaded),
                hook_event_name: HookEvent::InstructionsLoaded,
                file_path: file.path.to_string_lossy().into_owned(),
                memory_type: file.memory_type.to_string(),
                load_reason: load_reason.to_string(),
                parent_file_path: file
                    .parent
                    .as_ref()
                    .map(|p| p.to_string_lossy().into_owned()),
            })
            .await;
        }
    }

    pub(super) fn set_line_context(&self) {
        if let Ok(mut line) = self.sink.line.lock() {
            line.prompt_id = self.prompt_id.clone();
            line.permission_mode = Some(self.config.permission_mode.clone());
            line.agent_id = self.subagent.as_ref().map(|s| s.agent_id.clone());
            line.requested_model = Some(self.model.name().to_string());
            line.effort = self.model.effort().map(str::to_string);
        }
    }

    /// Fires SessionEnd with `reason` as its input's `reason` (`other`, `logout`,
    /// `prompt_input_exit`, …) within its time budget, then ends the hooks still running in
    /// the background. Runs once; later calls do nothing.
    pub async fn end(&mut self, reason: &str) {
        self.end_unless(reason, std::future::pending::<String>())
            .await;
    }

    /// [`Session::end`], cut short when `cancel` completes first: the SessionEnd hooks still
    /// running are cancelled at once (their process groups killed) and the notice names what
    /// `cancel` returned (`a second SIGINT`, say).
    pub(crate) async fn end_unless(&mut self, reason: &str, cancel: impl Future<Output = String>) {
        if self.ended {
            return;
        }
        self.ended = true;
        let budget = self.config.session_end_budget;
        let input = SessionEndInput {
            base: self.base(HookEvent::SessionEnd),
            hook_event_name: HookEvent::SessionEnd,
            reason: reason.to_string(),
        };
        // Why no own failure text: the engine renders `SessionEnd hook [<cmd>] failed: …` into
        // the decision's user messages, which `fire` already shows.
        let cut_short = tokio::select! {
            finished = tokio::time::timeout(budget, self.fire::<SessionEnd>(input)) => finished.err().map(|_| {
                format!(
                    "SessionEnd hooks did not finish within {} ms and were cancelled",
                    budget.as_millis()
                )
            }),
            what = cancel => Some(format!("SessionEnd hooks were cancelled by {what}")),
        };
        if let Some(notice) = cut_short {
            self.notice(&notice);
        }
        // Background commands end with their session (the CLI has already waited for them
        // where Claude Code does); a library caller gets the same.
        self.ctx.background.stop_all().await;
        self.hooks.shutdown().await;
    }
}
