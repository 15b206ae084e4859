//! Building a run from its flags: the project folder and its trust, settings, permission mode,
//! extra directories, instructions, the model, tools and logging.

use super::*;

pub(super) fn build(
    args: &RunArgs,
    interactive: bool,
    host: Option<Arc<dyn crate::pipeline::PermissionHost>>,
) -> Result<Setup, SetupError> {
    let project_dir = resolve_project_dir(args.cwd.as_deref())?;
    let add_dirs = resolve_add_dirs(&args.add_dir, &project_dir)?;
    let settings = load_settings(args, &project_dir, interactive)?;
    // Why notes are left out: they list the Claude Code settings rein does not act on, which a
    // settings file shared with Claude Code holds many of; `rein hooks validate` shows them.
    for diagnostic in settings
        .diagnostics
        .iter()
        .filter(|d| d.severity != Severity::Note)
    {
        eprintln!("{diagnostic}");
    }
    let (mode, warnings) = resolve_mode(
        args.dangerously_skip_permissions,
        args.permission_mode.as_deref(),
        &settings.permissions,
    )
    .map_err(|e| setup_error(e.to_string(), EXIT_USAGE))?;
    if mode == PermissionMode::BypassPermissions {
        // SAFETY: geteuid has no preconditions and cannot fail.
        let euid = unsafe { libc::geteuid() };
        let sandboxed = std::env::var("IS_SANDBOX").is_ok_and(|v| v == "1");
        check_bypass_allowed(euid, sandboxed)
            .map_err(|e| setup_error(e.to_string(), EXIT_USAGE))?;
    }
    for warning in warnings {
        eprintln!("rein: warning: {warning}");
    }
    let BuiltModel {
        model,
        models,
        probe,
    } = build_model(args, &settings)?;
    let catalog = Arc::new(build_catalog(&settings, &project_dir));
    let (styles, output_style, problems) = crate::cli::output_style_for(&settings, &project_dir);
    for problem in problems {
        eprintln!("{problem}");
    }
    let mut tools = build_tools();
    if catalog.skill_listing().is_some() {
        tools.push(Arc::new(crate::tools::skill::SkillTool::new(Arc::clone(
            &catalog,
        ))));
    }
    let stop_turn = Arc::new(tokio::sync::Notify::new());
    if interactive {
        // Only where a person answers (Claude Code 2.1.328 offers it interactively and
        // disables it in `-p` and SDK sessions; fixture interactive/run7).
        let dialog = crate::cli::terminal::dialog::TerminalDialog::new(
            Arc::clone(&stop_turn),
            crate::cli::terminal::color_for(std::io::stdout().is_terminal()),
        );
        let dialog: Arc<dyn crate::tools::ask_user::PersonDialog> = Arc::new(dialog);
        tools.push(Arc::new(crate::tools::ask_user::AskUserQuestionTool::new(
            Arc::clone(&dialog),
        )));
        tools.push(Arc::new(crate::tools::plan_mode::EnterPlanModeTool));
        tools.push(Arc::new(crate::tools::plan_mode::ExitPlanModeTool::new(
            dialog,
        )));
        // The deferred ones join ToolSearch's list.
        tools = crate::tools::with_tool_search(tools);
    }
    let paths = PolicyPaths {
        cwd: project_dir.clone(),
        project_dir: project_dir.clone(),
        home: std::env::var_os("HOME")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("/")),
        additional_dirs: add_dirs.clone(),
        // rein's files for this project (a Bash output saved to `tool-results`).
        readable_dirs: match transcripts_dir(
            args.transcript_dir.as_deref(),
            settings.transcript_dir.as_deref(),
            &project_dir,
        ) {
            Some(dir) => vec![dir.join(encode_cwd(&project_dir.to_string_lossy()))],
            None => vec![
                rein_home()
                    .join("projects")
                    .join(encode_cwd(&project_dir.to_string_lossy())),
            ],
        },
    };
    let (mut policy, warnings) = PermissionPolicy::from_settings(
        &settings.permissions,
        mode,
        &args.allowed_tools,
        &args.disallowed_tools,
        paths,
    );
    for warning in warnings {
        eprintln!("rein: warning: {warning}");
    }
    policy.set_granting_skills(
        catalog
            .entries
            .iter()
            .filter(|e| e.offered_to_model() && e.declares_allowed_tools())
            .map(|e| e.name.clone())
            .collect(),
    );
    if args.allow_dangerously_skip_permissions {
        // SAFETY: geteuid has no preconditions and cannot fail.
        let euid = unsafe { libc::geteuid() };
        let sandboxed = std::env::var("IS_SANDBOX").is_ok_and(|v| v == "1");
        check_bypass_allowed(euid, sandboxed)
            .map_err(|e| setup_error(e.to_string(), EXIT_USAGE))?;
        policy.allow_bypass_switch();
    }
    let prompter: Option<Arc<dyn Prompter>> = if interactive {
        Some(Arc::new(TtyPrompter))
    } else {
        None
    };
    let read_filter = {
        let policy = policy.clone();
        ReadFilter(Arc::new(move |p: &Path| policy.read_denied(p)))
    };
    let gate = PolicyGate::new(policy, prompter);
    let gate: Box<dyn PermissionGate> = Box::new(match host {
        Some(host) => gate.with_host(host),
        None => gate,
    });
    let permission_mode = mode.as_str().to_string();
    Ok(Setup {
        project_dir,
        add_dirs,
        permission_mode,
        settings,
        model,
        models,
        probe,
        tools,
        gate,
        read_filter,
        catalog,
        styles,
        output_style,
        stop_turn,
    })
}

