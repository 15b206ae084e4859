//! The hook engine: event inputs, selection, running handlers, and merging their outcomes.

pub mod command;
pub mod decision;
pub mod dispatch;
pub mod event;
pub mod explain;
pub mod lint;
pub mod matcher;
pub mod output;
pub mod registry;
