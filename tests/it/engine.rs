//! rein as a library, through the public API only: the seed demo example, typed in-process hooks
//! registered on a running session, and matchers that are refused instead of silently ignored.

use std::path::PathBuf;
use std::process::Command;

use rein::Engine;
use rein::events::{PreToolUse, Stop};
use rein::{HookReply, MatcherError};

use crate::harness::Sandbox;

/// The example binaries `cargo test` builds beside the test binary
/// (`target/<profile>/examples/`).
fn example(name: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let profile_dir = exe.parent().and_then(|deps| deps.parent()).unwrap();
    profile_dir.join("examples").join(name)
}

#[test]
fn the_seed_demo_example_runs_offline_and_every_scenario_ends_as_described() {
    let path = example("seed_demo");
    assert!(
        path.exists(),
        "{} missing: cargo test builds examples",
        path.display()
    );
    let sandbox = Sandbox::new("project", &[]);
    let out = Command::new(&path)
        .env("HOME", &sandbox.home)
        .env("TMPDIR", &sandbox.root)
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The four scenarios, in order, with what each must show.
    let expected = [
        "1. read a file",
        "rein embeds cleanly",
        "2. a command nobody approved",
        "refused/failed: Permission to use Bash",
        "3. rm -rf, allowed by a rule but denied by the safety hook",
        "refused/failed: PreToolUse:Bash hook error: blocked by the in-process safety hook",
        "scratch/ still exists: true",
        "4. the safety hook unregistered",
        "scratch/ removed: true",
        "all four scenarios ended as described",
    ];
    let mut at = 0;
    for want in expected {
        let found = stdout[at..]
            .find(want)
            .unwrap_or_else(|| panic!("{want:?} not found (in order) in:\n{stdout}"));
        at += found + want.len();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hooks_registered_on_a_running_session_apply_at_the_next_call() {
    let sandbox = Sandbox::new("project", &["project/a", "project/b"]);
    let engine = Engine::builder(&sandbox.project)
        .home(&sandbox.home)
        .read_settings_files(false)
        .allow("Bash(rm -rf a)")
        .allow("Bash(rm -rf b)")
        .build()
        .unwrap();
    let mut session = engine.session();
    session.start().await;

    // Registered after the session started: it guards the next call.
    let guard = engine
        .on::<PreToolUse, _, _>("Bash", |input| async move {
            let command = input.tool_input["command"].as_str().unwrap_or_default();
            if command.starts_with("rm ") {
                PreToolUse::deny("no rm while the guard is on")
            } else {
                HookReply::none()
            }
        })
        .unwrap();
    let denied = session.run_prompt("执行命令 rm -rf a").await;
    assert_eq!(denied.denials.len(), 1, "{denied:?}");
    assert!(sandbox.project.join("a").is_dir(), "the victim survived");

    // Unregistered mid-session: the same kind of call now runs.
    guard.unregister();
    let passed = session.run_prompt("执行命令 rm -rf b").await;
    assert!(passed.denials.is_empty(), "{passed:?}");
    assert!(!sandbox.project.join("b").exists(), "the call ran");
    session.end("other").await;
}

#[test]
fn bad_matchers_are_errors_not_hooks_that_never_fire() {
    let sandbox = Sandbox::new("project", &[]);
    let engine = Engine::builder(&sandbox.project)
        .home(&sandbox.home)
        .read_settings_files(false)
        .build()
        .unwrap();
    let invalid = engine.on::<PreToolUse, _, _>("Bash(", |_| async { HookReply::none() });
    assert!(
        matches!(&invalid, Err(MatcherError::Invalid { matcher, .. }) if matcher == "Bash("),
        "{invalid:?}"
    );
    // Stop has nothing to match: a matcher there would be ignored, so it is refused.
    let ignored = engine.on::<Stop, _, _>("Bash", |_| async { HookReply::none() });
    assert!(
        matches!(ignored, Err(MatcherError::NoTarget { .. })),
        "{ignored:?}"
    );
    let all = engine.on::<Stop, _, _>("*", |_| async { HookReply::none() });
    assert!(all.is_ok());
}

#[test]
fn a_project_dir_that_is_not_utf8_is_refused_by_the_builder() {
    use std::os::unix::ffi::OsStrExt;
    let sandbox = Sandbox::new("proj", &[]);
    let dir = sandbox.root.join(std::ffi::OsStr::from_bytes(b"proj-\xff"));
    std::fs::create_dir_all(&dir).unwrap();
    match Engine::builder(&dir).build() {
        Err(rein::EngineError::ProjectDirNotUtf8 { path }) => {
            assert_eq!(path, dir);
        }
        other => panic!("built: {other:?}"),
    }
}

/// A model of the embedder's own: the parent delegates to the built-in `general-purpose`
/// subagent, which tries `rm -rf victim`, then reports.
struct Delegating;

impl rein::Model for Delegating {
    fn name(&self) -> &str {
        "delegating"
    }

    fn complete<'a>(
        &'a self,
        messages: &'a [rein::Message],
        _tools: &'a [rein::ToolSpec],
    ) -> rein::BoxFuture<'a, Result<rein::ModelResponse, rein::ModelError>> {
        use rein::{ContentBlock, ModelResponse, Role, StopReason};
        let first = format!("{:?}", messages.first());
        let steps = messages
            .iter()
            .filter(|m| m.role == Role::Assistant)
            .count();
        let call = |name: &str, input: serde_json::Value| ContentBlock::ToolUse {
            id: format!("call_{name}_{steps}"),
            name: name.to_string(),
            input,
        };
        let (content, stop_reason) = match (first.contains("LIB-SUB"), steps) {
            (true, 0) => (
                vec![call(
                    "Bash",
                    serde_json::json!({"command": "rm -rf victim"}),
                )],
                StopReason::ToolUse,
            ),
            (true, _) => (
                vec![ContentBlock::Text {
                    text: format!("sub report {steps}"),
                }],
                StopReason::EndTurn,
            ),
            (false, 0) => (
                vec![call(
                    "Agent",
                    serde_json::json!({"description": "clean", "prompt": "LIB-SUB: clean up"}),
                )],
                StopReason::ToolUse,
            ),
            (false, _) => (
                vec![ContentBlock::Text {
                    text: "parent done".to_string(),
                }],
                StopReason::EndTurn,
            ),
        };
        Box::pin(async move {
            Ok(ModelResponse {
                id: None,
                model: "delegating".to_string(),
                content,
                stop_reason,
                usage: None,
            })
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_process_hooks_see_and_govern_a_subagent() {
    use rein::events::{SubagentStop, SubagentStopInput};
    use std::sync::{Arc, Mutex};

    let sandbox = Sandbox::new("project", &["project/victim"]);
    let engine = Engine::builder(&sandbox.project)
        .home(&sandbox.home)
        .read_settings_files(false)
        .permission_mode("acceptEdits")
        .allow("Bash(rm -rf victim)")
        .model(Arc::new(Delegating))
        .build()
        .unwrap();
    // (tool name, agent_type) of every PreToolUse the in-process hook saw.
    type Seen = Vec<(String, Option<String>)>;
    let seen: Arc<Mutex<Seen>> = Arc::default();
    let log = Arc::clone(&seen);
    let _guard = engine
        .on::<PreToolUse, _, _>("*", move |input| {
            let log = Arc::clone(&log);
            async move {
                log.lock()
                    .unwrap()
                    .push((input.tool_name.clone(), input.base.agent_type.clone()));
                if input.base.agent_id.is_some() && input.tool_name == "Bash" {
                    PreToolUse::deny("subagents may not delete")
                } else {
                    HookReply::none()
                }
            }
        })
        .unwrap();
    let stops: Arc<Mutex<Vec<SubagentStopInput>>> = Arc::default();
    let stop_log = Arc::clone(&stops);
    let _stop = engine
        .on::<SubagentStop, _, _>("general-purpose", move |input| {
            let stop_log = Arc::clone(&stop_log);
            async move {
                let first = !input.stop_hook_active;
                stop_log.lock().unwrap().push(input);
                if first {
                    HookReply::block("look again")
                } else {
                    HookReply::none()
                }
            }
        })
        .unwrap();
    let outcome = engine.run("go").await;
    assert_eq!(outcome.result, "parent done", "{outcome:?}");
    assert!(
        sandbox.project.join("victim").is_dir(),
        "the subagent's rm ran"
    );
    let seen = seen.lock().unwrap().clone();
    assert_eq!(
        seen,
        [
            ("Agent".to_string(), None),
            ("Bash".to_string(), Some("general-purpose".to_string()))
        ]
    );
    let stops = stops.lock().unwrap();
    assert_eq!(stops.len(), 2);
    assert_eq!(
        stops[0].last_assistant_message.as_deref(),
        Some("sub report 1")
    );
    assert!(stops[1].stop_hook_active);
    assert_eq!(
        stops[1].last_assistant_message.as_deref(),
        Some("sub report 2")
    );
}

/// The library follows folder trust: a project file's allow rule applies only with
/// `trust_project(true)` (or a recorded trust).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn project_allow_rules_apply_only_in_a_trusted_folder() {
    for trusted in [false, true] {
        let sandbox = Sandbox::new("project", &["project/.claude", "project/victim"]);
        sandbox.settings(serde_json::json!({"permissions": {"allow": ["Bash(rm -rf victim)"]}}));
        let engine = Engine::builder(&sandbox.project)
            .home(&sandbox.home)
            .trust_project(trusted)
            .build()
            .unwrap();
        let mut session = engine.session();
        session.start().await;
        session.run_prompt("执行命令 rm -rf victim").await;
        session.end("other").await;
        assert_eq!(
            sandbox.project.join("victim").is_dir(),
            !trusted,
            "trusted = {trusted}"
        );
    }
}

/// A model that records the system prompt of every request and answers "ok".
#[derive(Default)]
struct Recording {
    systems: std::sync::Mutex<Vec<Option<String>>>,
}

impl rein::Model for Recording {
    fn name(&self) -> &str {
        "recording"
    }

    fn complete<'a>(
        &'a self,
        _messages: &'a [rein::Message],
        _tools: &'a [rein::ToolSpec],
    ) -> rein::BoxFuture<'a, Result<rein::ModelResponse, rein::ModelError>> {
        Box::pin(async move {
            Ok(rein::ModelResponse {
                id: None,
                model: "recording".to_string(),
                content: vec![rein::ContentBlock::Text {
                    text: "ok".to_string(),
                }],
                stop_reason: rein::StopReason::EndTurn,
                usage: None,
            })
        })
    }

    fn respond<'a>(
        &'a self,
        request: rein::Request<'a>,
    ) -> rein::BoxFuture<'a, Result<rein::ModelResponse, rein::ModelError>> {
        self.systems
            .lock()
            .unwrap()
            .push(request.system.map(str::to_string));
        self.complete(request.messages, request.tools)
    }
}

