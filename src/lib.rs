//! rein: a local agent harness that runs Claude Code hooks unchanged.
//!
//! As a library, rein is an [`Engine`]: settings files, permission rules, a model and the
//! built-in tools, wired as the `rein` binary wires them, plus typed in-process hooks
//! ([`Engine::on`]) that run after the configured command hooks of their event. A session runs
//! from the engine: [`Engine::run`] for one prompt, [`Engine::session`] for several.
//!
//! # Example
//!
//! A hook that refuses `rm -rf`, and a prompt to the default offline mock model asking for
//! exactly that. An allow rule lets the command through the permission step, so only the hook
//! stands in its way.
//!
//! ```
//! use rein::events::PreToolUse;
//! use rein::{Engine, HookReply};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let tmp = tempfile::tempdir()?;
//! let project = tmp.path().join("project");
//! std::fs::create_dir_all(project.join("scratch"))?;
//!
//! let engine = Engine::builder(&project)
//!     .home(tmp.path().join("home"))
//!     .read_settings_files(false)
//!     .allow("Bash(rm -rf scratch)")
//!     .build()?;
//! let _hook = engine.on::<PreToolUse, _, _>("Bash", |input| async move {
//!     let command = input.tool_input["command"].as_str().unwrap_or_default();
//!     if command.starts_with("rm -rf") {
//!         PreToolUse::deny("rm -rf is not allowed here")
//!     } else {
//!         HookReply::none()
//!     }
//! })?;
//!
//! let runtime = tokio::runtime::Runtime::new()?;
//! let outcome = runtime.block_on(engine.run("run command rm -rf scratch"));
//! assert_eq!(outcome.denials.len(), 1);
//! assert!(project.join("scratch").exists());
//! # Ok(())
//! # }
//! ```
//!
//! # What the model is told
//!
//! Each session of an engine sends the system prompt the `rein` binary sends: rein's own prompt
//! (what the agent is, how to use each tool, what to do when a hook or rule refuses a call) with
//! the working environment, then the memory files, then any appended text. The memory files are
//! read as Claude Code reads them, at each [`Engine::session`]: `~/.claude/CLAUDE.md` under
//! [`EngineBuilder::home`], then `CLAUDE.md`, `.claude/CLAUDE.md` and `CLAUDE.local.md` from `/`
//! down to the project directory, each followed by its `@imports`; at
//! [`Session::start`] an `InstructionsLoaded` event fires for each, to the settings' hooks and to
//! in-process hooks (`engine.on::<InstructionsLoaded, _, _>`). A missing import or a cycle is
//! reported to the [`Observer`] as a notice.
//!
//! This is on by default, because an embedder that points rein at a project expects the
//! project's instructions to count as they do in the binary. Change it with
//! [`EngineBuilder::system_prompt`] (replaces rein's prompt), [`EngineBuilder::append_system_prompt`]
//! (adds at the end) and [`EngineBuilder::memory_files`]`(false)` (no memory files, no
//! `InstructionsLoaded`). A subagent gets its type's prompt, the environment and the same memory
//! files. A [`Model`] receives the prompt in [`Request::system`] through [`Model::respond`].
//!
//! # MCP servers
//!
//! [`Engine::start_mcp_servers`] starts the servers the configuration names, as the binary
//! does: `~/.claude.json`'s, [`EngineBuilder::mcp_config`]'s, and the `.mcp.json` servers the
//! settings approve (no one is asked: an unapproved one stays stopped, with a notice). They
//! serve every session made afterwards (tools `mcp__<server>__<tool>`, `mcp_tool` hooks);
//! [`Engine::run`] starts them itself. [`Engine::shutdown`] ends them.
//!
//! # What is public
//!
//! The engine and what a session returns ([`TurnOutcome`], [`TranscriptFault`]); the hook
//! events, their inputs and outcomes ([`events`]) and what an in-process hook answers
//! ([`HookReply`]); what a session reports as it goes ([`Observer`], [`Progress`]); the
//! [`Model`] trait and the conversation types, to plug in a model of one's own. Everything else
//! (the dispatcher, the process runner, settings parsing, permission rules, the tools, the
//! command line) is private: see `DESIGN.md` in the repository for the picture.

#![deny(missing_docs)]

mod agent;
mod byte_size;
mod cli;
mod commands;
mod engine;
mod error_chain;
mod future;
mod hooks;
mod id;
mod json_kind;
mod mcp;
mod model;
mod origin;
mod permissions;
mod pipeline;
mod private_fs;
mod process;
mod progress;
mod settings;
mod telemetry;
mod tools;

