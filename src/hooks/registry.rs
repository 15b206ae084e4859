//! In-process hooks for library users: Rust closures registered for an event and a matcher,
//! selected and merged by the [`crate::hooks::dispatch::Dispatcher`] like configured command
//! handlers (after them, in registration order).
//!
//! A handler answers with the same JSON a command hook would print on stdout (spec §4.3–4.4),
//! or with an `Err(text)`. An `Err` or a panic is isolated like a crashed process: non-blocking,
//! recorded as [`crate::hooks::decision::RunStatus::Crashed`].

use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use serde_json::Value;

use crate::hooks::event::{HookEvent, HookInput};
use crate::hooks::matcher::Matcher;

/// The signature of an in-process handler: the hook input in, hook JSON output (or an error
/// text) out.
pub type InProcessFn = dyn Fn(&HookInput) -> Result<Value, String> + Send + Sync;

/// One registered handler.
#[derive(Clone)]
pub struct InProcessHook {
    /// Registration id (unique per registry, increasing in registration order).
    pub id: u64,
    pub event: HookEvent,
    /// The matcher text as given to [`Registry::hook`].
    pub matcher_text: String,
    /// Compiled once at registration, with the same rules as settings matchers.
    pub matcher: Matcher,
    pub handler: Arc<InProcessFn>,
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

    /// Registers `f` for `event` when `matcher` accepts the event's match value (same syntax
    /// as a settings `matcher`: `""`/`"*"` for all, `"Bash|Edit"`, regexes). Keep the returned
    /// handle: dropping it unregisters the hook (use [`Unregister::forget`] to keep it for the
    /// life of the registry).
    #[must_use = "dropping the Unregister handle removes the hook again"]
    pub fn hook<F>(&self, event: HookEvent, matcher: &str, f: F) -> Unregister
    where
        F: Fn(&HookInput) -> Result<Value, String> + Send + Sync + 'static,
    {
        let mut entries = lock(&self.inner);
        let id = entries.next_id;
        entries.next_id += 1;
        entries.hooks.push(InProcessHook {
            id,
            event,
            matcher_text: matcher.to_string(),
            matcher: Matcher::compile(Some(event), Some(matcher)),
            handler: Arc::new(f),
        });
        Unregister {
            registry: Arc::downgrade(&self.inner),
            id: Some(id),
        }
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

/// Handle returned by [`Registry::hook`]; removes the hook when dropped or on
/// [`Unregister::unregister`].
#[derive(Debug)]
pub struct Unregister {
    registry: Weak<Mutex<Entries>>,
    id: Option<u64>,
}

impl Unregister {
    /// Removes the hook now.
    pub fn unregister(mut self) {
        self.remove_now();
    }

    /// Keeps the hook registered for as long as the registry lives.
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
