//! `rein hooks list`: each configured handler with its source, matcher, timeout and whether it
//! would run in this folder.

use super::*;

/// The handler's command as shown (exec form: command and args joined by spaces).
pub(super) fn handler_text(h: &ConfiguredHandler) -> String {
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

pub(super) fn on_failure_text(h: &ConfiguredHandler) -> &'static str {
    match h.on_failure {
        OnFailure::Continue => "continue",
        OnFailure::Block => "block",
    }
}

pub(super) fn is_async(h: &ConfiguredHandler) -> bool {
    match &h.kind {
        HandlerKind::Command(c) => c.is_async,
        HandlerKind::Http(_)
        | HandlerKind::Prompt(_)
        | HandlerKind::Agent(_)
        | HandlerKind::McpTool(_) => false,
    }
}

/// `applied`, `absent`, or `not applied: <the first error in it>`.
pub(super) fn file_status(
    settings: &Settings,
    path: &Path,
    applied: bool,
) -> (String, Option<String>) {
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

pub(super) fn lint_ctx(ctx: &Context) -> LintContext<'_> {
    LintContext {
        project_dir: &ctx.project_dir,
        home: &ctx.home,
        settings_env: &ctx.settings.env,
        http_policy: &ctx.settings.http_policy,
        mcp_servers: Some(&ctx.mcp_servers),
    }
}

pub(super) fn list(ctx: &Context, as_json: bool) -> i32 {
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
    if !settings.plugins.is_empty() {
        out.push_str("\nPlugins (their hooks run after every settings hook):\n");
        for p in &settings.plugins {
            let by = match &p.enabled_by {
                crate::settings::plugins::EnabledBy::Flag => "--plugin-dir".to_string(),
                crate::settings::plugins::EnabledBy::Setting(at) => {
                    format!("enabledPlugins at {at}")
                }
            };
            out.push_str(&format!(
                "  {:<24} {}  {} hook(s); enabled by {by}\n",
                p.reference.id,
                p.reference.root.display(),
                p.hooks
            ));
        }
    }
    if let Some((spec, at, _)) = &settings.status_line {
        out.push_str(&format!(
            "\nStatus line (the terminal runs it before each prompt): `{}`  ({at})\n",
            spec.command
        ));
    }
    out.push('\n');
    if statuses.is_empty() {
        out.push_str("No hooks configured.\n");
        return emit(&out);
    }
    out.push_str(
        "Handlers (effective order: user, project, local, --settings, managed, plugins):\n",
    );
    let lint = lint_ctx(ctx);
    for st in &statuses {
        let h = st.handler;
        out.push('\n');
        let from = match &h.origin.plugin {
            Some(plugin) => format!("plugin {}", plugin.id),
            None => format!("{} settings", h.origin.source.as_str()),
        };
        out.push_str(&format!(
            "#{} {}  {} ({from})\n",
            st.index + 1,
            h.origin.event_key,
            h.origin.location,
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
        if let Some(warm) = warm_text(ctx, h) {
            out.push_str(&format!("    warm    {warm}\n"));
        }
        if h.shadow {
            out.push_str(
                "    SHADOW: runs and is recorded; a refusal, rewrite or context it gives is not applied\n",
            );
        }
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

pub(super) fn list_json(ctx: &Context, statuses: &[HandlerStatus<'_>]) -> Value {
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
                "source": if h.origin.plugin.is_some() { "plugin" } else { h.origin.source.as_str() },
                "plugin": h.origin.plugin.as_ref().map(|p| p.id.clone()),
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
                "shadow": h.shadow,
                "warm": warm_of(ctx, h).map(|w| w.is_ok()),
                "warm_reason": warm_of(ctx, h).and_then(|w| w.err()),
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
        "status_line": settings.status_line.as_ref().map(|(spec, at, source)| json!({
            "command": spec.command,
            "padding": spec.padding,
            "source": source.as_str(),
            "file": at.file.to_string(),
            "line": at.line,
            "col": at.col,
        })),
        "diagnostics": settings.diagnostics.iter().map(diagnostic_json).collect::<Vec<_>>(),
    })
}

pub(super) fn diagnostic_json(d: &Diagnostic) -> Value {
    json!({
        "severity": match d.severity { Severity::Error => "error", Severity::Warning => "warning", Severity::Note => "note" },
        "file": d.location.file.to_string(),
        "line": d.location.line,
        "col": d.location.col,
        "message": d.message,
    })
}

/// Whether a command handler runs warm (`Ok(interpreter)`) or why not; `None` for other types.
fn warm_of(ctx: &Context, h: &ConfiguredHandler) -> Option<Result<&'static str, String>> {
    let HandlerKind::Command(c) = &h.kind else {
        return None;
    };
    Some(if crate::hooks::warm::disabled_by_env() {
        Err("REIN_WARM_HOOKS turns warm hooks off for this run".to_string())
    } else if !h.warm {
        Err("\"warm\": false (or \"warmHooks\": false) in the settings".to_string())
    } else if c.args.is_some() {
        Err("exec form (\"args\") runs cold".to_string())
    } else if c.is_async || c.async_rewake {
        Err("async hooks run cold".to_string())
    } else {
        let project = ctx.project_dir.to_string_lossy();
        let path = ctx
            .settings
            .env
            .iter()
            .rev()
            .find(|(k, _)| k == "PATH")
            .map(|(_, v)| v.clone())
            .or_else(|| std::env::var("PATH").ok())
            .unwrap_or_default();
        match crate::hooks::warm::eligibility(&c.command, &project, &ctx.project_dir, &path) {
            crate::hooks::warm::Warmth::Warm(i) => Ok(i.name()),
            crate::hooks::warm::Warmth::Cold(why) => Err(why),
        }
    })
}

fn warm_text(ctx: &Context, h: &ConfiguredHandler) -> Option<String> {
    Some(match warm_of(ctx, h)? {
        Ok(name) => format!("yes ({name}: its interpreter is started before the hook fires)"),
        Err(why) => format!("no: {why}"),
    })
}
