//! `rein run` / `rein -p` / the interactive session: builds the session from the flags, runs
//! it under SIGINT/SIGTERM handling, and maps the outcome to output and an exit code.

use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::signal::unix::{Signal, SignalKind, signal};

use crate::agent::agent_hook::HookModels;
use crate::agent::instructions::{Prompt, PromptOptions, Sources, assemble};
use crate::agent::providers::{ProviderConfig, ProviderKind, from_config};
use crate::agent::session::{
    Session, SessionConfig, TurnEnd, TurnOutcome, stop_block_cap_from_env,
};
use crate::agent::subagent;
use crate::agent::transcript::{encode_cwd, rein_home};
use crate::cli::render::{Glyphs, NoticesToStderr, StreamJson, TextRenderer, result_json};
use crate::cli::terminal::TerminalContext;
use crate::cli::terminal::spinner::SpinnerState;
use crate::cli::{EXIT_ERROR, EXIT_OK, EXIT_USAGE, InputFormat, OutputFormat, RunArgs};
use crate::hooks::dispatch::StatusSink;
use crate::hooks::dispatch::{Dispatcher, HookEnvironment};
use crate::hooks::environment::{bash_env, removed_env, require_utf8_project_dir};
use crate::id::uuid_v4;
use crate::model::Model;
use crate::permissions::mode::{PermissionMode, check_bypass_allowed, resolve_mode};
use crate::permissions::policy::{PermissionPolicy, PolicyPaths};
use crate::permissions::prompt::{Prompter, TtyPrompter};
use crate::pipeline::{PermissionGate, PolicyGate};
use crate::progress::{Observer, Observers};
use crate::settings::schema::{Settings, Severity, SourceKind};
use crate::settings::{LoadOptions, parse_setting_sources};
use crate::tools::background::{BackgroundTask, BackgroundTasks};
use crate::tools::{ReadFilter, Tool, ToolContext, builtin_tools};

mod background;
mod session_plan;
mod setup;

use background::*;
use session_plan::*;
use setup::*;

/// Everything the flags resolve to before a session is built.
struct Setup {
    pub(super) project_dir: PathBuf,
    /// `--add-dir` directories, resolved.
    pub(super) add_dirs: Vec<PathBuf>,
    pub(super) permission_mode: String,
    pub(super) settings: Settings,
    pub(super) model: Arc<dyn Model>,
    /// Builds the same provider with another model id (a subagent definition's or a prompt
    /// hook's `model`); `None` for the mock.
    pub(super) models: Option<subagent::ModelFactory>,
    /// Builds the same provider with another model id, asked for one token, without retries:
    /// `/model NAME` checks the name with it. `None` for the mock.
    pub(super) probe: Option<subagent::ModelFactory>,
    pub(super) tools: Vec<Arc<dyn Tool>>,
    pub(super) gate: Box<dyn PermissionGate>,
    /// Read deny rules, for Grep and Glob to leave denied files out.
    pub(super) read_filter: ReadFilter,
    /// Slash commands and skills ([`crate::commands`]).
    pub(super) catalog: Arc<crate::commands::Catalog>,
    /// The output styles and the one `outputStyle` turned on ([`crate::agent::output_style`]).
    pub(super) styles: crate::agent::output_style::Styles,
    pub(super) output_style: Option<crate::agent::output_style::OutputStyle>,
    /// Woken when the person cancels a question dialog: the terminal stops the turn.
    pub(super) stop_turn: Arc<tokio::sync::Notify>,
}

/// A signal that ended the run early: its exit code (128 + signo) and its name.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Caught {
    pub(super) code: i32,
    pub(super) name: &'static str,
}

/// The next SIGINT or SIGTERM.
async fn next_signal(sigint: &mut Signal, sigterm: &mut Signal) -> Caught {
    tokio::select! {
        _ = sigint.recv() => Caught { code: 130, name: "SIGINT" },
        _ = sigterm.recv() => Caught { code: 143, name: "SIGTERM" },
    }
}

