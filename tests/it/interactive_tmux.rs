//! End-to-end on a real terminal: the built `rein` binary runs interactively inside a detached
//! `tmux` session (its own socket, `-f /dev/null`), keys are typed with `tmux send-keys` and the
//! screen is read with `tmux capture-pane`. Proves the permission dialogue's `n`, `y` and `a`
//! answers with the default mock model. A missing `tmux` fails the test (CI installs it).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::json;

use crate::harness::{LEAKY_VARS, Sandbox, home_vars, rein_bin, write_executable};

const PROMPT_HEADER: &str = "rein wants to use Bash: ";
const PROMPT_KEYS: &str = "[y] allow once  [a] always for this session  [n] deny >";
const DENIAL: &str = "The user doesn't want to proceed with this tool use.";
const TRUST_QUESTION: &str =
    "Trust this folder? [y] yes, remember  [o] yes, this run only  [n] no, exit >";

/// A tmux server on a socket of its own; dropping it kills the server and everything in it.
struct Tmux {
    socket: String,
    /// The socket file, learnt once the server runs; removed on drop (tmux may leave it).
    socket_path: Option<PathBuf>,
}

impl Tmux {
    fn run(&self, args: &[&str]) -> Output {
        let out = Command::new("tmux")
            .args(["-L", &self.socket, "-f", "/dev/null"])
            .args(args)
            .output();
        match out {
            Ok(out) => out,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => panic!(
                "`tmux` was not found on PATH: this test needs a real terminal multiplexer \
                 (install it, e.g. `apt-get install tmux`)"
            ),
            Err(e) => panic!("cannot run tmux: {e}"),
        }
    }

