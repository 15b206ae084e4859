//! Command-line front end: `rein [-p] PROMPT`, `rein run PROMPT`, an interactive session on a
//! TTY, and the `hooks` subcommands. Flags follow `claude` where it has one.

pub mod hooks;
pub mod mcp;
pub mod plugin;
pub mod render;
pub mod run;
pub mod sdk;
pub mod stream_input;
pub mod terminal;

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::agent::session::PERMISSION_MODES;

/// Exit code: finished.
pub const EXIT_OK: i32 = 0;
/// Exit code: the run failed (model error, max turns, setup error).
pub const EXIT_ERROR: i32 = 1;
/// Exit code: the command line was wrong.
pub const EXIT_USAGE: i32 = 2;

/// rein: run an agent with your Claude Code hooks, unchanged.
#[derive(Debug, Parser)]
#[command(name = "rein", about, args_conflicts_with_subcommands = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    /// The prompt (headless); without one, an interactive session starts on a TTY.
    pub prompt: Option<String>,
    #[command(flatten)]
    pub run: RunArgs,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run one prompt headless and print the result.
    Run {
        /// The prompt; read from stdin when absent and stdin is not a terminal.
        prompt: Option<String>,
        #[command(flatten)]
        run: Box<RunArgs>,
    },
    /// Inspect and test the configured hooks.
    Hooks(hooks::HooksArgs),
    /// List, inspect, add and remove MCP servers.
    Mcp(mcp::McpArgs),
    /// Plugins from local marketplaces: list, marketplace-add, install, enable, disable.
    Plugin(plugin::PluginArgs),
}

/// `--output-format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    Text,
    Json,
    #[value(name = "stream-json")]
    StreamJson,
}

