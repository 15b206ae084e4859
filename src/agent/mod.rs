//! The session, the turn loop, models and the transcript.

pub mod agent_hook;
pub mod compact;
pub mod cost;
pub mod instructions;
pub mod output_style;
pub mod providers;
pub mod resume;
pub mod session;
pub mod subagent;
pub mod transcript;