/// The session's slash commands and skills: the user's, the project's and the plugins'
/// ([`crate::commands`]). What could not be read is named on stderr and skipped. Until the
/// folder is trusted, a project command's `allowed-tools` allow nothing (the repository must
/// not raise permissions, as with its settings).
pub(super) fn build_catalog(settings: &Settings, project_dir: &Path) -> crate::commands::Catalog {
    let mut catalog = crate::cli::catalog_for(settings, project_dir);
    for error in &catalog.errors {
        eprintln!("rein: warning: {error}");
    }
    if !settings.repo_trusted {
        for entry in &mut catalog.entries {
            if entry.source == crate::commands::Source::Project && !entry.allowed_tools.is_empty() {
                eprintln!(
                    "rein: warning: {}: allowed-tools ignored: this folder is not trusted (rein --trust, or answer the trust question)",
                    entry.path.display()
                );
                entry.allowed_tools.clear();
                entry.allowed_tools_ignored = true;
            }
        }
    }
    catalog
}

/// `/permissions`: the mode and the rules, one per line, with where each is written.
pub(super) fn permissions_summary(mode: &str, settings: &Settings) -> String {
    let p = &settings.permissions;
    let mut out = format!("Permission mode: {mode}");
    for (name, rules) in [("deny", &p.deny), ("ask", &p.ask), ("allow", &p.allow)] {
        if rules.is_empty() {
            out.push_str(&format!("\n{name}: (none)"));
            continue;
        }
        out.push_str(&format!("\n{name}:"));
        for rule in rules {
            out.push_str(&format!("\n  {}  ({})", rule.text, rule.location));
        }
    }
    if !p.additional_directories.is_empty() {
        out.push_str(&format!(
            "\nadditional directories: {}",
            p.additional_directories.join(", ")
        ));
    }
    out
}

/// The flags `/hooks` passes to `rein hooks list` so it reads the same settings.
pub(super) fn hooks_args(args: &RunArgs, project_dir: &Path) -> Vec<String> {
    let mut out = vec![
        "--cwd".to_string(),
        project_dir.to_string_lossy().into_owned(),
    ];
    for s in &args.settings {
        out.push("--settings".to_string());
        out.push(s.clone());
    }
    if let Some(sources) = &args.setting_sources {
        out.push("--setting-sources".to_string());
        out.push(sources.clone());
    }
    if args.hooks_shadow {
        out.push("--hooks-shadow".to_string());
    }
    out
}

