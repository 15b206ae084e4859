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

/// Everything the flags resolve to before a session is built.
struct Setup {
    project_dir: PathBuf,
    /// `--add-dir` directories, resolved.
    add_dirs: Vec<PathBuf>,
    permission_mode: String,
    settings: Settings,
    model: Arc<dyn Model>,
    /// Builds the same provider with another model id (a subagent definition's or a prompt
    /// hook's `model`); `None` for the mock.
    models: Option<subagent::ModelFactory>,
    /// Builds the same provider with another model id, asked for one token, without retries:
    /// `/model NAME` checks the name with it. `None` for the mock.
    probe: Option<subagent::ModelFactory>,
    tools: Vec<Arc<dyn Tool>>,
    gate: Box<dyn PermissionGate>,
    /// Read deny rules, for Grep and Glob to leave denied files out.
    read_filter: ReadFilter,
}

/// A signal that ended the run early: its exit code (128 + signo) and its name.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Caught {
    code: i32,
    name: &'static str,
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

async fn main_inner(prompt: Option<String>, args: RunArgs, headless: bool) -> i32 {
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

    let setup = match build(&args, interactive) {
        Ok(s) => s,
        Err(err) => {
            eprintln!("rein: {err}");
            return err.code;
        }
    };
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
        },
        interactive,
    )
    .await;
    let mut setup = setup;
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
                std::iter::once("Agent".to_string())
                    .chain(setup.tools.iter().map(|t| t.name().to_string()))
                    .collect(),
            )
            .with_mcp_servers(mcp.init_entries());
            stream.include_hook_events = args.include_hook_events;
            stream.include_partial_messages = args.include_partial_messages;
            stream.init_per_prompt = stream_input;
            let stream = Arc::new(stream);
            shared_stream = Some(Arc::clone(&stream));
            observers.push(Box::new(stream));
        }
    }
    let observers: Arc<dyn Observer> = Arc::new(observers);
    let permissions_text = permissions_summary(&setup.permission_mode, &setup.settings);
    let mut dispatcher = Dispatcher::new(setup.settings.handlers, env);
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
    let (definitions, definition_errors) =
        subagent::discover(&user_home, &setup.project_dir, args.agents.as_deref());
    for error in &definition_errors {
        eprintln!("rein: warning: {error}");
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
    session.follow(runtime);
    session.follow(hook_models);
    session.set_attended(interactive);
    session.set_stream_events(args.include_partial_messages);
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
    } else if let (true, Some(stream)) = (stream_input, &shared_stream) {
        session.open(start_source, false, plan.facts).await;
        let session_ref = &session_id;
        let max_turns = args.max_turns;
        let report_turn = |outcome: &TurnOutcome, duration_ms: u64| {
            report(outcome, format, session_ref, duration_ms, max_turns)
        };
        let ended = crate::cli::stream_input::run(
            &mut session,
            stream,
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
    let late = bg_signal.or(late);
    let code = match result {
        Err(caught) => caught.code,
        Ok(None) => late.map_or(stream_code, |c| c.code),
        Ok(Some(outcome)) => {
            let duration_ms = started.elapsed().as_millis() as u64;
            let code = report(&outcome, format, &session_id, duration_ms, args.max_turns);
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

/// How long a `-p` session waits for its background commands after the last turn before it
/// stops them: `CLAUDE_CODE_PRINT_BG_WAIT_CEILING_MS` (Claude Code's variable; `0` = no
/// limit), else Claude Code's 600000 ms.
fn background_wait_ceiling() -> Option<Duration> {
    let ms = std::env::var("CLAUDE_CODE_PRINT_BG_WAIT_CEILING_MS")
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|ms| ms.is_finite() && *ms >= 0.0)
        .unwrap_or(BACKGROUND_WAIT_CEILING_MS);
    (ms > 0.0).then(|| Duration::from_secs_f64(ms / 1000.0))
}

/// Claude Code's default for [`background_wait_ceiling`].
const BACKGROUND_WAIT_CEILING_MS: f64 = 600_000.0;

/// When the "Waiting for background work" notice is shown (Claude Code's 5 s).
const BACKGROUND_WAIT_NOTICE_AFTER: Duration = Duration::from_secs(5);

/// `shell "<description or command, ≤ 60 chars>"` for each command, as Claude Code lists them.
fn background_list(tasks: &[Arc<BackgroundTask>]) -> String {
    tasks
        .iter()
        .map(|t| {
            let text = t.description.as_deref().unwrap_or(&t.command);
            let text: String = if text.chars().count() > 60 {
                let mut cut: String = text.chars().take(59).collect();
                cut.push('…');
                cut
            } else {
                text.to_string()
            };
            format!("shell \"{text}\"")
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// `10m`, `1.5s`, `1h 5m`: a duration as Claude Code writes the ceiling.
fn short_duration(d: Duration) -> String {
    let ms = d.as_millis();
    if ms < 60_000 {
        let text = format!("{:.1}", d.as_secs_f64());
        return format!("{}s", text.strip_suffix(".0").unwrap_or(&text));
    }
    let (h, m, s) = (ms / 3_600_000, ms / 60_000 % 60, ms / 1000 % 60);
    let parts = [(h, "h"), (m, "m"), (s, "s")];
    let parts: Vec<String> = parts
        .iter()
        .skip_while(|(v, _)| *v == 0)
        .filter(|(v, _)| *v > 0)
        .map(|(v, unit)| format!("{v}{unit}"))
        .collect();
    parts.join(" ")
}

/// The end of a `-p` session with background commands still running, as Claude Code ends it:
/// each command that ends gets a turn of its own that tells the model (see
/// [`Session::run_background_notification`]), whose answer becomes the session's result; in
/// between, rein waits at most [`background_wait_ceiling`] after the latest turn, then stops
/// the rest with Claude Code's notice. A SIGINT/SIGTERM meanwhile stops them at once and is
/// returned. On a terminal, after 5 s of waiting, Claude Code's `Waiting for background work`
/// notice. After a turn that did not complete (a hook's `continue: false`, max turns, a model
/// error) rein only waits: no more turns run.
/// `each_turn` gets each follow-up turn's outcome and duration as it ends (stream-json input
/// writes a `result` line per turn).
async fn follow_background(
    session: &mut Session,
    outcome: &mut TurnOutcome,
    background: &BackgroundTasks,
    format: OutputFormat,
    sigint: &mut Signal,
    sigterm: &mut Signal,
    each_turn: &dyn Fn(&TurnOutcome, u64),
) -> Option<Caught> {
    loop {
        if matches!(outcome.end, TurnEnd::Completed) {
            let started = Instant::now();
            let turn = tokio::select! {
                next = session.run_background_notification() => Ok(next),
                caught = next_signal(sigint, sigterm) => Err(caught),
            };
            match turn {
                Ok(Some(next)) => {
                    *outcome = next;
                    each_turn(outcome, started.elapsed().as_millis() as u64);
                    continue;
                }
                Ok(None) => {}
                Err(caught) => {
                    session.interrupted();
                    background.stop_all().await;
                    return Some(caught);
                }
            }
        }
        let running = background.running();
        if running.is_empty() {
            return None;
        }
        let ceiling = background_wait_ceiling();
        let stderr_tty = std::io::stderr().is_terminal();
        let stdout_tty = std::io::stdout().is_terminal();
        // Claude Code's rule: the notice goes to a terminal stderr unless JSON goes to a
        // terminal stdout.
        let notice = stderr_tty && !(format != OutputFormat::Text && stdout_tty);
        let list = background_list(&running);
        let announce = async {
            tokio::time::sleep(BACKGROUND_WAIT_NOTICE_AFTER).await;
            if notice {
                eprintln!(
                    "Waiting for background work to finish ({list}). Press Ctrl+C to exit now."
                );
            }
            std::future::pending::<()>().await;
        };
        let ended = tokio::select! {
            ended = background.wait_any(ceiling) => ended,
            caught = next_signal(sigint, sigterm) => {
                background.stop_all().await;
                return Some(caught);
            }
            () = announce => true,
        };
        if !ended {
            eprintln!(
                "Background tasks still running {} after the last turn ({}); stopping them. \
                 Set CLAUDE_CODE_PRINT_BG_WAIT_CEILING_MS=0 to wait indefinitely.",
                short_duration(ceiling.unwrap_or_default()),
                background_list(&background.running())
            );
            background.stop_all().await;
            return None;
        }
    }
}

/// Prints the outcome of a headless run; returns the exit code.
fn report(
    outcome: &TurnOutcome,
    format: OutputFormat,
    session_id: &str,
    duration_ms: u64,
    max_turns: Option<u32>,
) -> i32 {
    let error = match &outcome.end {
        TurnEnd::ModelFailed(e) => Some(format!("model request failed: {e}")),
        TurnEnd::MaxTurns => Some(format!("Reached max turns ({})", max_turns.unwrap_or(0))),
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
            let value = result_json(outcome, session_id, duration_ms, error.as_deref());
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
    message: String,
    code: i32,
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

fn build(args: &RunArgs, interactive: bool) -> Result<Setup, SetupError> {
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
    let tools = build_tools();
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
    let (policy, warnings) = PermissionPolicy::from_settings(
        &settings.permissions,
        mode,
        &args.allowed_tools,
        &args.disallowed_tools,
        paths,
    );
    for warning in warnings {
        eprintln!("rein: warning: {warning}");
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
    let gate: Box<dyn PermissionGate> = Box::new(PolicyGate::new(policy, prompter));
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
    })
}

/// `/permissions`: the mode and the rules, one per line, with where each is written.
fn permissions_summary(mode: &str, settings: &Settings) -> String {
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
fn hooks_args(args: &RunArgs, project_dir: &Path) -> Vec<String> {
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
    out
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
        denials: Vec::new(),
        usage: Default::default(),
        model_usage: Vec::new(),
        model_stop_reason: None,
        stop_capped: false,
    }
}

/// Where session `id` of `project_dir` keeps its transcript under `projects`.
fn session_transcript(projects: &Path, project_dir: &Path, id: &str) -> PathBuf {
    projects
        .join(encode_cwd(&project_dir.to_string_lossy()))
        .join(format!("{id}.jsonl"))
}

/// Which session runs: a new one, or an earlier one resumed (under its own id, or forked
/// under a new one).
struct SessionPlan {
    id: String,
    resumed: Option<crate::agent::resume::Rebuilt>,
    /// `--fork-session`: the resumed conversation goes on under a new id (SessionStart `fork`).
    forked: bool,
    /// About the resumed conversation, for SessionStart `resume` / `fork`.
    facts: crate::agent::session::ResumeFacts,
}

/// Resolves `--continue`, `--resume [ID]`, `--session-id`, `--fork-session`. A resumed session
/// keeps its transcript (a torn last line is cut off first, with a notice); a fork copies the
/// complete lines into the new session's transcript.
fn plan_session(
    args: &RunArgs,
    projects: &Path,
    project_dir: &Path,
    interactive: bool,
) -> Result<SessionPlan, SetupError> {
    use crate::agent::resume;
    if let Some(id) = &args.session_id
        && !resume::is_uuid(id)
    {
        return Err(setup_error(
            format!("--session-id {id:?}: not a valid UUID"),
            EXIT_USAGE,
        ));
    }
    let wants_resume = args.continue_session || args.resume.is_some();
    if wants_resume && args.session_id.is_some() && !args.fork_session {
        return Err(setup_error(
            "--session-id with --continue or --resume also needs --fork-session",
            EXIT_USAGE,
        ));
    }
    let found = if args.continue_session {
        Some(
            resume::latest(projects, project_dir)
                .map_err(|e| setup_error(e.to_string(), EXIT_ERROR))?,
        )
    } else {
        match args.resume.as_deref() {
            None => None,
            Some("") if interactive => Some(pick_session(projects, project_dir)?),
            Some("") => {
                return Err(setup_error(
                    "--resume without a session id needs a terminal to pick one from; give                      the id (`rein -r <ID>`) or use --continue",
                    EXIT_USAGE,
                ));
            }
            Some(id) => Some(
                resume::find(projects, project_dir, id)
                    .map_err(|e| setup_error(e.to_string(), EXIT_ERROR))?,
            ),
        }
    };
    let new_id = args.session_id.clone().unwrap_or_else(uuid_v4);
    let Some(found) = found else {
        if args.no_session_persistence {
            return Ok(SessionPlan {
                id: new_id,
                resumed: None,
                forked: false,
                facts: Default::default(),
            });
        }
        if session_transcript(projects, project_dir, &new_id).exists() {
            return Err(setup_error(
                format!(
                    "Session ID {new_id} is already in use (use --resume {new_id} to continue it)"
                ),
                EXIT_USAGE,
            ));
        }
        return Ok(SessionPlan {
            id: new_id,
            resumed: None,
            forked: false,
            facts: Default::default(),
        });
    };
    let bytes = std::fs::read(&found.path).map_err(|e| {
        setup_error(
            format!("cannot read the transcript {}: {e}", found.path.display()),
            EXIT_ERROR,
        )
    })?;
    let rebuilt = resume::rebuild_bytes(&found.path, &bytes);
    for notice in &rebuilt.notices {
        eprintln!("{notice}");
    }
    let complete = bytes.get(..rebuilt.complete_len as usize).unwrap_or(&bytes);
    let facts = resume::last_reply_facts(complete, std::time::SystemTime::now());
    if args.fork_session {
        let target = session_transcript(projects, project_dir, &new_id);
        if target.exists() {
            return Err(setup_error(
                format!("Session ID {new_id} is already in use"),
                EXIT_USAGE,
            ));
        }
        if !args.no_session_persistence {
            let written = target
                .parent()
                .map_or(Ok(()), crate::private_fs::create_dir_all)
                .and_then(|()| crate::private_fs::write(&target, &under_new_id(complete, &new_id)));
            written.map_err(|e| {
                setup_error(
                    format!(
                        "cannot write the forked transcript {}: {e}",
                        target.display()
                    ),
                    EXIT_ERROR,
                )
            })?;
        }
        return Ok(SessionPlan {
            id: new_id,
            resumed: Some(rebuilt),
            forked: true,
            facts,
        });
    }
    if complete.len() < bytes.len() && !args.no_session_persistence {
        // Why: new lines are appended to this file; glued onto the torn tail they would be
        // unreadable too.
        let cut = std::fs::OpenOptions::new()
            .write(true)
            .open(&found.path)
            .and_then(|f| f.set_len(rebuilt.complete_len));
        if let Err(e) = cut {
            return Err(setup_error(
                format!(
                    "cannot cut the partial last line off {}: {e}",
                    found.path.display()
                ),
                EXIT_ERROR,
            ));
        }
    }
    Ok(SessionPlan {
        id: found.id,
        resumed: Some(rebuilt),
        forked: false,
        facts,
    })
}

/// The lines of a forked transcript, each entry's `sessionId` set to the fork's id as Claude
/// Code 2.1.328 writes them (uuids and the chain stay; fixture
/// `tests/fixtures/cc-2.1.328/interactive/README.md`, "fork"). A line that is not a JSON
/// object is copied as it is.
fn under_new_id(complete: &[u8], new_id: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(complete.len());
    for line in complete.split_inclusive(|&b| b == b'\n') {
        let body = line.strip_suffix(b"\n").unwrap_or(line);
        match serde_json::from_slice::<serde_json::Value>(body) {
            Ok(serde_json::Value::Object(mut entry)) if entry.contains_key("sessionId") => {
                entry.insert("sessionId".into(), serde_json::Value::from(new_id));
                match serde_json::to_vec(&entry) {
                    Ok(bytes) => out.extend_from_slice(&bytes),
                    Err(_) => out.extend_from_slice(body),
                }
                if body.len() < line.len() {
                    out.push(b'\n');
                }
            }
            _ => out.extend_from_slice(line),
        }
    }
    out
}

/// `rein --resume` on a terminal: lists the project's latest sessions and reads a number.
fn pick_session(
    projects: &Path,
    project_dir: &Path,
) -> Result<crate::agent::resume::SessionFile, SetupError> {
    use crate::agent::resume;
    let sessions = resume::sessions(projects, project_dir);
    if sessions.is_empty() {
        return Err(setup_error(
            format!("no sessions to resume in {}", project_dir.display()),
            EXIT_ERROR,
        ));
    }
    let shown: Vec<_> = sessions.into_iter().take(20).collect();
    eprintln!("Sessions of {} (newest first):", project_dir.display());
    for (i, s) in shown.iter().enumerate() {
        let ago = s
            .modified
            .elapsed()
            .map(crate::cli::terminal::ago)
            .unwrap_or_default();
        let prompt = resume::first_prompt(&s.path, 60).unwrap_or_else(|| "(no prompt)".into());
        eprintln!("  {:>2}. {ago:>8}  {prompt}  [{}]", i + 1, s.id);
    }
    eprint!("Resume which session? [1-{}, Enter = 1] ", shown.len());
    let mut line = String::new();
    std::io::stdin()
        .read_line(&mut line)
        .map_err(|e| setup_error(format!("cannot read the choice: {e}"), EXIT_ERROR))?;
    let choice = line.trim();
    let index = if choice.is_empty() {
        0
    } else {
        match choice.parse::<usize>() {
            Ok(n) if (1..=shown.len()).contains(&n) => n - 1,
            _ => {
                return Err(setup_error(
                    format!("{choice:?} is not one of 1-{}", shown.len()),
                    EXIT_USAGE,
                ));
            }
        }
    };
    shown
        .into_iter()
        .nth(index)
        .ok_or_else(|| setup_error("no such session", EXIT_USAGE))
}

/// `--add-dir` directories, absolute (relative ones from the project directory); each must be
/// an existing directory.
fn resolve_add_dirs(dirs: &[PathBuf], project_dir: &Path) -> Result<Vec<PathBuf>, SetupError> {
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
fn instructions(args: &RunArgs, setup: &Setup, model: &str) -> Result<Prompt, SetupError> {
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

fn resolve_project_dir(cwd: Option<&Path>) -> Result<PathBuf, SetupError> {
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
fn folder_trusted(project_dir: &Path, interactive: bool) -> Result<bool, SetupError> {
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
fn load_settings(
    args: &RunArgs,
    project_dir: &Path,
    interactive: bool,
) -> Result<Settings, SetupError> {
    let mut opts = LoadOptions::from_env(
        project_dir.to_path_buf(),
        project_dir.to_path_buf(),
        args.settings.clone(),
    );
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
    Ok(crate::settings::load(&opts))
}

/// The directory transcripts go under instead of `<rein home>/projects`: `--transcript-dir`,
/// else the settings' `transcriptDir` (`~/` is the home directory; a relative path is taken
/// from the project directory).
fn transcripts_dir(
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
fn build_model(args: &RunArgs, settings: &Settings) -> Result<BuiltModel, SetupError> {
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
struct BuiltModel {
    model: Arc<dyn Model>,
    models: Option<subagent::ModelFactory>,
    probe: Option<subagent::ModelFactory>,
}

/// With `REIN_GATE_LEDGER=FILE`: writes `{"gate_passes": N, "executions": M}` there, so a test
/// can check that no tool call ran without passing the hook and permission gate.
fn write_gate_ledger() {
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
fn build_tools() -> Vec<Arc<dyn Tool>> {
    builtin_tools()
}

fn init_logging(debug: Option<&str>) {
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
