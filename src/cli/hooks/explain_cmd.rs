//! `rein hooks explain`: which handlers a firing selects and why the others do not.

use super::*;

pub(super) fn explain_cmd(
    ctx: Context,
    firing: &FiringArgs,
    as_json: bool,
) -> Result<i32, CliError> {
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
