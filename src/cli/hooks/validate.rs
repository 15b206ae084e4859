//! `rein hooks validate`, `trust` and `revoke`: every problem in the settings files, and the
//! folder's trust state.

use super::*;

/// Every problem: the loader's diagnostics and the script checks, in file order.
pub(super) fn all_diagnostics(ctx: &Context) -> Vec<Diagnostic> {
    let settings = &ctx.settings;
    let mut diags = settings.diagnostics.clone();
    let lint = lint_ctx(ctx);
    for h in &settings.handlers {
        diags.extend(lint_handler(h, lint));
    }
    // Commands and skills: a file that cannot be read is skipped at run time; an
    // `allowed-tools` rule that does not parse allows nothing.
    let catalog = crate::cli::catalog_for(settings, &ctx.project_dir);
    for e in &catalog.errors {
        let what = if e.kind == crate::commands::Kind::Skill {
            "skill"
        } else {
            "command"
        };
        diags.push(Diagnostic::error_at(
            &e.path,
            e.line,
            format!("{}; this {what} is skipped", e.message),
        ));
    }
    diags.extend(crate::cli::output_style_for(settings, &ctx.project_dir).2);
    let home = std::env::var_os("HOME")
        .map(std::path::PathBuf::from)
        .unwrap_or_default();
    let (_, agent_errors) = crate::agent::subagent::discover(
        &home,
        &ctx.project_dir,
        &crate::cli::plugin_agent_dirs(&settings.plugins),
        None,
    );
    for e in agent_errors {
        diags.push(Diagnostic::error_at(
            &e.path,
            e.line,
            format!("{}; this agent is skipped", e.message),
        ));
    }
    for entry in &catalog.entries {
        for rule in &entry.allowed_tools {
            if let Err(why) = crate::permissions::rule::Rule::parse(rule) {
                diags.push(Diagnostic {
                    severity: Severity::Warning,
                    location: crate::settings::schema::Location {
                        file: std::sync::Arc::from(entry.path.display().to_string()),
                        line: 1,
                        col: 1,
                    },
                    message: format!("allowed-tools: {why}; it allows nothing"),
                });
            }
        }
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

pub(super) fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

pub(super) fn trust_state(project_dir: &Path) -> TrustState {
    crate::settings::trust::state(&crate::agent::transcript::rein_home(), project_dir)
}

/// The trust line of `validate`: (JSON value, text).
pub(super) fn trust_summary(project_dir: &Path) -> (Value, String) {
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

pub(super) fn revoke_cmd(ctx: &Context, as_json: bool) -> Result<i32, CliError> {
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

pub(super) fn trust_cmd(ctx: &Context, as_json: bool) -> Result<i32, CliError> {
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

pub(super) fn validate(ctx: &Context, strict: bool, as_json: bool) -> i32 {
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
