//! `rein run` / `rein -p` / the interactive session: builds the session from the flags, runs
//! it under SIGINT/SIGTERM handling, and maps the outcome to output and an exit code.

use std::io::{BufRead, IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::signal::unix::{Signal, SignalKind, signal};

use crate::agent::providers::{ProviderConfig, from_config};
use crate::agent::session::{
    Session, SessionConfig, TurnEnd, TurnOutcome, stop_block_cap_from_env,
};
use crate::agent::transcript::{encode_cwd, rein_home, transcript_path};
use crate::cli::render::{Glyphs, NoticesToStderr, StreamJson, TextRenderer, result_json};
use crate::cli::{EXIT_ERROR, EXIT_OK, EXIT_USAGE, OutputFormat, RunArgs};
use crate::hooks::dispatch::{Dispatcher, HookEnvironment};
use crate::hooks::environment::{bash_env, removed_env, require_utf8_project_dir};
use crate::id::uuid_v4;
use crate::model::Model;
use crate::permissions::mode::{PermissionMode, check_bypass_allowed, resolve_mode};
use crate::permissions::policy::{PermissionPolicy, PolicyPaths};
use crate::permissions::prompt::{Prompter, TtyPrompter};
use crate::pipeline::{PermissionGate, PolicyGate};
use crate::progress::Observers;
use crate::settings::schema::{Settings, Severity};
use crate::settings::{LoadOptions, parse_setting_sources};
use crate::tools::background::{BackgroundTask, BackgroundTasks};
use crate::tools::{ReadFilter, Tool, ToolContext, builtin_tools};

/// Everything the flags resolve to before a session is built.
struct Setup {
    project_dir: PathBuf,
    permission_mode: String,
    settings: Settings,
    model: Arc<dyn Model>,
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
    let prompt = match prompt {
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
    let interactive = prompt.is_none();
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
    let session_id = uuid_v4();
    let home = rein_home();
    // rein's home holds transcripts and logs: only the user may list or read it.
    if let Err(e) = crate::private_fs::create_dir_all(&home) {
        eprintln!(
            "rein: warning: cannot create {} private: {e}",
            home.display()
        );
    }
    let transcript = match transcripts_dir(
        args.transcript_dir.as_deref(),
        setup.settings.transcript_dir.as_deref(),
        &setup.project_dir,
    ) {
        Some(dir) => dir
            .join(encode_cwd(&setup.project_dir.to_string_lossy()))
            .join(format!("{session_id}.jsonl")),
        None => transcript_path(&home, &setup.project_dir, &session_id),
    };
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
    let format = if interactive {
        OutputFormat::Text
    } else {
        args.output_format
    };
    match format {
        OutputFormat::Text => observers.push(Box::new(TextRenderer {
            glyphs: Glyphs::detect(),
            interactive,
        })),
        OutputFormat::Json => observers.push(Box::new(NoticesToStderr)),
        OutputFormat::StreamJson => {
            let mut stream = StreamJson::new(
                &session_id,
                &setup.project_dir.to_string_lossy(),
                &setup.permission_mode,
                setup.tools.iter().map(|t| t.name().to_string()).collect(),
            )
            .with_mcp_servers(mcp.init_entries());
            stream.include_hook_events = args.include_hook_events;
            observers.push(Box::new(stream));
        }
    }
    let dispatcher = Dispatcher::new(setup.settings.handlers, env);
    dispatcher.set_mcp_caller(Arc::clone(&mcp) as Arc<dyn crate::hooks::mcp_tool::McpCaller>);
    let config = SessionConfig {
        session_id: session_id.clone(),
        project_dir: setup.project_dir.clone(),
        transcript_path: transcript,
        permission_mode: setup.permission_mode.clone(),
        max_turns: args.max_turns,
        stop_block_cap: stop_block_cap_from_env(),
        session_end_budget: dispatcher.session_end_phase_budget(),
    };
    let mut session = Session::new(
        config,
        Box::new(dispatcher),
        setup.model,
        setup.tools,
        setup.gate,
        ctx,
        Box::new(observers),
    );

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
    let result = {
        let work = async {
            session.start().await;
            match &prompt {
                Some(p) => Some(session.run_prompt(p).await),
                None => {
                    interactive_loop(&mut session).await;
                    None
                }
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
    let late = bg_signal.or(late);
    let code = match result {
        Err(caught) => caught.code,
        Ok(None) => late.map_or(EXIT_OK, |c| c.code),
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
async fn follow_background(
    session: &mut Session,
    outcome: &mut TurnOutcome,
    background: &BackgroundTasks,
    format: OutputFormat,
    sigint: &mut Signal,
    sigterm: &mut Signal,
) -> Option<Caught> {
    loop {
        if matches!(outcome.end, TurnEnd::Completed) {
            let turn = tokio::select! {
                next = session.run_background_notification() => Ok(next),
                caught = next_signal(sigint, sigterm) => Err(caught),
            };
            match turn {
                Ok(Some(next)) => {
                    *outcome = next;
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

/// Reads prompts from the terminal until `/exit` or EOF.
async fn interactive_loop(session: &mut Session) {
    let mut reader = LineReader::spawn();
    loop {
        {
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(b"> ");
            let _ = out.flush();
        }
        let Some(line) = reader.next_line().await else {
            return;
        };
        let prompt = line.trim();
        if prompt.is_empty() {
            continue;
        }
        if prompt == "/exit" || prompt == "/quit" {
            return;
        }
        let outcome = session.run_prompt(prompt).await;
        match &outcome.end {
            TurnEnd::PromptBlocked { text } => eprintln!("{text}"),
            TurnEnd::ModelFailed(e) => eprintln!("Error: model request failed: {e}"),
            TurnEnd::MaxTurns => eprintln!("Error: reached max turns"),
            TurnEnd::Stopped { reason } => {
                if let Some(r) = reason {
                    eprintln!("{r}");
                }
            }
            TurnEnd::Completed | TurnEnd::Deferred => {}
        }
    }
}

/// Reads stdin one line at a time, only when asked.
///
/// Why on demand: while a turn runs, a permission prompt reads the same terminal through
/// `/dev/tty`; a reader that is always waiting on stdin would steal the user's answer.
/// Why a thread: tokio's stdin needs a feature rein does not build with, and a blocking read
/// on a thread of its own never stalls the runtime.
struct LineReader {
    want: std::sync::mpsc::Sender<()>,
    lines: tokio::sync::mpsc::Receiver<Option<String>>,
}

impl LineReader {
    fn spawn() -> LineReader {
        let (want, wanted) = std::sync::mpsc::channel::<()>();
        let (tx, lines) = tokio::sync::mpsc::channel::<Option<String>>(1);
        std::thread::spawn(move || {
            let stdin = std::io::stdin();
            while wanted.recv().is_ok() {
                let mut line = String::new();
                let got = match stdin.lock().read_line(&mut line) {
                    Ok(0) | Err(_) => None,
                    Ok(_) => Some(line),
                };
                let eof = got.is_none();
                if tx.blocking_send(got).is_err() || eof {
                    break;
                }
            }
        });
        LineReader { want, lines }
    }

    /// The next line, `None` at EOF.
    async fn next_line(&mut self) -> Option<String> {
        self.want.send(()).ok()?;
        self.lines.recv().await.flatten()
    }
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
    let model = build_model(args, &settings)?;
    let tools = build_tools();
    let paths = PolicyPaths {
        cwd: project_dir.clone(),
        project_dir: project_dir.clone(),
        home: std::env::var_os("HOME")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("/")),
        additional_dirs: Vec::new(),
        // rein's files for this project (a Bash output saved to `tool-results`).
        readable_dirs: match transcripts_dir(
            args.transcript_dir.as_deref(),
            settings.transcript_dir.as_deref(),
            &project_dir,
        ) {
            Some(dir) => vec![dir.join(encode_cwd(&project_dir.to_string_lossy()))],
            None => transcript_path(&rein_home(), &project_dir, "x")
                .parent()
                .map(|d| vec![d.to_path_buf()])
                .unwrap_or_default(),
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
        permission_mode,
        settings,
        model,
        tools,
        gate,
        read_filter,
    })
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
/// would do something and the folder is not trusted, or changed since it was).
fn folder_trusted(project_dir: &Path, interactive: bool) -> bool {
    use crate::permissions::prompt::{TrustAnswer, ask_trust};
    use crate::settings::trust::{TrustState, describe, state, trust};
    let home = rein_home();
    let heading = match state(&home, project_dir) {
        TrustState::Trusted => return true,
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
                return false;
            }
            format!("{changed} Trust it again?")
        }
        TrustState::Unreadable(message) => {
            eprintln!("rein: warning: {message}");
            return false;
        }
    };
    if !interactive {
        return false;
    }
    let lines = describe(project_dir);
    if lines.is_empty() {
        return false;
    }
    match ask_trust(&project_dir.to_string_lossy(), &heading, &lines) {
        TrustAnswer::Remember => {
            if let Err(e) = trust(&home, project_dir) {
                eprintln!("rein: warning: trusted for this run only: {e}");
            }
            true
        }
        TrustAnswer::ThisRun => true,
        TrustAnswer::No => false,
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
    opts.repo_trusted = args.trust || folder_trusted(project_dir, interactive);
    if let Some(sources) = &args.setting_sources {
        opts.setting_sources = Some(
            parse_setting_sources(sources)
                .map_err(|e| setup_error(format!("--setting-sources: {e}"), EXIT_USAGE))?,
        );
    }
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
fn build_model(args: &RunArgs, settings: &Settings) -> Result<Arc<dyn Model>, SetupError> {
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
    Ok(Arc::from(model))
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
