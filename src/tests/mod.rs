//! Tests of rein's internals, in the crate so they may use what the library does not export.
//!
//! Why here and not in `tests/it`: an integration test sees only the public API, and most of
//! these pin behaviour below it (the dispatcher, the process runner, settings parsing, the
//! permission rules, the tools). Tests that run the built `rein` binary stay in `tests/it`.
//! One submodule per former `tests/it` module; filter by path: `cargo test --lib tests::tools::`.
//!
//! Snapshots live in `snapshots/` beside this file, named `rein__tests__<module>__<name>.snap`;
//! proptest keeps regression seeds in `proptest-regressions/tests/<module>.txt` at the package
//! root (parallel to `src/`).

// Why: test code may panic on a setup failure (a temp dir, a spawn); that is a failed test, and
// helpers outside #[test] fns are not covered by clippy.toml's allow-*-in-tests.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod dispatch;
mod dispatch_merge;
mod dispatch_settings;
mod dispatch_support;
mod fuzz;
mod harness;
mod hook_compat;
mod hook_runner;
mod layers;
mod mcp_http;
mod permissions_rules;
mod process;
mod providers;
mod read_only;
mod resume_compat;
mod session_loop;
mod session_switch;
mod settings;
mod spanned_json;
mod stream_input;
mod subagents;
mod tools;
