//! Which session a run is: new, `--continue`, `--resume ID`, `--fork-session`, `--session-id`;
//! its transcript path and the history it goes on from.

use super::*;

/// Where session `id` of `project_dir` keeps its transcript under `projects`.
pub(super) fn session_transcript(projects: &Path, project_dir: &Path, id: &str) -> PathBuf {
    projects
        .join(encode_cwd(&project_dir.to_string_lossy()))
        .join(format!("{id}.jsonl"))
}

/// Which session runs: a new one, or an earlier one resumed (under its own id, or forked
/// under a new one).
pub(super) struct SessionPlan {
    pub(super) id: String,
    pub(super) resumed: Option<crate::agent::resume::Rebuilt>,
    /// `--fork-session`: the resumed conversation goes on under a new id (SessionStart `fork`).
    pub(super) forked: bool,
    /// About the resumed conversation, for SessionStart `resume` / `fork`.
    pub(super) facts: crate::agent::session::ResumeFacts,
}

/// Resolves `--continue`, `--resume [ID]`, `--session-id`, `--fork-session`. A resumed session
/// keeps its transcript (a torn last line is cut off first, with a notice); a fork copies the
/// complete lines into the new session's transcript.
pub(super) fn plan_session(
    args: &RunArgs,
    projects: &Path,
    project_dir: &Path,
    interactive: bool,
) -> Result<SessionPlan, SetupError> {
    use crate::agent::resume;
    if let Some(id) = &args.session_id
        && !resume::is_uuid(id)
    {
        return Err(setup_error(
            format!("--session-id {id:?}: not a valid UUID"),
            EXIT_USAGE,
        ));
    }
    let wants_resume = args.continue_session || args.resume.is_some();
    if wants_resume && args.session_id.is_some() && !args.fork_session {
        return Err(setup_error(
            "--session-id with --continue or --resume also needs --fork-session",
            EXIT_USAGE,
        ));
    }
    let found = if args.continue_session {
        Some(
            resume::latest(projects, project_dir)
                .map_err(|e| setup_error(e.to_string(), EXIT_ERROR))?,
        )
    } else {
        match args.resume.as_deref() {
            None => None,
            Some("") if interactive => Some(pick_session(projects, project_dir)?),
            Some("") => {
                return Err(setup_error(
                    "--resume without a session id needs a terminal to pick one from; give                      the id (`rein -r <ID>`) or use --continue",
                    EXIT_USAGE,
                ));
            }
            Some(id) => Some(
                resume::find(projects, project_dir, id)
                    .map_err(|e| setup_error(e.to_string(), EXIT_ERROR))?,
            ),
        }
    };
    let new_id = args.session_id.clone().unwrap_or_else(uuid_v4);
    let Some(found) = found else {
        if args.no_session_persistence {
            return Ok(SessionPlan {
                id: new_id,
                resumed: None,
                forked: false,
                facts: Default::default(),
            });
        }
        if session_transcript(projects, project_dir, &new_id).exists() {
            return Err(setup_error(
                format!(
                    "Session ID {new_id} is already in use (use --resume {new_id} to continue it)"
                ),
                EXIT_USAGE,
            ));
        }
        return Ok(SessionPlan {
            id: new_id,
            resumed: None,
            forked: false,
            facts: Default::default(),
        });
    };
    let bytes = std::fs::read(&found.path).map_err(|e| {
        setup_error(
            format!("cannot read the transcript {}: {e}", found.path.display()),
            EXIT_ERROR,
        )
    })?;
    let rebuilt = resume::rebuild_bytes(&found.path, &bytes);
    for notice in &rebuilt.notices {
        eprintln!("{notice}");
    }
    let complete = bytes.get(..rebuilt.complete_len as usize).unwrap_or(&bytes);
    let facts = resume::last_reply_facts(complete, std::time::SystemTime::now());
    if args.fork_session {
        let target = session_transcript(projects, project_dir, &new_id);
        if target.exists() {
            return Err(setup_error(
                format!("Session ID {new_id} is already in use"),
                EXIT_USAGE,
            ));
        }
        if !args.no_session_persistence {
            let written = target
                .parent()
                .map_or(Ok(()), crate::private_fs::create_dir_all)
                .and_then(|()| crate::private_fs::write(&target, &under_new_id(complete, &new_id)));
            written.map_err(|e| {
                setup_error(
                    format!(
                        "cannot write the forked transcript {}: {e}",
                        target.display()
                    ),
                    EXIT_ERROR,
                )
            })?;
        }
        return Ok(SessionPlan {
            id: new_id,
            resumed: Some(rebuilt),
            forked: true,
            facts,
        });
    }
    if complete.len() < bytes.len() && !args.no_session_persistence {
        // Why: new lines are appended to this file; glued onto the torn tail they would be
        // unreadable too.
        let cut = std::fs::OpenOptions::new()
            .write(true)
            .open(&found.path)
            .and_then(|f| f.set_len(rebuilt.complete_len));
        if let Err(e) = cut {
            return Err(setup_error(
                format!(
                    "cannot cut the partial last line off {}: {e}",
                    found.path.display()
                ),
                EXIT_ERROR,
            ));
        }
    }
    Ok(SessionPlan {
        id: found.id,
        resumed: Some(rebuilt),
        forked: false,
        facts,
    })
}

