//! In-process hooks for programs that embed rein: typed, possibly async Rust handlers
//! registered for one event and a matcher, selected and merged by the
//! [`crate::hooks::dispatch::Dispatcher`] like configured command handlers (after them, in
//! registration order).
//!
//! A handler gets the event's typed input and answers with a [`HookReply`]: the same JSON a
//! command hook would print on stdout (spec §4.3–4.4), built with typed constructors. It goes
//! through the very same validation as a command's stdout. A panic, an error reply or a timeout
//! is isolated like a crashed process: non-blocking, recorded as
//! [`crate::hooks::run::RunStatus::Crashed`] or `TimedOut`.
//!
//! The registry is shared: registering or unregistering on a running session takes effect at
//! the next firing.

use std::any::Any;
use std::fmt;
use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use serde_json::{Map, Value};

use crate::future::BoxFuture;
use crate::hooks::events::Event;
use crate::hooks::matcher::Matcher;
use crate::hooks::spec::{HookEvent, MatcherClass};

/// A handler with its event's types erased: `None` when handed an input of another event. It
/// gets the typed input and the hook input as a command hook reads it on stdin.
type ErasedHandler = dyn Fn(&(dyn Any + Send + Sync), &[u8]) -> Option<BoxFuture<'static, Result<Value, String>>>
    + Send
    + Sync;

/// A handler of [`Registry::on_json`]: the hook input as JSON, the answer as JSON.
pub type JsonHandler =
    dyn Fn(Value) -> BoxFuture<'static, Result<Value, String>> + Send + Sync + 'static;

/// One registered handler.
#[derive(Clone)]
pub struct InProcessHook {
    /// Registration id (unique per registry, increasing in registration order).
    pub id: u64,
    /// The event it is registered for.
    pub event: HookEvent,
    /// The matcher text as given.
    pub matcher_text: String,
    /// Compiled once at registration, with the same rules as settings matchers.
    pub matcher: Matcher,
    /// Its own timeout in seconds (`None`: the event's default, as for a command hook without
    /// one).
    pub timeout: Option<f64>,
    /// What run logs and `/hooks` call it (`None`: `in-process #<id>`).
    pub label: Option<String>,
    pub(crate) handler: Arc<ErasedHandler>,
}

impl fmt::Debug for InProcessHook {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InProcessHook")
            .field("id", &self.id)
            .field("event", &self.event)
            .field("matcher_text", &self.matcher_text)
            .finish_non_exhaustive()
    }
}

/// A matcher an in-process hook cannot use ([`crate::Engine::on`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MatcherError {
    /// Not a valid pattern.
    #[error("invalid matcher {matcher:?} for {event}: {reason}")]
    Invalid {
        /// The event.
        event: HookEvent,
        /// The matcher as given.
        matcher: String,
        /// The compile error.
        reason: String,
    },
    /// The event has nothing to match against, so the matcher would be ignored and the hook
    /// would fire on every event; pass `"*"` to mean that.
    #[error("{event} has no match target, so matcher {matcher:?} would be ignored; use \"*\"")]
    NoTarget {
        /// The event.
        event: HookEvent,
        /// The matcher as given.
        matcher: String,
    },
}

#[derive(Default)]
struct Entries {
    next_id: u64,
    hooks: Vec<InProcessHook>,
}

/// The set of in-process handlers. Cloning shares the same set.
#[derive(Clone, Default)]
pub struct Registry {
    inner: Arc<Mutex<Entries>>,
}

impl fmt::Debug for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registry")
            .field("hooks", &self.snapshot())
            .finish()
    }
}

