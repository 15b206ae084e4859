//! Placeholder: proptest fuzzing (not written before the deadline).
