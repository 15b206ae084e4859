//! rein's integration tests, all in one test binary (`cargo test --test it`).
//!
//! Why one binary: each file under `tests/` used to be its own crate linking rein and every
//! dev-dependency, and on a 2-core machine the links cost most of a cold `cargo test`. Each
//! former binary is now a module here; the families with their own harness (`faults`, `tools`)
//! are directories. Filter by module path: `cargo test --test it faults::`.
//!
//! Snapshots live in `snapshots/` beside this file, named `it__<module>__<name>.snap`;
//! proptest keeps regression seeds in `tests/proptest-regressions/<module path>.txt`.

// Why: test code may panic on a setup failure (a temp dir, a spawn); that is a failed test, and
// helpers outside #[test] fns are not covered by clippy.toml's allow-*-in-tests.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod agent_e2e;
mod dispatch;
mod dispatch_merge;
mod dispatch_settings;
mod dispatch_support;
mod engine;
mod faults;
mod harness;
mod hook_compat;
mod hook_runner;
mod hook_scripts;
mod hooks_cli;
mod interactive_tmux;
mod permissions_rules;
mod process;
mod providers;
mod readme;
mod session_loop;
mod settings;
mod spanned_json;
mod tools;
