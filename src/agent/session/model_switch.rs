//! `/model`: PreModelSwitch, the switch (the system prompt rebuilt for the new model),
//! PostModelSwitch; and the permission mode switch of the Agent SDK.

use super::*;

impl Session {
    /// `/model NAME`: the following requests go to `model`. Fires PreModelSwitch (a hook may
    /// deny the switch) and, once switched, PostModelSwitch, with `requested` as the name the
    /// user typed. `Err` names why the model stays.
    pub(crate) async fn switch_model(
        &mut self,
        model: Arc<dyn Model>,
        requested: &str,
    ) -> Result<(), String> {
        let input = self.model_switch_input(model.name(), requested);
        let pre = self.fire::<PreModelSwitch>(input.clone()).await;
        if let Some(reason) = pre.denied {
            return Err(if reason.is_empty() {
                "a PreModelSwitch hook denied the switch".to_string()
            } else {
                format!("a PreModelSwitch hook denied the switch: {reason}")
            });
        }
        self.adopt_model(&model);
        let post = self
            .fire::<PostModelSwitch>(PostModelSwitchInput {
                base: self.base(HookEvent::PostModelSwitch),
                hook_event_name: HookEvent::PostModelSwitch,
                ..input
            })
            .await;
        self.pending.extend(post.common.context);
        Ok(())
    }

    /// The following requests go to `model`: the system prompt names it, compaction follows
    /// its window, the subagents and hook models follow.
    pub(super) fn adopt_model(&mut self, model: &Arc<dyn Model>) {
        if let Some(prompt) = self.prompt.as_mut() {
            prompt.environment.model = model.name().to_string();
            self.system = Some(prompt.text());
        }
        self.model = Arc::clone(model);
        self.compaction = CompactPolicy::from_env(model.name());
        for follower in &self.followers {
            follower.model_changed(model);
        }
    }

    /// `--fallback-model`: when the model is overloaded (after the provider's retries), the
    /// session switches to `model` for the rest of its requests, once.
    pub fn set_fallback_model(&mut self, model: Option<Arc<dyn Model>>) {
        self.fallback = model;
    }

    /// A call switched the mode (the gate and the tools' context already follow it): the
    /// hook inputs and the subagents follow from now on.
    pub(super) fn mode_switched(&mut self, mode: &str) {
        self.config.permission_mode = mode.to_string();
        for follower in &self.followers {
            follower.permission_mode_changed(mode);
        }
    }

    /// The permission mode the session's calls run in now (as hook inputs carry it).
    pub(crate) fn permission_mode(&self) -> &str {
        &self.config.permission_mode
    }

    /// Switches the permission mode for the following calls (the Agent SDK's
    /// `set_permission_mode`): the permission step's and the one hook inputs carry. `Err` says
    /// why the mode stays.
    pub(crate) fn set_permission_mode(&mut self, mode: &str) -> Result<(), String> {
        self.gate.set_mode(mode)?;
        self.config.permission_mode = match mode {
            "manual" | "auto" => "default".to_string(),
            other => other.to_string(),
        };
        self.ctx.set_mode(&self.config.permission_mode);
        for follower in &self.followers {
            follower.permission_mode_changed(&self.config.permission_mode);
        }
        Ok(())
    }

    /// The stdin of PreModelSwitch/PostModelSwitch for a switch to `to_model`.
    pub(super) fn model_switch_input(
        &self,
        to_model: &str,
        requested: &str,
    ) -> PreModelSwitchInput {
        let context_tokens = self.usage.context_tokens.unwrap_or(0);
        let estimated_cache_write_usd =
            crate::agent::cost::cache_write_usd(to_model, context_tokens);
        PreModelSwitchInput {
            base: self.base(HookEvent::PreModelSwitch),
            hook_event_name: HookEvent::PreModelSwitch,
            from_model: self.model.name().to_string(),
            to_model: to_model.to_string(),
            requested_model: Some(requested.to_string()),
            source: "command".to_string(),
            context_tokens,
            prompt_cache_warm: self.usage.requests > 0,
            cache_ttl: "5m".to_string(),
            estimated_cache_write_usd,
            pricing: if estimated_cache_write_usd.is_some() {
                "configured"
            } else {
                "default"
            }
            .to_string(),
        }
    }
}
