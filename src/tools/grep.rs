//! Glob placeholder.
