//! Test support for the dispatcher tests: `Settings` built in code (no loader), hook inputs,
//! temp dirs and scripts.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::hooks::dispatch::{Dispatcher, HookEnvironment};
use crate::hooks::events::BaseInput;
use crate::hooks::events::post_tool_use::PostToolUseInput;
use crate::hooks::events::pre_tool_use::PreToolUseInput;
use crate::hooks::events::session_end::SessionEndInput;
use crate::hooks::events::session_start::SessionStartInput;
use crate::hooks::events::stop::StopInput;
use crate::hooks::events::user_prompt_submit::UserPromptSubmitInput;
use crate::hooks::spec::HookEvent;

pub use super::hook_compat::{Decision, HookInput, fire};
use crate::hooks::matcher::{IfCondition, Matcher};
use crate::settings::schema::{
    CommandHandler, ConfiguredHandler, HandlerKind, HandlerOrigin, Location, OnFailure, Settings,
    SourceKind,
};
use serde_json::{Value, json};

use crate::tests::harness::{Sandbox, sh_script, write_executable};

pub const SESSION: &str = "3f2b7a9e-1c4d-4e8f-9a0b-5c6d7e8f9a01";

/// A fresh project dir with `hooks/` and a fake home.
pub struct Fixture {
    sandbox: Sandbox,
    pub project: PathBuf,
    pub home: PathBuf,
}

impl Fixture {
    pub fn new() -> Fixture {
        let sandbox = Sandbox::new("project", &["project/hooks"]);
        Fixture {
            project: sandbox.project.clone(),
            home: sandbox.home.clone(),
            sandbox,
        }
    }

    /// Writes an executable `/bin/sh` script `hooks/<name>` and returns its path.
    pub fn script(&self, name: &str, body: &str) -> PathBuf {
        let path = self.project.join("hooks").join(name);
        write_executable(&path, sh_script(body));
        path
    }

    /// `name` in the temp dir, beside the project and home.
    pub fn path(&self, name: &str) -> PathBuf {
        self.sandbox.root.join(name)
    }

    pub fn env(&self) -> HookEnvironment {
        let mut env = HookEnvironment::new(
            &self.project,
            SESSION,
            self.home.join(".rein/session-env").join(SESSION),
        );
        env.home = Some(self.home.clone());
        env.output_dir = Some(self.home.join(".rein/tool-results"));
        env
    }

    pub fn dispatcher(&self, handlers: Vec<ConfiguredHandler>) -> Dispatcher {
        Dispatcher::new(settings(handlers).handlers, self.env())
    }

    pub fn base(&self) -> BaseInput {
        BaseInput {
            session_id: SESSION.into(),
            transcript_path: self
                .home
                .join(".rein/projects/p")
                .join(format!("{SESSION}.jsonl"))
                .to_string_lossy()
                .into_owned(),
            cwd: self.project.to_string_lossy().into_owned(),
            prompt_id: Some("prompt-1".into()),
            permission_mode: Some("default".into()),
            agent_id: None,
            agent_type: None,
            effort: None,
        }
    }

    pub fn pre_tool(&self, tool: &str, tool_input: Value) -> HookInput {
        HookInput::PreToolUse(PreToolUseInput {
            base: self.base(),
            hook_event_name: HookEvent::PreToolUse,
            tool_name: tool.into(),
            tool_input,
            tool_use_id: "toolu_1".into(),
            mcp_server: None,
        })
    }

    pub fn bash(&self, command: &str) -> HookInput {
        self.pre_tool("Bash", json!({ "command": command }))
    }

    pub fn post_bash(&self) -> HookInput {
        HookInput::PostToolUse(PostToolUseInput {
            base: self.base(),
            hook_event_name: HookEvent::PostToolUse,
            tool_name: "Bash".into(),
            tool_input: json!({"command": "ls"}),
            tool_response: json!({"stdout": "x", "stderr": "", "interrupted": false}),
            tool_use_id: "toolu_1".into(),
            duration_ms: 3,
            mcp_server: None,
        })
    }

