//! One module per event rein fires, each holding the whole event: its input (the stdin
//! struct), its output wire type (`hookSpecificOutput`), its typed outcome, and the fold of one
//! handler's answer into that outcome.
//!
//! The shared machinery lives here: the [`Event`] trait the modules implement, the base fields
//! every input starts with, the part every outcome shares ([`Common`]), one handler's
//! interpreted [`Answer`], and the generic [`merge`] that folds answers in configuration order.
//!
//! The merge rule, for every event (deterministic; Claude Code folds in completion order, spec
//! §4.6). For each answer, in **configuration order**:
//!
//! 1. The event's own part ([`Event::fold`]): permission, rewrites, blocking errors, per-handler
//!    context entries — see each event module.
//! 2. A non-blocking error, a timeout or a crash becomes a user message
//!    ([`Event::failure_notice`]; `<hookName> hook error: …` unless the event words it
//!    differently).
//! 3. `systemMessage` → user message `<hookName> says: …`.
//! 4. `additionalContext` (on events that read it) is collected; `continue: false` stops the
//!    loop, the first `stopReason` is kept.
//!
//! After the last answer: every collected `additionalContext` is joined with `\n` into ONE
//! context entry ([`Event::context_entry`]), placed after the per-handler entries, and the
//! event finishes its outcome ([`Event::finish`]).

pub mod cwd_changed;
pub mod instructions_loaded;
pub mod message_display;
pub mod notification;
pub mod permission_denied;
pub mod permission_request;
pub mod post_compact;
pub mod post_model_switch;
pub mod post_tool_batch;
pub mod post_tool_use;
pub mod post_tool_use_failure;
pub mod pre_compact;
pub mod pre_model_switch;
pub mod pre_tool_use;
pub mod session_end;
pub mod session_start;
pub mod stop;
pub mod stop_failure;
pub mod subagent_start;
pub mod subagent_stop;
pub mod user_prompt_submit;

use std::any::Any;
use std::fmt::Debug;
use std::marker::PhantomData;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::hooks::output::HookJsonOutput;
use crate::hooks::run::{HandlerRun, OutcomeKind};
use crate::hooks::spec::HookEvent;

pub use cwd_changed::CwdChanged;
pub use instructions_loaded::InstructionsLoaded;
pub use message_display::MessageDisplay;
pub use notification::Notification;
pub use permission_denied::PermissionDenied;
pub use permission_request::PermissionRequest;
pub use post_compact::PostCompact;
pub use post_model_switch::PostModelSwitch;
pub use post_tool_batch::PostToolBatch;
pub use post_tool_use::PostToolUse;
pub use post_tool_use_failure::PostToolUseFailure;
pub use pre_compact::PreCompact;
pub use pre_model_switch::PreModelSwitch;
pub use pre_tool_use::PreToolUse;
pub use session_end::SessionEnd;
pub use session_start::SessionStart;
pub use stop::Stop;
pub use stop_failure::StopFailure;
pub use subagent_start::SubagentStart;
pub use subagent_stop::SubagentStop;
pub use user_prompt_submit::UserPromptSubmit;

/// `effort` base field (`{"level": "medium"}`); only set when the provider has an effort setting.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Effort {
    /// `low`, `medium`, `high`, …
    pub level: String,
}

pub use crate::origin::McpServerRef;

/// Fields every input starts with, in Claude Code's order. Optional ones are omitted (not
/// `null`) when absent; which event carries which is spec §2.4.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BaseInput {
    /// The session's id.
    pub session_id: String,
    /// The session's transcript (JSONL).
    pub transcript_path: String,
    /// The session's working directory.
    pub cwd: String,
    /// The id of the prompt being processed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_id: Option<String>,
    /// `default`, `acceptEdits`, `plan`, `bypassPermissions`, `dontAsk`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permission_mode: Option<String>,
    /// The subagent's id (`a` + 16 hex digits), inside a subagent and on
    /// SubagentStart/SubagentStop.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    /// The subagent's type (its definition's name), wherever `agent_id` is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_type: Option<String>,
    /// The model's effort setting.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effort: Option<Effort>,
}