/// Entry of `rein run` and the top-level command; `headless` when a prompt was given or `-p`.
pub async fn main(prompt: Option<String>, args: RunArgs, headless: bool) -> i32 {
    let code = main_inner(prompt, args, headless).await;
    // The Bash tool's private temporary files (cwd records, background logs) end with the run.
    crate::private_fs::remove_temp_dir();
    code
}

async fn main_inner(prompt: Option<String>, mut args: RunArgs, headless: bool) -> i32 {
    if let Err(text) = crate::cli::stream_input::check_flags(&args, headless) {
        eprintln!("{text}");
        return EXIT_ERROR;
    }
    let stream_input = args.input_format == InputFormat::StreamJson;
    if stream_input && prompt.is_some() {
        // Claude Code ignores it without a word; a dropped prompt is worth one.
        eprintln!(
            "rein: warning: the prompt argument is ignored with --input-format stream-json (the prompts are read from stdin)"
        );
    }
    let prompt = match prompt {
        _ if stream_input => None,
        Some(p) => Some(p),
        None if headless && !std::io::stdin().is_terminal() => {
            let mut buf = String::new();
            match std::io::stdin().read_to_string(&mut buf) {
                Ok(_) if !buf.trim().is_empty() => Some(buf.trim_end().to_string()),
                Ok(_) | Err(_) => None,
            }
        }
        None => None,
    };
    let interactive = prompt.is_none() && !stream_input;
    if interactive && (headless || !std::io::stdin().is_terminal()) {
        eprintln!(
            "rein: no prompt given and stdin is not a terminal\n\
             usage: rein -p \"PROMPT\" | rein run \"PROMPT\" | rein (interactive, on a terminal)"
        );
        return EXIT_USAGE;
    }
    init_logging(args.debug.as_deref());
    crate::cli::sdk::flags::report_inert(&args);

    // `--input-format stream-json`: stdin is read from here on, and an Agent SDK's
    // `initialize` (its first line) shapes the session built below.
    let mut opening = None;
    let mut applied = crate::cli::sdk::startup::Applied::default();
    if stream_input {
        let o = crate::cli::sdk::startup::open().await;
        if let Some((_, request)) = &o.initialize {
            let (done, ignored) = crate::cli::sdk::startup::apply(request, &mut args);
            applied = done;
            for line in ignored {
                eprintln!("rein: {line}");
            }
        }
        opening = Some(o);
    }
    let control = opening.as_ref().map(|o| Arc::clone(&o.control));
    let host = crate::cli::sdk::flags::permission_host(&args, control.as_ref());
    let setup = match build(&args, interactive, host) {
        Ok(s) => s,
        Err(err) => {
            eprintln!("rein: {err}");
            return err.code;
        }
    };
    let structured = match crate::cli::sdk::flags::structured_output(&mut args) {
        Ok(s) => s,
        Err(why) => {
            eprintln!("rein: {why}");
            return EXIT_USAGE;
        }
    };
    let structured_answer = structured.as_ref().map(|(_, answer)| Arc::clone(answer));
    let prompt_parts = match instructions(&args, &setup, setup.model.name()) {
        Ok(i) => i,
        Err(err) => {
            eprintln!("rein: {err}");
            return err.code;
        }
    };
    for notice in &prompt_parts.memory.notices {
        eprintln!("{notice}");
    }
    if let Some(err) = crate::agent::cost::prices_error() {
        eprintln!("rein: warning: {err}; costs are not shown");
    }
    let home = rein_home();
    // rein's home holds transcripts and logs: only the user may list or read it.
    if let Err(e) = crate::private_fs::create_dir_all(&home) {
        eprintln!(
            "rein: warning: cannot create {} private: {e}",
            home.display()
        );
    }
    let projects_dir = transcripts_dir(
        args.transcript_dir.as_deref(),
        setup.settings.transcript_dir.as_deref(),
        &setup.project_dir,
    )
    .unwrap_or_else(|| home.join("projects"));
    let plan = match plan_session(&args, &projects_dir, &setup.project_dir, interactive) {
        Ok(p) => p,
        Err(err) => {
            eprintln!("rein: {err}");
            return err.code;
        }
    };
    let session_id = plan.id.clone();
    if let Some(control) = &control {
        control.set_session_id(&session_id);
    }
    let transcript = session_transcript(&projects_dir, &setup.project_dir, &session_id);
    let env = HookEnvironment {
        project_dir: setup.project_dir.clone(),
        session_id: session_id.clone(),
        env_file_dir: home.join("session-env").join(&session_id),
        extra_env: setup.settings.env.clone(),
        run_log: Some(home.join("logs").join(format!("{session_id}.jsonl"))),
        debug: matches!(args.debug.as_deref(), Some("hooks") | Some("all")),
        output_dir: Some(transcript.with_extension("").join("tool-results")),
        attended: interactive,
        http_policy: setup.settings.http_policy.clone(),
        home: None,
    };
    let mcp = crate::cli::mcp::start_for_session(
        &setup.project_dir,
        &setup.settings,
        &crate::cli::mcp::McpFlags {
            configs: args.mcp_config.clone(),
            strict: args.strict_mcp_config,
            sdk: crate::mcp::sdk_transport::SdkLink(control.as_ref().map(|c| {
                Arc::new(crate::cli::sdk::SdkMcp(Arc::clone(c)))
                    as Arc<dyn crate::mcp::sdk_transport::SdkBridge>
            })),
        },
        interactive,
    )
    .await;
    let mut setup = setup;
    if let Err(why) = crate::cli::sdk::flags::select_tools(args.tools.as_deref(), &mut setup.tools)
    {
        eprintln!("rein: {why}");
        return EXIT_USAGE;
    }
    if let Some((tool, _)) = &structured {
        setup.tools.push(Arc::clone(tool));
    }
    setup.tools.extend(mcp.tools());
    let mut ctx = ToolContext::new(setup.project_dir.clone());
    ctx.env = bash_env(
        &setup.settings.env,
        &session_id,
        interactive,
        setup.model.effort(),
    );
    ctx.env_remove = removed_env();
    ctx.output_dir = Some(transcript.with_extension("").join("tool-results"));
    if setup.tools.iter().any(|t| t.name() == "ExitPlanMode") {
        ctx.plan_file = Some(transcript.with_extension("").join("plan.md"));
    }
    ctx.read_filter = Some(setup.read_filter.clone());
    let background = Arc::clone(&ctx.background);

    let mut observers = Observers::new();
    let spinner = SpinnerState::new(interactive && std::io::stderr().is_terminal());
    if interactive {
        observers.push(Box::new(spinner.clone()));
    }
    let format = if interactive {
        OutputFormat::Text
    } else {
        args.output_format
    };
    let mut shared_stream: Option<Arc<StreamJson>> = None;
    match format {
        OutputFormat::Text => observers.push(Box::new(TextRenderer::new(
            Glyphs::detect(),
            interactive,
            interactive && crate::cli::terminal::color_for(std::io::stderr().is_terminal()),
        ))),
        OutputFormat::Json => observers.push(Box::new(NoticesToStderr)),
        OutputFormat::StreamJson => {
            let mut stream = StreamJson::new(
                &session_id,
                &setup.project_dir.to_string_lossy(),
                &setup.permission_mode,
                crate::cli::sdk::flags::offers_agent(args.tools.as_deref())
                    .then(|| "Agent".to_string())
                    .into_iter()
                    .chain(setup.tools.iter().map(|t| t.name().to_string()))
                    .collect(),
            )
            .with_mcp_servers(mcp.init_entries())
            .with_catalog(&setup.catalog, &setup.settings.plugins);
            stream.output_style = crate::cli::output_style_setting(&setup.settings).to_string();
            stream.include_hook_events = args.include_hook_events;
            stream.include_partial_messages = args.include_partial_messages;
            stream.init_per_prompt = stream_input;
            let stream = Arc::new(stream);
            shared_stream = Some(Arc::clone(&stream));
            let tasks = Arc::clone(&stream);
            background.listen(Arc::new(move |event| tasks.emit(&tasks.task_line(event))));
            observers.push(Box::new(stream));
        }
    }
    let telemetry = match crate::telemetry::Telemetry::from_env() {
        Ok(t) => t.map(Arc::new),
        Err(why) => {
            eprintln!("rein: {why}");
            None
        }
    };
    if let Some(t) = &telemetry {
        observers.push(Box::new(Arc::clone(t)));
    }
    let observers: Arc<dyn Observer> = Arc::new(observers);
    let permissions_text = permissions_summary(&setup.permission_mode, &setup.settings);
    // The terminal's status line (a repository's only in a trusted folder).
    let status_line = interactive
        .then(|| {
            crate::cli::terminal::status_line::StatusLine::from_settings(
                &setup.settings,
                &setup.project_dir,
                &setup.add_dirs,
            )
        })
        .flatten();
    let style_setting = crate::cli::output_style_setting(&setup.settings).to_string();
    let mut dispatcher = Dispatcher::new(setup.settings.handlers, env);
    // The SDK's hooks stay registered until the session ends (dropping unregisters).
    let _sdk_hooks = opening
        .as_ref()
        .map(|o| o.register_hooks(dispatcher.registry()));
    let shadow_log = dispatcher.shadow_log();
    dispatcher.warm_up();
    dispatcher.set_mcp_caller(Arc::clone(&mcp) as Arc<dyn crate::hooks::mcp_tool::McpCaller>);
    let hook_models = HookModels::new(Arc::clone(&setup.model), setup.models.clone());
    dispatcher.set_model_hooks(hook_models.clone());
    if interactive {
        let status = spinner.clone();
        dispatcher.set_status_sink(StatusSink(Arc::new(move |text| status.hook_status(text))));
    }
    let config = SessionConfig {
        session_id: session_id.clone(),
        project_dir: setup.project_dir.clone(),
        transcript_path: transcript,
        permission_mode: setup.permission_mode.clone(),
        max_turns: args.max_turns,
        stop_block_cap: stop_block_cap_from_env(),
        session_end_budget: dispatcher.session_end_phase_budget(),
    };
    let user_home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_default();
    let (definitions, definition_errors) = subagent::discover(
        &user_home,
        &setup.project_dir,
        &crate::cli::plugin_agent_dirs(&setup.settings.plugins),
        args.agents.as_deref(),
    );
    for error in &definition_errors {
        eprintln!("rein: warning: {error}");
    }
    if let Some(opening) = &opening {
        opening.answer(
            &definitions,
            &setup.permission_mode,
            &applied,
            (&style_setting, &setup.styles.names()),
        );
    }
    let wired = subagent::wire(
        Box::new(dispatcher),
        setup.gate,
        Arc::clone(&setup.model),
        setup.tools,
        &config,
        subagent::SubagentSetup {
            definitions,
            models: setup.models.clone(),
            notices: Some(Arc::clone(&observers)),
            read_filter: Some(setup.read_filter.clone()),
            instructions: Some(subagent::SubagentInstructions {
                environment: prompt_parts.environment.clone(),
                memory: prompt_parts.memory.files.clone(),
            }),
        },
    );
    hook_models.attach(&wired.runtime);
    let runtime = Arc::clone(&wired.runtime);
    let mut wired = wired;
    if !crate::cli::sdk::flags::offers_agent(args.tools.as_deref()) {
        wired.tools.retain(|t| t.name() != "Agent");
    }
    let mut session = Session::new(
        config,
        wired.hooks,
        setup.model,
        wired.tools,
        wired.gate,
        ctx,
        Box::new(subagent::SharedObserver(observers)),
    );
    session.set_prompt(prompt_parts);
    session.set_commands(Arc::clone(&setup.catalog));
    session.set_model_factory(setup.models.clone());
    session.follow(runtime);
    session.follow(hook_models);
    session.set_attended(interactive);
    session.set_stream_events(args.include_partial_messages);
    session.set_max_budget_usd(args.max_budget_usd);
    match crate::cli::sdk::flags::fallback_model(
        args.fallback_model.as_deref(),
        session.model_name(),
        setup.models.as_ref(),
    ) {
        Ok(fallback) => session.set_fallback_model(fallback),
        Err(why) => {
            eprintln!("Error: {why}");
            return EXIT_USAGE;
        }
    }
    if let Some(usd) = args.max_budget_usd
        && crate::agent::cost::cost_usd(session.model_name(), &Default::default()).is_none()
    {
        eprintln!(
            "rein: warning: --max-budget-usd {usd}: rein knows no price for the model {} (REIN_PRICES), so its cost counts as nothing and the budget cannot stop it",
            session.model_name()
        );
    }
    if args.no_session_persistence {
        session.without_transcript();
    }
    let start_source = match plan.resumed {
        // Claude Code 2.1.328 names a `--fork-session` start `fork`, with the resume fields
        // (fixture `tests/fixtures/cc-2.1.328/interactive/fork-hooks-fork.jsonl`).
        Some(rebuilt) if plan.forked => {
            session.resume_from(rebuilt);
            "fork"
        }
        Some(rebuilt) => {
            session.resume_from(rebuilt);
            "resume"
        }
        None => "startup",
    };

    let (mut sigint, mut sigterm) = match (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
    ) {
        (Ok(i), Ok(t)) => (i, t),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("rein: cannot install signal handlers: {e}");
            return EXIT_ERROR;
        }
    };

    let started = Instant::now();
    // `--input-format stream-json`: the exit code its turns left (each wrote its own result).
    let mut stream_code = EXIT_OK;
    let result = if interactive {
        let terminal = TerminalContext {
            history: home.join("history"),
            permissions: permissions_text,
            hooks_args: hooks_args(&args, &setup.project_dir),
            spinner: spinner.clone(),
            projects_dir: projects_dir.clone(),
            project_dir: setup.project_dir.clone(),
            models: setup.models.clone(),
            probe: setup.probe.clone(),
            shadow_log: shadow_log.clone(),
            catalog: Arc::clone(&setup.catalog),
            styles: setup.styles.clone(),
            status_line,
            stop_turn: Arc::clone(&setup.stop_turn),
        };
        spinner.spawn_drawing(
            Glyphs::detect().call != "*",
            crate::cli::terminal::color_for(std::io::stderr().is_terminal()),
        );
        let started = tokio::select! {
            () = session.open(start_source, true, plan.facts) => true,
            _ = sigterm.recv() => false,
        };
        if started {
            match crate::cli::terminal::run(&mut session, &terminal, &mut sigint, &mut sigterm)
                .await
            {
                None => Ok(None),
                Some(_) => Err(Caught {
                    code: 143,
                    name: "SIGTERM",
                }),
            }
        } else {
            Err(Caught {
                code: 143,
                name: "SIGTERM",
            })
        }
    } else if let (Some(stream), Some(opening), Some(control)) =
        (&shared_stream, opening.take(), &control)
    {
        session.open(start_source, false, plan.facts).await;
        let session_ref = &session_id;
        let max_turns = args.max_turns;
        let report_turn = |outcome: &TurnOutcome, duration_ms: u64| {
            report(
                outcome,
                format,
                session_ref,
                duration_ms,
                max_turns,
                structured_answer.as_ref(),
            )
        };
        let sdk = crate::cli::sdk::requests::Sdk {
            control: Arc::clone(control),
            stream: Arc::clone(stream),
            mcp: Arc::clone(&mcp),
            background: Arc::clone(&background),
            models: setup.models.clone(),
            first_model: session.model_name().to_string(),
        };
        let ended = crate::cli::stream_input::run(
            &mut session,
            stream,
            opening.inputs,
            &sdk,
            args.replay_user_messages,
            &mut sigint,
            &mut sigterm,
            &report_turn,
        )
        .await;
        match ended {
            crate::cli::stream_input::Ended::Finished(code, last) => {
                stream_code = code;
                // Background commands still running at the end of stdin: waited for as after
                // a `-p` prompt, each that ends getting a turn of its own with its own `init`
                // and `result` lines (fixture `stream_io/input_eof_background`).
                let caught = match last {
                    Some(mut last) => {
                        let each = |outcome: &TurnOutcome, ms: u64| {
                            let code = report_turn(outcome, ms);
                            stream.turn_done();
                            code
                        };
                        follow_background(
                            &mut session,
                            &mut last,
                            &background,
                            format,
                            &mut sigint,
                            &mut sigterm,
                            &|outcome, ms| {
                                each(outcome, ms);
                            },
                        )
                        .await
                    }
                    None => None,
                };
                match caught {
                    Some(caught) => Err(caught),
                    None => Ok(None),
                }
            }
            crate::cli::stream_input::Ended::Signal(code, name) => Err(Caught { code, name }),
        }
    } else {
        let work = async {
            session.open(start_source, false, plan.facts).await;
            match &prompt {
                Some(p) => Some(match slash_compact(p) {
                    Some(instructions) => compact_outcome(&mut session, instructions).await,
                    None => session.run_prompt(p).await,
                }),
                // Interactive sessions take the branch above.
                None => None,
            }
        };
        tokio::select! {
            out = work => Ok(out),
            caught = next_signal(&mut sigint, &mut sigterm) => Err(caught),
        }
    };
    // Why: rein's handlers replace the default action, so without this a signal during a long
    // SessionEnd budget (up to 60 s, or CLAUDE_CODE_SESSIONEND_HOOKS_TIMEOUT_MS) would do
    // nothing; instead it cancels the SessionEnd hooks still running and rein exits.
    let (first, reason) = match &result {
        Err(caught) => (Some(*caught), "other"),
        // Claude Code's reason at the end of stdin (fixture `stream_io/input_two_turns`).
        Ok(None) if stream_input => (None, "other"),
        Ok(None) => (None, "prompt_input_exit"),
        Ok(Some(_)) => (None, "other"),
    };
    if first.is_some() {
        session.interrupted();
    }
    // Background commands: a signal or the end of an interactive session stops them; a `-p`
    // session waits for them first, as Claude Code does (up to its ceiling).
    let mut result = result;
    let bg_signal = match &mut result {
        Ok(Some(outcome)) => {
            let follow = follow_background(
                &mut session,
                outcome,
                &background,
                format,
                &mut sigint,
                &mut sigterm,
                &|_, _| {},
            );
            follow.await
        }
        Err(_) | Ok(None) => {
            background.stop_all().await;
            None
        }
    };
    let mut late: Option<Caught> = None;
    let cancel = async {
        let caught = next_signal(&mut sigint, &mut sigterm).await;
        late = Some(caught);
        if first == Some(caught) {
            format!("a second {}", caught.name)
        } else {
            caught.name.to_string()
        }
    };
    session.end_unless(reason, cancel).await;
    mcp.shutdown().await;
    write_gate_ledger();
    if let Some(summary) = shadow_log.summary() {
        eprint!("rein: {summary}");
    }
    if let Some(t) = &telemetry
        && let Some(line) = t.finish(Some(reason))
    {
        eprintln!("rein: {line}");
    }
    let late = bg_signal.or(late);
    let code = match result {
        Err(caught) => caught.code,
        Ok(None) => late.map_or(stream_code, |c| c.code),
        Ok(Some(outcome)) => {
            let duration_ms = started.elapsed().as_millis() as u64;
            let code = report(
                &outcome,
                format,
                &session_id,
                duration_ms,
                args.max_turns,
                structured_answer.as_ref(),
            );
            late.map_or(code, |c| c.code)
        }
    };
    // Why only the exit code changes: the answer was produced and printed; what failed is the
    // record of it, which a script checking `$?` must still learn about.
    match session.transcript_fault() {
        Some(fault) => {
            eprintln!("rein: {fault}");
            if code == EXIT_OK { EXIT_ERROR } else { code }
        }
        None => code,
    }
}

