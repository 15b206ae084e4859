//! Permission rules, modes and the fail-closed approval step.

pub mod rule;