/// The lines of a forked transcript, each entry's `sessionId` set to the fork's id as Claude
/// Code 2.1.328 writes them (uuids and the chain stay; fixture
/// `tests/fixtures/cc-2.1.328/interactive/README.md`, "fork"). A line that is not a JSON
/// object is copied as it is.
pub(super) fn under_new_id(complete: &[u8], new_id: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(complete.len());
    for line in complete.split_inclusive(|&b| b == b'\n') {
        let body = line.strip_suffix(b"\n").unwrap_or(line);
        match serde_json::from_slice::<serde_json::Value>(body) {
            Ok(serde_json::Value::Object(mut entry)) if entry.contains_key("sessionId") => {
                entry.insert("sessionId".into(), serde_json::Value::from(new_id));
                match serde_json::to_vec(&entry) {
                    Ok(bytes) => out.extend_from_slice(&bytes),
                    Err(_) => out.extend_from_slice(body),
                }
                if body.len() < line.len() {
                    out.push(b'\n');
                }
            }
            _ => out.extend_from_slice(line),
        }
    }
    out
}

/// `rein --resume` on a terminal: lists the project's latest sessions and reads a number.
pub(super) fn pick_session(
    projects: &Path,
    project_dir: &Path,
) -> Result<crate::agent::resume::SessionFile, SetupError> {
    use crate::agent::resume;
    let sessions = resume::sessions(projects, project_dir);
    if sessions.is_empty() {
        return Err(setup_error(
            format!("no sessions to resume in {}", project_dir.display()),
            EXIT_ERROR,
        ));
    }
    let shown: Vec<_> = sessions.into_iter().take(20).collect();
    eprintln!("Sessions of {} (newest first):", project_dir.display());
    for (i, s) in shown.iter().enumerate() {
        let ago = s
            .modified
            .elapsed()
            .map(crate::cli::terminal::ago)
            .unwrap_or_default();
        let prompt = resume::first_prompt(&s.path, 60).unwrap_or_else(|| "(no prompt)".into());
        eprintln!("  {:>2}. {ago:>8}  {prompt}  [{}]", i + 1, s.id);
    }
    eprint!("Resume which session? [1-{}, Enter = 1] ", shown.len());
    let mut line = String::new();
    std::io::stdin()
        .read_line(&mut line)
        .map_err(|e| setup_error(format!("cannot read the choice: {e}"), EXIT_ERROR))?;
    let choice = line.trim();
    let index = if choice.is_empty() {
        0
    } else {
        match choice.parse::<usize>() {
            Ok(n) if (1..=shown.len()).contains(&n) => n - 1,
            _ => {
                return Err(setup_error(
                    format!("{choice:?} is not one of 1-{}", shown.len()),
                    EXIT_USAGE,
                ));
            }
        }
    };
    shown
        .into_iter()
        .nth(index)
        .ok_or_else(|| setup_error("no such session", EXIT_USAGE))
}
