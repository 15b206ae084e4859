//! rein: a local agent harness that runs Claude Code hooks unchanged.
//!
//! The library is the product; `main.rs` is a thin clap front over it. Data flows one way:
//! settings files → [`settings::schema::Settings`] → the session ([`agent`]) → the tool pipeline
//! ([`pipeline`]) → hooks ([`hooks::dispatch::Dispatcher`]) and permissions ([`permissions`]).
//! See `DESIGN.md` in the repository for the picture.

pub mod agent;
pub mod cli;
pub mod hooks;
pub mod permissions;
pub mod pipeline;
pub mod process;
pub mod settings;
pub mod tools;