/// What every outcome carries besides its event's own fields.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Common {
    /// Model-facing context entries, already rendered per spec §4.5 (e.g.
    /// `PostToolUse:Bash hook additional context: CTX`), in the order the model gets them.
    pub context: Vec<String>,
    /// User-facing notices (`<hookName> says: …`, non-blocking errors, timeouts).
    pub user_messages: Vec<String>,
    /// `continue: false` from any hook: stop the loop after the current step.
    pub stop_loop: bool,
    /// The first `stopReason` given with `continue: false`.
    pub stop_reason: Option<String>,
    /// Every handler that ran, in configuration order.
    pub runs: Vec<HandlerRun>,
}

/// What one handler answered, interpreted (exit code and stdout judged, large texts spilled):
/// the unit [`Event::fold`] folds.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// How it ran and what the run meant.
    pub run: HandlerRun,
    /// The validated JSON output, when stdout was one and it must be applied.
    pub output: Option<HookJsonOutput>,
    /// `hookSpecificOutput.additionalContext`, on events that read it.
    pub additional_context: Option<String>,
    /// `systemMessage`.
    pub system_message: Option<String>,
    /// Plain stdout of a successful exit 0, trimmed and non-empty.
    pub success_text: Option<String>,
}

impl Answer {
    /// The blocking reason, when the run blocks (exit 2, `decision: block`, `onFailure`).
    pub fn blocking(&self) -> Option<&str> {
        match &self.run.outcome {
            OutcomeKind::Blocking(reason) => Some(reason),
            OutcomeKind::Success | OutcomeKind::NonBlocking(_) | OutcomeKind::Cancelled => None,
        }
    }

    /// Whether the blocking outcome came from JSON (`decision: block`) rather than exit code 2
    /// or `onFailure`; Stop renders the two differently.
    pub fn block_from_json(&self) -> bool {
        self.output
            .as_ref()
            .is_some_and(|o| o.block_reason().is_some())
    }

    /// The command as configured (`in-process:<id>` for in-process handlers).
    pub fn command(&self) -> &str {
        &self.run.command
    }

    /// The event's `hookSpecificOutput`, typed. `T::default()` when there is none. The JSON was
    /// validated against the event's field table before, so the typed read cannot fail on a
    /// field the table lists; should it still, the answer counts as giving none (logged).
    pub fn specific<T: DeserializeOwned + Default>(&self) -> T {
        let Some(map) = self.output.as_ref().and_then(|o| o.hook_specific.as_ref()) else {
            return T::default();
        };
        match serde_json::from_value(Value::Object(map.clone())) {
            Ok(typed) => typed,
            Err(err) => {
                tracing::error!(%err, "validated hookSpecificOutput did not deserialize");
                T::default()
            }
        }
    }
}

/// What an event's fold may know about the firing besides the answer.
#[derive(Debug, Clone, Copy)]
pub struct FoldCx<'a> {
    /// `"<Event>"` or `"<Event>:<match value>"`, as used in model- and user-facing texts
    /// (e.g. `PreToolUse:Bash`, `SessionStart:startup`; spec §4.3).
    pub hook_name: &'a str,
}