/// Locks the entries even if a panicking thread poisoned the mutex: the data (a list of
/// handlers) stays consistent whatever a handler did, so poisoning carries no meaning here.
fn lock(inner: &Mutex<Entries>) -> MutexGuard<'_, Entries> {
    inner
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Registry {
    /// An empty registry.
    pub fn new() -> Registry {
        Registry::default()
    }

    /// Registers `handler` for event `E` when `matcher` accepts the event's match value (same
    /// syntax as a settings `matcher`: `"*"` for all, `"Bash|Edit"`, regexes). Keep the
    /// returned handle: dropping it unregisters the hook (use [`Unregister::forget`] to keep
    /// it for the life of the registry).
    ///
    /// A matcher that does not compile, or a non-`"*"` matcher on an event with nothing to
    /// match, is an error — never a hook that silently never (or always) fires.
    pub fn on<E, F, Fut>(&self, matcher: &str, handler: F) -> Result<Unregister, MatcherError>
    where
        E: Event,
        F: Fn(E::Input) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = HookReply> + Send + 'static,
    {
        let compiled = compile::<E>(matcher)?;
        let handler = Arc::new(handler);
        let erased: Arc<ErasedHandler> =
            Arc::new(move |input: &(dyn Any + Send + Sync), _: &[u8]| {
                let input = input.downcast_ref::<E::Input>()?.clone();
                let handler = Arc::clone(&handler);
                let call: BoxFuture<'static, Result<Value, String>> =
                    Box::pin(async move { handler(input).await.into_json::<E>() });
                Some(call)
            });
        let mut entries = lock(&self.inner);
        let id = entries.next_id;
        entries.next_id += 1;
        entries.hooks.push(InProcessHook {
            id,
            event: E::EVENT,
            matcher_text: matcher.to_string(),
            matcher: compiled,
            timeout: None,
            label: None,
            handler: erased,
        });
        Ok(Unregister {
            registry: Arc::downgrade(&self.inner),
            id: Some(id),
        })
    }

    /// Registers `handler` for `event`, untyped: it gets the hook input exactly as a command
    /// hook reads it on stdin (as JSON) and answers with what such a hook would print. For
    /// hosts that speak JSON themselves (the Agent SDK's hook callbacks). `timeout` replaces the
    /// event's default (seconds); `label` names it in run logs.
    pub fn on_json(
        &self,
        event: HookEvent,
        matcher: &str,
        timeout: Option<f64>,
        label: &str,
        handler: Arc<JsonHandler>,
    ) -> Result<Unregister, MatcherError> {
        let compiled = compile_for(event, matcher)?;
        let erased: Arc<ErasedHandler> =
            Arc::new(move |_: &(dyn Any + Send + Sync), stdin: &[u8]| {
                let input = serde_json::from_slice::<Value>(stdin).unwrap_or(Value::Null);
                Some(handler(input))
            });
        let mut entries = lock(&self.inner);
        let id = entries.next_id;
        entries.next_id += 1;
        entries.hooks.push(InProcessHook {
            id,
            event,
            matcher_text: matcher.to_string(),
            matcher: compiled,
            timeout,
            label: Some(label.to_string()),
            handler: erased,
        });
        Ok(Unregister {
            registry: Arc::downgrade(&self.inner),
            id: Some(id),
        })
    }

    /// The handlers registered for `event`, in registration order.
    pub fn for_event(&self, event: HookEvent) -> Vec<InProcessHook> {
        lock(&self.inner)
            .hooks
            .iter()
            .filter(|h| h.event == event)
            .cloned()
            .collect()
    }

    /// Every registered handler, in registration order.
    pub fn snapshot(&self) -> Vec<InProcessHook> {
        lock(&self.inner).hooks.clone()
    }

    /// Number of registered handlers.
    pub fn len(&self) -> usize {
        lock(&self.inner).hooks.len()
    }

    /// Whether no handler is registered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn remove(inner: &Mutex<Entries>, id: u64) {
        lock(inner).hooks.retain(|h| h.id != id);
    }
}

fn compile<E: Event>(text: &str) -> Result<Matcher, MatcherError> {
    compile_for(E::EVENT, text)
}

fn compile_for(event: HookEvent, text: &str) -> Result<Matcher, MatcherError> {
    let class = event.spec().matcher;
    if class == MatcherClass::NoTarget && !text.is_empty() && text != "*" {
        return Err(MatcherError::NoTarget {
            event,
            matcher: text.to_string(),
        });
    }
    match Matcher::compile_class(class, Some(text)) {
        Matcher::Invalid(reason) => Err(MatcherError::Invalid {
            event,
            matcher: text.to_string(),
            reason,
        }),
        matcher @ (Matcher::All | Matcher::Exact(_) | Matcher::Regex(_)) => Ok(matcher),
    }
}