/// The flags of a session.
#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// Print mode: run the prompt headless and exit (the prompt is the positional argument, or
    /// stdin).
    #[arg(short = 'p', long = "print")]
    pub print: bool,
    /// Model provider: mock (default, offline), openai, anthropic.
    #[arg(long)]
    pub provider: Option<String>,
    /// Model id for the provider.
    #[arg(long)]
    pub model: Option<String>,
    /// Extra settings: a file path or inline JSON (repeatable; later ones win).
    #[arg(long = "settings", value_name = "FILE|JSON")]
    pub settings: Vec<String>,
    /// Load a plugin from this folder for this session (repeatable): its hooks, commands,
    /// agents and skills, as `claude --plugin-dir`.
    #[arg(long = "plugin-dir", value_name = "DIR")]
    pub plugin_dir: Vec<PathBuf>,
    /// As --plugin-dir, without the plugin's MCP servers (the Agent SDK passes it).
    #[arg(long = "plugin-dir-no-mcp", value_name = "DIR", hide = true)]
    pub plugin_dir_no_mcp: Vec<PathBuf>,
    /// Which settings tiers to read: comma-separated `user,project,local`.
    #[arg(long = "setting-sources", value_name = "SOURCES")]
    pub setting_sources: Option<String>,
    /// Permission mode (`manual` is an alias of `default`).
    #[arg(long = "permission-mode", value_parser = clap::builder::PossibleValuesParser::new(PERMISSION_MODES.iter().copied().chain(["manual"])))]
    pub permission_mode: Option<String>,
    /// Same as `--permission-mode bypassPermissions`.
    #[arg(long = "dangerously-skip-permissions")]
    pub dangerously_skip_permissions: bool,
    /// Let the session switch to bypassPermissions later (the Agent SDK's
    /// `set_permission_mode`), under the same rules as starting in it; without it (or a start
    /// in bypassPermissions) such a switch is refused, as in Claude Code.
    #[arg(long = "allow-dangerously-skip-permissions")]
    pub allow_dangerously_skip_permissions: bool,
    /// Trust the project folder for this run: its repository-controlled settings may raise
    /// permissions (allow rules, additionalDirectories, env). `rein hooks trust` records it.
    #[arg(long = "trust")]
    pub trust: bool,
    /// Tools allowed without asking (comma- or space-separated rules, repeatable).
    #[arg(long = "allowedTools", alias = "allowed-tools", value_name = "TOOLS", num_args = 1..)]
    pub allowed_tools: Vec<String>,
    /// Tools denied (comma- or space-separated rules, repeatable).
    #[arg(long = "disallowedTools", alias = "disallowed-tools", value_name = "TOOLS", num_args = 1..)]
    pub disallowed_tools: Vec<String>,
    /// Maximum model requests per prompt.
    #[arg(long = "max-turns", value_name = "N")]
    pub max_turns: Option<u32>,
    /// Output format of headless runs.
    #[arg(long = "output-format", value_enum, default_value = "text")]
    pub output_format: OutputFormat,
    /// Subagent definitions as JSON: `{"name": {"description": …, "prompt": …, "tools"?: […],
    /// "model"?: …}}`, added to `~/.claude/agents/*.md` and `.claude/agents/*.md`.
    #[arg(long = "agents", value_name = "JSON")]
    pub agents: Option<String>,
    /// Scripted responses for the mock provider.
    #[arg(long = "mock-script", value_name = "FILE")]
    pub mock_script: Option<PathBuf>,
    /// Debug logging to stderr; `--debug hooks` prints each hook run.
    #[arg(long, value_name = "WHAT", num_args = 0..=1, default_missing_value = "all")]
    pub debug: Option<String>,
    /// Project directory (default: the current directory).
    #[arg(long = "cwd", value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// Replace rein's system prompt with this text (memory files are still added).
    #[arg(
        long = "system-prompt",
        value_name = "TEXT",
        conflicts_with = "system_prompt_file"
    )]
    pub system_prompt: Option<String>,
    /// Replace rein's system prompt with the contents of a file.
    #[arg(long = "system-prompt-file", value_name = "FILE")]
    pub system_prompt_file: Option<PathBuf>,
    /// Add this text at the end of the system prompt.
    #[arg(long = "append-system-prompt", value_name = "TEXT")]
    pub append_system_prompt: Option<String>,
    /// Add the contents of a file at the end of the system prompt.
    #[arg(long = "append-system-prompt-file", value_name = "FILE")]
    pub append_system_prompt_file: Option<PathBuf>,
    /// More directories the tools may work in (repeatable).
    #[arg(long = "add-dir", value_name = "DIR", num_args = 1..)]
    pub add_dir: Vec<PathBuf>,
    /// Continue the latest session of this project.
    #[arg(short = 'c', long = "continue", conflicts_with = "resume")]
    pub continue_session: bool,
    /// Resume a session by id; without an id, pick one (on a terminal).
    #[arg(short = 'r', long = "resume", value_name = "ID", num_args = 0..=1, default_missing_value = "")]
    pub resume: Option<String>,
    /// Use this id (a UUID) for the new session.
    #[arg(long = "session-id", value_name = "UUID")]
    pub session_id: Option<String>,
    /// With --resume/--continue: continue under a new session id, leaving the old one as it was.
    #[arg(long = "fork-session")]
    pub fork_session: bool,
    /// Write no transcript (the session cannot be resumed later).
    #[arg(long = "no-session-persistence")]
    pub no_session_persistence: bool,
    /// MCP servers from JSON files or strings (`{"mcpServers": {…}}`), in addition to the
    /// configured ones.
    #[arg(long = "mcp-config", value_name = "FILE|JSON", num_args = 1..)]
    pub mcp_config: Vec<String>,
    /// Use only the servers of `--mcp-config`.
    #[arg(long = "strict-mcp-config")]
    pub strict_mcp_config: bool,
    /// Effort level sent to models that take one (default: the settings' `effortLevel`,
    /// `CLAUDE_CODE_EFFORT_LEVEL`, else `medium`).
    #[arg(long = "effort", value_name = "LEVEL", value_parser = clap::builder::PossibleValuesParser::new(crate::agent::providers::EFFORT_LEVELS.iter().copied()))]
    pub effort: Option<String>,
    /// Accepted for Claude Code's `-p … --output-format stream-json --verbose` command line;
    /// rein's stream-json always carries every message.
    #[arg(long = "verbose")]
    pub verbose: bool,
    /// stream-json: also emit a `system` message for each hook run (`hook_started`,
    /// `hook_response`); SessionStart's runs are emitted even without it.
    #[arg(long = "include-hook-events")]
    pub include_hook_events: bool,
    /// Shadow mode for every hook but managed-policy ones: each runs and is recorded, but a
    /// refusal, rewrite or context it gives is not applied ("would have denied: …" in the run
    /// log, the stream-json hook events and the summary at session end). Permission rules
    /// still apply. Per handler: `"shadow": true`; per settings file: `"hooksShadow": true`.
    #[arg(long = "hooks-shadow")]
    pub hooks_shadow: bool,
    /// Write session transcripts under this directory instead of `~/.rein/projects` (e.g.
    /// `~/.claude/projects`, for tools that scan Claude Code's); settings key `transcriptDir`.
    #[arg(long = "transcript-dir", value_name = "DIR")]
    pub transcript_dir: Option<PathBuf>,
    /// stream-json: also emit each event of the model's reply as it streams (`stream_event`
    /// lines, the Messages API's event shape, from every provider).
    #[arg(long = "include-partial-messages")]
    pub include_partial_messages: bool,
    /// Input format of `-p` sessions: `text` (the prompt) or `stream-json` (user messages as
    /// JSON lines on stdin, each one a turn of the same session; needs
    /// `--output-format stream-json`).
    #[arg(long = "input-format", value_enum, default_value = "text")]
    pub input_format: InputFormat,
    /// With `--input-format stream-json`: echo each user message read from stdin on stdout
    /// before its turn.
    #[arg(long = "replay-user-messages")]
    pub replay_user_messages: bool,
    /// Print the version (the Claude Code version whose protocol rein speaks, then rein's own)
    /// and exit.
    #[arg(short = 'v', short_alias = 'V', long = "version")]
    pub version: bool,
    /// The built-in tools the model gets: `default` (all), `""` (none) or a comma-separated
    /// list (`Bash,Read`).
    #[arg(long = "tools", value_name = "TOOLS", allow_hyphen_values = true)]
    pub tools: Option<String>,
    /// `stdio`: permission prompts go to the Agent SDK driving rein (its `can_use_tool`)
    /// instead of being refused. Only `stdio` is supported.
    #[arg(long = "permission-prompt-tool", value_name = "TOOL")]
    pub permission_prompt_tool: Option<String>,
    /// A JSON Schema (inline JSON) the final answer must match: the model gets a
    /// `StructuredOutput` tool taking it, and the `result` carries the answer as
    /// `structured_output`.
    #[arg(long = "json-schema", value_name = "SCHEMA")]
    pub json_schema: Option<String>,
    /// Stop once the session's model cost reaches this many dollars (the turn ends with an
    /// `error_max_budget_usd` result, exit 1). Costs come from `REIN_PRICES`; a model without a
    /// price there costs nothing (rein says so at the start).
    #[arg(long = "max-budget-usd", value_name = "USD")]
    pub max_budget_usd: Option<f64>,
    /// When the model is overloaded (after the provider's retries), switch to this model for
    /// the rest of the session (once).
    #[arg(long = "fallback-model", value_name = "MODEL")]
    pub fallback_model: Option<String>,
    #[command(flatten)]
    pub inert: crate::cli::sdk::flags::InertFlags,
}