/// The memory files of every kind, one import among them, each with a marker line.
fn memory_sandbox() -> Sandbox {
    let sandbox = Sandbox::new(
        "project",
        &["home/.claude", "project/.claude", "project/docs"],
    );
    let write = |path: PathBuf, text: &str| std::fs::write(path, text).unwrap();
    write(sandbox.home.join(".claude/CLAUDE.md"), "ENG-USER line\n");
    write(
        sandbox.project.join("CLAUDE.md"),
        "ENG-PROJECT line\n@docs/more.md\n",
    );
    write(sandbox.project.join("docs/more.md"), "ENG-IMPORT line\n");
    write(
        sandbox.project.join(".claude/CLAUDE.md"),
        "ENG-DOTCLAUDE line\n",
    );
    write(sandbox.project.join("CLAUDE.local.md"), "ENG-LOCAL line\n");
    sandbox
}

/// The library builds the system prompt as the binary does: rein's prompt, the environment,
/// the memory files in Claude Code's order (an import right after its importer), then the
/// appended text; InstructionsLoaded reaches both a settings command hook and an in-process
/// hook, once per file, with `include` for the import.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_engine_sends_the_system_prompt_and_memory_files_and_announces_them() {
    use rein::events::InstructionsLoaded;
    use std::sync::{Arc, Mutex};

    let sandbox = memory_sandbox();
    let log = sandbox.root.join("il.jsonl");
    let settings = serde_json::json!({"hooks": {"InstructionsLoaded": [{"hooks": [{
        "type": "command",
        "command": format!("cat >> '{}'; echo >> '{}'", log.display(), log.display())
    }]}]}});
    let model = Arc::new(Recording::default());
    let engine = Engine::builder(&sandbox.project)
        .home(&sandbox.home)
        .read_settings_files(false)
        .settings(settings.to_string())
        .append_system_prompt("ENG-APPEND line")
        .model(model.clone())
        .build()
        .unwrap();
    // (file_path, load_reason, parent_file_path) of each InstructionsLoaded.
    type Loaded = Vec<(String, String, Option<String>)>;
    let seen: Arc<Mutex<Loaded>> = Arc::default();
    let seen_log = Arc::clone(&seen);
    let _hook = engine
        .on::<InstructionsLoaded, _, _>("*", move |input| {
            let seen_log = Arc::clone(&seen_log);
            async move {
                seen_log.lock().unwrap().push((
                    input.file_path,
                    input.load_reason,
                    input.parent_file_path,
                ));
                HookReply::none()
            }
        })
        .unwrap();
    let outcome = engine.run("hello").await;
    assert_eq!(outcome.result, "ok", "{outcome:?}");

    let systems = model.systems.lock().unwrap().clone();
    assert_eq!(systems.len(), 1);
    let system = systems[0].clone().expect("a system prompt");
    let project = sandbox.project.canonicalize().unwrap();
    let order = [
        "You are rein".to_string(),
        "# Environment\n".to_string(),
        format!("- Working directory: {}\n", project.display()),
        "- Model: recording".to_string(),
        "ENG-USER line".to_string(),
        "ENG-PROJECT line".to_string(),
        "ENG-IMPORT line".to_string(),
        "ENG-DOTCLAUDE line".to_string(),
        "ENG-LOCAL line".to_string(),
        "ENG-APPEND line".to_string(),
    ];
    let mut at = 0;
    for want in &order {
        let found = system[at..]
            .find(want.as_str())
            .unwrap_or_else(|| panic!("{want:?} not found in order in:\n{system}"));
        at += found + want.len();
    }
    assert!(system.ends_with("ENG-APPEND line"), "{system}");

    let expected = [
        (
            sandbox.home.join(".claude/CLAUDE.md"),
            "session_start",
            None,
        ),
        (project.join("CLAUDE.md"), "session_start", None),
        (
            project.join("docs/more.md"),
            "include",
            Some(project.join("CLAUDE.md")),
        ),
        (project.join(".claude/CLAUDE.md"), "session_start", None),
        (project.join("CLAUDE.local.md"), "session_start", None),
    ]
    .map(|(path, reason, parent)| {
        (
            path.display().to_string(),
            reason.to_string(),
            parent.map(|p: PathBuf| p.display().to_string()),
        )
    });
    assert_eq!(*seen.lock().unwrap(), expected, "in-process hook");
    let from_settings: Loaded = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            assert_eq!(v["hook_event_name"], "InstructionsLoaded");
            (
                v["file_path"].as_str().unwrap().to_string(),
                v["load_reason"].as_str().unwrap().to_string(),
                v["parent_file_path"].as_str().map(str::to_string),
            )
        })
        .collect();
    assert_eq!(from_settings, expected, "settings command hook");
}

