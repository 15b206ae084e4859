//! rein's integration tests, all in one test binary (`cargo test --test it`).
//!
//! Why one binary: each file under `tests/` used to be its own crate linking rein and every
//! dev-dependency, and on a 2-core machine the links cost most of a cold `cargo test`. Each
//! former binary is now a module here; the fault suite, with its own harness, is a directory.
//! Filter by module path: `cargo test --test it faults::`.
//!
//! What is here drives the built `rein` binary (or reads what the README tells users to run) and
//! sees the library only through its public API. Tests of internals (the dispatcher, the process
//! runner, settings, permission rules, the tools, the property tests) are unit tests under
//! `src/tests/`.
//!
//! Snapshots live in `snapshots/` beside this file, named `it__<module>__<name>.snap`.

// Why: test code may panic on a setup failure (a temp dir, a spawn); that is a failed test, and
// helpers outside #[test] fns are not covered by clippy.toml's allow-*-in-tests.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod agent;
mod agent_e2e;
mod agent_sdk;
mod cc_fidelity;
mod commands;
mod engine;
mod faults;
mod harness;
mod hook_scripts;
mod hooks_cli;
mod http_hooks;
mod http_server;
mod interactive_tmux;
mod mcp;
mod mcp_servers;
mod plugins;
mod policy_rollout;
mod readme;
mod security;
mod subagents;
mod telemetry;
mod tools_more;
mod warm_hooks;
