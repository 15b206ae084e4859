//! `rein hooks replay TRANSCRIPT…`: what the current hooks and permission rules would decide
//! about the calls, prompts and stops of past sessions, next to what happened then. No tool
//! and no model runs; the hooks do run, as configured (`--dry-hooks` lists them instead).
//!
//! Reading is streamed ([`reader`]), judging goes through the session's own tool pipeline
//! ([`judge`]); this module finds the files, prints each judged event and the summary.

use std::collections::BTreeMap;
use std::io::{BufReader, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{CliError, Context, EXIT_BLOCKED, emit, usage};
use crate::cli::{EXIT_ERROR, EXIT_OK};
use crate::hooks::dispatch::{Dispatcher, HookEnvironment};
use crate::hooks::spec::HookEvent;
use crate::permissions::policy::{PermissionPolicy, PolicyPaths};
use crate::pipeline::PolicyGate;

pub(crate) mod judge;
pub(crate) mod reader;

use judge::{Judged, Now, ReplayGate, Replayer};
use reader::{Reader, Then};

/// Options of `rein hooks replay`.
#[derive(Debug, Clone)]
pub(super) struct ReplayOptions {
    pub(super) paths: Vec<String>,
    pub(super) json: bool,
    pub(super) dry_hooks: bool,
    pub(super) permission_mode: Option<String>,
}

/// Per handler: how often it acted, by kind.
#[derive(Debug, Default, Clone)]
struct HandlerTally {
    refused: u64,
    rewrote: u64,
    context: u64,
    shadowed: u64,
}

/// The running totals of a replay.
#[derive(Debug, Default)]
struct Summary {
    files: u64,
    bad_lines: u64,
    calls: u64,
    prompts: u64,
    stops: u64,
    now: BTreeMap<&'static str, u64>,
    rewritten: u64,
    with_context: u64,
    /// Calls that ran then and would now be refused.
    newly_refused: u64,
    /// Calls refused then that would now go ahead.
    newly_allowed: u64,
    by_rules: BTreeMap<&'static str, u64>,
    by_hook: BTreeMap<(String, String), HandlerTally>,
    hook_runs: u64,
}

/// Runs `rein hooks replay`; returns the exit code.
pub(super) fn replay(
    ctx: Context,
    options: &ReplayOptions,
    runtime: &tokio::runtime::Runtime,
) -> Result<i32, CliError> {
    if options.paths.is_empty() {
        return Err(usage(
            "give one or more transcripts: files, directories or globs (e.g. ~/.claude/projects/**/*.jsonl)",
        ));
    }
    let files = expand(&options.paths)?;
    if files.is_empty() {
        return Err(usage(format!(
            "no transcript (*.jsonl) found in {}",
            options.paths.join(", ")
        )));
    }
    let (mode, warnings) = crate::permissions::mode::resolve_mode(
        false,
        options.permission_mode.as_deref(),
        &ctx.settings.permissions,
    )
    .map_err(|e| usage(e.to_string()))?;
    for warning in warnings {
        eprintln!("rein hooks replay: warning: {warning}");
    }
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/"));
    let paths = PolicyPaths {
        cwd: ctx.project_dir.clone(),
        project_dir: ctx.project_dir.clone(),
        home,
        additional_dirs: Vec::new(),
        readable_dirs: Vec::new(),
    };
    let (policy, warnings) =
        PermissionPolicy::from_settings(&ctx.settings.permissions, mode, &[], &[], paths);
    for warning in warnings {
        eprintln!("rein hooks replay: warning: {warning}");
    }
    let session_id = format!("replay-{}", crate::id::uuid_v4());
    let rein_home = crate::agent::transcript::rein_home();
    let env = HookEnvironment {
        project_dir: ctx.project_dir.clone(),
        session_id: session_id.clone(),
        env_file_dir: rein_home.join("session-env").join(&session_id),
        extra_env: ctx.settings.env.clone(),
        run_log: ctx.debug.then(|| super::run_log_path(&session_id)),
        debug: ctx.debug,
        output_dir: None,
        attended: false,
        http_policy: ctx.settings.http_policy.clone(),
        home: None,
    };
    let dispatcher = Arc::new(Dispatcher::new(ctx.settings.handlers.clone(), env));
    let mut replayer = Replayer::new(
        Arc::clone(&dispatcher),
        ReplayGate::new(PolicyGate::new(policy, None)),
        ctx.project_dir.clone(),
        mode.as_str().to_string(),
        options.dry_hooks,
    );
    let progress = std::io::stderr().is_terminal() && !ctx.debug;
    let mut summary = Summary::default();
    let mut refused_any = false;
    let mut out = std::io::stdout().lock();
    let mut write_failed = None;
    let mut last_progress = Instant::now();
    for file in &files {
        summary.files += 1;
        let opened = match std::fs::File::open(file) {
            Ok(f) => f,
            Err(e) => {
                eprintln!("rein hooks replay: {}: cannot open: {e}", file.display());
                summary.bad_lines += 1;
                continue;
            }
        };
        let label = file.display().to_string();
        let mut reader = Reader::new(BufReader::with_capacity(256 * 1024, opened), &label);
        let transcript = std::fs::canonicalize(file).unwrap_or_else(|_| file.clone());
        loop {
            let event = reader.next_event();
            for bad in reader.take_bad() {
                summary.bad_lines += 1;
                clear_progress(progress);
                eprintln!("rein hooks replay: {}: {}", bad.loc, bad.message);
            }
            let Some(event) = event else { break };
            let judged = runtime.block_on(replayer.judge(event, &transcript));
            refused_any |= judged.now.refuses();
            tally(&mut summary, &judged);
            let text = if options.json {
                Some(format!("{}\n", judged_json(&judged)))
            } else {
                judged_text(&judged)
            };
            if let Some(text) = text {
                clear_progress(progress);
                if let Err(e) = out.write_all(text.as_bytes()) {
                    write_failed = Some(e);
                    break;
                }
            }
            if progress && last_progress.elapsed() > Duration::from_millis(250) {
                last_progress = Instant::now();
                eprint!(
                    "\r\x1b[Kreplaying {label}: {} calls, {} MiB read",
                    summary.calls,
                    reader.bytes / (1024 * 1024)
                );
            }
        }
        if write_failed.is_some() {
            break;
        }
    }
    clear_progress(progress);
    runtime.block_on(dispatcher.shutdown());
    if let Some(e) = write_failed {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            return Ok(EXIT_OK);
        }
        eprintln!("rein hooks replay: cannot write to stdout: {e}");
        return Ok(EXIT_ERROR);
    }
    drop(out);
    let written = if options.json {
        emit(&format!("{}\n", json!({"summary": summary_json(&summary)})))
    } else {
        emit(&summary_text(&summary, options.dry_hooks))
    };
    Ok(if written == EXIT_OK && refused_any {
        EXIT_BLOCKED
    } else {
        written
    })
}

