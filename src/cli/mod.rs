//! Command-line front end.
//!
//! SKELETON: replaced by the CLI work.

/// Runs the CLI and returns the process exit code (0 done, 1 error, 2 usage).
pub fn main() -> i32 {
    eprintln!("rein: not implemented yet");
    1
}