/// `system_prompt` replaces rein's prompt; with `memory_files(false)` nothing else is added
/// and no InstructionsLoaded fires.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_engine_takes_a_system_prompt_of_its_own_and_can_leave_memory_files_out() {
    use rein::events::InstructionsLoaded;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    let sandbox = memory_sandbox();
    let model = Arc::new(Recording::default());
    let engine = Engine::builder(&sandbox.project)
        .home(&sandbox.home)
        .read_settings_files(false)
        .system_prompt("ENG-OWN prompt")
        .append_system_prompt("ENG-TAIL")
        .memory_files(false)
        .model(model.clone())
        .build()
        .unwrap();
    let fired = Arc::new(AtomicUsize::new(0));
    let count = Arc::clone(&fired);
    let _hook = engine
        .on::<InstructionsLoaded, _, _>("*", move |_| {
            count.fetch_add(1, Ordering::SeqCst);
            async { HookReply::none() }
        })
        .unwrap();
    engine.run("hello").await;
    let systems = model.systems.lock().unwrap().clone();
    assert_eq!(systems, [Some("ENG-OWN prompt\n\nENG-TAIL".to_string())]);
    assert_eq!(fired.load(Ordering::SeqCst), 0);

    // The same project with memory files on (the default) and the own prompt: prompt first,
    // then the files.
    let model = Arc::new(Recording::default());
    let engine = Engine::builder(&sandbox.project)
        .home(&sandbox.home)
        .read_settings_files(false)
        .system_prompt("ENG-OWN prompt")
        .model(model.clone())
        .build()
        .unwrap();
    engine.run("hello").await;
    let system = model.systems.lock().unwrap()[0].clone().unwrap();
    assert!(
        system.starts_with("ENG-OWN prompt\n\n# Memory files"),
        "{system}"
    );
    assert!(!system.contains("You are rein"));
    assert!(system.contains("ENG-LOCAL line"));
}

