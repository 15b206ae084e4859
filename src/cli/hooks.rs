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
    /// Which settings tiers to read: comma-separated `user,project,local`.
    #[arg(long = "setting-sources", value_name = "SOURCES", global = true)]
    pub setting_sources: Option<String>,
    /// Project directory (default: the current directory).
    #[arg(long = "cwd", value_name = "DIR", global = true)]
    pub cwd: Option<PathBuf>,
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
    message: String,
    code: i32,
}

fn usage(message: impl Into<String>) -> CliError {
    CliError {
        message: message.into(),
        code: EXIT_USAGE,
    }
}

/// What every subcommand needs.
struct Context {
    project_dir: PathBuf,
    home: PathBuf,
    settings: Settings,
    debug: bool,
    /// Names of the configured MCP servers (not started).
    mcp_servers: Vec<String>,
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
    let settings = crate::settings::load(&opts);
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

// ---------------------------------------------------------------------------------------------
// list

/// The handler's command as shown (exec form: command and args joined by spaces).
fn handler_text(h: &ConfiguredHandler) -> String {
    match &h.kind {
        HandlerKind::Command(c) => match &c.args {
            None => c.command.clone(),
            Some(args) => std::iter::once(c.command.as_str())
                .chain(args.iter().map(String::as_str))
                .collect::<Vec<_>>()
                .join(" "),
        },
        HandlerKind::Http(h) => h.url.clone(),
        HandlerKind::Prompt(p) | HandlerKind::Agent(p) => p.prompt.clone(),
        HandlerKind::McpTool(m) => format!("{}/{}", m.server, m.tool),
    }
}

fn on_failure_text(h: &ConfiguredHandler) -> &'static str {
    match h.on_failure {
        OnFailure::Continue => "continue",
        OnFailure::Block => "block",
    }
}

fn is_async(h: &ConfiguredHandler) -> bool {
    match &h.kind {
        HandlerKind::Command(c) => c.is_async,
        HandlerKind::Http(_)
        | HandlerKind::Prompt(_)
        | HandlerKind::Agent(_)
        | HandlerKind::McpTool(_) => false,
    }
}

/// `applied`, `absent`, or `not applied: <the first error in it>`.
fn file_status(settings: &Settings, path: &Path, applied: bool) -> (String, Option<String>) {
    if applied {
        return ("applied".to_string(), None);
    }
    let label = path.display().to_string();
    let error = settings
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error && *d.location.file == *label)
        .find(|d| d.message.contains("nothing in this file is applied"))
        .or_else(|| {
            settings
                .diagnostics
                .iter()
                .find(|d| d.severity == Severity::Error && *d.location.file == *label)
        });
    match error {
        Some(d) => (
            "not_applied".to_string(),
            Some(format!(
                "{}:{}: {}",
                d.location.line, d.location.col, d.message
            )),
        ),
        None => ("absent".to_string(), None),
    }
}

fn lint_ctx(ctx: &Context) -> LintContext<'_> {
    LintContext {
        project_dir: &ctx.project_dir,
        home: &ctx.home,
        settings_env: &ctx.settings.env,
        http_policy: &ctx.settings.http_policy,
        mcp_servers: Some(&ctx.mcp_servers),
    }
}