/// `--add-dir` directories, absolute (relative ones from the project directory); each must be
/// an existing directory.
pub(super) fn resolve_add_dirs(
    dirs: &[PathBuf],
    project_dir: &Path,
) -> Result<Vec<PathBuf>, SetupError> {
    dirs.iter()
        .map(|dir| {
            let full = project_dir.join(dir);
            match std::fs::canonicalize(&full) {
                Ok(path) if path.is_dir() => Ok(path),
                Ok(_) => Err(setup_error(
                    format!("--add-dir {}: not a directory", dir.display()),
                    EXIT_USAGE,
                )),
                Err(e) => Err(setup_error(
                    format!("--add-dir {}: {e}", dir.display()),
                    EXIT_USAGE,
                )),
            }
        })
        .collect()
}

/// What the system prompt and memory files are built from, as the flags and files give it; a
/// prompt file that cannot be read is an error naming it.
pub(super) fn instructions(
    args: &RunArgs,
    setup: &Setup,
    model: &str,
) -> Result<Prompt, SetupError> {
    let read = |flag: &str, path: &Path| {
        std::fs::read_to_string(path)
            .map_err(|e| setup_error(format!("{flag} {}: {e}", path.display()), EXIT_USAGE))
    };
    let mut options = PromptOptions {
        replace: match (&args.system_prompt, &args.system_prompt_file) {
            (Some(text), _) => Some(text.clone()),
            (None, Some(path)) => Some(read("--system-prompt-file", path)?),
            (None, None) => None,
        },
        append: Vec::new(),
        output_style: setup.output_style.clone(),
    };
    if let Some(text) = &args.append_system_prompt {
        options.append.push(text.clone());
    }
    if let Some(path) = &args.append_system_prompt_file {
        options
            .append
            .push(read("--append-system-prompt-file", path)?);
    }
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from);
    let tools: Vec<String> = setup.tools.iter().map(|t| t.name().to_string()).collect();
    Ok(assemble(&Sources {
        options: &options,
        cwd: &setup.project_dir,
        additional_dirs: &setup.add_dirs,
        home,
        memory_files: true,
        model,
        tools: &tools,
    }))
}

pub(super) fn resolve_project_dir(cwd: Option<&Path>) -> Result<PathBuf, SetupError> {
    let dir = match cwd {
        Some(d) => d.to_path_buf(),
        None => std::env::current_dir()
            .map_err(|e| setup_error(format!("cannot read the current directory: {e}"), 1))?,
    };
    let project_dir = std::fs::canonicalize(&dir).map_err(|e| {
        setup_error(
            format!("project directory {}: {e}", dir.display()),
            EXIT_USAGE,
        )
    })?;
    // Exit 1, as Claude Code does for a working directory it cannot use.
    require_utf8_project_dir(&project_dir).map_err(|e| setup_error(e.to_string(), EXIT_ERROR))?;
    Ok(project_dir)
}

