//! The tests' view of one firing: an input of any fired event ([`HookInput`]) and everything
//! its typed outcome says, flattened into one [`Decision`] record so table tests can compare
//! events side by side. Production code never sees these types: it fires `E::Input` and gets
//! `E::Outcome` (`crate::hooks::events`); [`fire`] translates, field by field, nothing more.

use std::any::Any;

use crate::hooks::dispatch::Dispatcher;
use crate::hooks::events::notification::NotificationInput;
use crate::hooks::events::permission_denied::PermissionDeniedInput;
use crate::hooks::events::permission_request::{PermissionRequestDecision, PermissionRequestInput};
use crate::hooks::events::post_tool_batch::PostToolBatchInput;
use crate::hooks::events::post_tool_use::PostToolUseInput;
use crate::hooks::events::post_tool_use_failure::PostToolUseFailureInput;
use crate::hooks::events::pre_tool_use::{PermissionDecision, PreToolUseInput};
use crate::hooks::events::session_end::SessionEndInput;
use crate::hooks::events::session_start::SessionStartInput;
use crate::hooks::events::stop::StopInput;
use crate::hooks::events::stop_failure::StopFailureInput;
use crate::hooks::events::user_prompt_submit::UserPromptSubmitInput;
use crate::hooks::events::{
    Common, Firing, Notification, PermissionDenied, PermissionRequest, PostToolBatch, PostToolUse,
    PostToolUseFailure, PreToolUse, SessionEnd, SessionStart, Stop, StopFailure, Typed,
    UserPromptSubmit,
};
use crate::hooks::run::HandlerRun;
use crate::hooks::spec::HookEvent;
use serde_json::Value;

/// An input of any event rein fires.
#[derive(Debug, Clone, PartialEq)]
pub enum HookInput {
    PreToolUse(PreToolUseInput),
    PermissionRequest(PermissionRequestInput),
    PermissionDenied(PermissionDeniedInput),
    PostToolUse(PostToolUseInput),
    PostToolUseFailure(PostToolUseFailureInput),
    PostToolBatch(PostToolBatchInput),
    UserPromptSubmit(UserPromptSubmitInput),
    SessionStart(SessionStartInput),
    SessionEnd(SessionEndInput),
    Stop(StopInput),
    StopFailure(StopFailureInput),
    Notification(NotificationInput),
}

/// Everything one firing's outcome says.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    pub event: HookEvent,
    pub permission: Option<PermissionDecision>,
    pub updated_input: Option<Value>,
    pub permission_request: Option<PermissionRequestDecision>,
    pub updated_tool_output: Option<Value>,
    pub block: Option<String>,
    pub context: Vec<String>,
    pub stop_feedback: Option<String>,
    pub prompt_blocked_text: Option<String>,
    pub user_messages: Vec<String>,
    pub stop_loop: bool,
    pub stop_reason: Option<String>,
    pub suppress_original_prompt: bool,
    pub retry: bool,
    pub runs: Vec<HandlerRun>,
}

impl Decision {
    pub fn empty(event: HookEvent) -> Decision {
        Decision {
            event,
            permission: None,
            updated_input: None,
            permission_request: None,
            updated_tool_output: None,
            block: None,
            context: Vec::new(),
            stop_feedback: None,
            prompt_blocked_text: None,
            user_messages: Vec::new(),
            stop_loop: false,
            stop_reason: None,
            suppress_original_prompt: false,
            retry: false,
            runs: Vec::new(),
        }
    }

    fn with_common(event: HookEvent, common: Common) -> Decision {
        Decision {
            context: common.context,
            user_messages: common.user_messages,
            stop_loop: common.stop_loop,
            stop_reason: common.stop_reason,
            runs: common.runs,
            ..Decision::empty(event)
        }
    }

    fn common(&self) -> Common {
        Common {
            context: self.context.clone(),
            user_messages: self.user_messages.clone(),
            stop_loop: self.stop_loop,
            stop_reason: self.stop_reason.clone(),
            runs: self.runs.clone(),
        }
    }
}

macro_rules! each_event {
    ($input:expr, $i:ident => $body:expr) => {
        match $input {
            HookInput::PreToolUse($i) => $body,
            HookInput::PermissionRequest($i) => $body,
            HookInput::PermissionDenied($i) => $body,
            HookInput::PostToolUse($i) => $body,
            HookInput::PostToolUseFailure($i) => $body,
            HookInput::PostToolBatch($i) => $body,
            HookInput::UserPromptSubmit($i) => $body,
            HookInput::SessionStart($i) => $body,
            HookInput::SessionEnd($i) => $body,
            HookInput::Stop($i) => $body,
            HookInput::StopFailure($i) => $body,
            HookInput::Notification($i) => $body,
        }
    };
}

