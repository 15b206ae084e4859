//! `rein hooks list|validate|test|explain`: tools for hook authors.
//!
//! Claude Code skips a broken settings file silently, treats `exit 1` as "go ahead" and cannot
//! try a hook without a whole session. These subcommands say, for every configured handler,
//! where it came from and why it will never fire ([`list`](HooksCommand::List)); report every
//! problem compiler-style ([`validate`](HooksCommand::Validate)); run one event's handlers for
//! real, exactly as a session would, and show what the model would see
//! ([`test`](HooksCommand::Test)); and explain which handlers a firing selects and why the others
//! stay out, running nothing ([`explain`](HooksCommand::Explain)).
//!
//! Output is text for people or, with `--json`, one JSON document with stable field names.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use clap::{Args, Subcommand};
use serde_json::{Map, Value, json};

use crate::agent::transcript::{rein_home, transcript_path};
use crate::cli::{EXIT_ERROR, EXIT_OK, EXIT_USAGE};
use crate::hooks::dispatch::{Dispatcher, HookEnvironment};
use crate::hooks::events::{BaseInput, Common, Firing, stdin_bytes};
use crate::hooks::host::HookHost;
use crate::hooks::run::{HandlerRun, OutcomeKind, RunStatus};
use crate::hooks::spec::{HookEvent, MatcherClass};
use crate::id::uuid_v4;
use crate::settings::explain::{self, HandlerStatus, Verdict, matcher_summary};
use crate::settings::lint::{LintContext, lint_handler};
use crate::settings::schema::{
    ConfiguredHandler, Diagnostic, HandlerKind, OnFailure, Settings, Severity,
};
use crate::settings::tool_names;
use crate::settings::trust::TrustState;
use crate::settings::{LoadOptions, parse_setting_sources};
use crate::tools::{ToolContext, builtin_tools};

mod explain_cmd;
mod list;
mod replay;
mod simulate;
mod test;
mod validate;
mod warm_cmd;

use explain_cmd::*;
use list::*;
use simulate::*;
use test::*;
use validate::*;

/// How much of a hook's stdout/stderr `rein hooks test` prints (the run log has the sizes).
const DISPLAY_CAP: usize = 4000;

/// Arguments of `rein hooks`.
#[derive(Debug, Clone, Args)]
pub struct HooksArgs {
    #[command(flatten)]
    pub options: HooksOptions,
    #[command(subcommand)]
    pub command: HooksCommand,
}

/// Flags shared with the main CLI: which settings to read and where the project is.
#[derive(Debug, Clone, Args)]
pub struct HooksOptions {
    /// Extra settings: a file path or inline JSON (repeatable; later ones win).
    #[arg(long = "settings", value_name = "FILE|JSON", global = true)]
    pub settings: Vec<String>,
    /// Also load the plugin in this folder (repeatable), as `rein --plugin-dir`.
    #[arg(long = "plugin-dir", value_name = "DIR", global = true)]
    pub plugin_dir: Vec<std::path::PathBuf>,
    /// Which settings tiers to read: comma-separated `user,project,local`.
    #[arg(long = "setting-sources", value_name = "SOURCES", global = true)]
    pub setting_sources: Option<String>,
    /// Project directory (default: the current directory).
    #[arg(long = "cwd", value_name = "DIR", global = true)]
    pub cwd: Option<PathBuf>,
    /// Shadow mode for every hook but managed-policy ones (as `rein --hooks-shadow`).
    #[arg(long = "hooks-shadow", global = true)]
    pub hooks_shadow: bool,
    /// `--debug hooks`: print each hook run's log line to stderr (`rein hooks test`).
    #[arg(long, value_name = "WHAT", global = true, num_args = 0..=1, default_missing_value = "all")]
    pub debug: Option<String>,
}