/// `--input-format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum InputFormat {
    Text,
    #[value(name = "stream-json")]
    StreamJson,
}

/// Runs the CLI and returns the process exit code (0 done, 1 error, 2 usage).
pub fn main() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => {
            let code = if err.use_stderr() {
                EXIT_USAGE
            } else {
                EXIT_OK
            };
            // A closed stdout while printing --help is not an error.
            let _ = err.print();
            return code;
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(err) => {
            eprintln!("rein: cannot start the async runtime: {err}");
            return EXIT_ERROR;
        }
    };
    if cli.run.version {
        println!("{}", crate::cli::sdk::flags::version_line());
        return EXIT_OK;
    }
    let code = match cli.command {
        Some(Command::Hooks(args)) => hooks::run(args, &runtime),
        Some(Command::Mcp(args)) => mcp::run(args, &runtime),
        Some(Command::Plugin(args)) => plugin::run(args),
        Some(Command::Run { prompt, run }) => runtime.block_on(run::main(prompt, *run, true)),
        None => {
            // As Claude Code: stream-json input with stdout not on a terminal is print mode
            // (the Agent SDK starts it so, without `-p`).
            let headless = cli.run.print
                || cli.prompt.is_some()
                || (cli.run.input_format == InputFormat::StreamJson
                    && !std::io::IsTerminal::is_terminal(&std::io::stdout()));
            runtime.block_on(run::main(cli.prompt, cli.run, headless))
        }
    };
    shut_down(runtime);
    code
}

/// Shuts the runtime down, waiting at most [`RUNTIME_SHUTDOWN_DEADLINE`] for its blocking
/// threads.
///
/// Why a deadline: dropping a runtime waits for every blocking-pool thread, and one stuck in a
/// syscall (an `open` waiting on a lease break, a `read(2)` of a hung file system) cannot be
/// cancelled — rein would stay alive long after the session ended, after a SIGTERM too.
/// Everything that matters (SessionEnd hooks, the transcript, writes the session waited for)
/// has finished by the time `block_on` returns; what is left is a thread nobody waits for, and
/// exiting kills it.
pub fn shut_down(runtime: tokio::runtime::Runtime) {
    runtime.shutdown_timeout(RUNTIME_SHUTDOWN_DEADLINE);
}