/// Handle of an in-process hook ([`crate::Engine::on`]); removes the hook when dropped or on
/// [`Unregister::unregister`].
#[derive(Debug)]
#[must_use = "dropping the Unregister handle removes the hook again"]
pub struct Unregister {
    registry: Weak<Mutex<Entries>>,
    id: Option<u64>,
}

impl Unregister {
    /// Removes the hook now.
    pub fn unregister(mut self) {
        self.remove_now();
    }

    /// Keeps the hook registered for as long as the engine lives.
    pub fn forget(mut self) {
        self.id = None;
    }

    fn remove_now(&mut self) {
        if let (Some(id), Some(inner)) = (self.id.take(), self.registry.upgrade()) {
            Registry::remove(&inner, id);
        }
    }
}

impl Drop for Unregister {
    fn drop(&mut self) {
        self.remove_now();
    }
}

/// What an in-process handler answers: the JSON a command hook would print, built with
/// methods instead of by hand. [`HookReply::default`] has no opinion. Each event module adds
/// its own constructors (e.g. `PreToolUse::deny`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HookReply {
    json: Map<String, Value>,
    specific: Map<String, Value>,
    error: Option<String>,
}

impl HookReply {
    /// No opinion: the call (or prompt, or stop) goes ahead as if the hook were not there.
    pub fn none() -> HookReply {
        HookReply::default()
    }

    /// The handler failed: a non-blocking error, shown to the user, like a command hook that
    /// exits 1.
    pub fn error(message: impl Into<String>) -> HookReply {
        HookReply {
            error: Some(message.into()),
            ..HookReply::default()
        }
    }

    /// A raw hook JSON output, exactly as a command hook would print it.
    pub fn json(output: Map<String, Value>) -> HookReply {
        HookReply {
            json: output,
            ..HookReply::default()
        }
    }

    /// `decision: "block"` with `reason`: a blocking error on the events where blocking means
    /// something (PreToolUse: deny; PostToolUse: feedback; Stop: keep going; …).
    pub fn block(reason: impl Into<String>) -> HookReply {
        HookReply::none()
            .top("decision", "block")
            .top("reason", reason.into())
    }

    /// Adds `systemMessage`: a notice for the user.
    pub fn system_message(self, message: impl Into<String>) -> HookReply {
        self.top("systemMessage", message.into())
    }

    /// Adds `hookSpecificOutput.additionalContext`: context for the model, on the events that
    /// read it.
    pub fn context(self, text: impl Into<String>) -> HookReply {
        self.specific("additionalContext", text.into())
    }

    /// Adds `continue: false` with a `stopReason`: the loop stops after this step.
    pub fn stop(self, reason: impl Into<String>) -> HookReply {
        self.top("continue", false).top("stopReason", reason.into())
    }

    /// Sets a top-level field.
    pub fn top(mut self, key: &str, value: impl Into<Value>) -> HookReply {
        self.json.insert(key.to_string(), value.into());
        self
    }

    /// Sets a `hookSpecificOutput` field (its `hookEventName` is filled in).
    pub fn specific(mut self, key: &str, value: impl Into<Value>) -> HookReply {
        self.specific.insert(key.to_string(), value.into());
        self
    }

    /// The JSON output for event `E`, or the handler's error.
    fn into_json<E: Event>(self) -> Result<Value, String> {
        if let Some(error) = self.error {
            return Err(error);
        }
        let mut json = self.json;
        if !self.specific.is_empty() {
            let mut specific = Map::new();
            specific.insert("hookEventName".to_string(), E::EVENT.as_str().into());
            specific.extend(self.specific);
            json.insert("hookSpecificOutput".to_string(), Value::Object(specific));
        }
        Ok(Value::Object(json))
    }
}
