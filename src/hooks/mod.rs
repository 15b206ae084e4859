//! The hook engine: the table of events ([`spec`]), one module per fired event ([`events`]),
//! selection and running ([`dispatch`]), judgement of exit code and stdout ([`output`]), the
//! process layer of command hooks ([`command`]) and what can keep it from starting
//! ([`preflight`]), timeouts ([`timeout`]), the typed in-process
//! registry ([`registry`]), shadow mode ([`shadow`]), and the seam its callers use ([`host`]).

pub mod answer;
pub mod command;
pub mod config;
pub mod dispatch;
pub mod environment;
pub mod events;
pub mod host;
pub mod http;
pub mod in_process;
pub mod matcher;
pub mod mcp_tool;
pub mod output;
pub mod preflight;
pub mod prompt_hook;
pub mod registry;
pub mod run;
pub mod run_log;
pub mod select;
pub mod shadow;
pub mod spec;
pub mod spill;
pub mod timeout;
pub mod warm;

/// A fresh `toolu_…` id (24 hex digits), as Claude Code's tool-use ids look.
pub fn new_tool_use_id() -> String {
    let hex: String = crate::id::uuid_v4().chars().filter(|c| *c != '-').collect();
    format!("toolu_{}", &hex[..24])
}
