//! Placeholder: settings faults (not written before the deadline).