/// One event rein fires, implemented by a unit type per event (e.g. [`PreToolUse`]): what
/// [`crate::Engine::on`] is called with, naming the event's input, output and outcome types.
///
/// Not implementable outside rein: its hidden items are how rein folds handlers' answers into
/// the outcome, and name types rein does not export.
// Why one trait for both: the dispatcher is generic over it, and splitting the embedder's part
// from the machinery would mean a second trait per event with nothing new in it.
pub trait Event: Send + Sync + Sized + 'static {
    /// Which event this is.
    const EVENT: HookEvent;
    /// The stdin of a handler: serialized exactly as Claude Code writes it (key order
    /// included), and parsed back by `rein hooks test --input`.
    type Input: Serialize + DeserializeOwned + Clone + Debug + PartialEq + Send + Sync + 'static;
    /// The event's `hookSpecificOutput` as a handler writes it.
    type Output: DeserializeOwned + Default + Debug;
    /// What the caller (pipeline, session) acts on.
    type Outcome: Default + Debug + Clone + Send + 'static;
    /// The event's own stdin fields (after the base fields and `hook_event_name`), in order.
    #[doc(hidden)]
    const FIELDS: &'static [&'static str];

    /// The base fields of an input.
    fn base(input: &Self::Input) -> &BaseInput;
    /// What `matcher` is tested against (spec §2.3 column M); `None`: no target, every
    /// matcher accepts.
    fn match_value(_input: &Self::Input) -> Option<&str> {
        None
    }
    /// Tool name and input, on the tool events (for `if` conditions).
    fn tool(_input: &Self::Input) -> Option<(&str, &Value)> {
        None
    }
    /// The tool call the input is about, on the events that carry `tool_use_id` (it names the
    /// file a large hook text is spilled to, as in Claude Code).
    fn tool_use_id(_input: &Self::Input) -> Option<&str> {
        None
    }
    /// The shared part of an outcome.
    fn common(outcome: &mut Self::Outcome) -> &mut Common;
    /// Folds the event's own part of one answer into the outcome (rule 1 of the module doc).
    #[doc(hidden)]
    fn fold(outcome: &mut Self::Outcome, answer: &Answer, cx: FoldCx<'_>);
    /// The user message for an answer that failed without blocking (rule 2).
    #[doc(hidden)]
    fn failure_notice(answer: &Answer, cx: FoldCx<'_>) -> Option<String> {
        match &answer.run.outcome {
            OutcomeKind::NonBlocking(text) => Some(format!("{} hook error: {text}", cx.hook_name)),
            OutcomeKind::Cancelled => Some(format!(
                "{} hook [{}] timed out and was cancelled",
                cx.hook_name,
                answer.command()
            )),
            OutcomeKind::Success | OutcomeKind::Blocking(_) => None,
        }
    }
    /// The one context entry made of every handler's `additionalContext`, joined.
    #[doc(hidden)]
    fn context_entry(joined: &str, cx: FoldCx<'_>) -> String {
        let name = if Self::EVENT.is_tool_event() {
            cx.hook_name
        } else {
            Self::EVENT.as_str()
        };
        format!("{name} hook additional context: {joined}")
    }
    /// Completes the outcome after the last answer.
    #[doc(hidden)]
    fn finish(_outcome: &mut Self::Outcome, _input: &Self::Input, _cx: FoldCx<'_>) {}
    /// The input `rein hooks test` starts from before `--input` overrides fields; `tool` is
    /// the `--tool` of tool events (empty elsewhere).
    #[doc(hidden)]
    fn sample_input(base: BaseInput, tool: &str) -> Self::Input;
    /// What the outcome means, for `rein hooks test`.
    #[doc(hidden)]
    fn explain(outcome: &Self::Outcome, input: &Self::Input) -> Explained;
}

/// The accessors every tool event's input shares (`tool_name`, `tool_input`, `base`): its
/// matcher target is the tool name, and `if` conditions see the tool and its input.
macro_rules! tool_event_accessors {
    ($input:ty) => {
        fn base(input: &$input) -> &BaseInput {
            &input.base
        }

        fn match_value(input: &$input) -> Option<&str> {
            Some(&input.tool_name)
        }

        fn tool(input: &$input) -> Option<(&str, &Value)> {
            Some((&input.tool_name, &input.tool_input))
        }
    };
}
pub(crate) use tool_event_accessors;

/// A blocking error on an event where it stops nothing: a user message.
pub(crate) fn block_as_notice(common: &mut Common, answer: &Answer, cx: FoldCx<'_>) {
    if let Some(reason) = answer.blocking() {
        common
            .user_messages
            .push(format!("{} hook error: {reason}", cx.hook_name));
    }
}

/// The `hook_name` of an input: `"<Event>"` or `"<Event>:<match value>"`.
pub fn hook_name<E: Event>(input: &E::Input) -> String {
    match E::match_value(input) {
        Some(v) => format!("{}:{v}", E::EVENT),
        None => E::EVENT.to_string(),
    }
}

/// Compact JSON in Claude Code's key order plus one trailing `\n`: a handler's stdin.
pub fn stdin_bytes<T: Serialize>(input: &T) -> Vec<u8> {
    // Why no error path: every input is made of strings, bools, integers and already-valid
    // `serde_json::Value`s; serializing such a struct to a Vec cannot fail.
    let mut bytes = serde_json::to_vec(input).unwrap_or_default();
    bytes.push(b'\n');
    bytes
}

/// Folds the answers of one firing, given in configuration order, into `E`'s outcome (the
/// rule is in the module doc).
pub fn merge<E: Event>(input: &E::Input, answers: Vec<Answer>) -> E::Outcome {
    let hook_name = hook_name::<E>(input);
    let cx = FoldCx {
        hook_name: &hook_name,
    };
    let mut outcome = E::Outcome::default();
    let mut contexts: Vec<String> = Vec::new();
    for answer in answers {
        E::fold(&mut outcome, &answer, cx);
        let common = E::common(&mut outcome);
        if let Some(notice) = E::failure_notice(&answer, cx) {
            common.user_messages.push(notice);
        }
        if let Some(msg) = &answer.system_message {
            common
                .user_messages
                .push(format!("{hook_name} says: {msg}"));
        }
        if let Some(ctx) = &answer.additional_context {
            contexts.push(ctx.clone());
        }
        if let Some(output) = &answer.output
            && output.stops_loop()
        {
            if common.stop_reason.is_none() {
                common.stop_reason = output.stop_reason.clone();
            }
            common.stop_loop = true;
        }
        common.runs.push(answer.run);
    }
    if !contexts.is_empty() {
        let entry = E::context_entry(&contexts.join("\n"), cx);
        E::common(&mut outcome).context.push(entry);
    }
    E::finish(&mut outcome, input, cx);
    outcome
}

/// What an outcome means, in words, for `rein hooks test`: `(channel, text)` pairs the model
/// gets, texts the user sees, and a one-line summary.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Explained {
    /// What the model gets and through which channel.
    pub model: Vec<(String, String)>,
    /// What the user sees.
    pub user: Vec<String>,
    /// The decision in one line.
    pub summary: String,
    /// The hooks block, refuse or stop what the event is about (exit 2 or `decision: block`,
    /// a `deny`/`ask`/`defer` permission decision, `continue: false`): `rein hooks test`
    /// exits 3 then.
    pub blocks: bool,
}

