//! The interactive terminal: the prompt (a line editor with history and multi-line input),
//! slash commands, Ctrl+C that stops the running turn and comes back to the prompt, and a
//! spinner naming what runs (a hook's `statusMessage`, a tool).

pub mod editor;
pub mod spinner;

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
        "/clear",
        "start the conversation over (SessionEnd/SessionStart with clear)",
    ),
    (
        "/compact [instructions]",
        "summarise the conversation to free context",
    ),
    (
        "/cost",
        "tokens used in this session (and the cost, where prices are configured)",
    ),
    ("/model", "the model in use"),
    ("/resume", "list this project's sessions to resume"),
    (
        "/exit",
        "end the session (also /quit, Ctrl+D, Ctrl+C twice)",
    ),
];

/// Help text shown by `/help`.
fn help() -> String {
    let mut out = String::from("Commands:\n");
    for (name, what) in COMMANDS {
        out.push_str(&format!("  {name:<26} {what}\n"));
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
    let mut editor = match LineEditor::spawn(ctx.history.clone()) {
        Ok(e) => e,
        Err(err) => {
            eprintln!("rein: {err}");
            return None;
        }
    };
    let prompt = if color { "\x1b[1m>\x1b[0m " } else { "> " };
    let mut interrupts = 0u32;
    loop {
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
        // A Ctrl+C pressed while nothing was running (during start-up, between prompts) must
        // not stop the next turn the moment it starts.
        while let Some(Some(())) = sigint.recv().now_or_never() {}
        if let Some(command) = text.strip_prefix('/')
            && !command.starts_with('/')
        {
            let done = tokio::select! {
                done = slash(session, ctx, command, color) => Some(done),
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
            _ = sigterm.recv() => {
                ctx.spinner.stop();
                session.interrupted();
                return Some(143);
            }
        };
        ctx.spinner.stop();
        let Some(outcome) = outcome else {
            // The turn's future was dropped: its tools' process groups are gone.
            session.interrupted();
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
            TurnEnd::Stopped { reason } => {
                if let Some(r) = reason {
                    eprintln!("{r}");
                }
            }
            TurnEnd::Completed | TurnEnd::Deferred => {}
        }
    }
}

enum Slash {
    Done,
    Exit,
}

async fn slash(session: &mut Session, ctx: &TerminalContext, command: &str, color: bool) -> Slash {
    let (name, rest) = match command.split_once(char::is_whitespace) {
        Some((n, r)) => (n, r.trim()),
        None => (command, ""),
    };
    match name {
        "exit" | "quit" => return Slash::Exit,
        "help" | "?" => println!("{}", help()),
        "hooks" => hooks_list(ctx),
        "permissions" => println!("{}", ctx.permissions),
        "clear" => {
            session.clear().await;
            println!("Conversation cleared.");
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
            } else {
                eprintln!(
                    "{}",
                    paint(
                        color,
                        "31",
                        "/model cannot switch models inside a session yet; start rein with \
                         --model NAME (and --continue to keep this conversation)"
                    )
                );
            }
        }
        "resume" => resume_list(ctx),
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
}

fn resume_list(ctx: &TerminalContext) {
    let sessions = crate::agent::resume::sessions(&ctx.projects_dir, &ctx.project_dir);
    if sessions.is_empty() {
        println!("No sessions of {} yet.", ctx.project_dir.display());
        return;
    }
    println!(
        "Sessions of {} (newest first); resume one with `rein -r ID`:",
        ctx.project_dir.display()
    );
    for s in sessions.iter().take(20) {
        let when = s.modified.elapsed().map(ago).unwrap_or_default();
        let prompt = crate::agent::resume::first_prompt(&s.path, 60)
            .unwrap_or_else(|| "(no prompt)".to_string());
        println!("  {}  {when:>8}  {prompt}", s.id);
    }
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