pub use agent::session::{Denial, Session, TurnEnd, TurnOutcome};
pub use agent::transcript::TranscriptFault;
pub use engine::{Engine, EngineBuilder, EngineError};
pub use hooks::config::HandlerOrigin;
pub use hooks::registry::{HookReply, MatcherError, Unregister};
pub use hooks::run::{HandlerRun, OutcomeKind, RunStatus};
pub use hooks::spec::HookEvent;
pub use model::{
    ContentBlock, Message, Model, ModelError, ModelErrorKind, ModelResponse, Request, Role,
    StopReason, ToolSpec, Usage,
};
pub use origin::{Location, SourceKind};
pub use progress::{
    CallStatus, HookReport, HookRunEnd, HookRunOutcome, HookRunReport, Observer, Progress,
};
pub use settings::schema::{Diagnostic, Severity};

/// The hook events rein fires, one unit type each (e.g. [`PreToolUse`](events::PreToolUse)),
/// with the stdin a handler gets (`…Input`), the `hookSpecificOutput` a handler may write
/// (`…Output`) and what the answers of all handlers of one firing add up to (`…Outcome`).
///
/// The unit type is what [`Engine::on`] is called with; its input is what an in-process hook
/// gets; some also build [`HookReply`]s (`PreToolUse::deny`, `PostToolUse::replace_output`).
pub mod events {
    pub use crate::hooks::events::cwd_changed::{
        CwdChangedInput, CwdChangedOutcome, CwdChangedOutput,
    };
    pub use crate::hooks::events::instructions_loaded::{
        InstructionsLoadedInput, InstructionsLoadedOutcome, InstructionsLoadedOutput,
    };
    pub use crate::hooks::events::message_display::{
        MessageDisplayInput, MessageDisplayOutcome, MessageDisplayOutput,
    };
    pub use crate::hooks::events::notification::{
        NotificationInput, NotificationOutcome, NotificationOutput,
    };
    pub use crate::hooks::events::permission_denied::{
        PermissionDeniedInput, PermissionDeniedOutcome, PermissionDeniedOutput,
    };
    pub use crate::hooks::events::permission_request::{
        PermissionRequestAnswer, PermissionRequestDecision, PermissionRequestInput,
        PermissionRequestOutcome, PermissionRequestOutput,
    };
    pub use crate::hooks::events::post_compact::{
        PostCompactInput, PostCompactOutcome, PostCompactOutput,
    };
    pub use crate::hooks::events::post_tool_batch::{
        BatchToolCall, PostToolBatchInput, PostToolBatchOutcome, PostToolBatchOutput,
    };
    pub use crate::hooks::events::post_tool_use::{
        PostToolUseInput, PostToolUseOutcome, PostToolUseOutput,
    };
    pub use crate::hooks::events::post_tool_use_failure::{
        PostToolUseFailureInput, PostToolUseFailureOutcome, PostToolUseFailureOutput,
    };
    pub use crate::hooks::events::pre_compact::{
        PreCompactInput, PreCompactOutcome, PreCompactOutput,
    };
    pub use crate::hooks::events::pre_tool_use::{
        HookPermission, PermissionDecision, PreToolUseInput, PreToolUseOutcome, PreToolUseOutput,
    };
    pub use crate::hooks::events::session_end::{
        SessionEndInput, SessionEndOutcome, SessionEndOutput,
    };
    pub use crate::hooks::events::session_start::{
        SessionStartInput, SessionStartOutcome, SessionStartOutput,
    };
    pub use crate::hooks::events::stop::{StopInput, StopOutcome, StopOutput};
    pub use crate::hooks::events::stop_failure::{
        StopFailureInput, StopFailureOutcome, StopFailureOutput,
    };
    pub use crate::hooks::events::subagent_start::{
        SubagentStartInput, SubagentStartOutcome, SubagentStartOutput,
    };
    pub use crate::hooks::events::subagent_stop::{
        SubagentStopInput, SubagentStopOutcome, SubagentStopOutput,
    };
    pub use crate::hooks::events::user_prompt_submit::{
        UserPromptSubmitInput, UserPromptSubmitOutcome, UserPromptSubmitOutput,
    };
    pub use crate::hooks::events::{
        BaseInput, Common, CwdChanged, Effort, Event, InstructionsLoaded, MessageDisplay,
        Notification, PermissionDenied, PermissionRequest, PostCompact, PostToolBatch, PostToolUse,
        PostToolUseFailure, PreCompact, PreToolUse, SessionEnd, SessionStart, Stop, StopFailure,
        SubagentStart, SubagentStop, UserPromptSubmit,
    };
}

pub use future::BoxFuture;

/// The `rein` binary's entry: parses the command line, runs, and returns the exit code.
///
/// Not part of the library API. Why it lives here and not under `src/bin`: the command line uses
/// dozens of internal items (settings loading, the dispatcher, the renderer), which would
/// otherwise all have to become public.
#[doc(hidden)]
pub fn run_cli() -> i32 {
    cli::main()
}

#[cfg(test)]
mod tests;