fn list(ctx: &Context, as_json: bool) -> i32 {
    let settings = &ctx.settings;
    let statuses = explain::statuses(settings, &ctx.mcp_servers);
    if as_json {
        return emit_json(&list_json(ctx, &statuses));
    }
    let mut out = String::new();
    out.push_str("Settings files (lowest precedence first):\n");
    for f in &settings.files {
        let (status, why) = file_status(settings, &f.path, f.applied);
        let status = match (status.as_str(), why) {
            ("not_applied", Some(why)) => format!("NOT APPLIED ({why})"),
            (s, _) => s.to_string(),
        };
        out.push_str(&format!(
            "  {:<8} {}  {status}\n",
            f.source.as_str(),
            f.path.display()
        ));
    }
    out.push('\n');
    if statuses.is_empty() {
        out.push_str("No hooks configured.\n");
        return emit(&out);
    }
    out.push_str("Handlers (effective order: user, project, local, --settings, managed):\n");
    let lint = lint_ctx(ctx);
    for st in &statuses {
        let h = st.handler;
        out.push('\n');
        out.push_str(&format!(
            "#{} {}  {} ({} settings)\n",
            st.index + 1,
            h.origin.event_key,
            h.origin.location,
            h.origin.source.as_str()
        ));
        out.push_str(&format!(
            "    {:<7} {}\n",
            h.kind.type_name(),
            handler_text(h)
        ));
        out.push_str(&format!("    matcher {}\n", matcher_summary(h).1));
        if let Some(cond) = &h.if_text {
            out.push_str(&format!("    if      {cond:?}\n"));
        }
        out.push_str(&format!(
            "    timeout {}   onFailure {}   async {}{}\n",
            crate::hooks::prompt_hook::describe_timeout(h),
            on_failure_text(h),
            if is_async(h) { "yes" } else { "no" },
            if h.once {
                "   once (no effect here)"
            } else {
                ""
            }
        ));
        match &st.never {
            Some(r) => out.push_str(&format!("    NEVER FIRES: {}\n", r.message)),
            None => {
                let fires = match st.duplicate {
                    Some(d) => format!(
                        "yes (runs once together with its duplicate #{} when both match)",
                        d.of + 1
                    ),
                    None => {
                        let copies: Vec<String> = statuses
                            .iter()
                            .filter(|o| o.duplicate.is_some_and(|d| d.of == st.index))
                            .map(|o| format!("#{}", o.index + 1))
                            .collect();
                        let only_mcp = tool_names::matches_tool_names(h.event)
                            .then(|| tool_names::reach(&h.matcher, &ctx.mcp_servers))
                            .and_then(|reach| match reach {
                                tool_names::Reach::OnlyMcp(servers) => Some(format!(
                                    "only for the tools of MCP servers {} that it matches (none of rein's own tools)",
                                    servers.join(", ")
                                )),
                                tool_names::Reach::Fires | tool_names::Reach::Never(_) => None,
                            });
                        if let Some(only) = only_mcp {
                            only
                        } else if copies.is_empty() {
                            "yes".to_string()
                        } else {
                            format!(
                                "yes (the copy that runs for its duplicates {})",
                                copies.join(", ")
                            )
                        }
                    }
                };
                out.push_str(&format!("    fires   {fires}\n"));
            }
        }
        for d in lint_handler(h, lint) {
            let level = match d.severity {
                Severity::Error => "error",
                Severity::Warning => "warning",
                Severity::Note => "note",
            };
            out.push_str(&format!("    {level}: {}\n", d.message));
        }
    }
    let never = statuses.iter().filter(|s| s.never.is_some()).count();
    out.push_str(&format!(
        "\n{} handlers: {} can fire, {} never fire.\n",
        statuses.len(),
        statuses.len() - never,
        never
    ));
    emit(&out)
}

