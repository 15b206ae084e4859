//! The session, the turn loop, models and the transcript.

pub mod agent_hook;
pub mod providers;
pub mod session;
pub mod subagent;
pub mod transcript;
