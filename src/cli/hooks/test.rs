//! `rein hooks test`: fires one event through the real dispatcher with a sample or given input and
//! prints each handler's run and the merged outcome (exit 3 when the outcome blocks).

use super::*;

pub(super) fn environment(ctx: &Context, sim: &Simulated) -> HookEnvironment {
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
pub(super) fn run_log_path(session_id: &str) -> PathBuf {
    rein_home().join("logs").join(format!("{session_id}.jsonl"))
}

pub(super) fn status_text(run: &HandlerRun, timeout: f64) -> String {
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

pub(super) fn outcome_text(outcome: &OutcomeKind) -> String {
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
pub(super) fn capped(text: &str) -> String {
    if text.chars().count() <= DISPLAY_CAP {
        return text.to_string();
    }
    let head: String = text.chars().take(DISPLAY_CAP).collect();
    format!("{head}… [{} more bytes not shown]", text.len() - head.len())
}

pub(super) fn indent_block(text: &str, pad: &str) -> String {
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

pub(super) fn handler_index(settings: &Settings, run: &HandlerRun) -> Option<usize> {
    settings
        .handlers
        .iter()
        .position(|h| h.origin == run.origin)
}

pub(super) fn run_status_json(run: &HandlerRun) -> Value {
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

pub(super) fn test(
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
                    "shadow": run.shadow,
                    "would_have": run.withheld,
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
        if let Some(withheld) = &run.withheld {
            out.push_str(&format!(
                "  shadow:  {withheld} (shadow mode: not applied)\n"
            ));
        } else if run.shadow {
            out.push_str("  shadow:  nothing to withhold (shadow mode)\n");
        }
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
pub(super) fn blocked_exit(written: i32, blocks: bool) -> i32 {
    if written == EXIT_OK && blocks {
        EXIT_BLOCKED
    } else {
        written
    }
}