/// A model that calls one MCP tool, then answers with what the tool returned; it records the
/// tool names each request offered.
#[derive(Default)]
struct CallsEcho {
    offered: std::sync::Mutex<Vec<Vec<String>>>,
}

impl rein::Model for CallsEcho {
    fn name(&self) -> &str {
        "calls-echo"
    }

    fn complete<'a>(
        &'a self,
        messages: &'a [rein::Message],
        tools: &'a [rein::ToolSpec],
    ) -> rein::BoxFuture<'a, Result<rein::ModelResponse, rein::ModelError>> {
        use rein::{ContentBlock, StopReason};
        self.offered
            .lock()
            .unwrap()
            .push(tools.iter().map(|t| t.name.clone()).collect());
        let result = messages
            .iter()
            .flat_map(|m| &m.content)
            .find_map(|b| match b {
                ContentBlock::ToolResult { content, .. } => Some(content.clone()),
                _ => None,
            });
        let (content, stop_reason) = match result {
            None => (
                vec![ContentBlock::ToolUse {
                    id: "call_echo".to_string(),
                    name: "mcp__everything__echo".to_string(),
                    input: serde_json::json!({"message": "ENG-MCP-PING"}),
                }],
                StopReason::ToolUse,
            ),
            Some(text) => (vec![ContentBlock::Text { text }], StopReason::EndTurn),
        };
        Box::pin(async move {
            Ok(rein::ModelResponse {
                id: None,
                model: "calls-echo".to_string(),
                content,
                stop_reason,
                usage: None,
            })
        })
    }
}