fn list_json(ctx: &Context, statuses: &[HandlerStatus<'_>]) -> Value {
    let settings = &ctx.settings;
    let files: Vec<Value> = settings
        .files
        .iter()
        .map(|f| {
            let (status, error) = file_status(settings, &f.path, f.applied);
            json!({
                "source": f.source.as_str(),
                "path": f.path.display().to_string(),
                "status": status,
                "error": error,
            })
        })
        .collect();
    let lint = lint_ctx(ctx);
    let handlers: Vec<Value> = statuses
        .iter()
        .map(|st| {
            let h = st.handler;
            let (matcher_kind, matcher_description) = matcher_summary(h);
            let (command, args) = match &h.kind {
                HandlerKind::Command(c) => (Some(c.command.clone()), c.args.clone()),
                HandlerKind::Http(_)
                | HandlerKind::Prompt(_)
                | HandlerKind::Agent(_)
                | HandlerKind::McpTool(_) => (None, None),
            };
            json!({
                "index": st.index + 1,
                "source": h.origin.source.as_str(),
                "file": h.origin.location.file.to_string(),
                "line": h.origin.location.line,
                "col": h.origin.location.col,
                "event": h.origin.event_key,
                "event_known": h.event.is_some(),
                "fired_by_rein": h.event.is_some_and(HookEvent::fired_by_rein),
                "group": h.origin.group,
                "position": h.origin.index,
                "type": h.kind.type_name(),
                "command": command,
                "args": args,
                "text": handler_text(h),
                "matcher": h.matcher_text,
                "matcher_kind": matcher_kind,
                "matcher_description": matcher_description,
                "if": h.if_text,
                "timeout_s": h.timeout,
                "effective_timeout_s": crate::hooks::prompt_hook::listed_seconds(h),
                "timeout_description": crate::hooks::prompt_hook::describe_timeout(h),
                "on_failure": on_failure_text(h),
                "async": is_async(h),
                "once": h.once,
                "fires": st.never.is_none(),
                "never_fires": st.never.as_ref().map(|r| json!({"code": r.code, "message": r.message})),
                "duplicate_of": st.duplicate.map(|d| d.of + 1),
                "duplicate_always": st.duplicate.map(|d| d.always),
                "warnings": lint_handler(h, lint).into_iter().map(|d| d.message).collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({
        "project_dir": ctx.project_dir.display().to_string(),
        "files": files,
        "handlers": handlers,
        "diagnostics": settings.diagnostics.iter().map(diagnostic_json).collect::<Vec<_>>(),
    })
}

fn diagnostic_json(d: &Diagnostic) -> Value {
    json!({
        "severity": match d.severity { Severity::Error => "error", Severity::Warning => "warning", Severity::Note => "note" },
        "file": d.location.file.to_string(),
        "line": d.location.line,
        "col": d.location.col,
        "message": d.message,
    })
}

// ---------------------------------------------------------------------------------------------
// validate

/// Every problem: the loader's diagnostics and the script checks, in file order.
fn all_diagnostics(ctx: &Context) -> Vec<Diagnostic> {
    let settings = &ctx.settings;
    let mut diags = settings.diagnostics.clone();
    let lint = lint_ctx(ctx);
    for h in &settings.handlers {
        diags.extend(lint_handler(h, lint));
    }
    let rank = |d: &Diagnostic| {
        settings
            .files
            .iter()
            .position(|f| f.path.display().to_string() == *d.location.file)
            .unwrap_or(usize::MAX)
    };
    diags.sort_by_key(|d| (rank(d), d.location.line, d.location.col));
    diags
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

fn trust_state(project_dir: &Path) -> TrustState {
    crate::settings::trust::state(&crate::agent::transcript::rein_home(), project_dir)
}

/// The trust line of `validate`: (JSON value, text).
fn trust_summary(project_dir: &Path) -> (Value, String) {
    match trust_state(project_dir) {
        TrustState::Trusted => (
            json!({"state": "trusted"}),
            "trust: this folder is trusted".to_string(),
        ),
        TrustState::Untrusted => (
            json!({"state": "untrusted"}),
            "trust: this folder is not trusted: its repository settings may not raise permissions (`rein hooks trust` records trust)".to_string(),
        ),
        TrustState::Changed(items) => (
            json!({"state": "changed", "changed": items}),
            format!(
                "trust: changed since this folder was trusted: {}; run `rein hooks trust` again after reviewing",
                items.join("; ")
            ),
        ),
        TrustState::Unreadable(message) => (
            json!({"state": "unreadable", "message": message}),
            format!("trust: not trusted: {message}"),
        ),
    }
}

fn revoke_cmd(ctx: &Context, as_json: bool) -> Result<i32, CliError> {
    let home = crate::agent::transcript::rein_home();
    let removed =
        crate::settings::trust::revoke(&home, &ctx.project_dir).map_err(|message| CliError {
            message,
            code: EXIT_ERROR,
        })?;
    Ok(if as_json {
        emit_json(&json!({"revoked": ctx.project_dir.to_string_lossy(), "was_trusted": removed}))
    } else if removed {
        emit(&format!(
            "{} is no longer trusted: its repository settings may not raise permissions.\n",
            ctx.project_dir.display()
        ))
    } else {
        emit(&format!(
            "{} had no trust record.\n",
            ctx.project_dir.display()
        ))
    })
}

fn trust_cmd(ctx: &Context, as_json: bool) -> Result<i32, CliError> {
    let home = crate::agent::transcript::rein_home();
    let items =
        crate::settings::trust::trust(&home, &ctx.project_dir).map_err(|message| CliError {
            message,
            code: EXIT_ERROR,
        })?;
    let written = if as_json {
        emit_json(&json!({
            "trusted": ctx.project_dir.to_string_lossy(),
            "items": items.iter().map(|i| json!({"label": i.label, "sha256": i.digest})).collect::<Vec<_>>(),
        }))
    } else {
        let mut out = format!(
            "Trusted {}. Its repository-controlled settings may now raise permissions; a change to any of these asks again:\n",
            ctx.project_dir.display()
        );
        for i in &items {
            out.push_str(&format!("  {}  sha256:{}\n", i.label, &i.digest[..16]));
        }
        emit(&out)
    };
    Ok(written)
}

fn validate(ctx: &Context, strict: bool, as_json: bool) -> i32 {
    let diags = all_diagnostics(ctx);
    let (trust_json, trust_text) = trust_summary(&ctx.project_dir);
    let errors = diags
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .count();
    let warnings = diags.len() - errors;
    let failed = errors > 0 || (strict && warnings > 0);
    let written = if as_json {
        emit_json(&json!({
            "ok": !failed,
            "errors": errors,
            "warnings": warnings,
            "diagnostics": diags.iter().map(diagnostic_json).collect::<Vec<_>>(),
            "trust": trust_json,
        }))
    } else {
        let mut out = String::new();
        for d in &diags {
            out.push_str(&format!("{d}\n"));
        }
        out.push_str(&format!(
            "{}, {}\n",
            plural(errors, "error"),
            plural(warnings, "warning")
        ));
        out.push_str(&trust_text);
        out.push('\n');
        emit(&out)
    };
    if written != EXIT_OK {
        return written;
    }
    if failed { EXIT_ERROR } else { EXIT_OK }
}

// ---------------------------------------------------------------------------------------------
// building an event input exactly as a session does

/// The session-like identity of a simulated firing.
struct Simulated {
    session_id: String,
    transcript: PathBuf,
    firing: Box<dyn Firing>,
}

fn parse_input(arg: Option<&str>) -> Result<Option<Map<String, Value>>, CliError> {
    let Some(arg) = arg else {
        return Ok(None);
    };
    let (text, what) = match arg.strip_prefix('@') {
        Some(path) => (
            std::fs::read_to_string(path)
                .map_err(|e| usage(format!("--input {arg}: cannot read: {e}")))?,
            format!("--input {arg}"),
        ),
        None => (arg.to_string(), "--input".to_string()),
    };
    let value: Value = serde_json::from_str(&text).map_err(|e| {
        let full = e.to_string();
        let suffix = format!(" at line {} column {}", e.line(), e.column());
        let msg = full.strip_suffix(&suffix).unwrap_or(&full);
        usage(format!(
            "{what} is not valid JSON: line {}, column {}: {msg}",
            e.line(),
            e.column()
        ))
    })?;
    match value {
        Value::Object(map) => Ok(Some(map)),
        other => Err(usage(format!(
            "{what} must be a JSON object, found {}",
            crate::json_kind::with_article(&other)
        ))),
    }
}

/// The events `hooks test` can fire, for messages.
fn fired_events() -> String {
    HookEvent::ALL
        .iter()
        .filter(|e| e.fired_by_rein())
        .map(|e| e.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

fn parse_event(name: &str) -> Result<HookEvent, CliError> {
    let Some(event) = HookEvent::parse(name) else {
        let hint = HookEvent::ALL
            .iter()
            .find(|e| e.as_str().eq_ignore_ascii_case(name))
            .map(|e| format!(" (did you mean {e}?)"))
            .unwrap_or_default();
        return Err(usage(format!(
            "unknown event {name:?}{hint}; rein fires: {}",
            fired_events()
        )));
    };
    if !event.fired_by_rein() {
        return Err(usage(format!(
            "rein never fires {event}, so hooks configured for it never run (`rein hooks list` shows them); rein fires: {}",
            fired_events()
        )));
    }
    Ok(event)
}

/// Builds the input of one firing the way the session and the tool pipeline do: fresh
/// session id, transcript path under the rein home, `cwd` = the project directory, the base
/// fields the event carries (spec §2.4), the event's defaults
/// ([`crate::hooks::events::Event::sample_input`]), and a tool input prepared by the tool
/// itself (absolute paths, defaults). `--input` fields override the defaults and are checked
/// against the event's fields; the result is parsed as the event's input type.
fn simulate(args: &FiringArgs, project_dir: &Path) -> Result<Simulated, CliError> {
    let event = parse_event(&args.event)?;
    let spec = event.spec();
    let Some(fires) = spec.fires else {
        return Err(usage(format!("rein never fires {event}")));
    };
    let map = parse_input(args.input.as_deref())?.unwrap_or_default();
    let session_id = uuid_v4();
    let transcript = transcript_path(&rein_home(), project_dir, &session_id);
    let base = BaseInput {
        session_id: session_id.clone(),
        transcript_path: transcript.to_string_lossy().into_owned(),
        cwd: project_dir.to_string_lossy().into_owned(),
        prompt_id: spec.prompt_id.then(uuid_v4),
        permission_mode: spec.permission_mode.then(|| "default".to_string()),
        agent_id: None,
        agent_type: None,
        effort: None,
    };
    let tool_event = spec.tool_event;
    if tool_event && args.tool.is_none() {
        return Err(usage(format!(
            "{event} is a tool event: give the tool with --tool NAME (e.g. --tool Bash)"
        )));
    }
    if !tool_event && args.tool.is_some() {
        return Err(usage(format!(
            "{event} is not a tool event; --tool does not apply"
        )));
    }
    if let Some(v) = &args.matcher_value {
        if tool_event {
            return Err(usage(format!(
                "{event} matches on the tool name: use --tool, not --matcher-value {v:?}"
            )));
        }
        if spec.matcher == MatcherClass::NoTarget {
            return Err(usage(format!(
                "{event} has no match target (its matchers are ignored); --matcher-value does not apply"
            )));
        }
    }
    let tool = args.tool.clone().unwrap_or_default();
    let mut input = fires.sample_input(base, &tool);
    // `{"tool_input": …, other fields}` or, on tool events, just the tool input.
    let (raw_tool_input, fields) = if tool_event && !map.contains_key("tool_input") {
        (Some(Value::Object(map)), Map::new())
    } else {
        let mut fields = map;
        (fields.remove("tool_input"), fields)
    };
    let known: Vec<&str> = fires
        .fields()
        .iter()
        .copied()
        .filter(|f| *f != "tool_name" && (tool_event || *f != "tool_input"))
        .collect();
    if let Some(bad) = fields.keys().find(|k| !known.contains(&k.as_str())) {
        return Err(usage(format!(
            "--input: {event} has no field {bad:?} (fields: {})",
            known.join(", ")
        )));
    }
    if tool_event {
        let raw = raw_tool_input.unwrap_or_else(|| json!({}));
        if !raw.is_object() {
            return Err(usage("--input: tool_input must be a JSON object"));
        }
        let prepared = prepare_tool_input(&tool, raw, project_dir, event)?;
        input.insert("tool_input".to_string(), prepared);
    }
    input.extend(fields);
    if let (Some(v), Some(field)) = (&args.matcher_value, spec.match_field) {
        input.insert(field.to_string(), Value::String(v.clone()));
    }
    let firing = fires
        .parse_input(Value::Object(input))
        .map_err(|e| usage(format!("--input: {event}: {e}")))?;
    Ok(Simulated {
        session_id,
        transcript,
        firing,
    })
}

/// The tool input as the session hands it to hooks: validated and normalised by the tool
/// (absolute `file_path`, defaults). Unknown tools (MCP, …) get the input as given.
fn prepare_tool_input(
    tool: &str,
    input: Value,
    project_dir: &Path,
    event: HookEvent,
) -> Result<Value, CliError> {
    let Some(t) = builtin_tools().into_iter().find(|t| t.name() == tool) else {
        return Ok(input);
    };
    let ctx = ToolContext::new(project_dir.to_path_buf());
    t.prepare(input, &ctx).map_err(|message| {
        usage(format!(
            "the {tool} tool rejects this input, so a session would not fire {event} for it (the model gets this error instead): {message}"
        ))
    })
}

// ---------------------------------------------------------------------------------------------
// test

fn environment(ctx: &Context, sim: &Simulated) -> HookEnvironment {
    let home = rein_home();
    HookEnvironment {
        project_dir: ctx.project_dir.clone(),
        session_id: sim.session_id.clone(),
        env_file_dir: home.join("session-env").join(&sim.session_id),
        extra_env: ctx.settings.env.clone(),
        run_log: Some(run_log_path(&sim.session_id)),
        debug: ctx.debug,
        output_dir: Some(sim.transcript.with_extension("").join("tool-results")),
        attended: false,
        http_policy: ctx.settings.http_policy.clone(),
        home: None,
    }
}

/// `<rein home>/logs/<session>.jsonl`, where the dispatcher appends one line per hook run.
fn run_log_path(session_id: &str) -> PathBuf {
    rein_home().join("logs").join(format!("{session_id}.jsonl"))
}

fn status_text(run: &HandlerRun, timeout: f64) -> String {
    let ms = run.duration.as_millis();
    match &run.status {
        RunStatus::Exited(code) => format!("exit {code} after {ms} ms"),
        RunStatus::Signaled(sig) => {
            format!("killed by signal {sig} after {ms} ms (counts as exit 1: does not block)")
        }
        RunStatus::TimedOut => format!(
            "timed out after {} s; its process group was killed",
            crate::settings::lint::format_seconds(timeout)
        ),
        RunStatus::SpawnFailed(e) => format!("could not be started: {e}"),
        RunStatus::Backgrounded => "backgrounded (async): the event went ahead at once".to_string(),
        RunStatus::Crashed(e) => format!("crashed: {e}"),
        RunStatus::RequestFailed(e) => format!("no usable answer: {e}"),
    }
}

fn outcome_text(outcome: &OutcomeKind) -> String {
    match outcome {
        OutcomeKind::Success => "success".to_string(),
        OutcomeKind::Blocking(reason) => format!("blocking error: {}", reason.trim_end()),
        OutcomeKind::NonBlocking(text) => {
            format!(
                "non-blocking error (the action goes ahead): {}",
                text.trim_end()
            )
        }
        OutcomeKind::Cancelled => "cancelled (non-blocking: the action goes ahead)".to_string(),
    }
}

/// `text`, or its first [`DISPLAY_CAP`] characters and how much was left out.
fn capped(text: &str) -> String {
    if text.chars().count() <= DISPLAY_CAP {
        return text.to_string();
    }
    let head: String = text.chars().take(DISPLAY_CAP).collect();
    format!("{head}… [{} more bytes not shown]", text.len() - head.len())
}

fn indent_block(text: &str, pad: &str) -> String {
    let mut out = String::new();
    for (i, line) in text.lines().enumerate() {
        if i > 0 {
            out.push('\n');
            out.push_str(pad);
        }
        out.push_str(line);
    }
    out
}

fn handler_index(settings: &Settings, run: &HandlerRun) -> Option<usize> {
    settings
        .handlers
        .iter()
        .position(|h| h.origin == run.origin)
}

fn run_status_json(run: &HandlerRun) -> Value {
    let (status, exit_code, signal, error) = match &run.status {
        RunStatus::Exited(c) => ("exited", Some(*c), None, None),
        RunStatus::Signaled(s) => ("signaled", None, Some(*s), None),
        RunStatus::TimedOut => ("timed_out", None, None, None),
        RunStatus::SpawnFailed(e) => ("spawn_failed", None, None, Some(e.clone())),
        RunStatus::Backgrounded => ("backgrounded", None, None, None),
        RunStatus::Crashed(e) => ("crashed", None, None, Some(e.clone())),
        RunStatus::RequestFailed(e) => ("request_failed", None, None, Some(e.clone())),
    };
    let (outcome, outcome_text) = match &run.outcome {
        OutcomeKind::Success => ("success", None),
        OutcomeKind::Blocking(r) => ("blocking", Some(r.clone())),
        OutcomeKind::NonBlocking(t) => ("non_blocking", Some(t.clone())),
        OutcomeKind::Cancelled => ("cancelled", None),
    };
    json!({
        "status": status,
        "exit_code": exit_code,
        "signal": signal,
        "error": error,
        "outcome": outcome,
        "outcome_text": outcome_text,
    })
}

fn test(
    ctx: Context,
    firing: &FiringArgs,
    as_json: bool,
    runtime: &tokio::runtime::Runtime,
) -> Result<i32, CliError> {
    let sim = simulate(firing, &ctx.project_dir)?;
    if let Some(dir) = sim.transcript.parent() {
        // A session has a transcript by the time hooks run; scripts that read it get an
        // empty one instead of a missing file.
        let _ = dir;
        let _ = crate::private_fs::open_append(&sim.transcript);
    }
    let env = environment(&ctx, &sim);
    let run_log = env.run_log.clone();
    let dispatcher = Arc::new(Dispatcher::new(ctx.settings.handlers.clone(), env));
    // mcp_tool hooks of this event call their servers for real: start just those.
    let wanted: Vec<String> = ctx
        .settings
        .handlers
        .iter()
        .filter(|h| h.inactive.is_none() && h.event == Some(sim.firing.event()))
        .filter_map(|h| match &h.kind {
            crate::settings::schema::HandlerKind::McpTool(m) => Some(m.server.clone()),
            _ => None,
        })
        .collect();
    let mcp = (!wanted.is_empty()).then(|| {
        runtime.block_on(crate::cli::mcp::start_named(
            &ctx.project_dir,
            &ctx.settings,
            &wanted,
        ))
    });
    if let Some(mcp) = &mcp {
        dispatcher.set_mcp_caller(Arc::clone(mcp) as Arc<dyn crate::hooks::mcp_tool::McpCaller>);
    }
    let d = Arc::clone(&dispatcher);
    let firing = sim.firing.as_ref();
    let (mut outcome, async_context) = runtime.block_on(async move {
        let outcome = d.fire_erased(firing).await;
        // Background (`async`) hooks: wait for them so their output can be shown.
        d.wait_background().await;
        (outcome, d.take_async_context())
    });
    if let Some(mcp) = &mcp {
        runtime.block_on(mcp.shutdown());
    }
    let v = firing.explain(outcome.as_ref()).unwrap_or_default();
    let decision: Common = firing
        .common_of(outcome.as_mut())
        .map(std::mem::take)
        .unwrap_or_default();
    let env_files: Vec<(PathBuf, String)> = dispatcher
        .env_files()
        .into_iter()
        .filter_map(|p| {
            let text = std::fs::read_to_string(&p).ok()?;
            (!text.is_empty()).then_some((p, text))
        })
        .collect();
    let settings = &ctx.settings;
    let stdin = String::from_utf8_lossy(&stdin_bytes(&firing.input_json()))
        .trim_end()
        .to_string();
    let hook_name = firing.hook_name();
    if as_json {
        let runs: Vec<Value> = decision
            .runs
            .iter()
            .map(|run| {
                let idx = handler_index(settings, run);
                let mut obj = json!({
                    "index": idx.map(|i| i + 1),
                    "source": run.origin.source.as_str(),
                    "origin": run.origin.location.to_string(),
                    "command": run.command,
                    "duration_ms": u64::try_from(run.duration.as_millis()).unwrap_or(u64::MAX),
                    "stdout": run.stdout,
                    "stderr": run.stderr,
                    "stdout_bytes": run.stdout_bytes,
                    "stderr_bytes": run.stderr_bytes,
                    "json": run.json,
                });
                if let (Some(o), Value::Object(extra)) = (obj.as_object_mut(), run_status_json(run))
                {
                    o.extend(extra);
                }
                obj
            })
            .collect();
        let value = json!({
            "event": firing.event().as_str(),
            "hook_name": hook_name,
            "blocks": v.blocks,
            "session_id": sim.session_id,
            "stdin": serde_json::from_str::<Value>(&stdin).unwrap_or(Value::Null),
            "runs": runs,
            "decision": v.summary,
            "model_sees": v.model.iter().map(|(channel, text)| json!({"channel": channel, "text": text})).collect::<Vec<_>>(),
            "user_sees": v.user,
            "async_context": async_context,
            "env_files": env_files.iter().map(|(p, t)| json!({"path": p.display().to_string(), "text": t})).collect::<Vec<_>>(),
            "run_log": run_log.as_ref().map(|p| p.display().to_string()),
        });
        return Ok(blocked_exit(emit_json(&value), v.blocks));
    }
    let mut out = String::new();
    out.push_str(&format!(
        "{hook_name}: {} ran (session {})\n",
        plural(decision.runs.len(), "handler"),
        sim.session_id
    ));
    out.push_str(&format!("stdin: {stdin}\n"));
    if decision.runs.is_empty() {
        out.push_str(
            "\nNo handler matched. `rein hooks explain` says why each one was left out.\n",
        );
    }
    for run in &decision.runs {
        let idx = handler_index(settings, run);
        let timeout = idx
            .map(|i| {
                let h = &settings.handlers[i];
                crate::hooks::prompt_hook::listed_seconds(h)
            })
            .unwrap_or(600.0);
        out.push('\n');
        out.push_str(&format!(
            "#{} {} ({} settings)\n",
            idx.map_or("?".to_string(), |i| (i + 1).to_string()),
            run.origin.location,
            run.origin.source.as_str()
        ));
        out.push_str(&format!("  command: {}\n", run.command));
        out.push_str(&format!("  result:  {}\n", status_text(run, timeout)));
        let show = |name: &str, text: &str, capped_flag: bool| {
            if text.is_empty() {
                format!("  {name}: (empty)\n")
            } else {
                format!(
                    "  {name}: {}{}\n",
                    indent_block(&capped(text.trim_end_matches('\n')), "          "),
                    if capped_flag { " [capped by rein]" } else { "" }
                )
            }
        };
        out.push_str(&show("stdout", &run.stdout, run.stdout_capped));
        out.push_str(&show("stderr", &run.stderr, run.stderr_capped));
        let parsed = match &run.json {
            Some(_) => "; stdout read as hook JSON",
            None if !run.stdout.trim().is_empty() => "; stdout is plain text",
            None => "",
        };
        out.push_str(&format!(
            "  outcome: {}{parsed}\n",
            outcome_text(&run.outcome)
        ));
    }
    out.push_str(&format!("\nDecision: {}\n", v.summary));
    if !v.model.is_empty() {
        out.push_str("The model sees:\n");
        for (channel, text) in &v.model {
            out.push_str(&format!(
                "  [{channel}]\n    {}\n",
                indent_block(text, "    ")
            ));
        }
    } else {
        out.push_str("The model sees: nothing from these hooks\n");
    }
    if !v.user.is_empty() {
        out.push_str("The user sees (not the model):\n");
        for text in &v.user {
            out.push_str(&format!("    {}\n", indent_block(text, "    ")));
        }
    }
    if !async_context.is_empty() {
        out.push_str("Background hooks add to the next model request:\n");
        for text in &async_context {
            out.push_str(&format!("    {}\n", indent_block(text, "    ")));
        }
    }
    for (path, text) in &env_files {
        out.push_str(&format!(
            "CLAUDE_ENV_FILE {} (sourced before later Bash commands):\n    {}\n",
            path.display(),
            indent_block(text.trim_end(), "    ")
        ));
    }
    if let Some(p) = &run_log
        && !decision.runs.is_empty()
    {
        out.push_str(&format!("Run log: {}\n", p.display()));
    }
    if v.blocks {
        out.push_str(&format!(
            "Blocked: exit status {EXIT_BLOCKED} (0 when the hooks let the action go ahead)\n"
        ));
    }
    Ok(blocked_exit(emit(&out), v.blocks))
}

/// `rein hooks test`'s exit status when the hooks block, refuse or stop the action. Not 2:
/// that is a usage error (an unknown event name), which a CI check must not take for a block.
pub const EXIT_BLOCKED: i32 = 3;

/// [`EXIT_BLOCKED`] when `blocks` and the output was written, else the output's status.
fn blocked_exit(written: i32, blocks: bool) -> i32 {
    if written == EXIT_OK && blocks {
        EXIT_BLOCKED
    } else {
        written
    }
}

// ---------------------------------------------------------------------------------------------
// explain

fn explain_cmd(ctx: Context, firing: &FiringArgs, as_json: bool) -> Result<i32, CliError> {
    let sim = simulate(firing, &ctx.project_dir)?;
    let env = environment(&ctx, &sim);
    let dispatcher = Dispatcher::new(ctx.settings.handlers.clone(), env);
    let target = sim.firing.target();
    let explained = explain::explain(&ctx.settings, &dispatcher, &target);
    let hook_name = sim.firing.hook_name();
    let runs = explained
        .iter()
        .filter(|e| matches!(e.verdict, Verdict::Runs))
        .count();
    let other_events = ctx.settings.handlers.len() - explained.len();
    if as_json {
        let value = json!({
            "event": target.event.as_str(),
            "hook_name": hook_name,
            "match_value": target.match_value,
            "would_run": runs,
            "handlers": explained.iter().map(|e| {
                let (runs, reason) = match &e.verdict {
                    Verdict::Runs => (true, None),
                    Verdict::Skipped(r) => (false, Some(json!({"code": r.code, "message": r.message}))),
                };
                json!({
                    "index": e.index + 1,
                    "source": e.handler.origin.source.as_str(),
                    "origin": e.handler.origin.location.to_string(),
                    "text": handler_text(e.handler),
                    "runs": runs,
                    "skipped": reason,
                })
            }).collect::<Vec<_>>(),
            "handlers_on_other_events": other_events,
        });
        return Ok(emit_json(&value));
    }
    let mut out = format!(
        "{hook_name}: {} of {} configured for {} would run (nothing is run)\n",
        runs,
        plural(explained.len(), "handler"),
        target.event
    );
    if let Some((tool, input)) = target.tool {
        out.push_str(&format!("tool {tool}, tool_input {input}\n"));
    }
    for e in &explained {
        out.push('\n');
        let mark = match &e.verdict {
            Verdict::Runs => "RUNS   ",
            Verdict::Skipped(_) => "SKIPPED",
        };
        out.push_str(&format!(
            "#{} {mark} {} ({} settings)\n    {}\n",
            e.index + 1,
            e.handler.origin.location,
            e.handler.origin.source.as_str(),
            handler_text(e.handler)
        ));
        match &e.verdict {
            Verdict::Runs => {
                let (_, how) = matcher_summary(e.handler);
                let cond = e
                    .handler
                    .if_text
                    .as_ref()
                    .map(|t| format!("; \"if\": {t:?} holds"))
                    .unwrap_or_default();
                out.push_str(&format!(
                    "    matcher {how} accepts it{cond}; timeout {}\n",
                    crate::hooks::timeout::describe(e.handler.event, e.handler.timeout)
                ));
            }
            Verdict::Skipped(r) => out.push_str(&format!("    why: {}\n", r.message)),
        }
    }
    if other_events > 0 {
        out.push_str(&format!(
            "\n{} on other events (see `rein hooks list`).\n",
            plural(other_events, "handler")
        ));
    }
    Ok(emit(&out))
}
