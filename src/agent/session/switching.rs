//! Moving a running session to another id: `/clear` (a new session) and `/resume ID` (an old one
//! going on), each with SessionEnd before and SessionStart after.

use super::*;

impl Session {
    /// Makes this session `session_id`, recorded in `transcript_path`: a new transcript, hooks
    /// and tools told the new id, an empty history and usage, no prompt yet.
    pub(super) fn switch_to(&mut self, session_id: String, transcript_path: PathBuf) {
        let transcript = Transcript::new(
            transcript_path.clone(),
            &session_id,
            &self.config.project_dir,
        );
        if !self.persist {
            transcript.disable();
        }
        self.sink.transcript = transcript;
        if let Ok(mut outstanding) = self.sink.outstanding.lock() {
            outstanding.clear();
        }
        for (key, value) in &mut self.ctx.env {
            if key == "CLAUDE_CODE_SESSION_ID" {
                *value = session_id.clone();
            }
        }
        let output_dir = self
            .ctx
            .output_dir
            .as_ref()
            .map(|_| transcript_path.with_extension("").join("tool-results"));
        self.ctx.output_dir = output_dir.clone();
        if self.ctx.plan_file.is_some() {
            self.ctx.plan_file = Some(transcript_path.with_extension("").join("plan.md"));
        }
        // The model of the new conversation has read nothing yet.
        if let Ok(mut read) = self.ctx.in_context.lock() {
            read.clear();
        }
        self.hooks.switch_session(&session_id, output_dir);
        for follower in &self.followers {
            follower.session_changed(&session_id, &transcript_path);
        }
        self.config.session_id = session_id;
        self.config.transcript_path = transcript_path;
        self.messages.clear();
        self.pending.clear();
        self.usage = SessionUsage::default();
        self.prompt_id = None;
        if let Ok(mut current) = self.ctx.prompt_id.lock() {
            *current = None;
        }
        self.set_line_context();
    }

    /// `/clear`, as Claude Code 2.1.328 does it: SessionEnd (`reason: clear`) for this
    /// session, then a new session — a new id and transcript, an empty conversation — and
    /// SessionStart (`source: clear`) with the new id.
    pub(crate) async fn clear(&mut self) {
        self.fire::<SessionEnd>(SessionEndInput {
            base: self.base(HookEvent::SessionEnd),
            hook_event_name: HookEvent::SessionEnd,
            reason: "clear".to_string(),
        })
        .await;
        let id = uuid_v4();
        let path = self
            .config
            .transcript_path
            .with_file_name(format!("{id}.jsonl"));
        self.switch_to(id, path);
        self.touch_transcript();
        self.start_as("clear").await;
    }

    /// `/resume ID` inside a running session: SessionEnd (`reason: resume`) for this session,
    /// then session `session_id` goes on from `rebuilt` (its transcript is appended to), and
    /// SessionStart (`source: resume`) fires with its id, the command's `prompt_id`, the model
    /// and `facts`, as Claude Code 2.1.328 does.
    pub(crate) async fn resume_session(
        &mut self,
        session_id: String,
        transcript_path: PathBuf,
        rebuilt: crate::agent::resume::Rebuilt,
        facts: ResumeFacts,
    ) {
        let prompt_id = self.prompt_id.clone();
        self.fire::<SessionEnd>(SessionEndInput {
            base: self.base(HookEvent::SessionEnd),
            hook_event_name: HookEvent::SessionEnd,
            reason: "resume".to_string(),
        })
        .await;
        self.switch_to(session_id, transcript_path);
        self.resume_from(rebuilt);
        self.usage.context_tokens = facts.context_tokens;
        self.prompt_id = prompt_id;
        self.set_line_context();
        let mut base = self.base(HookEvent::SessionStart);
        base.prompt_id = self.prompt_id.clone();
        let estimated_cache_write_usd = facts
            .context_tokens
            .and_then(|tokens| crate::agent::cost::cache_write_usd(self.model.name(), tokens));
        self.start_with(SessionStartInput {
            base,
            hook_event_name: HookEvent::SessionStart,
            source: "resume".to_string(),
            model: Some(self.model.name().to_string()),
            seconds_since_last_response: facts.seconds_since_last_response,
            context_tokens: facts.context_tokens,
            prompt_cache_likely_expired: facts
                .seconds_since_last_response
                .map(|s| s >= PROMPT_CACHE_TTL_SECS),
            estimated_cache_write_usd,
        })
        .await;
    }

    /// Creates the (empty) transcript of a session that has written nothing yet, so a hook
    /// told its `transcript_path` finds the file, as it does with Claude Code.
    pub(super) fn touch_transcript(&self) {
        if !self.persist {
            return;
        }
        let path = &self.config.transcript_path;
        let made = path
            .parent()
            .map_or(Ok(()), crate::private_fs::create_dir_all)
            .and_then(|()| {
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)
                    .map(|_| ())
            });
        if let Err(e) = made {
            self.notice(&format!(
                "cannot create the transcript {}: {e}",
                path.display()
            ));
        }
    }
}