/// How long rein waits at exit for blocking work the session no longer waits for (a tool's
/// file read cut short by a signal, say) before exiting anyway.
pub const RUNTIME_SHUTDOWN_DEADLINE: std::time::Duration = std::time::Duration::from_millis(500);

/// Folders given on the command line, made absolute against the current directory (a
/// relative `--plugin-dir` names a folder where rein was started, as in Claude Code).
pub(crate) fn absolute_dirs(dirs: &[PathBuf]) -> Vec<PathBuf> {
    let here = std::env::current_dir().unwrap_or_default();
    dirs.iter()
        .map(|d| {
            if d.is_absolute() {
                d.clone()
            } else {
                here.join(d)
            }
        })
        .collect()
}

/// The slash commands and skills of a project: the user's, the project's and those of the
/// plugins the settings loaded ([`crate::commands`]).
pub(crate) fn catalog_for(
    settings: &crate::settings::schema::Settings,
    project_dir: &std::path::Path,
) -> crate::commands::Catalog {
    let plugins: Vec<crate::commands::PluginFolders> = settings
        .plugins
        .iter()
        .map(|p| crate::commands::PluginFolders {
            name: p.name.clone(),
            root: p.reference.root.clone(),
            commands: p.commands.clone(),
            skills: p.skills.clone(),
        })
        .collect();
    crate::commands::Catalog::discover(&settings.claude_dir, project_dir, &plugins)
}

/// The `outputStyle` setting as written, `default` without one (what `init` and `initialize`
/// report, as Claude Code 2.1.328 does, a name no style has included).
pub(crate) fn output_style_setting(settings: &crate::settings::schema::Settings) -> &str {
    settings
        .output_style
        .as_ref()
        .map_or(crate::agent::output_style::DEFAULT, |(name, _)| name)
}

/// The output styles of a project ([`crate::agent::output_style`]) and the one `outputStyle`
/// chooses (`None` for `default`), with every problem as a diagnostic: a style file skipped,
/// a setting that names no style.
pub(crate) fn output_style_for(
    settings: &crate::settings::schema::Settings,
    project_dir: &std::path::Path,
) -> (
    crate::agent::output_style::Styles,
    Option<crate::agent::output_style::OutputStyle>,
    Vec<crate::settings::schema::Diagnostic>,
) {
    use crate::settings::schema::{Diagnostic, Severity};
    let plugins: Vec<(String, Vec<PathBuf>)> = settings
        .plugins
        .iter()
        .map(|p| (p.name.clone(), p.output_styles.clone()))
        .collect();
    let styles =
        crate::agent::output_style::Styles::discover(&settings.claude_dir, project_dir, &plugins);
    let mut diags: Vec<Diagnostic> = styles
        .errors
        .iter()
        .map(|e| {
            Diagnostic::error_at(
                &e.path,
                e.line,
                format!("{}; this output style is skipped", e.message),
            )
        })
        .collect();
    let chosen = match &settings.output_style {
        Some((name, _)) if name == crate::agent::output_style::DEFAULT => None,
        Some((name, at)) => {
            let found = styles.find(name).cloned();
            if found.is_none() {
                diags.push(Diagnostic {
                    severity: Severity::Warning,
                    location: at.clone(),
                    message: format!(
                        "\"outputStyle\" names \"{name}\", which no output style has, so the default style is on (Claude Code does the same, in silence); the styles are: {}",
                        styles.names().join(", ")
                    ),
                });
            }
            found
        }
        None => None,
    };
    (styles, chosen, diags)
}

/// The agent folders of the plugins the settings loaded, with each plugin's name.
pub(crate) fn plugin_agent_dirs(
    plugins: &[crate::settings::plugins::Plugin],
) -> Vec<(String, PathBuf)> {
    plugins
        .iter()
        .flat_map(|p| p.agents.iter().map(|dir| (p.name.clone(), dir.clone())))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stuck_blocking_thread_does_not_hold_up_the_shutdown() {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.spawn_blocking(|| std::thread::sleep(std::time::Duration::from_secs(30)));
        let started = std::time::Instant::now();
        shut_down(runtime);
        assert!(
            started.elapsed() < RUNTIME_SHUTDOWN_DEADLINE + std::time::Duration::from_secs(2),
            "shutdown took {:?}",
            started.elapsed()
        );
    }

    #[test]
    fn clap_definition_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