impl Explained {
    /// A summary with no event-specific model texts.
    pub fn summary(summary: impl Into<String>) -> Explained {
        Explained {
            summary: summary.into(),
            ..Explained::default()
        }
    }

    /// Adds the parts every outcome has: context entries, user messages, `continue: false`.
    pub fn with_common(mut self, common: &Common) -> Explained {
        self.blocks |= common.stop_loop
            || common
                .runs
                .iter()
                .any(|r| matches!(r.outcome, OutcomeKind::Blocking(_)));
        for c in &common.context {
            self.model
                .push(("context with the next model request".to_string(), c.clone()));
        }
        if common.stop_loop {
            self.summary.push_str(&format!(
                "; continue:false, the loop stops after this step{}",
                common
                    .stop_reason
                    .as_ref()
                    .map(|r| format!(" ({r})"))
                    .unwrap_or_default()
            ));
        }
        self.user.extend(common.user_messages.iter().cloned());
        self
    }
}

/// An event chosen at run time (by name): what `rein hooks test` and other name-driven callers
/// use. [`crate::hooks::spec::EventSpec::fires`] holds one per event rein fires.
pub trait FiredEvent: Send + Sync {
    /// The event.
    fn event(&self) -> HookEvent;
    /// [`Event::FIELDS`].
    fn fields(&self) -> &'static [&'static str];
    /// [`Event::sample_input`] as a JSON object.
    fn sample_input(&self, base: BaseInput, tool: &str) -> Map<String, Value>;
    /// Parses a complete input; the error names what is wrong.
    fn parse_input(&self, input: Value) -> Result<Box<dyn Firing>, serde_json::Error>;
}

impl Debug for dyn FiredEvent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "FiredEvent({})", self.event())
    }
}

