//! Waiting for a run's background commands at the end of `-p` (Claude Code's ceiling, the notice
//! while waiting, the list of what still runs).

use super::*;

/// How long a `-p` session waits for its background commands after the last turn before it
/// stops them: `CLAUDE_CODE_PRINT_BG_WAIT_CEILING_MS` (Claude Code's variable; `0` = no
/// limit), else Claude Code's 600000 ms.
pub(super) fn background_wait_ceiling() -> Option<Duration> {
    let ms = std::env::var("CLAUDE_CODE_PRINT_BG_WAIT_CEILING_MS")
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|ms| ms.is_finite() && *ms >= 0.0)
        .unwrap_or(BACKGROUND_WAIT_CEILING_MS);
    (ms > 0.0).then(|| Duration::from_secs_f64(ms / 1000.0))
}

/// Claude Code's default for [`background_wait_ceiling`].
pub(super) const BACKGROUND_WAIT_CEILING_MS: f64 = 600_000.0;

/// When the "Waiting for background work" notice is shown (Claude Code's 5 s).
pub(super) const BACKGROUND_WAIT_NOTICE_AFTER: Duration = Duration::from_secs(5);

/// `shell "<description or command, ≤ 60 chars>"` for each command, as Claude Code lists them.
pub(super) fn background_list(tasks: &[Arc<BackgroundTask>]) -> String {
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
pub(super) fn short_duration(d: Duration) -> String {
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
pub(super) async fn follow_background(
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
