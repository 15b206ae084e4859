//! The interactive terminal: the prompt (a line editor with history and multi-line input),
//! slash commands, Ctrl+C that stops the running turn and comes back to the prompt, and a
//! spinner naming what runs (a hook's `statusMessage`, a tool).

pub mod dialog;
pub mod editor;
pub mod spinner;
pub mod status_line;

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

use futures_util::FutureExt;
use tokio::signal::unix::Signal;

use crate::agent::session::{Compacted, Session, TurnEnd};
use crate::cli::terminal::editor::{LineEditor, Read};
use crate::cli::terminal::spinner::SpinnerState;

/// `5s ago`, `3m ago`, `2h ago`, `4d ago`: how long ago, for lists.
pub fn ago(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0..60 => format!("{s}s ago"),
        60..3600 => format!("{}m ago", s / 60),
        3600..86_400 => format!("{}h ago", s / 3600),
        _ => format!("{}d ago", s / 86_400),
    }
}

/// Whether to colour output on `stream`: a terminal, and `NO_COLOR` unset or empty.
pub fn color_for(is_terminal: bool) -> bool {
    is_terminal && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// Wraps `text` in an SGR code when `on`.
pub fn paint(on: bool, code: &str, text: &str) -> String {
    if on {
        format!("\x1b[{code}m{text}\x1b[0m")
    } else {
        text.to_string()
    }
}

/// What the terminal needs besides the session.
pub struct TerminalContext {
    /// `<rein home>/history`.
    pub history: PathBuf,
    /// `/permissions`: the mode and the rules, ready to print.
    pub permissions: String,
    /// The arguments `/hooks` gives `rein hooks list` (`--cwd`, `--settings`, …).
    pub hooks_args: Vec<String>,
    /// The spinner's shared state.
    pub spinner: SpinnerState,
    /// Where transcripts are kept (sessions for `/resume`).
    pub projects_dir: PathBuf,
    /// The project directory.
    pub project_dir: PathBuf,
    /// Builds another model of the session's provider (`/model NAME`); `None` for the mock.
    pub models: Option<crate::agent::subagent::ModelFactory>,
    /// The same, asked for one token without retries: `/model NAME` checks the name with it.
    pub probe: Option<crate::agent::subagent::ModelFactory>,
    /// The decisions shadow mode withheld so far (`/hooks` lists them).
    pub shadow_log: crate::hooks::shadow::ShadowLog,
    /// The user's, project's and plugins' slash commands and skills: `/help` lists them, Tab
    /// completes them, and `/name args` runs one as a prompt.
    pub catalog: std::sync::Arc<crate::commands::Catalog>,
    /// The output styles `/output-style` switches between.
    pub styles: crate::agent::output_style::Styles,
    /// The `statusLine` command, drawn before each input prompt ([`status_line`]).
    pub status_line: Option<status_line::StatusLine>,
    /// Woken when the person cancels a question dialog ([`dialog`]): the turn is stopped as
    /// Ctrl+C stops it.
    pub stop_turn: std::sync::Arc<tokio::sync::Notify>,
}

/// The slash commands and what they do (for `/help`).
pub const COMMANDS: &[(&str, &str)] = &[
    ("/help", "this list"),
    (
        "/hooks",
        "the configured hooks, as `rein hooks list` shows them",
    ),
    ("/permissions", "the permission mode and rules in force"),
    (
        "/mode [MODE]",
        "the permission mode; with a MODE (default, acceptEdits, plan, dontAsk, bypassPermissions), switch to it for the following calls",
    ),
    (
        "/clear",
        "start over in a new session (new id and transcript; SessionEnd/SessionStart `clear`)",
    ),
    (
        "/compact [instructions]",
        "summarise the conversation to free context",
    ),
    (
        "/cost",
        "tokens used in this session (and the cost, where prices are configured)",
    ),
    (
        "/model [NAME]",
        "the model in use; with a NAME, switch to it for the following requests",
    ),
    (
        "/output-style [NAME]",
        "the output styles; with a NAME, answer in that style for the rest of the session",
    ),
    (
        "/resume [ID]",
        "switch to an earlier session of this project (a list to pick from without ID)",
    ),
    (
        "/exit",
        "end the session (also /quit, Ctrl+D, Ctrl+C twice)",
    ),
];

/// Help text shown by `/help`: rein's commands, then the user's commands and skills with
/// where each comes from.
fn help(catalog: &crate::commands::Catalog) -> String {
    let mut out = String::from("Commands:\n");
    for (name, what) in COMMANDS {
        out.push_str(&format!("  {name:<26} {what}\n"));
    }
    let own: Vec<&crate::commands::Entry> = catalog
        .entries
        .iter()
        .filter(|e| !is_builtin(&e.name))
        .collect();
    if !own.is_empty() {
        out.push_str("Your commands and skills:\n");
        for e in own {
            let shown = match &e.argument_hint {
                Some(hint) => format!("/{} {hint}", e.name),
                None => format!("/{}", e.name),
            };
            let what = e.description.clone().unwrap_or_default();
            out.push_str(&format!("  {shown:<26} {what} ({})\n", e.source.label()));
        }
    }
    out.push_str(
        "Keys: Enter sends; \\ then Enter, or Alt+Enter, starts a new line; Up/Down \
         browse the history; Ctrl+C stops the running turn (twice on an empty prompt: exit); \
         Ctrl+D exits.",
    );
    out
}

/// Runs the interactive loop until the user exits (`None`) or SIGTERM arrives (`Some(143)`).
/// Ctrl+C during a turn stops it (its tools' process groups are killed, each unanswered call
/// gets an interrupted result) and the prompt comes back.
pub async fn run(
    session: &mut Session,
    ctx: &TerminalContext,
    sigint: &mut Signal,
    sigterm: &mut Signal,
) -> Option<i32> {
    let color = color_for(std::io::stdout().is_terminal());
    let mut editor = match LineEditor::spawn(ctx.history.clone(), completion_names(&ctx.catalog)) {
        Ok(e) => e,
        Err(err) => {
            eprintln!("rein: {err}");
            return None;
        }
    };
    let prompt = if color { "\x1b[1m>\x1b[0m " } else { "> " };
    let mut interrupts = 0u32;
    let mut status_line = ctx.status_line.clone();
    let mut status_due = true;
    loop {
        if std::mem::take(&mut status_due)
            && let Some(line) = status_line.as_mut()
            && let Some(text) = line.draw(session, color).await
        {
            println!("{text}");
        }
        let read = tokio::select! {
            read = editor.read(prompt) => read,
            _ = sigterm.recv() => return Some(143),
        };
        let line = match read {
            Read::Eof => return None,
            Read::Interrupted => {
                interrupts += 1;
                if interrupts >= 2 {
                    return None;
                }
                eprintln!("(Ctrl+C again to exit)");
                continue;
            }
            Read::Line(line) => {
                interrupts = 0;
                line
            }
        };
        let text = line.trim();
        if text.is_empty() {
            continue;
        }
        status_due = true;
        // A Ctrl+C pressed while nothing was running (during start-up, between prompts) must
        // not stop the next turn the moment it starts.
        while let Some(Some(())) = sigint.recv().now_or_never() {}
        // A built-in name is rein's command; the user's commands and skills run as prompts.
        let user_command = text
            .strip_prefix('/')
            .and_then(|c| c.split_whitespace().next())
            .is_some_and(|name| !is_builtin(name) && ctx.catalog.find(name).is_some());
        if let Some(command) = text.strip_prefix('/')
            && !command.starts_with('/')
            && !user_command
        {
            session.begin_command();
            let done = tokio::select! {
                done = slash(session, ctx, &mut editor, command, color) => Some(done),
                _ = sigint.recv() => None,
                _ = sigterm.recv() => return Some(143),
            };
            ctx.spinner.stop();
            match done {
                Some(Slash::Exit) => return None,
                Some(Slash::Done) => {}
                None => eprintln!("{}", paint(color, "33", "Interrupted.")),
            }
            continue;
        }
        ctx.spinner.start("Thinking");
        let outcome = tokio::select! {
            outcome = session.run_prompt(&line) => Some(outcome),
            _ = sigint.recv() => None,
            () = ctx.stop_turn.notified() => None,
            _ = sigterm.recv() => {
                ctx.spinner.stop();
                session.interrupted();
                return Some(143);
            }
        };
        ctx.spinner.stop();
        let Some(outcome) = outcome else {
            // The turn's future was dropped: its tools' process groups are gone. As in Claude
            // Code, no hook fires for the stopped calls; the model learns of it next turn.
            session.stopped_by_user();
            eprintln!(
                "{}",
                paint(color, "33", "Interrupted: the turn was stopped.")
            );
            continue;
        };
        match &outcome.end {
            TurnEnd::PromptBlocked { text } => eprintln!("{text}"),
            TurnEnd::ModelFailed(e) => {
                eprintln!(
                    "{}",
                    paint(color, "31", &format!("Error: model request failed: {e}"))
                )
            }
            TurnEnd::MaxTurns => eprintln!("Error: reached max turns"),
            TurnEnd::BudgetReached(usd) => eprintln!("Error: Reached maximum budget (${usd})"),
            TurnEnd::Stopped { reason } => {
                if let Some(r) = reason {
                    eprintln!("{r}");
                }
            }
            TurnEnd::Completed | TurnEnd::Deferred => {}
        }
    }
}

/// Whether `name` (without the `/`) is one of rein's own commands.
fn is_builtin(name: &str) -> bool {
    matches!(name, "quit" | "?")
        || COMMANDS.iter().any(|(c, _)| {
            c.trim_start_matches('/')
                .split_whitespace()
                .next()
                .is_some_and(|n| n == name)
        })
}

/// What Tab completes after a `/` at the start of the line.
pub fn completion_names(catalog: &crate::commands::Catalog) -> Vec<String> {
    let mut names: Vec<String> = COMMANDS
        .iter()
        .filter_map(|(c, _)| c.split_whitespace().next().map(str::to_string))
        .collect();
    names.extend(
        catalog
            .entries
            .iter()
            .filter(|e| !is_builtin(&e.name))
            .map(|e| format!("/{}", e.name)),
    );
    names
}

enum Slash {
    Done,
    Exit,
}

async fn slash(
    session: &mut Session,
    ctx: &TerminalContext,
    editor: &mut LineEditor,
    command: &str,
    color: bool,
) -> Slash {
    let (name, rest) = match command.split_once(char::is_whitespace) {
        Some((n, r)) => (n, r.trim()),
        None => (command, ""),
    };
    match name {
        "exit" | "quit" => return Slash::Exit,
        "help" | "?" => println!("{}", help(&ctx.catalog)),
        "hooks" => hooks_list(ctx),
        "permissions" => {
            println!("Permission mode now: {}", session.permission_mode());
            println!("{}", ctx.permissions);
        }
        // The same switch as the Agent SDK's `set_permission_mode`, under the same rules
        // (bypassPermissions only where starting in it was allowed).
        "mode" if rest.is_empty() => println!("Permission mode: {}", session.permission_mode()),
        "mode" => match session.set_permission_mode(rest) {
            Ok(()) => println!("Permission mode: {}", session.permission_mode()),
            Err(why) => eprintln!("{}", paint(color, "31", &format!("/mode {rest}: {why}"))),
        },
        "clear" => {
            session.clear().await;
            println!(
                "Conversation cleared (new session {}).",
                session.session_id()
            );
        }
        "compact" => {
            let instructions = (!rest.is_empty()).then_some(rest);
            ctx.spinner.start("Compacting");
            let done = session.compact("manual", instructions).await;
            ctx.spinner.stop();
            if let Compacted::Done { .. } = done {
                println!("Conversation compacted.");
            }
        }
        "cost" => println!("{}", cost_text(session)),
        "model" => {
            if rest.is_empty() {
                println!("Model: {}", session.model_name());
            } else if let Err(e) = switch_model(session, ctx, rest).await {
                eprintln!("{}", paint(color, "31", &e));
            } else {
                println!("Model set to {}.", session.model_name());
            }
        }
        "output-style" => output_style(session, ctx, rest, color),
        "resume" => {
            if let Err(e) = resume(session, ctx, editor, rest).await {
                eprintln!("{}", paint(color, "31", &e));
            }
        }
        other => eprintln!(
            "{}",
            paint(
                color,
                "31",
                &format!("Unknown command: /{other} (type /help for the list)")
            )
        ),
    }
    Slash::Done
}

/// `/output-style [NAME]`: lists the styles (the one in use marked), or switches to NAME for
/// the following requests (not written to the settings: `outputStyle` keeps the default).
fn output_style(session: &mut Session, ctx: &TerminalContext, name: &str, color: bool) {
    use crate::agent::output_style::DEFAULT;
    let current = session
        .output_style()
        .map_or(DEFAULT.to_string(), |s| s.name.clone());
    if name.is_empty() {
        println!("Output styles (set one with /output-style NAME, or outputStyle in settings):");
        for style in ctx.styles.names() {
            let mark = if style == current { "*" } else { " " };
            let what = ctx
                .styles
                .find(&style)
                .and_then(|s| s.description.clone())
                .unwrap_or_else(|| {
                    if style == DEFAULT {
                        "rein's own prompt alone".to_string()
                    } else {
                        String::new()
                    }
                });
            println!(" {mark} {style:<24} {what}");
        }
        return;
    }
    let chosen = if name == DEFAULT {
        None
    } else {
        match ctx.styles.find(name) {
            Some(style) => Some(style.clone()),
            None => {
                let text = format!(
                    "No output style is named {name}; the styles are: {}",
                    ctx.styles.names().join(", ")
                );
                eprintln!("{}", paint(color, "31", &text));
                return;
            }
        }
    };
    if session.set_output_style(chosen) {
        println!("Output style set to {name} for this session.");
    } else {
        let text = "--system-prompt gave the whole system prompt; no output style changes it";
        eprintln!("{}", paint(color, "31", text));
    }
}

fn hooks_list(ctx: &TerminalContext) {
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => {
            eprintln!("rein: cannot find the rein binary for /hooks: {e}");
            return;
        }
    };
    let status = std::process::Command::new(exe)
        .arg("hooks")
        .arg("list")
        .args(&ctx.hooks_args)
        .stdin(std::process::Stdio::null())
        .status();
    if let Err(e) = status {
        eprintln!("rein: /hooks: {e}");
    }
    if let Some(summary) = ctx.shadow_log.summary() {
        eprint!("\n{summary}");
    }
}