/// Collects notices.
#[derive(Default)]
struct Notices(std::sync::Mutex<Vec<String>>);

impl rein::Observer for Notices {
    fn observe(&self, progress: rein::Progress<'_>) {
        if let rein::Progress::Notice { text } = progress {
            self.0.lock().unwrap().push(text.to_string());
        }
    }
}

/// The library starts the configured MCP servers as the binary does: a `mcp_config` server
/// (the real `server-everything` from npm) is offered to the model, its call passes the hooks
/// (an in-process PostToolUse sees `mcp_server`) and answers; a `.mcp.json` server nobody
/// approved is held, named in a notice, and never started.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_engine_starts_mcp_servers_and_holds_unapproved_project_ones() {
    use rein::events::PostToolUse;
    use std::sync::{Arc, Mutex};

    let sandbox = Sandbox::new("project", &[]);
    let marker = sandbox.root.join("project-server-ran");
    // A project server that would leave a file if it ever ran.
    std::fs::write(
        sandbox.project.join(".mcp.json"),
        serde_json::json!({"mcpServers": {"repo": {
            "command": "/bin/sh",
            "args": ["-c", format!("touch '{}'", marker.display())]
        }}})
        .to_string(),
    )
    .unwrap();
    let everything = serde_json::json!({"mcpServers": {"everything": {
        "command": crate::mcp_servers::everything(), "args": ["stdio"]
    }}});
    let model = Arc::new(CallsEcho::default());
    let notices = Arc::new(Notices::default());
    let engine = Engine::builder(&sandbox.project)
        .home(&sandbox.home)
        .read_settings_files(false)
        .mcp_config(everything.to_string())
        .allow("mcp__everything")
        .model(model.clone())
        .observer(notices.clone())
        .build()
        .unwrap();
    let seen: Arc<Mutex<Vec<(String, serde_json::Value)>>> = Arc::default();
    let log = Arc::clone(&seen);
    let _hook = engine
        .on::<PostToolUse, _, _>("mcp__.*", move |input| {
            let log = Arc::clone(&log);
            async move {
                let server = serde_json::to_value(&input.mcp_server).unwrap();
                log.lock().unwrap().push((input.tool_name.clone(), server));
                HookReply::none()
            }
        })
        .unwrap();

    let outcome = engine.run("echo through mcp").await;
    assert!(
        outcome.result.contains("ENG-MCP-PING"),
        "{outcome:?}\n{:?}",
        notices.0.lock().unwrap()
    );
    let offered = model.offered.lock().unwrap().clone();
    assert!(
        offered[0].iter().any(|t| t == "mcp__everything__echo"),
        "{offered:?}"
    );
    assert!(!offered[0].iter().any(|t| t.starts_with("mcp__repo__")));
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(seen[0].0, "mcp__everything__echo");
    assert_eq!(seen[0].1["name"], "everything", "{seen:?}");

    let servers = engine.mcp_servers();
    assert!(
        servers.contains(&("everything".to_string(), "connected".to_string())),
        "{servers:?}"
    );
    assert!(
        servers.contains(&("repo".to_string(), "pending".to_string())),
        "{servers:?}"
    );
    assert!(
        notices
            .0
            .lock()
            .unwrap()
            .iter()
            .any(|n| n.contains("MCP server \"repo\"") && n.contains("not approved")),
        "{:?}",
        notices.0.lock().unwrap()
    );
    // A second run reuses the running servers.
    let again = engine.run("echo through mcp").await;
    assert!(again.result.contains("ENG-MCP-PING"), "{again:?}");
    engine.shutdown().await;
    assert!(!marker.exists(), "the unapproved project server ran");
}