    fn ok(&self, args: &[&str]) {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "tmux {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Types `text` literally, then Enter.
    fn type_line(&self, text: &str) {
        self.ok(&["send-keys", "-t", "rein", "-l", text]);
        self.ok(&["send-keys", "-t", "rein", "Enter"]);
    }

    /// The whole pane including scrollback, wrapped lines joined.
    fn screen(&self) -> String {
        let out = self.run(&["capture-pane", "-p", "-J", "-S", "-", "-t", "rein"]);
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Polls the screen (100 ms steps, at most 10 s) until `done` holds; returns that screen.
    fn wait_for(&self, what: &str, done: impl Fn(&str) -> bool) -> String {
        let started = Instant::now();
        loop {
            let screen = self.screen();
            if done(&screen) {
                return screen;
            }
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "timed out waiting for {what}; screen:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .output();
        if let Some(path) = &self.socket_path {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// rein is idle and waiting for the next prompt: the last non-empty line is the bare `>`.
fn at_input_prompt(screen: &str) -> bool {
    screen
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .is_some_and(|l| l.trim() == ">")
}

fn prompts(screen: &str) -> usize {
    screen.matches(PROMPT_KEYS).count()
}

fn write_launcher_with(
    root: &Path,
    project: &Path,
    home: &Path,
    code_file: &Path,
    args: &[&str],
    env: &[(&str, &str)],
) -> PathBuf {
    let launcher = root.join("launch.sh");
    // Why a script: the tmux server (not this process) spawns the pane, so the environment and
    // working directory are set here (the same as `Sandbox::rein` sets); the exit code goes to
    // a file because the pane closes.
    let mut exports: Vec<String> = home_vars(home)
        .iter()
        .map(|(name, value)| format!("{name}='{}'", value.display()))
        .collect();
    exports.extend(env.iter().map(|(name, value)| format!("{name}='{value}'")));
    let args: Vec<String> = args.iter().map(|a| format!("'{a}'")).collect();
    let body = format!(
        "#!/bin/sh\n\
         cd '{project}' || exit 99\n\
         unset {unset}\n\
         export {exports}\n\
         trap : INT\n\
         '{bin}' {args}\n\
         echo $? > '{code}.tmp' && mv '{code}.tmp' '{code}'\n",
        project = project.display(),
        unset = LEAKY_VARS.join(" "),
        exports = exports.join(" "),
        bin = rein_bin().display(),
        args = args.join(" "),
        code = code_file.display(),
    );
    write_executable(&launcher, body);
    launcher
}

/// rein started interactively in a fresh tmux server on `sandbox`, and the file its exit code
/// will be written to.
fn launch(sandbox: &Sandbox) -> (Tmux, PathBuf) {
    launch_with(sandbox, &[], &[])
}

/// [`launch`] with more arguments for rein and more environment variables.
fn launch_with(sandbox: &Sandbox, args: &[&str], env: &[(&str, &str)]) -> (Tmux, PathBuf) {
    let code_file = sandbox.root.join("exit.code");
    let _ = std::fs::remove_file(&code_file);
    let launcher = write_launcher_with(
        &sandbox.root,
        &sandbox.project,
        &sandbox.home,
        &code_file,
        args,
        env,
    );
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let mut tmux = Tmux {
        socket: format!("rein-test-{}-{nanos}", std::process::id()),
        socket_path: None,
    };
    tmux.ok(&[
        "new-session",
        "-d",
        "-s",
        "rein",
        "-x",
        "200",
        "-y",
        "50",
        &launcher.display().to_string(),
    ]);
    let path = tmux.run(&["display-message", "-p", "-t", "rein", "#{socket_path}"]);
    tmux.socket_path = Some(PathBuf::from(
        String::from_utf8_lossy(&path.stdout).trim().to_string(),
    ));
    (tmux, code_file)
}

/// Waits (≤ 10 s) for rein's exit code.
fn exit_code(tmux: &Tmux, code_file: &Path) -> String {
    let started = Instant::now();
    while !code_file.exists() {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "rein did not exit; screen:\n{}",
            tmux.screen()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    std::fs::read_to_string(code_file)
        .unwrap()
        .trim()
        .to_string()
}

#[test]
fn permission_prompt_deny_allow_once_and_always_on_a_real_terminal() {
    let sandbox = Sandbox::new("proj", &[]);
    let project = sandbox.project.clone();
    let (tmux, code_file) = launch(&sandbox);
    tmux.wait_for("the first `> ` prompt", at_input_prompt);

    // 1. `n`: the call is refused, nothing is created, the pane says so.
    tmux.type_line("run command touch made.txt");
    let screen = tmux.wait_for("the first permission prompt", |s| prompts(s) == 1);
    assert!(
        screen.contains(&format!("{PROMPT_HEADER}touch made.txt")),
        "{screen}"
    );
    // One key answers (no Enter).
    tmux.ok(&["send-keys", "-t", "rein", "-l", "n"]);
    let screen = tmux.wait_for("the denial", |s| s.contains(DENIAL) && at_input_prompt(s));
    assert!(!project.join("made.txt").exists(), "{screen}");
    let denials = screen.matches(DENIAL).count();

    // 2. `y`: the same command now runs.
    tmux.type_line("run command touch made.txt");
    tmux.wait_for("the second permission prompt", |s| prompts(s) == 2);
    // One key answers (no Enter).
    tmux.ok(&["send-keys", "-t", "rein", "-l", "y"]);
    let screen = tmux.wait_for("the allowed run", |s| {
        at_input_prompt(s) && project.join("made.txt").exists()
    });
    assert_eq!(
        screen.matches(DENIAL).count(),
        denials,
        "a new denial:\n{screen}"
    );

    // 3. `a`: runs, and the identical command later runs without asking again.
    tmux.type_line("run command touch always.txt");
    tmux.wait_for("the third permission prompt", |s| prompts(s) == 3);
    // One key answers (no Enter).
    tmux.ok(&["send-keys", "-t", "rein", "-l", "a"]);
    tmux.wait_for("the always-allowed run", |s| {
        at_input_prompt(s) && project.join("always.txt").exists()
    });
    std::fs::remove_file(project.join("always.txt")).unwrap();
    tmux.type_line("run command touch always.txt");
    let screen = tmux.wait_for("the remembered run", |s| {
        at_input_prompt(s) && project.join("always.txt").exists()
    });
    assert_eq!(prompts(&screen), 3, "asked again:\n{screen}");
    assert_eq!(
        screen
            .matches(&format!("{PROMPT_HEADER}touch always.txt"))
            .count(),
        1,
        "{screen}"
    );

    // 4. `/exit` ends rein cleanly.
    tmux.type_line("/exit");
    assert_eq!(exit_code(&tmux, &code_file), "0", "rein exit code");
}

/// The prompt blocks reading the terminal; a SIGTERM meanwhile must not wait for the answer.
#[test]
fn sigterm_while_a_permission_prompt_waits_ends_rein_within_3_s_and_runs_session_end() {
    let sandbox = Sandbox::new("proj", &[]);
    let end = sandbox.path("end.json");
    sandbox.hooks(json!({"SessionEnd": [{"hooks": [{
        "type": "command",
        "command": format!("cat > '{}'", end.display()),
    }]}]}));
    let (tmux, code_file) = launch(&sandbox);
    // The project's hook makes rein ask about trusting the folder first.
    tmux.wait_for("the trust question", |s| s.contains(TRUST_QUESTION));
    tmux.type_line("o");
    tmux.wait_for("the first `> ` prompt", at_input_prompt);
    tmux.type_line("run command touch made.txt");
    tmux.wait_for("the permission prompt", |s| prompts(s) == 1);

    // The pane runs the launcher's `sh`; rein is its only child.
    let pane = tmux.run(&["display-message", "-p", "-t", "rein", "#{pane_pid}"]);
    let sh: i32 = String::from_utf8_lossy(&pane.stdout)
        .trim()
        .parse()
        .unwrap();
    let children = std::fs::read_to_string(format!("/proc/{sh}/task/{sh}/children")).unwrap();
    let rein: i32 = children.split_whitespace().next().unwrap().parse().unwrap();
    let sent = Instant::now();
    // SAFETY: kill(2) on the rein process this test started.
    unsafe {
        libc::kill(rein, libc::SIGTERM);
    }
    let code = exit_code(&tmux, &code_file);
    let took = sent.elapsed();

    eprintln!("exit {took:?} after SIGTERM at a permission prompt");
    assert_eq!(code, "143", "screen:\n{}", tmux.screen());
    assert!(took < Duration::from_secs(3), "took {took:?}");
    let ended: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&end).unwrap()).unwrap();
    assert_eq!(ended["hook_event_name"], "SessionEnd");
    assert!(!sandbox.exists("made.txt"), "the unanswered call ran");
}

// ---------------------------------------------------------------------------------------------
// The terminal of issue 16: history, multi-line input, slash commands, Ctrl+C during a tool,
// streaming, the spinner.

/// The last non-empty line of the screen.
fn last_line(screen: &str) -> String {
    screen
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or_default()
        .trim_end()
        .to_string()
}

fn jsonl(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Hooks that record UserPromptSubmit, SessionStart and SessionEnd stdin in `<event>.jsonl`.
fn recording_hooks(sandbox: &Sandbox) {
    let rec = |event: &str| {
        json!([{"hooks": [{"type": "command",
            "command": format!("cat >> '{}'; echo >> '{}'",
                sandbox.path(&format!("{event}.jsonl")).display(),
                sandbox.path(&format!("{event}.jsonl")).display())}]}])
    };
    sandbox.hooks(json!({
        "UserPromptSubmit": rec("UserPromptSubmit"),
        "SessionStart": rec("SessionStart"),
        "SessionEnd": rec("SessionEnd"),
    }));
}

fn prompts_sent(sandbox: &Sandbox) -> Vec<String> {
    jsonl(&sandbox.path("UserPromptSubmit.jsonl"))
        .iter()
        .map(|v| v["prompt"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn slash_commands_multi_line_input_and_history_across_sessions() {
    let sandbox = Sandbox::new("proj", &[]);
    recording_hooks(&sandbox);
    let (tmux, code_file) = launch_with(&sandbox, &["--trust"], &[]);
    tmux.wait_for("the first prompt", at_input_prompt);

    // /help lists the commands; an unknown command is an error, never a prompt.
    tmux.type_line("/help");
    tmux.wait_for("the help", |s| {
        s.contains("/compact [instructions]") && at_input_prompt(s)
    });
    tmux.type_line("/nope");
    tmux.wait_for("the unknown command", |s| {
        s.contains("Unknown command: /nope") && at_input_prompt(s)
    });
    // /hooks shows what `rein hooks list` shows.
    tmux.type_line("/hooks");
    let screen = tmux.wait_for("the hooks list", |s| {
        s.contains("Handlers (effective order") && at_input_prompt(s)
    });
    assert!(screen.contains("UserPromptSubmit"), "{screen}");
    assert!(
        prompts_sent(&sandbox).is_empty(),
        "a slash command reached the model"
    );

    // Multi-line: `\` then Enter, and Alt+Enter, continue the prompt.
    tmux.ok(&["send-keys", "-t", "rein", "-l", "first line\\"]);
    tmux.ok(&["send-keys", "-t", "rein", "Enter"]);
    tmux.ok(&["send-keys", "-t", "rein", "-l", "second line"]);
    tmux.ok(&["send-keys", "-t", "rein", "M-Enter"]);
    tmux.type_line("third line");
    tmux.wait_for("the multi-line prompt's turn", |_| {
        prompts_sent(&sandbox).len() == 1
    });
    assert_eq!(
        prompts_sent(&sandbox),
        ["first line\nsecond line\nthird line"]
    );
    tmux.wait_for("the prompt after the turn", at_input_prompt);

    // /clear, as Claude Code 2.1.328 does it (fixture cc-2.1.328/interactive, run2):
    // SessionEnd `clear` for the old session, then SessionStart `clear` with a new session id
    // and a new transcript, which exists when the hook runs.
    tmux.type_line("/clear");
    tmux.wait_for("the cleared conversation", |s| {
        s.contains("Conversation cleared (new session") && at_input_prompt(s)
    });
    let ends = jsonl(&sandbox.path("SessionEnd.jsonl"));
    assert_eq!(ends.len(), 1);
    assert_eq!(ends[0]["reason"], "clear");
    let starts = jsonl(&sandbox.path("SessionStart.jsonl"));
    let sources: Vec<&str> = starts
        .iter()
        .map(|v| v["source"].as_str().unwrap())
        .collect();
    assert_eq!(sources, ["startup", "clear"]);
    let old_id = starts[0]["session_id"].as_str().unwrap();
    let new_id = starts[1]["session_id"].as_str().unwrap();
    // An interactive startup names the model (a `-p` one does not: golden stdin-SessionStart).
    let cc_startup = fixture_hooks("run2-hooks.jsonl").remove(0);
    assert_eq!(keys(&starts[0]), keys(&cc_startup));
    assert_eq!(starts[0]["model"], "mock");
    assert_eq!(
        ends[0]["session_id"], old_id,
        "SessionEnd is the old session's"
    );
    assert_ne!(new_id, old_id, "/clear kept the session id");
    assert_ne!(starts[1]["transcript_path"], starts[0]["transcript_path"]);
    assert!(
        starts[1]["transcript_path"]
            .as_str()
            .unwrap()
            .ends_with(&format!("{new_id}.jsonl"))
    );
    assert!(Path::new(starts[1]["transcript_path"].as_str().unwrap()).exists());
    assert!(
        starts[1].get("model").is_none() && starts[1].get("prompt_id").is_none(),
        "{}",
        starts[1]
    );
    assert!(ends[0]["prompt_id"].is_string(), "{}", ends[0]);

    tmux.type_line("a prompt to remember");
    tmux.wait_for("its turn", |_| prompts_sent(&sandbox).len() == 2);
    let submitted = jsonl(&sandbox.path("UserPromptSubmit.jsonl"));
    assert_eq!(
        submitted[1]["session_id"],
        jsonl(&sandbox.path("SessionStart.jsonl"))[1]["session_id"],
        "the prompt after /clear belongs to the new session"
    );
    tmux.wait_for("the prompt", at_input_prompt);
    tmux.type_line("/exit");
    assert_eq!(exit_code(&tmux, &code_file), "0");
    drop(tmux);

    // A new session: Up recalls the last line of the one before (history in ~/.rein).
    let (tmux, code_file) = launch_with(&sandbox, &["--trust"], &[]);
    tmux.wait_for("the first prompt", at_input_prompt);
    tmux.ok(&["send-keys", "-t", "rein", "Up"]);
    tmux.wait_for("the recalled line", |s| last_line(s).ends_with("> /exit"));
    tmux.ok(&["send-keys", "-t", "rein", "Up"]);
    tmux.wait_for("the recalled prompt", |s| {
        last_line(s).ends_with("> a prompt to remember")
    });
    tmux.ok(&["send-keys", "-t", "rein", "Enter"]);
    tmux.wait_for("the recalled prompt's turn", |_| {
        prompts_sent(&sandbox).len() == 3
    });
    assert_eq!(prompts_sent(&sandbox)[2], "a prompt to remember");
    tmux.wait_for("the prompt", at_input_prompt);
    // Ctrl+D on the empty prompt exits.
    tmux.ok(&["send-keys", "-t", "rein", "C-d"]);
    assert_eq!(exit_code(&tmux, &code_file), "0");
}

/// Whether a process whose command line holds `marker` is alive.
fn process_alive(marker: &str) -> bool {
    std::fs::read_dir("/proc").unwrap().flatten().any(|d| {
        std::fs::read(d.path().join("cmdline"))
            .map(|c| {
                String::from_utf8_lossy(&c)
                    .replace('\0', " ")
                    .contains(marker)
            })
            .unwrap_or(false)
    })
}

#[test]
fn ctrl_c_during_a_30_s_tool_returns_to_the_prompt_within_2_s_and_the_session_goes_on() {
    let sandbox = Sandbox::new("proj", &[]);
    recording_hooks(&sandbox);
    let script = sandbox.mock(json!([
        {"tool_use": [{"name": "Bash", "input": {"command": "sleep 30.4816"}}]},
        {"text": "the next prompt works"},
    ]));
    let script = script.display().to_string();
    let (tmux, code_file) = launch_with(
        &sandbox,
        &[
            "--mock-script",
            &script,
            "--allowedTools",
            "Bash",
            "--trust",
        ],
        &[],
    );
    tmux.wait_for("the first prompt", at_input_prompt);
    tmux.type_line("sleep for a while");
    tmux.wait_for("the tool running", |_| process_alive("sleep 30.4816"));
    let sent = Instant::now();
    tmux.ok(&["send-keys", "-t", "rein", "C-c"]);
    let screen = tmux.wait_for("the prompt after Ctrl+C", |s| {
        s.contains("Interrupted") && at_input_prompt(s)
    });
    let took = sent.elapsed();
    eprintln!("back at the prompt {took:?} after Ctrl+C");
    assert!(took < Duration::from_secs(2), "took {took:?}:\n{screen}");
    assert!(
        !process_alive("sleep 30.4816"),
        "the tool's process survived"
    );
    assert!(!code_file.exists(), "rein exited");

    tmux.type_line("and now?");
    tmux.wait_for("the next answer", |s| {
        s.contains("the next prompt works") && at_input_prompt(s)
    });
    // The interrupted call has its result in the transcript.
    let transcript = std::fs::read_to_string(sandbox_transcript(&sandbox)).unwrap();
    assert!(
        transcript.contains("[Request interrupted by user for tool use]"),
        "{transcript}"
    );
    // Ctrl+C twice on the empty prompt exits.
    tmux.ok(&["send-keys", "-t", "rein", "C-c"]);
    tmux.wait_for("the exit hint", |s| s.contains("Ctrl+C again to exit"));
    tmux.ok(&["send-keys", "-t", "rein", "C-c"]);
    assert_eq!(exit_code(&tmux, &code_file), "0");
}

fn sandbox_transcript(sandbox: &Sandbox) -> PathBuf {
    let dir = sandbox.home.join(".rein/projects");
    let project = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    std::fs::read_dir(project)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .unwrap()
}

#[test]
fn streamed_text_shows_before_the_reply_is_complete() {
    use crate::agent::loopback::{Api, Loopback, Turn};
    let sandbox = Sandbox::new("proj", &[]);
    let mut turn = Turn::text("STREAM-ONE ");
    turn.text.push("STREAM-TWO ".to_string());
    turn.text.push("STREAM-END".to_string());
    turn.pause = Duration::from_millis(700);
    let server = Loopback::start(Api::Anthropic, vec![turn]);
    let (tmux, code_file) = launch_with(
        &sandbox,
        &["--provider", "anthropic"],
        &[
            ("ANTHROPIC_BASE_URL", &server.url),
            ("ANTHROPIC_API_KEY", "test-key"),
        ],
    );
    tmux.wait_for("the first prompt", at_input_prompt);
    tmux.type_line("hello");
    let screen = tmux.wait_for("the first part", |s| s.contains("STREAM-ONE"));
    assert!(!screen.contains("STREAM-END"), "all at once:\n{screen}");
    tmux.wait_for("the whole reply", |s| {
        s.contains("STREAM-ONE STREAM-TWO STREAM-END") && at_input_prompt(s)
    });
    tmux.type_line("/exit");
    assert_eq!(exit_code(&tmux, &code_file), "0");
}

#[test]
fn the_spinner_shows_a_hooks_status_message_while_it_runs() {
    let sandbox = Sandbox::new("proj", &[]);
    sandbox.hooks(json!({"UserPromptSubmit": [{"hooks": [{"type": "command",
        "command": "cat > /dev/null; sleep 3", "statusMessage": "Checking the prompt against policy"}]}]}));
    let (tmux, code_file) = launch_with(&sandbox, &["--trust"], &[]);
    tmux.wait_for("the first prompt", at_input_prompt);
    tmux.type_line("hello");
    tmux.wait_for("the status message", |s| {
        s.contains("Checking the prompt against policy…")
    });
    let screen = tmux.wait_for("the end of the turn", at_input_prompt);
    assert!(!last_line(&screen).contains("Checking"), "{screen}");
    tmux.type_line("/exit");
    assert_eq!(exit_code(&tmux, &code_file), "0");
}

#[test]
fn a_permission_prompt_is_answered_with_one_key() {
    let sandbox = Sandbox::new("proj", &[]);
    let project = sandbox.project.clone();
    let (tmux, code_file) = launch(&sandbox);
    tmux.wait_for("the first prompt", at_input_prompt);
    tmux.type_line("run command touch one-key.txt");
    tmux.wait_for("the permission prompt", |s| prompts(s) == 1);
    // `y` alone, no Enter.
    tmux.ok(&["send-keys", "-t", "rein", "-l", "y"]);
    tmux.wait_for("the call to run", |s| {
        at_input_prompt(s) && project.join("one-key.txt").exists()
    });
    tmux.type_line("/exit");
    assert_eq!(exit_code(&tmux, &code_file), "0");
}
/// Interactive start in an untrusted folder shows what the repository's settings would do and
/// asks once. `n` ends rein before anything of the folder runs (exit 1, no hook), as declining
/// Claude Code 2.1.328's folder-trust dialog does (tests/fixtures/cc-2.1.328/trust/interactive).
/// `y` records trust (an allow rule from the project file then applies, no permission prompt);
/// the next start asks nothing. A later change to the hook's script asks again, naming the
/// hook — stricter than Claude Code, which never asks again for a folder it trusted, because a
/// commit can change what a trusted hook runs — and `n` then ends rein before the changed
/// script can run.
#[test]
fn trust_question_on_a_real_terminal_and_a_changed_script_asks_again() {
    let sandbox = Sandbox::new("proj", &["proj/.claude", "proj/hooks"]);
    let guard = sandbox.script("guard.sh", "cat >/dev/null; exit 0");
    let started = sandbox.script(
        "started.sh",
        "cat >/dev/null; touch session-started; exit 0",
    );
    sandbox.settings(json!({
        "permissions": {"allow": ["Bash(touch made-by-allow.txt)"]},
        "hooks": {
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": guard}]}],
            "SessionStart": [{"hooks": [{"type": "command", "command": started}]}]
        }
    }));

    // 0. First start, declined: rein exits 1 and no hook ran.
    let (tmux, code_file) = launch(&sandbox);
    let screen = tmux.wait_for("the trust question", |s| s.contains(TRUST_QUESTION));
    assert!(screen.contains("SessionStart hook runs"), "{screen}");
    tmux.type_line("n");
    // (The pane closes with rein; the message is checked in security.rs.)
    assert_eq!(exit_code(&tmux, &code_file), "1");
    assert!(
        !sandbox.exists("session-started"),
        "a hook ran although trust was declined"
    );
    drop(tmux);
    std::fs::remove_file(&code_file).unwrap();

    // 1. Asked again (nothing was recorded): the question lists the hook and the allow rule;
    //    `y` trusts and records.
    let (tmux, code_file) = launch(&sandbox);
    let screen = tmux.wait_for("the trust question", |s| s.contains(TRUST_QUESTION));
    assert!(screen.contains("PreToolUse hook runs"), "{screen}");
    assert!(screen.contains("guard.sh"), "{screen}");
    assert!(
        screen.contains("allows Bash(touch made-by-allow.txt)"),
        "{screen}"
    );
    tmux.type_line("y");
    tmux.wait_for("the first `> ` prompt", at_input_prompt);
    assert!(
        sandbox.exists("session-started"),
        "the trusted hook did not run"
    );
    tmux.type_line("run command touch made-by-allow.txt");
    let screen = tmux.wait_for("the allowed run", |s| {
        at_input_prompt(s) && sandbox.exists("made-by-allow.txt")
    });
    assert_eq!(
        prompts(&screen),
        0,
        "asked despite the trusted allow rule:\n{screen}"
    );
    tmux.type_line("/exit");
    assert_eq!(exit_code(&tmux, &code_file), "0");
    drop(tmux);
    std::fs::remove_file(sandbox.path("made-by-allow.txt")).unwrap();
    std::fs::remove_file(&code_file).unwrap();

    // 2. Unchanged: no question at all.
    let (tmux, code_file) = launch(&sandbox);
    let screen = tmux.wait_for("the first `> ` prompt", at_input_prompt);
    assert!(!screen.contains(TRUST_QUESTION), "asked again:\n{screen}");
    tmux.type_line("/exit");
    assert_eq!(exit_code(&tmux, &code_file), "0");
    drop(tmux);
    std::fs::remove_file(&code_file).unwrap();

    // 3. The script changes: asked again, naming the hook; `n` ends rein before it runs.
    sandbox.script("started.sh", "cat >/dev/null; touch sneaky; exit 0");
    let (tmux, code_file) = launch(&sandbox);
    let screen = tmux.wait_for("the trust question again", |s| s.contains(TRUST_QUESTION));
    assert!(
        screen.contains("since then changed") && screen.contains("started.sh"),
        "{screen}"
    );
    tmux.type_line("n");
    assert_eq!(exit_code(&tmux, &code_file), "1");
    assert!(!sandbox.exists("sneaky"), "the changed script ran");
    assert!(
        !sandbox.exists("made-by-allow.txt"),
        "the untrusted allow rule applied"
    );
}

/// A cloned repository's `.mcp.json` starts nothing until a person says yes at the terminal;
/// the answers are remembered in `.claude/settings.local.json`.
#[test]
fn project_mcp_servers_wait_for_a_yes_on_the_terminal() {
    let sandbox = Sandbox::new("proj", &["proj/.claude"]);
    let project = sandbox.project.clone();
    let wrapper = |name: &str| {
        let path = project.join(format!("{name}.sh"));
        write_executable(
            &path,
            format!(
                "#!/bin/sh\necho $$ > '{}'\nexec '{}' stdio\n",
                project.join(format!("{name}.pid")).display(),
                crate::mcp_servers::everything()
            ),
        );
        path.display().to_string()
    };
    let config = json!({"mcpServers": {
        "refused": {"command": wrapper("refused")},
        "accepted": {"command": wrapper("accepted")},
    }});
    std::fs::write(project.join(".mcp.json"), config.to_string()).unwrap();
    let (tmux, code_file) = launch(&sandbox);
    tmux.wait_for("the question about \"refused\"", |s| {
        s.contains("MCP server \"refused\"") && s.contains("Start it? [y/N]")
    });
    assert!(
        !project.join("refused.pid").exists(),
        "started before the answer"
    );
    tmux.type_line("n");
    tmux.wait_for("the question about \"accepted\"", |s| {
        s.contains("MCP server \"accepted\"")
    });
    tmux.type_line("y");
    tmux.wait_for("the first `> ` prompt", at_input_prompt);
    assert!(
        project.join("accepted.pid").exists(),
        "the approved server did not start"
    );
    assert!(
        !project.join("refused.pid").exists(),
        "the refused server started"
    );
    let local: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(project.join(".claude/settings.local.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(local["enabledMcpjsonServers"], json!(["accepted"]));
    assert_eq!(local["disabledMcpjsonServers"], json!(["refused"]));
    tmux.type_line("/exit");
    assert_eq!(exit_code(&tmux, &code_file), "0", "rein exit code");
    let pid: i32 = std::fs::read_to_string(project.join("accepted.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // SAFETY: signal 0 only probes for the process.
    assert!(
        unsafe { libc::kill(pid, 0) } != 0,
        "the server outlived rein"
    );
}

// ---------------------------------------------------------------------------------------------
// /resume ID, /model NAME and a stopped tool, as Claude Code 2.1.328 does them (fixtures in
// tests/fixtures/cc-2.1.328/interactive/, recorded from the real Claude Code in tmux).

/// Hooks that record the stdin of each of `events` in `<event>.jsonl`, and of all of them in
/// `all.jsonl` (firing order).
fn recording_hooks_for(sandbox: &Sandbox, events: &[&str]) {
    let mut hooks = serde_json::Map::new();
    for event in events {
        let own = sandbox.path(&format!("{event}.jsonl"));
        let all = sandbox.path("all.jsonl");
        hooks.insert(
            event.to_string(),
            json!([{"matcher": "*", "hooks": [{"type": "command", "command": format!(
                "tee -a '{all}' >> '{own}'; echo >> '{own}'; echo >> '{all}'",
                all = all.display(), own = own.display())}]}]),
        );
    }
    sandbox.hooks(serde_json::Value::Object(hooks));
}

fn fixture_hooks(name: &str) -> Vec<serde_json::Value> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/cc-2.1.328/interactive")
        .join(name);
    jsonl(&path)
}

fn keys(v: &serde_json::Value) -> Vec<String> {
    v.as_object().unwrap().keys().cloned().collect()
}

/// The text of every block of a request message (tool results: their content).
fn block_texts(message: &serde_json::Value) -> Vec<String> {
    message["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            b["text"]
                .as_str()
                .or(b["content"].as_str())
                .unwrap_or_default()
                .to_string()
        })
        .collect()
}

#[test]
fn resume_id_switches_sessions_inside_the_running_one_and_the_next_request_carries_its_history() {
    use crate::agent::loopback::{Api, Loopback, Turn};
    let sandbox = Sandbox::new("proj", &[]);
    recording_hooks_for(
        &sandbox,
        &["SessionStart", "SessionEnd", "UserPromptSubmit"],
    );
    let server = Loopback::start(
        Api::Anthropic,
        vec![
            Turn::text("FIRST-ANSWER"),
            Turn::text("FRESH-ANSWER"),
            Turn::text("RESUMED-ANSWER"),
        ],
    );
    let (tmux, code_file) = launch_with(
        &sandbox,
        &["--provider", "anthropic", "--trust"],
        &[
            ("ANTHROPIC_BASE_URL", &server.url),
            ("ANTHROPIC_API_KEY", "test-key"),
            ("REIN_MAX_RETRIES", "0"),
        ],
    );
    tmux.wait_for("the first prompt", at_input_prompt);
    tmux.type_line("remember the word PLUM");
    tmux.wait_for("the first answer", |s| {
        s.contains("FIRST-ANSWER") && at_input_prompt(s)
    });
    let old_id = jsonl(&sandbox.path("SessionStart.jsonl"))[0]["session_id"]
        .as_str()
        .unwrap()
        .to_string();
    tmux.type_line("/clear");
    tmux.wait_for("the new session", |s| {
        s.contains("Conversation cleared") && at_input_prompt(s)
    });
    tmux.type_line("something else");
    tmux.wait_for("the fresh answer", |s| {
        s.contains("FRESH-ANSWER") && at_input_prompt(s)
    });
    let cleared_id = jsonl(&sandbox.path("SessionStart.jsonl"))[1]["session_id"]
        .as_str()
        .unwrap()
        .to_string();

    // A bad id: one line, nothing fires, the session goes on.
    tmux.type_line("/resume 00000000-0000-4000-8000-000000000000");
    tmux.wait_for("the bad id's line", |s| {
        s.contains("Session 00000000-0000-4000-8000-000000000000 was not found.")
            && at_input_prompt(s)
    });
    tmux.type_line("/resume not-an-id");
    tmux.wait_for("the bad id's line", |s| {
        s.contains("Session not-an-id was not found.") && at_input_prompt(s)
    });
    assert_eq!(jsonl(&sandbox.path("SessionEnd.jsonl")).len(), 1);

    tmux.type_line(&format!("/resume {old_id}"));
    tmux.wait_for("the resumed session", |s| {
        s.contains(&format!("Resumed session {old_id}")) && at_input_prompt(s)
    });
    tmux.type_line("what was the word?");
    tmux.wait_for("the resumed answer", |s| {
        s.contains("RESUMED-ANSWER") && at_input_prompt(s)
    });

    // The request after /resume carries the resumed conversation, not the cleared one's.
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    let messages = requests[2]["messages"].as_array().unwrap();
    let texts: Vec<Vec<String>> = messages.iter().map(block_texts).collect();
    assert_eq!(messages.len(), 3, "{texts:?}");
    assert!(
        texts[0].iter().any(|t| t == "remember the word PLUM"),
        "{texts:?}"
    );
    assert_eq!(texts[1], ["FIRST-ANSWER"]);
    assert!(
        texts[2].iter().any(|t| t == "what was the word?"),
        "{texts:?}"
    );
    assert!(!format!("{texts:?}").contains("something else"));

    // The hooks, as Claude Code fires them: SessionEnd `resume` for the session left, then
    // SessionStart `resume` with the resumed id, the command's prompt_id and the model.
    let ends = jsonl(&sandbox.path("SessionEnd.jsonl"));
    let reasons: Vec<&str> = ends.iter().map(|v| v["reason"].as_str().unwrap()).collect();
    assert_eq!(reasons, ["clear", "resume"]);
    assert_eq!(ends[1]["session_id"], cleared_id.as_str());
    let starts = jsonl(&sandbox.path("SessionStart.jsonl"));
    let sources: Vec<&str> = starts
        .iter()
        .map(|v| v["source"].as_str().unwrap())
        .collect();
    assert_eq!(sources, ["startup", "clear", "resume"]);
    let resumed = &starts[2];
    assert_eq!(resumed["session_id"], old_id.as_str());
    assert!(
        resumed["transcript_path"]
            .as_str()
            .unwrap()
            .ends_with(&format!("{old_id}.jsonl"))
    );
    assert_eq!(resumed["prompt_id"], ends[1]["prompt_id"]);
    assert!(resumed["seconds_since_last_response"].as_u64().unwrap() < 60);
    assert_eq!(
        resumed["context_tokens"], 12,
        "the last reply's usage (10 in, 2 out)"
    );
    assert_eq!(resumed["prompt_cache_likely_expired"], false);
    // Key order as Claude Code's; `estimated_cache_write_usd` only with prices configured.
    let cc = fixture_hooks("run2-hooks.jsonl")
        .into_iter()
        .find(|v| v["hook_event_name"] == "SessionStart" && v["source"] == "resume")
        .unwrap();
    let mut cc_keys = keys(&cc);
    cc_keys.retain(|k| k != "estimated_cache_write_usd");
    assert_eq!(keys(resumed), cc_keys);
    let submitted = jsonl(&sandbox.path("UserPromptSubmit.jsonl"));
    assert_eq!(submitted.last().unwrap()["session_id"], old_id.as_str());

    // Without an id: a numbered list of the other sessions; Enter cancels.
    tmux.type_line("/resume");
    tmux.wait_for("the list", |s| s.contains("Resume which session?"));
    let screen = tmux.screen();
    assert!(screen.contains(&format!("[{cleared_id}]")), "{screen}");
    tmux.ok(&["send-keys", "-t", "rein", "Enter"]);
    tmux.wait_for("the cancel", |s| {
        s.contains("Resume cancelled.") && at_input_prompt(s)
    });
    tmux.type_line("/exit");
    assert_eq!(exit_code(&tmux, &code_file), "0");
    drop(tmux);

    // `rein -r ID` at start: SessionStart `resume` with the facts and without `model` or
    // `prompt_id`, as Claude Code's `-r` (fixture run4).
    let (tmux, code_file) = launch_with(
        &sandbox,
        &["--provider", "anthropic", "--trust", "-r", &old_id],
        &[
            ("ANTHROPIC_BASE_URL", &server.url),
            ("ANTHROPIC_API_KEY", "test-key"),
            ("REIN_MAX_RETRIES", "0"),
        ],
    );
    tmux.wait_for("the first prompt", at_input_prompt);
    let starts = jsonl(&sandbox.path("SessionStart.jsonl"));
    let at_start = starts.last().unwrap();
    assert_eq!(at_start["source"], "resume");
    assert_eq!(at_start["session_id"], old_id.as_str());
    assert_eq!(at_start["context_tokens"], 12);
    let mut cc_keys = keys(&fixture_hooks("run4-hooks.jsonl")[0]);
    cc_keys.retain(|k| k != "estimated_cache_write_usd");
    assert_eq!(keys(at_start), cc_keys);
    tmux.type_line("/exit");
    assert_eq!(exit_code(&tmux, &code_file), "0");
}

#[test]
fn model_name_switches_the_model_of_the_following_requests_and_fires_the_model_switch_hooks() {
    use crate::agent::loopback::{Api, Loopback, Turn};
    let sandbox = Sandbox::new("proj", &[]);
    recording_hooks_for(
        &sandbox,
        &["PreModelSwitch", "PostModelSwitch", "SessionStart"],
    );
    // A second PostModelSwitch hook whose additionalContext must reach the model.
    let settings = sandbox.project.join(".claude/settings.json");
    let mut config: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    config["hooks"]["PostModelSwitch"][0]["hooks"]
        .as_array_mut()
        .unwrap()
        .push(json!({"type": "command", "command": "cat > /dev/null; echo '{\"hookSpecificOutput\": {\"hookEventName\": \"PostModelSwitch\", \"additionalContext\": \"NOW-ON-SECOND\"}}'"}));
    std::fs::write(&settings, config.to_string()).unwrap();
    let server = Loopback::start(
        Api::Anthropic,
        vec![
            Turn::text("ONE"),
            Turn::text("x"), // the one-token check of the new model
            Turn::text("TWO"),
            Turn::text("THREE"),
        ],
    );
    let (tmux, code_file) = launch_with(
        &sandbox,
        &[
            "--provider",
            "anthropic",
            "--model",
            "claude-first",
            "--trust",
        ],
        &[
            ("ANTHROPIC_BASE_URL", &server.url),
            ("ANTHROPIC_API_KEY", "test-key"),
            ("REIN_MAX_RETRIES", "0"),
        ],
    );
    tmux.wait_for("the first prompt", at_input_prompt);
    tmux.type_line("hello");
    tmux.wait_for("the first answer", |s| {
        s.contains("ONE") && at_input_prompt(s)
    });
    tmux.type_line("/model");
    tmux.wait_for("the model", |s| {
        s.contains("Model: claude-first") && at_input_prompt(s)
    });
    tmux.type_line("/model claude-second");
    tmux.wait_for("the switch", |s| {
        s.contains("Model set to claude-second.") && at_input_prompt(s)
    });
    tmux.type_line("again");
    tmux.wait_for("the second answer", |s| {
        s.contains("TWO") && at_input_prompt(s)
    });

    // An unknown name (the provider answers 404): one line, the model stays, no hook fires.
    server.refuse_model("claude-nope");
    tmux.type_line("/model claude-nope");
    tmux.wait_for("the refusal", |s| {
        s.contains("Model claude-nope is not available from the provider")
            && s.contains("still using claude-second")
            && at_input_prompt(s)
    });
    tmux.type_line("and again");
    tmux.wait_for("the third answer", |s| {
        s.contains("THREE") && at_input_prompt(s)
    });

    let requests = server.requests();
    let models: Vec<&str> = requests
        .iter()
        .map(|r| r["model"].as_str().unwrap())
        .collect();
    assert_eq!(
        models,
        [
            "claude-first",
            "claude-second",
            "claude-second",
            "claude-nope",
            "claude-second"
        ]
    );
    // The system prompt's environment names the model the request goes to.
    let system = |i: usize| requests[i]["system"].to_string();
    assert!(system(0).contains("- Model: claude-first"), "{}", system(0));
    assert!(
        system(2).contains("- Model: claude-second"),
        "{}",
        system(2)
    );
    assert!(!system(2).contains("claude-first"), "{}", system(2));
    assert!(
        system(4).contains("- Model: claude-second"),
        "{}",
        system(4)
    );
    // The check is one token, without tools, as Claude Code's.
    assert_eq!(requests[1]["max_tokens"], 1);
    assert!(requests[1]["tools"].as_array().is_none_or(|t| t.is_empty()));
    // The conversation goes on with the new model, told what PostModelSwitch added.
    assert_eq!(requests[2]["messages"].as_array().unwrap().len(), 3);
    assert!(
        requests[2]["messages"]
            .to_string()
            .contains("NOW-ON-SECOND"),
        "{}",
        requests[2]["messages"]
    );
    assert!(
        !requests[0]["messages"]
            .to_string()
            .contains("NOW-ON-SECOND")
    );

    let pre = jsonl(&sandbox.path("PreModelSwitch.jsonl"));
    let post = jsonl(&sandbox.path("PostModelSwitch.jsonl"));
    assert_eq!((pre.len(), post.len()), (1, 1), "{pre:?} {post:?}");
    let all: Vec<String> = jsonl(&sandbox.path("all.jsonl"))
        .iter()
        .map(|v| v["hook_event_name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(all, ["SessionStart", "PreModelSwitch", "PostModelSwitch"]);
    for (hook, event) in [(&pre[0], "PreModelSwitch"), (&post[0], "PostModelSwitch")] {
        assert_eq!(hook["hook_event_name"], event);
        assert_eq!(hook["from_model"], "claude-first");
        assert_eq!(hook["to_model"], "claude-second");
        assert_eq!(hook["requested_model"], "claude-second");
        assert_eq!(hook["source"], "command");
        assert_eq!(hook["context_tokens"], 12);
        assert_eq!(hook["prompt_cache_warm"], true);
        assert_eq!(hook["cache_ttl"], "5m");
        assert_eq!(hook["pricing"], "default");
        assert!(hook["prompt_id"].is_string());
        // Claude Code's keys in its order, but the cost estimate (no prices configured).
        let cc = fixture_hooks("run1-hooks.jsonl")
            .into_iter()
            .find(|v| v["hook_event_name"] == event)
            .unwrap();
        let mut cc_keys = keys(&cc);
        cc_keys.retain(|k| k != "estimated_cache_write_usd");
        assert_eq!(keys(hook), cc_keys);
    }
    // SessionStart does not fire again for a switch.
    assert_eq!(jsonl(&sandbox.path("SessionStart.jsonl")).len(), 1);
    tmux.type_line("/exit");
    assert_eq!(exit_code(&tmux, &code_file), "0");
}

#[test]
fn a_stopped_tool_fires_no_hook_and_the_model_is_told_as_claude_code_tells_it() {
    use crate::agent::loopback::{Api, Loopback, Turn};
    let sandbox = Sandbox::new("proj", &[]);
    recording_hooks_for(
        &sandbox,
        &[
            "PreToolUse",
            "PostToolUse",
            "PostToolUseFailure",
            "PostToolBatch",
            "Stop",
        ],
    );
    let server = Loopback::start(
        Api::Anthropic,
        vec![
            Turn::call("toolu_stop", "Bash", json!({"command": "sleep 30.6173"})),
            Turn::text("AFTER-THE-STOP"),
        ],
    );
    let (tmux, code_file) = launch_with(
        &sandbox,
        &[
            "--provider",
            "anthropic",
            "--allowedTools",
            "Bash",
            "--trust",
        ],
        &[
            ("ANTHROPIC_BASE_URL", &server.url),
            ("ANTHROPIC_API_KEY", "test-key"),
            ("REIN_MAX_RETRIES", "0"),
        ],
    );
    tmux.wait_for("the first prompt", at_input_prompt);
    tmux.type_line("run it");
    tmux.wait_for("the tool running", |_| process_alive("sleep 30.6173"));
    tmux.ok(&["send-keys", "-t", "rein", "C-c"]);
    tmux.wait_for("the prompt after Ctrl+C", |s| {
        s.contains("Interrupted") && at_input_prompt(s)
    });
    assert!(!process_alive("sleep 30.6173"), "the tool survived");
    // Claude Code fires only PreToolUse for the stopped call: no PostToolUse(Failure), no
    // PostToolBatch, no Stop (fixture run2/run3). Give a late hook time to show up.
    std::thread::sleep(Duration::from_millis(500));
    let fired = |sandbox: &Sandbox| -> Vec<String> {
        jsonl(&sandbox.path("all.jsonl"))
            .iter()
            .map(|v| v["hook_event_name"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(fired(&sandbox), ["PreToolUse"]);

    tmux.type_line("and now?");
    tmux.wait_for("the next answer", |s| {
        s.contains("AFTER-THE-STOP") && at_input_prompt(s)
    });
    assert_eq!(fired(&sandbox), ["PreToolUse", "Stop"]);
    // The next request: one user message with the rejection as the call's result, the
    // interruption note, then the prompt — Claude Code's texts (fixture run2-requests.json).
    let requests = server.requests();
    let last = requests[1]["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    let cc: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/cc-2.1.328/interactive/run2-requests.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let cc_last = cc
        .as_array()
        .unwrap()
        .iter()
        .find(|r| {
            block_texts(&r["last_message"])
                .last()
                .is_some_and(|t| t == "after")
        })
        .unwrap()["last_message"]
        .clone();
    let mut expected = block_texts(&cc_last);
    *expected.last_mut().unwrap() = "and now?".to_string();
    assert_eq!(block_texts(&last), expected);
    assert_eq!(last["content"][0]["type"], "tool_result");
    assert_eq!(last["content"][0]["tool_use_id"], "toolu_stop");
    assert_eq!(last["content"][0]["is_error"], true);
    tmux.type_line("/exit");
    assert_eq!(exit_code(&tmux, &code_file), "0");
}

#[test]
fn ctrl_c_while_the_reply_streams_keeps_the_text_so_far_and_tells_the_model_as_claude_code_does() {
    use crate::agent::loopback::{Api, Loopback, Turn};
    let sandbox = Sandbox::new("proj", &[]);
    recording_hooks_for(&sandbox, &["UserPromptSubmit", "Stop", "StopFailure"]);
    let mut slow = Turn::text("PARTIAL-ONE ");
    for k in 0..20 {
        slow.text.push(format!("PART-{k:02} "));
    }
    slow.text.push("NEVER-SHOWN".to_string());
    slow.pause = Duration::from_millis(700);
    let server = Loopback::start(Api::Anthropic, vec![slow, Turn::text("AFTER-THE-STOP")]);
    let (tmux, code_file) = launch_with(
        &sandbox,
        &["--provider", "anthropic", "--trust"],
        &[
            ("ANTHROPIC_BASE_URL", &server.url),
            ("ANTHROPIC_API_KEY", "test-key"),
            ("REIN_MAX_RETRIES", "0"),
        ],
    );
    tmux.wait_for("the first prompt", at_input_prompt);
    tmux.type_line("go slow");
    tmux.wait_for("the reply streaming", |s| s.contains("PARTIAL-ONE"));
    tmux.ok(&["send-keys", "-t", "rein", "C-c"]);
    tmux.wait_for("the prompt after Ctrl+C", |s| {
        s.contains("Interrupted") && at_input_prompt(s)
    });
    // Claude Code fires no hook for a stopped reply: no Stop, no StopFailure (fixture run5/run6).
    std::thread::sleep(Duration::from_millis(500));
    let fired = |sandbox: &Sandbox| -> Vec<String> {
        jsonl(&sandbox.path("all.jsonl"))
            .iter()
            .map(|v| v["hook_event_name"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(fired(&sandbox), ["UserPromptSubmit"]);

    tmux.type_line("and now?");
    tmux.wait_for("the next answer", |s| {
        s.contains("AFTER-THE-STOP") && at_input_prompt(s)
    });
    assert_eq!(
        fired(&sandbox),
        ["UserPromptSubmit", "UserPromptSubmit", "Stop"]
    );
    // The next request: the prompt, the text streamed before the stop as the assistant's, then
    // one user message of the note and the new prompt (fixture run5-requests.json).
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let messages =
        crate::harness::without_cache_control(requests[1]["messages"].as_array().unwrap());
    assert_eq!(messages.len(), 3, "{messages:?}");
    assert_eq!(block_texts(&messages[0]), ["go slow"]);
    assert_eq!(messages[1]["role"], "assistant");
    let partial = block_texts(&messages[1]).concat();
    assert!(partial.starts_with("PARTIAL-ONE "), "{partial}");
    assert!(!partial.contains("NEVER-SHOWN"), "{partial}");
    let cc: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/cc-2.1.328/interactive/run5-requests.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let cc_last = cc
        .as_array()
        .unwrap()
        .iter()
        .rfind(|r| r["kind"] == "main")
        .unwrap()["last_messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    let mut expected = block_texts(&cc_last);
    assert_eq!(expected, ["[Request interrupted by user]\n", "after"]);
    *expected.last_mut().unwrap() = "and now?".to_string();
    assert_eq!(messages[2]["role"], "user");
    assert_eq!(block_texts(&messages[2]), expected);
    // The transcript: the partial reply with `stop_reason: null`, then the note.
    let lines = jsonl(&sandbox_transcript(&sandbox));
    let at = lines.iter().position(|l| l["type"] == "assistant").unwrap();
    assert_eq!(lines[at]["message"]["stop_reason"], serde_json::Value::Null);
    assert_eq!(lines[at]["message"]["content"][0]["text"], partial.as_str());
    let note = lines[at + 1..]
        .iter()
        .find(|l| l["type"] == "user")
        .unwrap();
    assert_eq!(
        note["message"]["content"][0]["text"],
        "[Request interrupted by user]\n"
    );
    tmux.type_line("/exit");
    assert_eq!(exit_code(&tmux, &code_file), "0");

    // Resumed, the conversation is rebuilt as the model saw it.
    let server = Loopback::start(Api::Anthropic, vec![Turn::text("RESUMED")]);
    let mut cmd = sandbox.rein();
    cmd.args(["-p", "again", "-c", "--trust"]);
    Api::Anthropic.point(&mut cmd, &server.url);
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rebuilt =
        crate::harness::without_cache_control(server.requests()[0]["messages"].as_array().unwrap());
    assert_eq!(rebuilt[..3], messages[..]);
}

/// The user's commands on a real terminal: `/help` lists them with their source, Tab completes
/// the name, and `/mark alpha` runs the command as a prompt (UserPromptSubmit sees it as typed;
/// its `!` line runs through the gate, allowed by the command's `allowed-tools` in a trusted
/// folder, and leaves its file).
#[test]
fn a_project_command_is_listed_completed_and_run_on_a_real_terminal() {
    let sandbox = Sandbox::new("proj", &["proj/.claude/commands"]);
    recording_hooks(&sandbox);
    sandbox.write(
        ".claude/commands/mark.md",
        "---\ndescription: Mark a thing\nargument-hint: [what]\nallowed-tools: Bash(touch:*)\n---\nMarked: !`touch ran-$ARGUMENTS.txt`\n",
    );
    let (tmux, _code_file) = launch_with(&sandbox, &["--trust"], &[]);
    tmux.wait_for("the first prompt", at_input_prompt);
    tmux.type_line("/help");
    tmux.wait_for("the help with the command", |s| {
        s.contains("/mark [what]") && s.contains("Mark a thing (project)") && at_input_prompt(s)
    });
    tmux.ok(&["send-keys", "-t", "rein", "-l", "/ma"]);
    tmux.ok(&["send-keys", "-t", "rein", "Tab"]);
    tmux.wait_for("the completed name", |s| last_line(s) == "> /mark");
    tmux.type_line("alpha");
    tmux.wait_for("the command's turn", |_| prompts_sent(&sandbox).len() == 1);
    assert_eq!(prompts_sent(&sandbox), ["/mark alpha"]);
    tmux.wait_for("the prompt after the turn", at_input_prompt);
    assert!(
        sandbox.exists("ran-alpha.txt"),
        "the ! line ran: {}",
        tmux.screen()
    );
}

#[test]
fn output_style_lists_the_styles_and_switches_the_following_requests() {
    use crate::agent::loopback::{Api, Loopback, Turn};
    let sandbox = Sandbox::new("proj", &[]);
    sandbox.write(
        ".claude/output-styles/terse.md",
        "---\nname: Terse\ndescription: One line answers\n---\nTERSE-BODY\n",
    );
    let server = Loopback::start(Api::Anthropic, vec![Turn::text("ONE"), Turn::text("TWO")]);
    let (tmux, _code_file) = launch_with(
        &sandbox,
        &["--provider", "anthropic", "--trust"],
        &[
            ("ANTHROPIC_BASE_URL", &server.url),
            ("ANTHROPIC_API_KEY", "test-key"),
            ("REIN_MAX_RETRIES", "0"),
        ],
    );
    tmux.wait_for("the first prompt", at_input_prompt);
    tmux.type_line("hello");
    tmux.wait_for("the first answer", |s| {
        s.contains("ONE") && at_input_prompt(s)
    });
    tmux.type_line("/output-style");
    tmux.wait_for("the list", |s| {
        s.contains("* default") && s.contains("Terse") && s.contains("One line answers")
    });
    tmux.type_line("/output-style Nope");
    tmux.wait_for("the refusal", |s| {
        s.contains("No output style is named Nope")
    });
    tmux.type_line("/output-style Terse");
    tmux.wait_for("the switch", |s| {
        s.contains("Output style set to Terse for this session.") && at_input_prompt(s)
    });
    tmux.type_line("again");
    tmux.wait_for("the second answer", |s| {
        s.contains("TWO") && at_input_prompt(s)
    });
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let system = |i: usize| {
        requests[i]["system"][0]["text"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert!(!system(0).contains("TERSE-BODY"), "{}", system(0));
    assert!(
        system(1).contains("# Output style: Terse\nTERSE-BODY"),
        "{}",
        system(1)
    );
}

/// The keys of each run's stdin in `tests/fixtures/cc-2.1.328/status_line`, each with the
/// kinds of its members.
fn status_shape(v: &serde_json::Value) -> Vec<String> {
    let mut out = Vec::new();
    for (k, inner) in v.as_object().unwrap() {
        out.push(k.clone());
        if let Some(obj) = inner.as_object() {
            for (k2, leaf) in obj {
                let kind = match leaf {
                    serde_json::Value::Number(_) => "number",
                    serde_json::Value::String(_) => "string",
                    serde_json::Value::Bool(_) => "bool",
                    serde_json::Value::Array(_) => "array",
                    serde_json::Value::Object(_) => "object",
                    serde_json::Value::Null => "null",
                };
                out.push(format!("{k}.{k2}:{kind}"));
            }
        }
    }
    out
}

#[test]
fn the_status_line_command_reads_claude_codes_json_and_shows_above_each_prompt() {
    use crate::agent::loopback::{Api, Loopback, Turn};
    let sandbox = Sandbox::new("proj", &[]);
    let status = sandbox.script(
        "status.sh",
        "tee -a \"$CLAUDE_PROJECT_DIR/status.jsonl\" | python3 -c 'import json,sys; d=json.load(sys.stdin); c=d[\"context_window\"]; print(\"ST-%s-out%d-added%d\" % (d[\"model\"][\"id\"], c[\"total_output_tokens\"], d[\"cost\"][\"total_lines_added\"]))'; echo >> \"$CLAUDE_PROJECT_DIR/status.jsonl\"; echo second-line",
    );
    sandbox.settings(json!({"statusLine": {"type": "command", "command": status}}));
    let made = sandbox.path("made.txt").display().to_string();
    let server = Loopback::start(
        Api::Anthropic,
        vec![
            Turn::text("ONE"),
            Turn::call(
                "w1",
                "Write",
                json!({"file_path": made, "content": "a\nb\nc\n"}),
            ),
            Turn::text("TWO"),
        ],
    );
    let (tmux, _code_file) = launch_with(
        &sandbox,
        &[
            "--provider",
            "anthropic",
            "--model",
            "claude-status",
            "--trust",
            "--permission-mode",
            "acceptEdits",
        ],
        &[
            ("ANTHROPIC_BASE_URL", &server.url),
            ("ANTHROPIC_API_KEY", "test-key"),
            ("REIN_MAX_RETRIES", "0"),
        ],
    );
    tmux.wait_for("the first drawing", |s| {
        s.contains("  ST-claude-status-out0-added0\n  second-line") && at_input_prompt(s)
    });
    tmux.type_line("hello");
    tmux.wait_for("the drawing after the reply", |s| {
        s.contains("ONE") && s.contains("ST-claude-status-out2-added0") && at_input_prompt(s)
    });
    tmux.type_line("write it");
    tmux.wait_for("the drawing after the edit", |s| {
        s.contains("TWO") && s.contains("ST-claude-status-out6-added3") && at_input_prompt(s)
    });
    assert!(sandbox.exists("made.txt"));

    let runs = jsonl(&sandbox.path("status.jsonl"));
    assert_eq!(runs.len(), 3, "one drawing at start, one after each prompt");
    assert!(runs[0].get("prompt_id").is_none(), "{}", runs[0]);
    assert!(runs[2]["prompt_id"].is_string(), "{}", runs[2]);
    assert_eq!(runs[2]["session_id"], runs[0]["session_id"]);
    assert_eq!(
        runs[2]["workspace"]["project_dir"],
        sandbox.project.display().to_string()
    );
    assert_eq!(
        runs[2]["context_window"]["current_usage"]["input_tokens"],
        10
    );
    assert_eq!(runs[2]["cost"]["total_lines_removed"], 0);
    // Claude Code's keys and the kinds of their members, as its third run had them (without
    // what rein has no counterpart for: its prompt-cache report, thinking, effort).
    let fixture = jsonl(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/cc-2.1.328/status_line/status-stdin.jsonl"),
    );
    assert_eq!(fixture.len(), 3, "Claude Code drew it three times too");
    let ours = status_shape(&runs[2]);
    let missing: Vec<String> = status_shape(&fixture[2])
        .into_iter()
        .filter(|k| {
            !k.starts_with("prompt_cache") && !k.starts_with("thinking") && !k.starts_with("effort")
        })
        .filter(|k| !ours.contains(k))
        .collect();
    assert!(missing.is_empty(), "missing {missing:?}; ours: {ours:?}");
}

#[test]
fn a_failing_status_line_shows_nothing_and_says_why_once() {
    let sandbox = Sandbox::new("proj", &[]);
    let status = sandbox.script("status.sh", "cat > /dev/null; echo NEVER-SHOWN; exit 3");
    sandbox.settings(json!({"statusLine": {"type": "command", "command": status}}));
    let (tmux, _code_file) = launch_with(&sandbox, &["--trust"], &[]);
    tmux.wait_for("the first prompt", at_input_prompt);
    tmux.type_line("/cost");
    tmux.wait_for("the cost", |s| {
        s.contains("Tokens this session") && at_input_prompt(s)
    });
    tmux.type_line("/cost");
    let screen = tmux.wait_for("the second cost", |s| {
        s.matches("Tokens this session").count() == 2 && at_input_prompt(s)
    });
    assert!(!screen.contains("NEVER-SHOWN"), "{screen}");
    assert_eq!(
        screen.matches("exited 3; nothing shown").count(),
        1,
        "{screen}"
    );
}

#[test]
fn a_repositorys_status_line_is_in_the_trust_question_and_does_not_run_when_declined() {
    let sandbox = Sandbox::new("proj", &["proj/.claude"]);
    let status = sandbox.script("status.sh", "cat > /dev/null; touch status-ran; echo hi");
    sandbox.settings(json!({"statusLine": {"type": "command", "command": status}}));
    let (tmux, code_file) = launch(&sandbox);
    let screen = tmux.wait_for("the trust question", |s| s.contains(TRUST_QUESTION));
    assert!(
        screen.contains("runs the status line command") && screen.contains("status.sh"),
        "{screen}"
    );
    tmux.type_line("n");
    assert_eq!(exit_code(&tmux, &code_file), "1");
    assert!(
        !sandbox.exists("status-ran"),
        "the untrusted status line ran"
    );
}

/// AskUserQuestion on a real terminal, against Claude Code 2.1.328's recording (fixture
/// `interactive/run8`): a picked answer and a multiSelect of two options reach PostToolUse in
/// `tool_input.answers` with `annotations: {}`, PermissionRequest fires without
/// `permission_suggestions`, the model gets Claude Code's result text; an answer typed instead
/// gets the other text; an empty line cancels and stops the turn as Esc does in Claude Code (no
/// PostToolUse, no Stop, the rejection and the interruption note in the transcript).
#[test]
fn ask_user_question_is_a_real_choice_and_a_cancel_stops_the_turn() {
    let sandbox = Sandbox::new("proj", &[]);
    recording_hooks_for(
        &sandbox,
        &[
            "PreToolUse",
            "PermissionRequest",
            "Notification",
            "PostToolUse",
            "Stop",
        ],
    );
    let fixture: Vec<serde_json::Value> = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/cc-2.1.328/interactive/run8-hooks.jsonl"),
    )
    .unwrap()
    .lines()
    .map(|l| serde_json::from_str(l).unwrap())
    .collect();
    let cc_input = |i: usize| {
        fixture
            .iter()
            .filter(|h| h["hook_event_name"] == "PreToolUse")
            .nth(i)
            .unwrap()["tool_input"]
            .clone()
    };
    let script = sandbox.mock(json!([
        {"tool_use": [{"name": "AskUserQuestion", "input": cc_input(0)}]},
        {"text": "got two answers"},
        {"tool_use": [{"name": "AskUserQuestion", "input": cc_input(1)}]},
        {"text": "got typed answer"},
        {"tool_use": [{"name": "AskUserQuestion", "input": cc_input(2)}]},
        {"text": "after the cancel"},
    ]));
    let script = script.display().to_string();
    let (tmux, code_file) = launch_with(&sandbox, &["--mock-script", &script, "--trust"], &[]);
    tmux.wait_for("the first prompt", at_input_prompt);

    tmux.type_line("ask two");
    tmux.wait_for("the first question", |s| {
        s.contains("Which colour do you want?") && s.contains("3. Type your own answer")
    });
    tmux.type_line("1");
    tmux.wait_for("the second question", |s| s.contains("e.g. 1,3"));
    tmux.type_line("3,1");
    tmux.wait_for("the reply", |s| {
        s.contains("got two answers") && at_input_prompt(s)
    });

    tmux.type_line("ask typed");
    tmux.wait_for("the name question", |s| s.contains("Pick a name?"));
    tmux.type_line("3");
    tmux.wait_for("the answer line", |s| s.contains("Your answer >"));
    tmux.type_line("Carol the third");
    tmux.wait_for("the reply", |s| {
        s.contains("got typed answer") && at_input_prompt(s)
    });

    tmux.type_line("ask cancel");
    tmux.wait_for("the go question", |s| s.contains("Go on?"));
    tmux.ok(&["send-keys", "-t", "rein", "Enter"]);
    tmux.wait_for("the stopped turn", |s| {
        s.contains("Interrupted") && at_input_prompt(s)
    });
    tmux.type_line("and now");
    tmux.wait_for("the next reply", |s| {
        s.contains("after the cancel") && at_input_prompt(s)
    });

    // What hooks saw, against Claude Code's.
    let rein_post = jsonl(&sandbox.path("PostToolUse.jsonl"));
    let cc_post: Vec<&serde_json::Value> = fixture
        .iter()
        .filter(|h| h["hook_event_name"] == "PostToolUse")
        .collect();
    assert_eq!(
        rein_post.len(),
        2,
        "no PostToolUse for the cancelled call: {rein_post:?}"
    );
    // run8 picked Red + Small, Huge, then typed "Carol the third": the same answers here.
    assert_eq!(rein_post[0]["tool_input"], cc_post[0]["tool_input"]);
    assert_eq!(rein_post[0]["tool_response"], cc_post[0]["tool_response"]);
    assert_eq!(rein_post[1]["tool_input"], cc_post[1]["tool_input"]);
    assert_eq!(rein_post[1]["tool_response"], cc_post[1]["tool_response"]);
    let requests = jsonl(&sandbox.path("PermissionRequest.jsonl"));
    assert_eq!(requests.len(), 3);
    for r in &requests {
        assert!(r.get("permission_suggestions").is_none(), "{r}");
        assert_eq!(r["tool_name"], "AskUserQuestion");
    }
    let notices = jsonl(&sandbox.path("Notification.jsonl"));
    assert!(
        notices
            .iter()
            .all(|n| n["notification_type"] == "permission_prompt"),
        "{notices:?}"
    );
    assert_eq!(jsonl(&sandbox.path("PreToolUse.jsonl")).len(), 3);
    // Stop fired for the two answered turns and the last one, not for the cancelled turn.
    assert_eq!(jsonl(&sandbox.path("Stop.jsonl")).len(), 3);

    // What the model was told (the transcript holds what is sent).
    let transcript = std::fs::read_to_string(sandbox_transcript(&sandbox)).unwrap();
    for text in [
        r#"Your questions have been answered: \"Which colour do you want?\"=\"Red\", \"Which sizes?\"=\"Small, Huge\". You can now continue with these answers in mind."#,
        r#"The user answered: \"Pick a name?\"=\"Carol the third\". Read the answers carefully"#,
        "STOP what you are doing and wait for the user to tell you how to proceed.",
        "[Request interrupted by user for tool use]",
    ] {
        assert!(
            transcript.contains(text),
            "missing {text:?} in:\n{transcript}"
        );
    }
    tmux.type_line("/exit");
    assert_eq!(exit_code(&tmux, &code_file), "0");
}

/// A PermissionRequest hook that answers AskUserQuestion with `updatedInput.answers` answers it
/// without the dialog, and a deny rule refuses it without asking; in both the person is never
/// asked and the session goes on.
#[test]
fn ask_user_question_answered_by_a_hook_or_refused_by_a_rule_asks_nobody() {
    let question = json!({"questions": [{"question": "Deploy now?", "header": "Deploy",
        "options": [{"label": "Yes", "description": "ship it"},
                    {"label": "No", "description": "wait"}], "multiSelect": false}]});
    // The hook answers "No" from a script, and logs what PostToolUse saw.
    let sandbox = Sandbox::new("proj", &[]);
    let mut answered = question.clone();
    answered["answers"] = json!({"Deploy now?": "No"});
    let answer = json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
        "decision": {"behavior": "allow", "updatedInput": answered}}});
    sandbox.write("answer.json", &answer.to_string());
    let post = sandbox.path("post.jsonl");
    sandbox.settings(json!({"hooks": {
        "PermissionRequest": [{"matcher": "AskUserQuestion", "hooks": [{"type": "command",
            "command": format!("cat >/dev/null; cat '{}'", sandbox.path("answer.json").display())}]}],
        "PostToolUse": [{"matcher": "*", "hooks": [{"type": "command",
            "command": format!("cat >> '{}'; echo >> '{}'", post.display(), post.display())}]}]
    }}));
    let script = sandbox.mock(json!([
        {"tool_use": [{"name": "AskUserQuestion", "input": question}]},
        {"text": "the hook answered"},
    ]));
    let script = script.display().to_string();
    let (tmux, code_file) = launch_with(&sandbox, &["--mock-script", &script, "--trust"], &[]);
    tmux.wait_for("the first prompt", at_input_prompt);
    tmux.type_line("ask");
    let screen = tmux.wait_for("the reply", |s| {
        s.contains("the hook answered") && at_input_prompt(s)
    });
    assert!(
        !screen.contains("Type your own answer"),
        "the person was asked:\n{screen}"
    );
    let seen = jsonl(&post);
    assert_eq!(seen.len(), 1);
    assert_eq!(
        seen[0]["tool_input"]["answers"],
        json!({"Deploy now?": "No"})
    );
    tmux.type_line("/exit");
    assert_eq!(exit_code(&tmux, &code_file), "0");

    let denied = Sandbox::new("proj", &[]);
    denied.settings(json!({"permissions": {"deny": ["AskUserQuestion"]}}));
    let script = denied.mock(json!([
        {"tool_use": [{"name": "AskUserQuestion", "input": question}]},
        {"text": "refused, going on"},
    ]));
    let script = script.display().to_string();
    let (tmux, code_file) = launch_with(&denied, &["--mock-script", &script, "--trust"], &[]);
    tmux.wait_for("the first prompt", at_input_prompt);
    tmux.type_line("ask");
    let screen = tmux.wait_for("the reply", |s| {
        s.contains("refused, going on") && at_input_prompt(s)
    });
    assert!(
        !screen.contains("Type your own answer"),
        "the person was asked:\n{screen}"
    );
    let transcript = std::fs::read_to_string(sandbox_transcript(&denied)).unwrap();
    assert!(
        transcript.contains("AskUserQuestion") && transcript.contains("denied"),
        "{transcript}"
    );
    tmux.type_line("/exit");
    assert_eq!(exit_code(&tmux, &code_file), "0");
}

/// `/mode` switches the permission mode for the following calls: started in plan mode, a Write
/// is refused and its file never appears; after `/mode acceptEdits` the same Write runs, and
/// hooks see the new mode. bypassPermissions is refused unless the session could have started
/// in it, and the mode stays.
#[test]
fn slash_mode_switches_the_permission_mode_for_the_next_calls() {
    let sandbox = Sandbox::new("proj", &[]);
    recording_hooks_for(&sandbox, &["PreToolUse"]);
    let target = sandbox.project.join("made.txt");
    let write = json!({"tool_use": [{"name": "Write", "input": {
        "file_path": target.display().to_string(), "content": "made\n"}}]});
    let script =
        sandbox.mock(json!([write, {"text": "refused in plan mode"}, write, {"text": "written"}]));
    let script = script.display().to_string();
    let (tmux, code_file) = launch_with(
        &sandbox,
        &[
            "--mock-script",
            &script,
            "--trust",
            "--permission-mode",
            "plan",
        ],
        &[],
    );
    tmux.wait_for("the first prompt", at_input_prompt);
    tmux.type_line("write it");
    tmux.wait_for("the refusal", |s| {
        s.contains("refused in plan mode") && at_input_prompt(s)
    });
    assert!(!target.exists(), "plan mode let the Write run");

    tmux.type_line("/mode bypassPermissions");
    tmux.wait_for("the refused switch", |s| {
        s.contains("/mode bypassPermissions:") && at_input_prompt(s)
    });
    tmux.type_line("/mode");
    tmux.wait_for("the mode", |s| s.contains("Permission mode: plan"));
    tmux.type_line("/mode acceptEdits");
    tmux.wait_for("the switch", |s| {
        s.contains("Permission mode: acceptEdits") && at_input_prompt(s)
    });
    tmux.type_line("write it now");
    tmux.wait_for("the write", |s| s.contains("written") && at_input_prompt(s));
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "made\n");
    let modes: Vec<String> = jsonl(&sandbox.path("PreToolUse.jsonl"))
        .iter()
        .map(|h| h["permission_mode"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(modes, ["plan", "acceptEdits"]);
    tmux.type_line("/exit");
    assert_eq!(exit_code(&tmux, &code_file), "0");
}

/// EnterPlanMode and ExitPlanMode on a real terminal, as Claude Code 2.1.328 runs them (fixture
/// `interactive/run7`, `run9`–`run11`): ExitPlanMode outside plan mode is Claude Code's
/// validation error and no hook fires; EnterPlanMode switches without asking and its own
/// PostToolUse sees `plan`; in plan mode a Write to the project is refused (the victim file
/// never appears) but the plan file may be written; ExitPlanMode shows the plan, feedback keeps
/// planning with Claude Code's text, and approval switches the mode (PostToolUse sees it) so
/// the next Write runs.
#[test]
fn plan_mode_tools_enter_review_and_leave_plan_mode() {
    let sandbox = Sandbox::new("proj", &[]);
    recording_hooks_for(&sandbox, &["PreToolUse", "PostToolUse"]);
    let session_id = "5d1c7a52-4c1e-4f43-9d8e-1a2b3c4d5e6f";
    let plan_file = sandbox
        .home
        .join(".rein/projects")
        .join(
            sandbox
                .project
                .display()
                .to_string()
                .replace(['/', '.'], "-"),
        )
        .join(session_id)
        .join("plan.md");
    let victim = sandbox.project.join("victim.txt");
    let made = sandbox.project.join("made.txt");
    let write = |path: &Path, content: &str| {
        json!({"tool_use": [{"name": "Write", "input": {
            "file_path": path.display().to_string(), "content": content}}]})
    };
    let exit = json!({"tool_use": [{"name": "ExitPlanMode", "input": {}}]});
    let script = sandbox.mock(json!([
        exit, {"text": "not in plan mode"},
        {"tool_use": [{"name": "EnterPlanMode", "input": {}}]}, {"text": "entered"},
        write(&victim, "gone\n"), {"text": "victim refused"},
        write(&plan_file, "# The plan\n\n1. Make made.txt\n"), exit, {"text": "revising"},
        exit, {"text": "approved"},
        write(&made, "made\n"), {"text": "made it"},
    ]));
    let script = script.display().to_string();
    let (tmux, code_file) = launch_with(
        &sandbox,
        &[
            "--mock-script",
            &script,
            "--trust",
            "--session-id",
            session_id,
        ],
        &[],
    );
    tmux.wait_for("the first prompt", at_input_prompt);
    tmux.type_line("exit");
    tmux.wait_for("the error", |s| {
        s.contains("not in plan mode") && at_input_prompt(s)
    });
    assert!(
        !sandbox.path("PreToolUse.jsonl").exists(),
        "a hook fired for the invalid call"
    );
    tmux.type_line("enter");
    tmux.wait_for("plan mode", |s| s.contains("entered") && at_input_prompt(s));
    tmux.type_line("victim");
    tmux.wait_for("the refusal", |s| {
        s.contains("victim refused") && at_input_prompt(s)
    });
    assert!(!victim.exists(), "plan mode let a Write to the project run");

    tmux.type_line("plan it");
    tmux.wait_for("the plan review", |s| {
        s.contains("1. Make made.txt") && s.contains("Enter alone says no")
    });
    assert_eq!(
        std::fs::read_to_string(&plan_file).unwrap(),
        "# The plan\n\n1. Make made.txt\n"
    );
    tmux.type_line("add a test step");
    tmux.wait_for("the revision", |s| {
        s.contains("revising") && at_input_prompt(s)
    });
    tmux.type_line("again");
    tmux.wait_for("the second review", |s| {
        s.matches("Enter alone says no").count() == 2
    });
    tmux.type_line("1");
    tmux.wait_for("the approval", |s| {
        s.contains("approved") && at_input_prompt(s)
    });
    tmux.type_line("make it");
    tmux.wait_for("the write", |s| s.contains("made it") && at_input_prompt(s));
    assert_eq!(std::fs::read_to_string(&made).unwrap(), "made\n");
    assert!(!victim.exists());

    let pre = jsonl(&sandbox.path("PreToolUse.jsonl"));
    let post = jsonl(&sandbox.path("PostToolUse.jsonl"));
    let named = |list: &[serde_json::Value], name: &str| -> Vec<serde_json::Value> {
        list.iter()
            .filter(|h| h["tool_name"] == name)
            .cloned()
            .collect()
    };
    let enter_pre = named(&pre, "EnterPlanMode");
    let enter_post = named(&post, "EnterPlanMode");
    assert_eq!(enter_pre[0]["permission_mode"], "default");
    assert_eq!(enter_post[0]["permission_mode"], "plan");
    assert_eq!(
        enter_post[0]["tool_response"],
        json!({"message": "Entered plan mode. You should now focus on exploring the codebase and designing an implementation approach."})
    );
    let exit_pre = named(&pre, "ExitPlanMode");
    assert_eq!(exit_pre.len(), 2);
    let path = plan_file.display().to_string();
    assert_eq!(
        exit_pre[0]["tool_input"],
        json!({"plan": "# The plan\n\n1. Make made.txt\n", "planFilePath": path})
    );
    let exit_post = named(&post, "ExitPlanMode");
    assert_eq!(exit_post.len(), 1, "the revised call has no PostToolUse");
    assert_eq!(exit_post[0]["permission_mode"], "acceptEdits");
    // PostToolUse sees what the model sent (Claude Code 2.1.328: `{}`, fixture run11).
    assert_eq!(exit_post[0]["tool_input"], json!({}));
    assert_eq!(
        exit_post[0]["tool_response"],
        json!({"plan": "# The plan\n\n1. Make made.txt\n", "isAgent": false, "filePath": path})
    );
    assert_eq!(named(&post, "Write").len(), 2, "the plan file and made.txt");

    let transcript = std::fs::read_to_string(sandbox_transcript(&sandbox)).unwrap();
    for text in [
        "To tell you how to proceed, the user said:\\nadd a test step",
        "User has approved your plan. You can now start coding.",
        "## Approved Plan:\\n# The plan",
    ] {
        assert!(
            transcript.contains(text),
            "missing {text:?} in:\n{transcript}"
        );
    }
    tmux.type_line("/exit");
    assert_eq!(exit_code(&tmux, &code_file), "0");
}