/// The [`FiredEvent`] of `E`.
pub struct Fires<E>(PhantomData<fn() -> E>);

impl<E: Event> Fires<E> {
    /// The instance the spec table points to.
    pub const REF: &'static dyn FiredEvent = &Fires::<E>(PhantomData);
}

impl<E: Event> FiredEvent for Fires<E> {
    fn event(&self) -> HookEvent {
        E::EVENT
    }

    fn fields(&self) -> &'static [&'static str] {
        E::FIELDS
    }

    fn sample_input(&self, base: BaseInput, tool: &str) -> Map<String, Value> {
        match serde_json::to_value(E::sample_input(base, tool)) {
            Ok(Value::Object(map)) => map,
            Ok(_) | Err(_) => Map::new(),
        }
    }

    fn parse_input(&self, input: Value) -> Result<Box<dyn Firing>, serde_json::Error> {
        let typed: E::Input = serde_json::from_value(input)?;
        Ok(Box::new(Typed::<E>(typed)))
    }
}

/// One firing with its event's type erased: what crosses the [`crate::hooks::HookHost`] seam,
/// so a test double or another host can answer any event while callers stay typed.
pub trait Firing: Send + Sync {
    /// The event.
    fn event(&self) -> HookEvent;
    /// The input, as the handler's stdin JSON.
    fn input_json(&self) -> Value;
    /// The typed input (`E::Input`), for downcasting.
    fn input_any(&self) -> &(dyn Any + Send + Sync);
    /// `"<Event>"` or `"<Event>:<match value>"`.
    fn hook_name(&self) -> String;
    /// What selection needs from the input.
    fn target(&self) -> crate::hooks::dispatch::Target<'_>;
    /// Runs the firing on a dispatcher; the box holds `E::Outcome`.
    fn fire_on<'a>(
        &'a self,
        dispatcher: &'a crate::hooks::dispatch::Dispatcher,
    ) -> crate::future::BoxFuture<'a, Box<dyn Any + Send>>;
    /// The outcome's [`Common`] part (`outcome` must be this event's outcome).
    fn common_of<'a>(&self, outcome: &'a mut (dyn Any + Send)) -> Option<&'a mut Common>;
    /// [`Event::explain`] of an outcome of this event.
    fn explain(&self, outcome: &(dyn Any + Send)) -> Option<Explained>;
    /// This event's outcome when no handler ran (a host that skips a firing answers it).
    fn default_outcome(&self) -> Box<dyn Any + Send>;
}

/// A typed input behind the [`Firing`] seam.
pub struct Typed<E: Event>(pub E::Input);

impl<E: Event> Firing for Typed<E> {
    fn event(&self) -> HookEvent {
        E::EVENT
    }

    fn input_json(&self) -> Value {
        serde_json::to_value(&self.0).unwrap_or(Value::Null)
    }

    fn input_any(&self) -> &(dyn Any + Send + Sync) {
        &self.0
    }

    fn hook_name(&self) -> String {
        hook_name::<E>(&self.0)
    }

    fn target(&self) -> crate::hooks::dispatch::Target<'_> {
        crate::hooks::dispatch::Target::of::<E>(&self.0)
    }

    fn fire_on<'a>(
        &'a self,
        dispatcher: &'a crate::hooks::dispatch::Dispatcher,
    ) -> crate::future::BoxFuture<'a, Box<dyn Any + Send>> {
        Box::pin(async move {
            let outcome: Box<dyn Any + Send> = Box::new(dispatcher.fire::<E>(&self.0).await);
            outcome
        })
    }

    fn common_of<'a>(&self, outcome: &'a mut (dyn Any + Send)) -> Option<&'a mut Common> {
        outcome.downcast_mut::<E::Outcome>().map(E::common)
    }

    fn default_outcome(&self) -> Box<dyn Any + Send> {
        Box::new(E::Outcome::default())
    }

    fn explain(&self, outcome: &(dyn Any + Send)) -> Option<Explained> {
        outcome
            .downcast_ref::<E::Outcome>()
            .map(|o| E::explain(o, &self.0))
    }
}