/// Prints the outcome of a headless run; returns the exit code.
fn report(
    outcome: &TurnOutcome,
    format: OutputFormat,
    session_id: &str,
    duration_ms: u64,
    max_turns: Option<u32>,
    structured: Option<&crate::tools::structured_output::StructuredAnswer>,
) -> i32 {
    let error = match &outcome.end {
        TurnEnd::ModelFailed(e) => Some(format!("model request failed: {e}")),
        TurnEnd::MaxTurns => Some(format!("Reached max turns ({})", max_turns.unwrap_or(0))),
        TurnEnd::BudgetReached(usd) => Some(format!("Reached maximum budget (${usd})")),
        TurnEnd::Completed
        | TurnEnd::PromptBlocked { .. }
        | TurnEnd::Stopped { .. }
        | TurnEnd::Deferred => None,
    };
    let code = if error.is_some() { EXIT_ERROR } else { EXIT_OK };
    let written = match format {
        OutputFormat::Text => {
            if let Some(e) = &error {
                eprintln!("Error: {e}");
            }
            if let TurnEnd::Stopped { reason: Some(r) } = &outcome.end {
                eprintln!("{r}");
            }
            if outcome.result.is_empty() {
                Ok(())
            } else {
                write_stdout(&format!("{}\n", outcome.result))
            }
        }
        OutputFormat::Json | OutputFormat::StreamJson => {
            if let Some(e) = &error {
                eprintln!("Error: {e}");
            }
            let mut value = result_json(outcome, session_id, duration_ms, error.as_deref());
            // `--json-schema`: the turn's last structured answer, taken so the next turn
            // starts without one.
            if let (Some(answer), Some(obj)) = (structured, value.as_object_mut())
                && let Some(v) = answer.lock().ok().and_then(|mut a| a.take())
            {
                obj.insert("structured_output".into(), v);
            }
            write_stdout(&format!("{value}\n"))
        }
    };
    match written {
        Ok(()) => code,
        // Why: `rein -p … | head -1` closing the pipe is not a failure.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => code,
        Err(e) => {
            eprintln!("rein: cannot write to stdout: {e}");
            EXIT_ERROR
        }
    }
}