/// Whether the project folder is trusted: a recorded trust that still matches, or, on a
/// terminal, the person's answer to the trust question (asked when the repository's settings
/// would do something and the folder is not trusted, changed since it was, or the trust store
/// cannot be read). Answering no ends the run before anything of the repository's runs (no
/// hook, no model call), as Claude Code 2.1.328 does when its folder-trust dialog is declined
/// (measured: `tests/fixtures/cc-2.1.328/trust/interactive`).
pub(super) fn folder_trusted(project_dir: &Path, interactive: bool) -> Result<bool, SetupError> {
    use crate::permissions::prompt::{TrustAnswer, ask_trust};
    use crate::settings::trust::{TrustState, describe, state, trust};
    let home = rein_home();
    let mut can_record = true;
    let heading = match state(&home, project_dir) {
        TrustState::Trusted => return Ok(true),
        TrustState::Untrusted => "rein has not been told to trust this folder:".to_string(),
        TrustState::Changed(items) => {
            let changed = format!(
                "This folder was trusted, but since then changed: {}.",
                items.join("; ")
            );
            if !interactive {
                eprintln!(
                    "rein: warning: {changed} Its repository settings may not raise permissions until you run `rein hooks trust` again"
                );
                return Ok(false);
            }
            format!("{changed} Trust it again?")
        }
        TrustState::Unreadable(message) => {
            eprintln!("rein: warning: {message}");
            if !interactive {
                return Ok(false);
            }
            can_record = false;
            "The trust store cannot be read, so this folder is not trusted:".to_string()
        }
    };
    if !interactive {
        return Ok(false);
    }
    let lines = describe(project_dir);
    if lines.is_empty() {
        return Ok(false);
    }
    match ask_trust(&project_dir.to_string_lossy(), &heading, &lines) {
        TrustAnswer::Remember => {
            if !can_record {
                eprintln!(
                    "rein: warning: trusted for this run only (the trust store cannot be read)"
                );
            } else if let Err(e) = trust(&home, project_dir) {
                eprintln!("rein: warning: trusted for this run only: {e}");
            }
            Ok(true)
        }
        TrustAnswer::ThisRun => Ok(true),
        TrustAnswer::No => Err(setup_error(
            format!(
                "{} is not trusted, so rein stopped before anything of it ran. Run rein again and \
                 answer y (or o for this run only), pass --trust, or leave the folder's settings out \
                 with --setting-sources user",
                project_dir.display()
            ),
            EXIT_ERROR,
        )),
    }
}

/// Settings from the files and `--settings` (diagnostics are printed by the caller).
pub(super) fn load_settings(
    args: &RunArgs,
    project_dir: &Path,
    interactive: bool,
) -> Result<Settings, SetupError> {
    let mut opts = LoadOptions::from_env(
        project_dir.to_path_buf(),
        project_dir.to_path_buf(),
        args.settings.clone(),
    );
    opts.plugin_dirs = crate::cli::absolute_dirs(&args.plugin_dir);
    opts.plugin_dirs
        .extend(crate::cli::absolute_dirs(&args.plugin_dir_no_mcp));
    if let Some(sources) = &args.setting_sources {
        opts.setting_sources = Some(
            parse_setting_sources(sources)
                .map_err(|e| setup_error(format!("--setting-sources: {e}"), EXIT_USAGE))?,
        );
    }
    // Why skip the question when no repository-controlled file is read: there is nothing for
    // trust to decide (`--setting-sources user` is the way to run without the folder's settings).
    let reads_repo_files = opts.setting_sources.as_ref().is_none_or(|s| {
        s.contains(&SourceKind::Project)
            || (s.contains(&SourceKind::Local)
                && crate::settings::trust::local_is_tracked(project_dir))
    });
    opts.repo_trusted =
        args.trust || (reads_repo_files && folder_trusted(project_dir, interactive)?);
    let mut settings = crate::settings::load(&opts);
    // `--plugin-dir-no-mcp`: the plugin's hooks, commands, skills and agents, not its servers.
    let no_mcp = crate::cli::absolute_dirs(&args.plugin_dir_no_mcp);
    for plugin in &mut settings.plugins {
        if no_mcp.contains(&plugin.reference.root) {
            plugin.mcp_config = None;
        }
    }
    if args.hooks_shadow {
        settings.shadow_hooks();
    }
    Ok(settings)
}