fn clear_progress(on: bool) {
    if on {
        eprint!("\r\x1b[K");
    }
}

/// The transcripts named by `args`: files as given, directories searched for `*.jsonl`, globs
/// (`*`, `?`, `[`, `**`) matched under their literal leading directories. Sorted, each once.
fn expand(args: &[String]) -> Result<Vec<PathBuf>, CliError> {
    let mut out = Vec::new();
    for arg in args {
        let path = Path::new(arg);
        if arg.contains(['*', '?', '[']) {
            let glob = globset::GlobBuilder::new(arg)
                .literal_separator(true)
                .build()
                .map_err(|e| usage(format!("{arg}: not a valid glob: {e}")))?
                .compile_matcher();
            let root: PathBuf = path
                .components()
                .take_while(|c| !c.as_os_str().to_string_lossy().contains(['*', '?', '[']))
                .collect();
            let root = if root.as_os_str().is_empty() {
                PathBuf::from(".")
            } else {
                root
            };
            let before = out.len();
            walk(&root, &mut out, &|p| glob.is_match(p));
            if out.len() == before {
                eprintln!("rein hooks replay: warning: {arg} matches no file");
            }
        } else if path.is_dir() {
            walk(path, &mut out, &|p| {
                p.extension().is_some_and(|x| x == "jsonl")
            });
        } else if path.exists() {
            out.push(path.to_path_buf());
        } else {
            return Err(usage(format!("{arg}: no such file or directory")));
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}

fn walk(root: &Path, out: &mut Vec<PathBuf>, keep: &dyn Fn(&Path) -> bool) {
    let walker = ignore::WalkBuilder::new(root)
        .standard_filters(false)
        .follow_links(false)
        .build();
    for entry in walker.flatten() {
        if entry.file_type().is_some_and(|t| t.is_file()) && keep(entry.path()) {
            out.push(entry.path().to_path_buf());
        }
    }
}

fn then_word(then: &Then) -> &'static str {
    match then {
        Then::Succeeded(_) => "ran",
        Then::Failed(_) => "ran and failed",
        Then::Refused(_) => "refused",
        Then::NoResult => "no result recorded",
    }
}

fn tally(summary: &mut Summary, judged: &Judged) {
    match judged.event {
        HookEvent::PreToolUse => summary.calls += 1,
        HookEvent::UserPromptSubmit => summary.prompts += 1,
        _ => summary.stops += 1,
    }
    summary.hook_runs += judged.hook_runs as u64;
    *summary.now.entry(judged.now.word()).or_default() += 1;
    if judged.rewritten.is_some() {
        summary.rewritten += 1;
    }
    if !judged.context.is_empty() {
        summary.with_context += 1;
    }
    if let Some(then) = &judged.then {
        let ran = matches!(then, Then::Succeeded(_) | Then::Failed(_));
        if ran && judged.now.refuses() {
            summary.newly_refused += 1;
        }
        if matches!(then, Then::Refused(_)) && matches!(judged.now, Now::Allow) {
            summary.newly_allowed += 1;
        }
    }
    let refusing = |did: &str| {
        ["blocked", "deny", "ask", "defer"]
            .iter()
            .any(|w| did.contains(&format!("{w}:")) || did.ends_with(w))
    };
    let mut a_hook_refused = false;
    for actor in &judged.actors {
        let entry = summary
            .by_hook
            .entry((actor.origin.clone(), actor.command.clone()))
            .or_default();
        if actor.shadow {
            entry.shadowed += 1;
        } else if refusing(&actor.did) {
            entry.refused += 1;
            a_hook_refused = true;
        } else if actor.did.contains("rewrote") {
            entry.rewrote += 1;
        } else {
            entry.context += 1;
        }
    }
    if judged.now.refuses() && !a_hook_refused && judged.event == HookEvent::PreToolUse {
        *summary.by_rules.entry(judged.now.word()).or_default() += 1;
    }
}

fn compact(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() > 160 {
        let head: String = text.chars().take(160).collect();
        format!("{head}…")
    } else {
        text
    }
}

/// The first non-blank line of `text`, cut at 200 characters.
pub(crate) fn one_line(text: &str) -> String {
    let line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    if line.chars().count() > 200 {
        let head: String = line.chars().take(200).collect();
        format!("{head}…")
    } else {
        line.to_string()
    }
}

/// The text of one judged event; `None` for a prompt or stop no hook took part in.
fn judged_text(j: &Judged) -> Option<String> {
    let quiet = j.event != HookEvent::PreToolUse
        && j.hook_runs == 0
        && j.would_run.is_empty()
        && matches!(j.now, Now::Allow | Now::Unjudged);
    if quiet {
        return None;
    }
    let mut out = match (&j.tool, &j.input) {
        (Some(tool), Some(input)) => format!("{}  {tool} {}\n", j.loc, compact(input)),
        _ => format!("{}  {}\n", j.loc, j.event),
    };
    let then = j
        .then
        .as_ref()
        .map(|t| format!("then: {} · ", then_word(t)))
        .unwrap_or_default();
    let now = j.now.word().to_uppercase();
    match &j.reason {
        Some(reason) => out.push_str(&format!("    {then}now: {now} — {}\n", one_line(reason))),
        None => out.push_str(&format!("    {then}now: {now}\n")),
    }
    if let Some(rules) = &j.rules {
        out.push_str(&format!("    rules: {}\n", one_line(rules)));
    }
    if let Some(input) = &j.rewritten {
        out.push_str(&format!("    rewritten to: {}\n", compact(input)));
    }
    for text in &j.context {
        out.push_str(&format!("    context: {}\n", one_line(text)));
    }
    for actor in &j.actors {
        out.push_str(&format!(
            "    by {} {} ({})\n",
            actor.origin,
            one_line(&actor.command),
            actor.did
        ));
    }
    for handler in &j.would_run {
        out.push_str(&format!("    would run: {}\n", one_line(handler)));
    }
    Some(out)
}

fn judged_json(j: &Judged) -> Value {
    let (then, then_text) = match &j.then {
        Some(Then::Succeeded(t)) => (Some("ran"), Some(t.clone())),
        Some(Then::Failed(t)) => (Some("failed"), Some(t.clone())),
        Some(Then::Refused(t)) => (Some("refused"), Some(t.clone())),
        Some(Then::NoResult) => (Some("no_result"), None),
        None => (None, None),
    };
    json!({
        "file": j.loc.file.as_ref(),
        "line": j.loc.line,
        "event": j.event.as_str(),
        "tool": j.tool,
        "tool_use_id": j.tool_use_id,
        "input": j.input,
        "then": then,
        "then_text": then_text.map(|t| one_line(&t)),
        "now": match j.now { Now::Unjudged => "unjudged", other => other.word() },
        "refused": j.now.refuses(),
        "reason": j.reason,
        "rules": j.rules,
        "rewritten_input": j.rewritten,
        "context": j.context,
        "hook_runs": j.hook_runs,
        "by": j.actors.iter().map(|a| json!({
            "origin": a.origin, "command": a.command, "did": a.did, "shadow": a.shadow,
        })).collect::<Vec<_>>(),
        "would_run": j.would_run,
    })
}

fn summary_json(s: &Summary) -> Value {
    json!({
        "files": s.files,
        "bad_lines": s.bad_lines,
        "calls": s.calls,
        "prompts": s.prompts,
        "stops": s.stops,
        "hook_runs": s.hook_runs,
        "now": s.now,
        "rewritten": s.rewritten,
        "with_context": s.with_context,
        "newly_refused": s.newly_refused,
        "newly_allowed": s.newly_allowed,
        "by_rules": s.by_rules,
        "by_hook": s.by_hook.iter().map(|((origin, command), t)| json!({
            "origin": origin, "command": command, "refused": t.refused,
            "rewrote": t.rewrote, "context": t.context, "shadowed": t.shadowed,
        })).collect::<Vec<_>>(),
    })
}

fn count(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn summary_text(s: &Summary, dry: bool) -> String {
    let mut out = String::new();
    out.push_str(&format!(
        "\nReplayed {}: {}, {}, {}; {}{}.\n",
        count(s.files, "transcript", "transcripts"),
        count(s.calls, "call", "calls"),
        count(s.prompts, "prompt", "prompts"),
        count(s.stops, "stop", "stops"),
        count(s.hook_runs, "hook run", "hook runs"),
        if s.bad_lines > 0 {
            format!(
                " ({} skipped)",
                count(s.bad_lines, "unreadable line", "unreadable lines")
            )
        } else {
            String::new()
        }
    ));
    if dry {
        out.push_str("--dry-hooks: no hook ran; only the permission rules were judged.\n");
    }
    let n = |w: &str| s.now.get(w).copied().unwrap_or(0);
    out.push_str(&format!(
        "Now: {} would be denied, {} asked, {} deferred, {} rewritten; {} blocked (prompts and stops); {} given context.\n",
        n("deny"),
        n("ask"),
        n("defer"),
        s.rewritten,
        n("block"),
        s.with_context,
    ));
    out.push_str(&format!(
        "Compared with then: {} would now be refused; {} would now run.\n",
        count(s.newly_refused, "call that ran", "calls that ran"),
        count(
            s.newly_allowed,
            "call that was refused",
            "calls that were refused"
        ),
    ));
    if !s.by_rules.is_empty() {
        let parts: Vec<String> = s.by_rules.iter().map(|(w, c)| format!("{c} {w}")).collect();
        out.push_str(&format!(
            "By the permission rules and mode: {}.\n",
            parts.join(", ")
        ));
    }
    if !s.by_hook.is_empty() {
        out.push_str("By hook:\n");
        out.push_str("  refused rewrote context shadowed  handler\n");
        for ((origin, command), t) in &s.by_hook {
            out.push_str(&format!(
                "  {:>7} {:>7} {:>7} {:>8}  {origin} {}\n",
                t.refused,
                t.rewrote,
                t.context,
                t.shadowed,
                one_line(command)
            ));
        }
    }
    out
}
