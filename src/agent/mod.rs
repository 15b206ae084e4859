//! The session, the turn loop, models and the transcript.

pub mod model;
pub mod providers;