/// The directory transcripts go under instead of `<rein home>/projects`: `--transcript-dir`,
/// else the settings' `transcriptDir` (`~/` is the home directory; a relative path is taken
/// from the project directory).
pub(super) fn transcripts_dir(
    flag: Option<&Path>,
    setting: Option<&str>,
    project_dir: &Path,
) -> Option<PathBuf> {
    let raw = match (flag, setting) {
        (Some(dir), _) => dir.to_path_buf(),
        (None, Some(text)) => match text.strip_prefix("~/") {
            Some(rest) => std::env::var_os("HOME")
                .map(PathBuf::from)
                .unwrap_or_else(|| PathBuf::from("/"))
                .join(rest),
            None => PathBuf::from(text),
        },
        (None, None) => return None,
    };
    Some(if raw.is_absolute() {
        raw
    } else {
        project_dir.join(raw)
    })
}

/// The model behind `--provider`/`--model`/`--mock-script`, then the settings' `model`; the
/// effort level from `--effort`, `CLAUDE_CODE_EFFORT_LEVEL`, then the settings' `effortLevel`.
pub(super) fn build_model(args: &RunArgs, settings: &Settings) -> Result<BuiltModel, SetupError> {
    let mut cfg = ProviderConfig::from_env(
        args.provider.as_deref(),
        args.model.as_deref(),
        args.mock_script.clone(),
    )
    .map_err(|e| setup_error(e.to_string(), EXIT_USAGE))?;
    if cfg.model.is_none() {
        cfg.model = settings.model.clone();
    }
    if let Some(level) = &args.effort {
        cfg.effort = Some(level.clone());
    } else if cfg.effort.is_none() {
        cfg.effort = settings.effort_level.clone();
    }
    let model = from_config(&cfg).map_err(|e| setup_error(e.to_string(), EXIT_ERROR))?;
    let (factory, probe): (
        Option<subagent::ModelFactory>,
        Option<subagent::ModelFactory>,
    ) = match cfg.provider {
        ProviderKind::Mock => (None, None),
        ProviderKind::OpenAi | ProviderKind::Anthropic => {
            let mut probe_cfg = cfg.clone();
            probe_cfg.max_tokens = 1;
            probe_cfg.max_retries = 0;
            (
                Some(Arc::new(move |id: &str| {
                    let mut other = cfg.clone();
                    other.model = Some(id.to_string());
                    from_config(&other).ok().map(Arc::from)
                })),
                Some(Arc::new(move |id: &str| {
                    let mut other = probe_cfg.clone();
                    other.model = Some(id.to_string());
                    from_config(&other).ok().map(Arc::from)
                })),
            )
        }
    };
    Ok(BuiltModel {
        model: Arc::from(model),
        models: factory,
        probe,
    })
}

/// The session's model and the factories of other models of its provider.
pub(super) struct BuiltModel {
    pub(super) model: Arc<dyn Model>,
    pub(super) models: Option<subagent::ModelFactory>,
    pub(super) probe: Option<subagent::ModelFactory>,
}

/// With `REIN_GATE_LEDGER=FILE`: writes `{"gate_passes": N, "executions": M}` there, so a test
/// can check that no tool call ran without passing the hook and permission gate.
pub(super) fn write_gate_ledger() {
    let Some(path) = std::env::var_os("REIN_GATE_LEDGER") else {
        return;
    };
    let (passes, executions) = crate::pipeline::gate_ledger();
    let text = serde_json::json!({"gate_passes": passes, "executions": executions}).to_string();
    if let Err(e) = std::fs::write(&path, text) {
        eprintln!(
            "rein: cannot write REIN_GATE_LEDGER {}: {e}",
            PathBuf::from(&path).display()
        );
    }
}

/// The built-in tools.
pub(super) fn build_tools() -> Vec<Arc<dyn Tool>> {
    builtin_tools()
}

pub(super) fn init_logging(debug: Option<&str>) {
    let filter = match debug {
        Some(_) => "rein=debug",
        None => "rein=warn",
    };
    let _ = tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("REIN_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(filter)),
        )
        .with_writer(std::io::stderr)
        .try_init();
}
