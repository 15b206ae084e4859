//! rein: a local agent harness that runs Claude Code hooks unchanged.
//!
//! The library is the product; `main.rs` is a thin clap front over it. Data flows one way:
//! settings files → [`settings::schema::Settings`] → the session ([`agent`]) → the tool pipeline
//! ([`pipeline`]) → hooks ([`hooks::dispatch::Dispatcher`]) and permissions ([`permissions`]).
//! See `DESIGN.md` in the repository for the picture.

pub mod agent;
pub mod cli;
mod engine;
pub mod hooks;
pub mod id;
pub mod model;
pub mod origin;
pub mod permissions;
pub mod pipeline;
pub mod process;
pub mod progress;
pub mod settings;
pub mod tools;

pub use engine::{Engine, EngineBuilder, EngineError};

/// A boxed, sendable future: what object-safe async traits in rein return.
pub type BoxFuture<'a, T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send + 'a>>;
