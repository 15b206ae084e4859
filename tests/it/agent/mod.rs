//! The agent around the hooks (issue 16): the system prompt and memory files, sessions that
//! resume, compaction, token usage — each against a loopback provider of both kinds.

mod compact;
mod instructions;
pub mod loopback;
mod output_styles;
mod resume;