/// Counts the stream events an observer is given, by type.
#[derive(Default)]
struct StreamEvents(std::sync::Mutex<Vec<String>>);

impl rein::Observer for StreamEvents {
    fn observe(&self, progress: rein::Progress<'_>) {
        if let rein::Progress::StreamEvent { event } = progress {
            let kind = event["type"].as_str().unwrap_or("?").to_string();
            self.0.lock().unwrap().push(kind);
        }
    }
}

/// Stream events are opt-in: building every event of every reply costs a turn that nobody
/// reads, so an observer gets them only from an engine that asked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stream_events_reach_the_observer_only_when_asked_for() {
    use std::sync::Arc;
    let sandbox = Sandbox::new("project", &[]);
    for asked in [false, true] {
        let events = Arc::new(StreamEvents::default());
        let engine = Engine::builder(&sandbox.project)
            .home(&sandbox.home)
            .read_settings_files(false)
            .stream_events(asked)
            .observer(events.clone())
            .build()
            .unwrap();
        let outcome = engine.run("say something").await;
        assert!(!outcome.result.is_empty(), "{outcome:?}");
        let seen = events.0.lock().unwrap().clone();
        if asked {
            assert_eq!(
                seen.first().map(String::as_str),
                Some("message_start"),
                "{seen:?}"
            );
            assert_eq!(
                seen.last().map(String::as_str),
                Some("message_stop"),
                "{seen:?}"
            );
            assert!(seen.iter().any(|k| k == "content_block_delta"), "{seen:?}");
        } else {
            assert!(seen.is_empty(), "not asked for, yet given: {seen:?}");
        }
    }
}