/// The `hooks` subcommands.
#[derive(Debug, Clone, Subcommand)]
pub enum HooksCommand {
    /// List every configured hook, where it came from, and whether it can ever fire.
    List {
        /// One JSON document instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Check the settings files and hook scripts; report problems as file:line:col.
    Validate {
        /// Warnings fail too (exit 1).
        #[arg(long)]
        strict: bool,
        /// One JSON document instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Trust this project folder: show what its repository-controlled settings hold (hooks,
    /// the scripts they run, escalating permissions) and record their fingerprints, so they may
    /// raise permissions until one of them changes.
    Trust {
        /// Remove this folder's trust record instead (its repository settings stop raising
        /// permissions; on a terminal rein asks again).
        #[arg(long)]
        revoke: bool,
        /// One JSON document instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Run one event's hooks for real against a sample input, as a session would.
    ///
    /// Exit status: 0 the hooks let the action go ahead (no decision, allow, or only
    /// non-blocking errors, which are shown); 3 they block, refuse or stop it (exit 2,
    /// "decision": "block", a deny/ask/defer permission decision, "continue": false); 1 rein
    /// could not run the test (settings, output); 2 the command line is wrong (an unknown
    /// event, bad --input).
    Test {
        #[command(flatten)]
        firing: FiringArgs,
        /// One JSON document instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Replay past sessions through the current hooks and permission rules: what they would
    /// decide now about each call, prompt and stop, next to what happened then. No tool or
    /// model runs; the hooks do (`--dry-hooks` lists them instead).
    ///
    /// Takes Claude Code transcripts (`~/.claude/projects/**/*.jsonl`) and rein's; a directory
    /// replays every `*.jsonl` under it, a quoted glob every file it matches. Exit status: 0
    /// nothing would be refused; 3 some call would be denied, asked or deferred, or a prompt or
    /// stop blocked; 2 the command line is wrong.
    Replay {
        /// Transcript files, directories or globs.
        #[arg(value_name = "TRANSCRIPT")]
        paths: Vec<String>,
        /// One JSON object per line for each replayed event, then `{"summary": …}`.
        #[arg(long)]
        json: bool,
        /// Run no hook: list the handlers each event would run, and judge the rules alone.
        #[arg(long = "dry-hooks")]
        dry_hooks: bool,
        /// The permission mode to judge under (default: the settings' `defaultMode`).
        #[arg(long = "permission-mode", value_name = "MODE")]
        permission_mode: Option<String>,
    },
    /// Start the interpreters a session keeps waiting for these settings' warm python and
    /// node hooks, say what each costs in memory (proportional set size), and end them.
    Warm {
        /// One JSON document instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Explain which hooks would run for an event and why the others would not (runs nothing).
    Explain {
        #[command(flatten)]
        firing: FiringArgs,
        /// One JSON document instead of text.
        #[arg(long)]
        json: bool,
    },
}

/// The event firing to simulate.
#[derive(Debug, Clone, Args)]
pub struct FiringArgs {
    /// The event name, e.g. PreToolUse, UserPromptSubmit, SessionStart.
    pub event: String,
    /// The tool name (tool events: PreToolUse, PostToolUse, PostToolUseFailure,
    /// PermissionRequest, PermissionDenied).
    #[arg(long)]
    pub tool: Option<String>,
    /// JSON or @FILE: the `tool_input` for tool events (or an object with `tool_input` and
    /// other event fields); the event fields for other events, e.g. {"prompt":"hi"}.
    #[arg(long, value_name = "JSON|@FILE")]
    pub input: Option<String>,
    /// The value the matcher is tested against on non-tool events (SessionStart `source`,
    /// SessionEnd `reason`, StopFailure `error`, Notification `notification_type`).
    #[arg(long = "matcher-value", value_name = "V")]
    pub matcher_value: Option<String>,
}

/// A failure of the command line or setup, with its exit code.
#[derive(Debug)]
struct CliError {
    pub(super) message: String,
    pub(super) code: i32,
}

fn usage(message: impl Into<String>) -> CliError {
    CliError {
        message: message.into(),
        code: EXIT_USAGE,
    }
}

/// What every subcommand needs.
struct Context {
    pub(super) project_dir: PathBuf,
    pub(super) home: PathBuf,
    pub(super) settings: Settings,
    pub(super) debug: bool,
    /// Names of the configured MCP servers (not started).
    pub(super) mcp_servers: Vec<String>,
}

/// Runs a `hooks` subcommand on `runtime`; returns the exit code.
pub fn run(args: HooksArgs, runtime: &tokio::runtime::Runtime) -> i32 {
    let result = setup(&args.options).and_then(|ctx| match args.command {
        HooksCommand::List { json } => Ok(list(&ctx, json)),
        HooksCommand::Validate { strict, json } => Ok(validate(&ctx, strict, json)),
        HooksCommand::Trust { revoke: true, json } => revoke_cmd(&ctx, json),
        HooksCommand::Trust { json, .. } => trust_cmd(&ctx, json),
        HooksCommand::Test { firing, json } => test(ctx, &firing, json, runtime),
        HooksCommand::Explain { firing, json } => explain_cmd(ctx, &firing, json),
        HooksCommand::Warm { json } => warm_cmd::warm_cmd(ctx, json, runtime),
        HooksCommand::Replay {
            paths,
            json,
            dry_hooks,
            permission_mode,
        } => replay::replay(
            ctx,
            &replay::ReplayOptions {
                paths,
                json,
                dry_hooks,
                permission_mode,
            },
            runtime,
        ),
    });
    match result {
        Ok(code) => code,
        Err(err) => {
            eprintln!("rein hooks: {}", err.message);
            err.code
        }
    }
}

fn setup(options: &HooksOptions) -> Result<Context, CliError> {
    let dir = match &options.cwd {
        Some(d) => d.clone(),
        None => std::env::current_dir().map_err(|e| CliError {
            message: format!("cannot read the current directory: {e}"),
            code: EXIT_ERROR,
        })?,
    };
    let project_dir = std::fs::canonicalize(&dir)
        .map_err(|e| usage(format!("project directory {}: {e}", dir.display())))?;
    crate::hooks::environment::require_utf8_project_dir(&project_dir).map_err(|e| CliError {
        message: e.to_string(),
        code: EXIT_ERROR,
    })?;
    let mut opts = LoadOptions::from_env(
        project_dir.clone(),
        project_dir.clone(),
        options.settings.clone(),
    );
    if let Some(sources) = &options.setting_sources {
        opts.setting_sources = Some(
            parse_setting_sources(sources).map_err(|e| usage(format!("--setting-sources: {e}")))?,
        );
    }
    opts.repo_trusted = trust_state(&project_dir) == TrustState::Trusted;
    opts.plugin_dirs = crate::cli::absolute_dirs(&options.plugin_dir);
    let mut settings = crate::settings::load(&opts);
    if options.hooks_shadow {
        settings.shadow_hooks();
    }
    let mcp_servers = crate::cli::mcp::configured_names(&project_dir, &settings);
    Ok(Context {
        project_dir,
        home: opts.home,
        mcp_servers,
        settings,
        debug: matches!(options.debug.as_deref(), Some("hooks" | "all")),
    })
}

/// Writes to stdout; a closed pipe (`| head`) is not an error.
fn emit(text: &str) -> i32 {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => EXIT_OK,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => EXIT_OK,
        Err(e) => {
            eprintln!("rein hooks: cannot write to stdout: {e}");
            EXIT_ERROR
        }
    }
}

fn emit_json(value: &Value) -> i32 {
    let text = serde_json::to_string_pretty(value).unwrap_or_default();
    emit(&format!("{text}\n"))
}
