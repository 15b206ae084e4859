//! The command-line flags the Agent SDKs pass that rein accepts: `--tools`,
//! `--permission-prompt-tool stdio`, the version line, and the flags that have no effect in
//! rein ([`InertFlags`]), each reported once on stderr when given (the README lists them).

use std::sync::Arc;

use clap::Args;

use crate::cli::RunArgs;
use crate::cli::sdk::{Control, SdkPermissions};
use crate::pipeline::PermissionHost;
use crate::tools::Tool;

/// Flags of Claude Code's command line that the SDKs may pass and rein accepts without acting
/// on them. Each is reported once when given.
#[derive(Debug, Clone, Default, Args)]
pub struct InertFlags {
    /// Accepted for the Agent SDK; no effect in rein.
    #[arg(long = "resume-session-at", value_name = "UUID", hide = true)]
    pub resume_session_at: Option<String>,
    /// Accepted for the Agent SDK; no effect in rein.
    #[arg(long = "resume-drops-turn", value_name = "UUID", hide = true)]
    pub resume_drops_turn: Option<String>,
    /// Accepted for the Agent SDK; no effect in rein (no session mirror).
    #[arg(long = "session-mirror", hide = true)]
    pub session_mirror: bool,
    /// Accepted for the Agent SDK; no effect in rein (no extended thinking).
    #[arg(long = "thinking", value_name = "MODE", hide = true)]
    pub thinking: Option<String>,
    /// Accepted for the Agent SDK; no effect in rein.
    #[arg(long = "thinking-display", value_name = "MODE", hide = true)]
    pub thinking_display: Option<String>,
    /// Accepted for the Agent SDK; no effect in rein (no extended thinking).
    #[arg(long = "max-thinking-tokens", value_name = "N", hide = true)]
    pub max_thinking_tokens: Option<String>,
    /// Accepted for the Agent SDK; no effect in rein (no beta headers are sent).
    #[arg(long = "betas", value_name = "BETAS", hide = true)]
    pub betas: Option<String>,
    /// Accepted for the Agent SDK; no effect in rein.
    #[arg(long = "task-budget", value_name = "TOKENS", hide = true)]
    pub task_budget: Option<String>,
    /// Accepted for the Agent SDK: rein always reads `initialize` before it builds the session.
    #[arg(long = "await-initialize", hide = true)]
    pub await_initialize: bool,
    /// Accepted for the Agent SDK; no effect in rein (`--debug` writes to stderr).
    #[arg(long = "debug-file", value_name = "FILE", hide = true)]
    pub debug_file: Option<String>,
    /// Accepted for the Agent SDK; no effect in rein (the main agent is rein's own).
    #[arg(long = "agent", value_name = "NAME", hide = true)]
    pub agent: Option<String>,
    /// Accepted for the Agent SDK; no effect in rein.
    #[arg(long = "permission-prompts", value_name = "WHAT", hide = true)]
    pub permission_prompts: Option<String>,
    /// Accepted for the Agent SDK; no effect in rein.
    #[arg(long = "channels", value_name = "CHANNEL", hide = true)]
    pub channels: Vec<String>,
    /// Accepted for the Agent SDK; no effect in rein.
    #[arg(long = "project-config-root", value_name = "DIR", hide = true)]
    pub project_config_root: Option<String>,
}

/// `-v`: the Claude Code version whose protocol rein speaks first (the SDKs read a version
/// from the start of the line), then rein's own name and version.
pub fn version_line() -> String {
    format!(
        "{} (rein {}, a Claude Code-compatible agent harness)",
        crate::cli::sdk::SPEAKS_CLAUDE_CODE,
        env!("CARGO_PKG_VERSION")
    )
}

/// One stderr line per inert flag given.
pub fn report_inert(args: &RunArgs) {
    let f = &args.inert;
    let given: [(&str, bool); 15] = [
        ("--resume-session-at", f.resume_session_at.is_some()),
        ("--resume-drops-turn", f.resume_drops_turn.is_some()),
        ("--session-mirror", f.session_mirror),
        ("--thinking", f.thinking.is_some()),
        ("--thinking-display", f.thinking_display.is_some()),
        ("--max-thinking-tokens", f.max_thinking_tokens.is_some()),
        ("--betas", f.betas.is_some()),
        ("--task-budget", f.task_budget.is_some()),
        ("--debug-file", f.debug_file.is_some()),
        ("--agent", f.agent.is_some()),
        ("--permission-prompts", f.permission_prompts.is_some()),
        ("--channels", !f.channels.is_empty()),
        ("--project-config-root", f.project_config_root.is_some()),
        (
            "--permission-prompt-tool (other than stdio)",
            args.permission_prompt_tool
                .as_deref()
                .is_some_and(|t| t != "stdio"),
        ),
        (
            "--permission-prompt-tool stdio (without --input-format stream-json)",
            args.permission_prompt_tool.as_deref() == Some("stdio")
                && args.input_format != crate::cli::InputFormat::StreamJson,
        ),
    ];
    for (flag, on) in given {
        if on {
            eprintln!("rein: {flag} has no effect in rein (see the README's Agent SDK section)");
        }
    }
}