/// `/model NAME`: builds the model, checks the name with a one-token request (as Claude Code
/// does), then switches (PreModelSwitch may deny it). `Err` is the one line to show.
async fn switch_model(
    session: &mut Session,
    ctx: &TerminalContext,
    name: &str,
) -> Result<(), String> {
    if name.split_whitespace().count() != 1 {
        return Err(format!("/model {name}: give one model name"));
    }
    if name == session.model_name() {
        return Err(format!("Already using {name}."));
    }
    let (Some(models), Some(probe)) = (&ctx.models, &ctx.probe) else {
        return Err(format!(
            "/model {name}: the mock provider has one model; start rein with --provider \
             anthropic|openai to switch models"
        ));
    };
    let (Some(model), Some(check)) = (models(name), probe(name)) else {
        return Err(format!(
            "/model {name}: the provider cannot be set up for this model"
        ));
    };
    ctx.spinner.start("Checking the model");
    let answer = check
        .complete(
            &[crate::model::Message {
                role: crate::model::Role::User,
                content: vec![crate::model::ContentBlock::Text {
                    text: "Hi".to_string(),
                }],
            }],
            &[],
        )
        .await;
    ctx.spinner.stop();
    if let Err(e) = answer {
        return Err(format!(
            "Model {name} is not available from the provider: {e}; still using {}",
            session.model_name()
        ));
    }
    session.switch_model(model, name).await
}

