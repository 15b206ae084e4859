//! Placeholder: signal faults (not written before the deadline).