fn write_stdout(text: &str) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()
}

/// A setup failure with its exit code.
#[derive(Debug)]
struct SetupError {
    pub(super) message: String,
    pub(super) code: i32,
}

impl std::fmt::Display for SetupError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

fn setup_error(message: impl Into<String>, code: i32) -> SetupError {
    SetupError {
        message: message.into(),
        code,
    }
}

/// `Some(instructions)` when `prompt` is `/compact [instructions]`.
fn slash_compact(prompt: &str) -> Option<Option<&str>> {
    let rest = prompt.trim().strip_prefix("/compact")?;
    if !rest.is_empty() && !rest.starts_with(char::is_whitespace) {
        return None;
    }
    let rest = rest.trim();
    Some((!rest.is_empty()).then_some(rest))
}

/// `/compact` as a headless prompt (with `--continue`/`--resume`): the outcome says how it went.
async fn compact_outcome(session: &mut Session, instructions: Option<&str>) -> TurnOutcome {
    use crate::agent::session::Compacted;
    let (end, result) = match session.compact("manual", instructions).await {
        Compacted::Done { .. } => (TurnEnd::Completed, "Conversation compacted.".to_string()),
        Compacted::Blocked(reason) => (
            TurnEnd::Completed,
            format!("Compaction blocked by a PreCompact hook: {reason}"),
        ),
        Compacted::TooShort => (TurnEnd::Completed, "Not enough messages to compact.".into()),
        Compacted::Failed(text) => (
            TurnEnd::ModelFailed(crate::model::ModelError {
                provider: "compact".to_string(),
                kind: crate::model::ModelErrorKind::Unknown,
                message: text.clone(),
            }),
            text,
        ),
    };
    TurnOutcome {
        end,
        result,
        num_turns: 0,
        requests: 0,
        denials: Vec::new(),
        usage: Default::default(),
        model_usage: Vec::new(),
        model_stop_reason: None,
        stop_capped: false,
        api_ms: 0,
    }
}
