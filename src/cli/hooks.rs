//! `rein hooks list|validate|test|explain`.
//!
//! Reserved: the subcommands are implemented by the hooks-CLI work; until then each prints
//! "not implemented" and exits 1.

use clap::{Args, Subcommand};

/// Arguments of `rein hooks`.
#[derive(Debug, Clone, Args)]
pub struct HooksArgs {
    #[command(subcommand)]
    pub command: HooksCommand,
}

#[derive(Debug, Clone, Subcommand)]
pub enum HooksCommand {
    /// List every configured hook, where it came from, and whether it can run.
    List,
    /// Check the settings files and report problems with file:line:col.
    Validate,
    /// Run one event's hooks against a sample input.
    Test {
        /// The event name, e.g. PreToolUse.
        event: Option<String>,
    },
    /// Explain which hooks would run for an event and why.
    Explain {
        /// The event name, e.g. PreToolUse.
        event: Option<String>,
    },
}

/// Runs a `hooks` subcommand; returns the exit code.
pub fn main(args: HooksArgs) -> i32 {
    let name = match args.command {
        HooksCommand::List => "list",
        HooksCommand::Validate => "validate",
        HooksCommand::Test { .. } => "test",
        HooksCommand::Explain { .. } => "explain",
    };
    eprintln!("rein hooks {name}: not implemented");
    super::EXIT_ERROR
}