impl HookInput {
    pub fn event(&self) -> HookEvent {
        self.firing().event()
    }

    /// Tool name and input, on tool events.
    pub fn tool(&self) -> Option<(String, Value)> {
        let json = self.firing().input_json();
        if !self.event().is_tool_event() {
            return None;
        }
        Some((
            json["tool_name"].as_str().unwrap_or_default().to_string(),
            json["tool_input"].clone(),
        ))
    }

    /// The exact stdin bytes a handler gets.
    pub fn to_stdin_bytes(&self) -> Vec<u8> {
        each_event!(self, i => crate::hooks::events::stdin_bytes(i))
    }

    /// The input behind the typed seam.
    pub fn firing(&self) -> Box<dyn Firing> {
        match self.clone() {
            HookInput::PreToolUse(i) => Box::new(Typed::<PreToolUse>(i)),
            HookInput::PermissionRequest(i) => Box::new(Typed::<PermissionRequest>(i)),
            HookInput::PermissionDenied(i) => Box::new(Typed::<PermissionDenied>(i)),
            HookInput::PostToolUse(i) => Box::new(Typed::<PostToolUse>(i)),
            HookInput::PostToolUseFailure(i) => Box::new(Typed::<PostToolUseFailure>(i)),
            HookInput::PostToolBatch(i) => Box::new(Typed::<PostToolBatch>(i)),
            HookInput::UserPromptSubmit(i) => Box::new(Typed::<UserPromptSubmit>(i)),
            HookInput::SessionStart(i) => Box::new(Typed::<SessionStart>(i)),
            HookInput::SessionEnd(i) => Box::new(Typed::<SessionEnd>(i)),
            HookInput::Stop(i) => Box::new(Typed::<Stop>(i)),
            HookInput::StopFailure(i) => Box::new(Typed::<StopFailure>(i)),
            HookInput::Notification(i) => Box::new(Typed::<Notification>(i)),
        }
    }

    /// The input a [`Firing`] carries.
    pub fn from_firing(firing: &dyn Firing) -> HookInput {
        let any = firing.input_any();
        fn get<T: Clone + 'static>(any: &(dyn Any + Send + Sync)) -> T {
            any.downcast_ref::<T>()
                .cloned()
                .expect("input of the firing's event")
        }
        match firing.event() {
            HookEvent::PreToolUse => HookInput::PreToolUse(get(any)),
            HookEvent::PermissionRequest => HookInput::PermissionRequest(get(any)),
            HookEvent::PermissionDenied => HookInput::PermissionDenied(get(any)),
            HookEvent::PostToolUse => HookInput::PostToolUse(get(any)),
            HookEvent::PostToolUseFailure => HookInput::PostToolUseFailure(get(any)),
            HookEvent::PostToolBatch => HookInput::PostToolBatch(get(any)),
            HookEvent::UserPromptSubmit => HookInput::UserPromptSubmit(get(any)),
            HookEvent::SessionStart => HookInput::SessionStart(get(any)),
            HookEvent::SessionEnd => HookInput::SessionEnd(get(any)),
            HookEvent::Stop => HookInput::Stop(get(any)),
            HookEvent::StopFailure => HookInput::StopFailure(get(any)),
            HookEvent::Notification => HookInput::Notification(get(any)),
            other => panic!("rein does not fire {other}"),
        }
    }
}