/// `/resume [ID]`: switches to an earlier session of this project (a numbered list to pick
/// from without an id). A bad id is one line and this session goes on.
async fn resume(
    session: &mut Session,
    ctx: &TerminalContext,
    editor: &mut LineEditor,
    id: &str,
) -> Result<(), String> {
    use crate::agent::resume as r;
    let found = if id.is_empty() {
        let sessions: Vec<r::SessionFile> = r::sessions(&ctx.projects_dir, &ctx.project_dir)
            .into_iter()
            .filter(|s| s.id != session.session_id())
            .take(20)
            .collect();
        if sessions.is_empty() {
            return Err(format!(
                "No other sessions of {} to resume.",
                ctx.project_dir.display()
            ));
        }
        println!("Sessions of {} (newest first):", ctx.project_dir.display());
        for (i, s) in sessions.iter().enumerate() {
            let when = s.modified.elapsed().map(ago).unwrap_or_default();
            let prompt = r::first_prompt(&s.path, 60).unwrap_or_else(|| "(no prompt)".to_string());
            println!("  {:>2}. {when:>8}  {prompt}  [{}]", i + 1, s.id);
        }
        let prompt = format!(
            "Resume which session? [1-{}, Enter = cancel] ",
            sessions.len()
        );
        let choice = match editor.read_answer(&prompt).await {
            Read::Line(line) => line.trim().to_string(),
            Read::Interrupted | Read::Eof => String::new(),
        };
        if choice.is_empty() {
            println!("Resume cancelled.");
            return Ok(());
        }
        match choice.parse::<usize>() {
            Ok(n) if (1..=sessions.len()).contains(&n) => sessions[n - 1].clone(),
            _ => {
                return Err(format!(
                    "{choice:?} is not one of 1-{}; resume cancelled",
                    sessions.len()
                ));
            }
        }
    } else {
        if id == session.session_id() {
            return Err(format!("Session {id} is the one in use."));
        }
        match r::find(&ctx.projects_dir, &ctx.project_dir, id) {
            Ok(found) => found,
            Err(_) => return Err(format!("Session {id} was not found.")),
        }
    };
    let loaded = r::load(&found.path).map_err(|e| format!("Cannot resume {}: {e}", found.id))?;
    for notice in &loaded.rebuilt.notices {
        eprintln!("{notice}");
    }
    let count = loaded.rebuilt.messages.len();
    session
        .resume_session(
            found.id.clone(),
            found.path.clone(),
            loaded.rebuilt,
            loaded.facts,
        )
        .await;
    println!("Resumed session {} ({count} messages).", found.id);
    Ok(())
}

