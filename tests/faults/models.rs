//! Placeholder: model-reply faults (not written before the deadline).