    pub fn prompt(&self, prompt: &str) -> HookInput {
        let mut base = self.base();
        base.effort = None;
        HookInput::UserPromptSubmit(UserPromptSubmitInput {
            base,
            hook_event_name: HookEvent::UserPromptSubmit,
            prompt: prompt.into(),
        })
    }

    pub fn session_start(&self) -> HookInput {
        let mut base = self.base();
        base.prompt_id = None;
        base.permission_mode = None;
        HookInput::SessionStart(SessionStartInput {
            base,
            hook_event_name: HookEvent::SessionStart,
            source: "startup".into(),
            model: None,
            seconds_since_last_response: None,
            context_tokens: None,
            prompt_cache_likely_expired: None,
            estimated_cache_write_usd: None,
        })
    }

    pub fn session_end(&self) -> HookInput {
        let mut base = self.base();
        base.permission_mode = None;
        HookInput::SessionEnd(SessionEndInput {
            base,
            hook_event_name: HookEvent::SessionEnd,
            reason: "other".into(),
        })
    }

    pub fn stop(&self) -> HookInput {
        HookInput::Stop(StopInput {
            base: self.base(),
            hook_event_name: HookEvent::Stop,
            stop_hook_active: false,
            last_assistant_message: Some("done".into()),
            background_tasks: vec![],
            session_crons: vec![],
        })
    }
}

pub fn settings(handlers: Vec<ConfiguredHandler>) -> Settings {
    Settings {
        handlers,
        ..Settings::default()
    }
}

/// A shell-form command handler from user settings, at `group`/`index` 0/N.
pub fn handler(event: HookEvent, matcher: Option<&str>, command: &str) -> ConfiguredHandler {
    static COUNTER: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(1);
    let line = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    ConfiguredHandler {
        event: Some(event),
        matcher_text: matcher.map(str::to_string),
        matcher: Matcher::compile(Some(event), matcher),
        if_text: None,
        if_condition: None,
        kind: HandlerKind::Command(CommandHandler {
            command: command.into(),
            args: None,
            shell: None,
            is_async: false,
            async_rewake: false,
        }),
        timeout: None,
        status_message: None,
        on_failure: OnFailure::Continue,
        once: false,
        shadow: false,
        warm: true,
        origin: HandlerOrigin {
            source: SourceKind::User,
            event_key: event.as_str().into(),
            group: 0,
            index: line as usize,
            location: Location {
                file: Arc::from("/test/settings.json"),
                line,
                col: 5,
            },
            plugin: None,
        },
        inactive: None,
    }
}

pub fn with_if(mut h: ConfiguredHandler, rule: &str) -> ConfiguredHandler {
    h.if_text = Some(rule.into());
    h.if_condition = Some(IfCondition::parse(rule).expect("if rule"));
    h
}

pub fn with_source(mut h: ConfiguredHandler, source: SourceKind) -> ConfiguredHandler {
    h.origin.source = source;
    h
}

pub fn with_timeout(mut h: ConfiguredHandler, secs: f64) -> ConfiguredHandler {
    h.timeout = Some(secs);
    h
}

pub fn asynchronous(mut h: ConfiguredHandler) -> ConfiguredHandler {
    if let HandlerKind::Command(c) = &mut h.kind {
        c.is_async = true;
    }
    h
}

pub fn exec(mut h: ConfiguredHandler, args: &[&str]) -> ConfiguredHandler {
    if let HandlerKind::Command(c) = &mut h.kind {
        c.args = Some(args.iter().map(|s| s.to_string()).collect());
    }
    h
}

/// Shell command printing `json` on stdout.
pub fn print_json(value: &Value) -> String {
    format!("printf '%s' '{}'", value.to_string().replace('\'', r"'\''"))
}

pub fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

/// `dispatcher.fire_input(&input)`: [`fire`] as a method, for chained calls.
pub trait FireInput {
    fn fire_input<'a>(
        &'a self,
        input: &'a HookInput,
    ) -> impl std::future::Future<Output = Decision> + 'a;
}

impl FireInput for Dispatcher {
    fn fire_input<'a>(
        &'a self,
        input: &'a HookInput,
    ) -> impl std::future::Future<Output = Decision> + 'a {
        fire(self, input)
    }
}