/// Fires `input` on `d` and flattens the typed outcome.
pub async fn fire(d: &Dispatcher, input: &HookInput) -> Decision {
    match input {
        HookInput::PreToolUse(i) => {
            let o = d.fire::<PreToolUse>(i).await;
            Decision {
                permission: o.permission,
                updated_input: o.updated_input,
                ..Decision::with_common(HookEvent::PreToolUse, o.common)
            }
        }
        HookInput::PermissionRequest(i) => {
            let o = d.fire::<PermissionRequest>(i).await;
            let updated_input = match &o.decision {
                Some(PermissionRequestDecision::Allow { updated_input, .. }) => {
                    updated_input.clone()
                }
                Some(PermissionRequestDecision::Deny { .. }) | None => None,
            };
            Decision {
                permission_request: o.decision,
                updated_input,
                ..Decision::with_common(HookEvent::PermissionRequest, o.common)
            }
        }
        HookInput::PermissionDenied(i) => {
            let o = d.fire::<PermissionDenied>(i).await;
            Decision {
                retry: o.retry,
                ..Decision::with_common(HookEvent::PermissionDenied, o.common)
            }
        }
        HookInput::PostToolUse(i) => {
            let o = d.fire::<PostToolUse>(i).await;
            Decision {
                updated_tool_output: o.updated_tool_output,
                block: o.block,
                ..Decision::with_common(HookEvent::PostToolUse, o.common)
            }
        }
        HookInput::PostToolUseFailure(i) => {
            let o = d.fire::<PostToolUseFailure>(i).await;
            Decision {
                block: o.block,
                ..Decision::with_common(HookEvent::PostToolUseFailure, o.common)
            }
        }
        HookInput::PostToolBatch(i) => {
            let o = d.fire::<PostToolBatch>(i).await;
            Decision {
                block: o.block,
                ..Decision::with_common(HookEvent::PostToolBatch, o.common)
            }
        }
        HookInput::UserPromptSubmit(i) => {
            let o = d.fire::<UserPromptSubmit>(i).await;
            Decision {
                block: o.block,
                prompt_blocked_text: o.blocked_text,
                suppress_original_prompt: o.suppress_original_prompt,
                ..Decision::with_common(HookEvent::UserPromptSubmit, o.common)
            }
        }
        HookInput::SessionStart(i) => {
            let o = d.fire::<SessionStart>(i).await;
            Decision::with_common(HookEvent::SessionStart, o.common)
        }
        HookInput::SessionEnd(i) => {
            let o = d.fire::<SessionEnd>(i).await;
            Decision::with_common(HookEvent::SessionEnd, o.common)
        }
        HookInput::Stop(i) => {
            let o = d.fire::<Stop>(i).await;
            Decision {
                block: o.block,
                stop_feedback: o.feedback,
                ..Decision::with_common(HookEvent::Stop, o.common)
            }
        }
        HookInput::StopFailure(i) => {
            let o = d.fire::<StopFailure>(i).await;
            Decision::with_common(HookEvent::StopFailure, o.common)
        }
        HookInput::Notification(i) => {
            let o = d.fire::<Notification>(i).await;
            Decision::with_common(HookEvent::Notification, o.common)
        }
    }
}

/// The typed outcome a scripted [`Decision`] stands for, boxed as a host answers.
pub fn outcome_of(d: &Decision) -> Box<dyn Any + Send> {
    use crate::hooks::events::{
        notification::NotificationOutcome, permission_denied::PermissionDeniedOutcome,
        permission_request::PermissionRequestOutcome, post_tool_batch::PostToolBatchOutcome,
        post_tool_use::PostToolUseOutcome, post_tool_use_failure::PostToolUseFailureOutcome,
        pre_tool_use::PreToolUseOutcome, session_end::SessionEndOutcome,
        session_start::SessionStartOutcome, stop::StopOutcome, stop_failure::StopFailureOutcome,
        user_prompt_submit::UserPromptSubmitOutcome,
    };
    let common = d.common();
    match d.event {
        HookEvent::PreToolUse => Box::new(PreToolUseOutcome {
            common,
            permission: d.permission.clone(),
            updated_input: d.updated_input.clone(),
        }),
        HookEvent::PermissionRequest => Box::new(PermissionRequestOutcome {
            common,
            decision: d.permission_request.clone(),
        }),
        HookEvent::PermissionDenied => Box::new(PermissionDeniedOutcome {
            common,
            retry: d.retry,
        }),
        HookEvent::PostToolUse => Box::new(PostToolUseOutcome {
            common,
            updated_tool_output: d.updated_tool_output.clone(),
            block: d.block.clone(),
        }),
        HookEvent::PostToolUseFailure => Box::new(PostToolUseFailureOutcome {
            common,
            block: d.block.clone(),
        }),
        HookEvent::PostToolBatch => Box::new(PostToolBatchOutcome {
            common,
            block: d.block.clone(),
        }),
        HookEvent::UserPromptSubmit => Box::new(UserPromptSubmitOutcome {
            common,
            block: d.block.clone(),
            blocked_text: d.prompt_blocked_text.clone(),
            suppress_original_prompt: d.suppress_original_prompt,
        }),
        HookEvent::SessionStart => Box::new(SessionStartOutcome { common }),
        HookEvent::SessionEnd => Box::new(SessionEndOutcome { common }),
        HookEvent::Stop => Box::new(StopOutcome {
            common,
            block: d.block.clone(),
            feedback: d.stop_feedback.clone(),
        }),
        HookEvent::StopFailure => Box::new(StopFailureOutcome { common }),
        HookEvent::Notification => Box::new(NotificationOutcome { common }),
        other => panic!("rein does not fire {other}"),
    }
}

/// The empty outcome of `event`, boxed.
pub fn empty_outcome(event: HookEvent) -> Box<dyn Any + Send> {
    outcome_of(&Decision::empty(event))
}