/// The `StructuredOutput` tool and where its answer lands.
pub type Structured = (
    Arc<dyn Tool>,
    crate::tools::structured_output::StructuredAnswer,
);

/// `--json-schema`: the `StructuredOutput` tool and where its answer lands; the system prompt
/// gets a line asking for it. `Err` says what is wrong with the schema.
pub fn structured_output(args: &mut RunArgs) -> Result<Option<Structured>, String> {
    use crate::tools::structured_output::{INSTRUCTION, StructuredOutput};
    let Some(text) = args.json_schema.as_deref() else {
        return Ok(None);
    };
    let schema: serde_json::Value =
        serde_json::from_str(text).map_err(|e| format!("--json-schema: not JSON ({e})"))?;
    let (tool, answer) =
        StructuredOutput::new(schema).map_err(|e| format!("--json-schema: {e}"))?;
    args.append_system_prompt = Some(match args.append_system_prompt.take() {
        Some(text) => format!("{text}\n\n{INSTRUCTION}"),
        None => INSTRUCTION.to_string(),
    });
    Ok(Some((Arc::new(tool) as Arc<dyn Tool>, answer)))
}

/// `--permission-prompt-tool stdio` with the SDK on stdin: the SDK answers the prompts.
pub fn permission_host(
    args: &RunArgs,
    control: Option<&Arc<Control>>,
) -> Option<Arc<dyn PermissionHost>> {
    match (args.permission_prompt_tool.as_deref(), control) {
        (Some("stdio"), Some(control)) => {
            Some(Arc::new(SdkPermissions(Arc::clone(control))) as Arc<dyn PermissionHost>)
        }
        _ => None,
    }
}

/// `--fallback-model`: the model the session switches to when its own is overloaded. `Err`
/// (a usage error) when it names the session's own model; `None`, with a warning, when the
/// provider cannot build it (the mock has one model).
pub fn fallback_model(
    name: Option<&str>,
    current: &str,
    models: Option<&crate::agent::subagent::ModelFactory>,
) -> Result<Option<Arc<dyn crate::model::Model>>, String> {
    let Some(name) = name else {
        return Ok(None);
    };
    if name == current {
        return Err(
            "Fallback model cannot be the same as the main model. Please specify a different model for --fallback-model."
                .to_string(),
        );
    }
    match models.and_then(|f| f(name)) {
        Some(model) => Ok(Some(model)),
        None => {
            eprintln!(
                "rein: warning: --fallback-model {name}: {} cannot build this model, so there is no fallback",
                if models.is_none() {
                    "the mock provider"
                } else {
                    "the provider"
                }
            );
            Ok(None)
        }
    }
}

/// Whether `--tools` leaves the Agent tool in (it is not given, `default`, or names `Agent`
/// or `Task`).
pub fn offers_agent(list: Option<&str>) -> bool {
    match list.map(str::trim) {
        None | Some("default") => true,
        Some(list) => list
            .split([',', ' '])
            .any(|t| matches!(t.trim(), "Agent" | "Task")),
    }
}

/// `--tools`: keeps the built-in tools it names (`default`: all; empty: none). An unknown name
/// is an error naming it and the tools there are.
pub fn select_tools(list: Option<&str>, tools: &mut Vec<Arc<dyn Tool>>) -> Result<(), String> {
    let Some(list) = list.map(str::trim) else {
        return Ok(());
    };
    if list == "default" {
        return Ok(());
    }
    let wanted: Vec<&str> = list
        .split([',', ' '])
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .collect();
    for name in &wanted {
        if !tools.iter().any(|t| t.name() == *name) && !matches!(*name, "Agent" | "Task") {
            let known: Vec<&str> = tools.iter().map(|t| t.name()).collect();
            return Err(format!(
                "--tools: rein has no built-in tool {name:?} (it has {}, and Agent)",
                known.join(", ")
            ));
        }
    }
    tools.retain(|t| wanted.contains(&t.name()));
    Ok(())
}