/// `/cost`: tokens per model and in total; a cost only where `REIN_PRICES` has the model.
pub fn cost_text(session: &Session) -> String {
    let usage = session.usage();
    let mut out = format!(
        "Tokens this session ({} model requests): {} in ({} cache write, {} cache read), {} out",
        usage.requests,
        usage.total.prompt_tokens(),
        usage.total.cache_creation_input_tokens,
        usage.total.cache_read_input_tokens,
        usage.total.output_tokens
    );
    let mut total = 0.0;
    let mut priced = false;
    for (model, u) in &usage.by_model {
        out.push_str(&format!(
            "\n  {model}: {} in, {} out",
            u.prompt_tokens(),
            u.output_tokens
        ));
        if let Some(cost) = crate::agent::cost::cost_usd(model, u) {
            out.push_str(&format!(" — ${cost:.4}"));
            total += cost;
            priced = true;
        }
    }
    if priced {
        out.push_str(&format!("\nCost: ${total:.4} (prices from REIN_PRICES)"));
    } else {
        out.push_str("\nNo cost shown: no prices configured (set REIN_PRICES).");
    }
    if usage.unreported > 0 {
        out.push_str(&format!(
            "\n{} requests reported no usage and are not counted.",
            usage.unreported
        ));
    }
    if let Some(context) = usage.context_tokens {
        out.push_str(&format!("\nContext now: {context} tokens"));
    }
    out
}
