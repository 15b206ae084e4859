//! `-p --input-format stream-json --output-format stream-json`: user messages arrive as JSON
//! lines on stdin, each one a turn of the same session, as Claude Code 2.1.328 reads them
//! (fixtures `tests/fixtures/cc-2.1.328/stream_io/input_*`, recorded by `record.py` there).
//!
//! What a line may be:
//! - `{"type": "user", "message": {"role": "user", "content": …}}`: a turn. `content` is a
//!   string or an array of `text` blocks (joined with a newline). Other keys of the line are
//!   ignored. A `message` without `role: "user"` is an error (`Expected message role 'user',
//!   got …`, as Claude Code says it), and so is a non-text block (rein sends text only). A
//!   `content` that is neither a string nor an array is skipped with a warning (Claude Code
//!   skips it silently).
//! - `{"type": "control_request", "request_id": …, "request": {"subtype": "interrupt"}}`: stops
//!   the running turn as Ctrl+C does (its tools' process groups are killed, each unanswered
//!   call gets an interrupted result); answered with a `control_response` of subtype `success`
//!   at once. Every other subtype is answered by [`crate::cli::sdk::requests`] (the Agent
//!   SDK's requests; an unknown one gets Claude Code's `unsupported_request` error). A request
//!   without a `request_id` cannot be answered: reported on stderr and ignored.
//! - `{"type": "control_response", …}`: the SDK's answer to a request rein sent; the reader
//!   thread hands it to [`crate::cli::sdk::Control`] at once, whatever the session is doing.
//! - a blank line, or any other `type`: ignored, as in Claude Code.
//! - anything that is not a JSON object: an error. The turns of the lines before it finish and
//!   keep their output — except when it comes while rein waits for an answer of the SDK's (a
//!   `can_use_tool`, a hook callback): it is then taken for that answer, unreadable, and stops
//!   the running turn as an interrupt does, so the call asked about never runs. Then rein says
//!   which stdin line is wrong and why, and exits 1 (Claude Code also exits 1, but drops what
//!   it had not written yet).
//!
//! A background command that ends while no turn runs gets a turn of its own at once (its
//! `<task-notification>`), as Claude Code wakes the session for it; with the Agent SDK's
//! `CLAUDE_CODE_SDK_READS_SESSION_STATE=1`, `session_state_changed` lines say when a turn
//! runs and when nothing is owed any more (`idle`).
//!
//! Messages that arrive while a turn runs wait their turn, in order. End of stdin ends the
//! session once the running turn and the waiting messages are done (a turn in progress is not
//! cut short) and, as after a `-p` prompt, once the background commands still running have
//! ended, each with a turn of its own. Each turn writes its own `init` and `result` lines.

use std::collections::VecDeque;
use std::io::BufRead;
use std::sync::Arc;
use std::time::Instant;

use serde_json::{Value, json};
use tokio::signal::unix::Signal;
use tokio::sync::mpsc;

use crate::agent::session::Session;
use crate::cli::render::StreamJson;

/// One stdin line, understood.
#[derive(Debug, Clone, PartialEq)]
pub enum Input {
    /// A user message: the prompt's text, and the message as given (for the echo).
    User {
        /// The stdin line it came from (1-based).
        line: usize,
        /// The prompt.
        text: String,
        /// The `message` object as it was read.
        message: Value,
    },
    /// `control_request` `interrupt`.
    Interrupt {
        /// Its `request_id`, answered in the response.
        request_id: Value,
    },
    /// Another `control_request` (answered by [`crate::cli::sdk::requests`]).
    Control {
        /// The stdin line it came from (1-based).
        line: usize,
        /// Its `request_id` (`None`: it has none, so it cannot be answered).
        request_id: Option<Value>,
        /// Its `request.subtype`.
        subtype: String,
        /// Its `request` object.
        request: Value,
    },
    /// A `control_response`: the SDK's answer to a request rein sent. The reader hands it to
    /// [`crate::cli::sdk::Control::deliver`] itself; it reaches the loop only without one.
    Response {
        /// The stdin line (1-based).
        line: usize,
        /// Its `response` object.
        response: Value,
    },
    /// A line that ends the session with an error: what is wrong with it.
    Invalid {
        /// The stdin line (1-based).
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// Not a line: a background command ended while no turn ran (it gets a turn).
    BackgroundEnded,
    /// A line that is skipped with a warning.
    Skipped {
        /// The stdin line (1-based).
        line: usize,
        /// Why.
        message: String,
    },
}

/// What stdin line `line` (1-based) says; `None` for a line to ignore.
pub fn parse_line(line: usize, text: &str) -> Option<Input> {
    if text.trim().is_empty() {
        return None;
    }
    let value: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            return Some(Input::Invalid {
                line,
                message: format!("not valid JSON ({e})"),
            });
        }
    };
    let Some(object) = value.as_object() else {
        return Some(Input::Invalid {
            line,
            message: format!(
                "expected a JSON object, got {}",
                crate::json_kind::with_article(&value)
            ),
        });
    };
    match object.get("type").and_then(Value::as_str) {
        Some("user") => Some(user_message(line, object.get("message"))),
        Some("control_request") => {
            let request_id = object.get("request_id").filter(|v| !v.is_null()).cloned();
            let request = object.get("request").cloned().unwrap_or(Value::Null);
            let subtype = request
                .get("subtype")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            Some(match request_id {
                Some(request_id) if subtype == "interrupt" => Input::Interrupt { request_id },
                request_id => Input::Control {
                    line,
                    request_id,
                    subtype,
                    request,
                },
            })
        }
        Some("control_response") => Some(Input::Response {
            line,
            response: object.get("response").cloned().unwrap_or(Value::Null),
        }),
        other => {
            tracing::debug!(
                "stdin line {line}: message type {other:?} ignored (rein reads `user` messages and `control_request` interrupts)"
            );
            None
        }
    }
}

fn user_message(line: usize, message: Option<&Value>) -> Input {
    let role = message.and_then(|m| m.get("role"));
    if role.and_then(Value::as_str) != Some("user") {
        let got = match role {
            None => "'undefined'".to_string(),
            Some(Value::String(s)) => format!("'{s}'"),
            Some(other) => other.to_string(),
        };
        return Input::Invalid {
            line,
            message: format!("Expected message role 'user', got {got}"),
        };
    }
    let Some(message) = message else {
        // Unreachable: a role was found in it.
        return Input::Invalid {
            line,
            message: "no message".to_string(),
        };
    };
    let text = match message.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(blocks)) => {
            let mut texts = Vec::with_capacity(blocks.len());
            for (i, block) in blocks.iter().enumerate() {
                match block.get("type").and_then(Value::as_str) {
                    Some("text") => match block.get("text").and_then(Value::as_str) {
                        Some(t) => texts.push(t),
                        None => {
                            return Input::Invalid {
                                line,
                                message: format!("content block {i}: a text block without text"),
                            };
                        }
                    },
                    other => {
                        return Input::Invalid {
                            line,
                            message: format!(
                                "content block {i}: type {} is not supported by rein (only text blocks)",
                                other.map_or("(none)".to_string(), |t| format!("'{t}'"))
                            ),
                        };
                    }
                }
            }
            texts.join("\n")
        }
        other => {
            return Input::Skipped {
                line,
                message: format!(
                    "the message's content is {}, not a string or an array of blocks; it is skipped",
                    other.map_or("missing", crate::json_kind::with_article)
                ),
            };
        }
    };
    Input::User {
        line,
        text,
        message: message.clone(),
    }
}

/// Reads stdin line by line on a thread of its own and sends what each line says; the
/// channel closes at end of stdin (or a read error, which is sent as the last item). The SDK's
/// answers to rein's requests go straight to `control` (whatever the session is doing), which
/// is closed when stdin ends.
pub fn spawn_reader(control: Arc<crate::cli::sdk::Control>) -> mpsc::UnboundedReceiver<Input> {
    let (tx, rx) = mpsc::unbounded_channel();
    let closing = Arc::clone(&control);
    let _closes = CloseAtEnd(closing);
    let spawned = std::thread::Builder::new()
        .name("rein-stdin".into())
        .spawn(move || {
            let _closes = _closes;
            let stdin = std::io::stdin();
            let mut stdin = stdin.lock();
            let mut buf = Vec::new();
            let mut line = 0usize;
            loop {
                buf.clear();
                match stdin.read_until(b'\n', &mut buf) {
                    Ok(0) => return,
                    Ok(_) => {}
                    Err(e) => {
                        let _ = tx.send(Input::Invalid {
                            line: line + 1,
                            message: format!("cannot read stdin: {e}"),
                        });
                        return;
                    }
                }
                line += 1;
                let item = match std::str::from_utf8(&buf) {
                    Ok(text) => parse_line(line, text),
                    Err(e) => Some(Input::Invalid {
                        line,
                        message: format!("not UTF-8 ({e})"),
                    }),
                };
                let item = match item {
                    Some(Input::Response { line, response }) => {
                        if let Err(why) = control.deliver(&response) {
                            eprintln!("rein: warning: stdin line {line}: {why}; ignored");
                        }
                        continue;
                    }
                    other => other,
                };
                if let Some(item) = item
                    && tx.send(item).is_err()
                {
                    return;
                }
            }
        });
    if let Err(e) = spawned {
        eprintln!("rein: cannot start reading stdin: {e}");
    }
    rx
}

/// Closes the SDK's [`crate::cli::sdk::Control`] when the reader ends (or cannot start).
struct CloseAtEnd(Arc<crate::cli::sdk::Control>);

impl Drop for CloseAtEnd {
    fn drop(&mut self) {
        self.0.close();
    }
}

/// The `control_response` to a request rein handled.
pub fn control_success(request_id: &Value) -> Value {
    crate::cli::sdk::requests::response_line(request_id, Ok(json!({"still_queued": []})))
}

/// How the loop ended.
pub enum Ended {
    /// stdin ended (or a bad line): the exit code, and the last turn's outcome when it
    /// completed and stdin ended normally (background commands are then followed).
    Finished(i32, Option<crate::agent::session::TurnOutcome>),
    /// SIGINT/SIGTERM: its exit code and name.
    Signal(i32, &'static str),
}

/// What stopped a running turn early.
enum Cut {
    Interrupt,
    /// A stdin line that ends the session (not JSON, say) while rein waits for an SDK answer:
    /// the turn stops as at an interrupt — what waited for the answer never gets one, so
    /// nothing it asked about runs — then rein reports the line and exits 1.
    Invalid(usize, String),
    Signal(i32, &'static str),
}

/// What the loop reads: stdin's items (from [`spawn_reader`]) and those read before it
/// started (the session's setup looks at the first line for the SDK's `initialize`).
pub struct Inputs {
    pub rx: mpsc::UnboundedReceiver<Input>,
    pub queue: VecDeque<Input>,
}

/// A control request answered between turns: its id, subtype and request.
type Deferred = (Value, String, Value);

/// The turns of the messages on stdin, until it ends. Each turn's `result` line is written
/// by `report` (the same as a `-p` run's); an interrupted turn gets an error result of its
/// own. Control requests are answered by `sdk` (see [`crate::cli::sdk::requests`]).
#[allow(clippy::too_many_arguments)]
pub async fn run(
    session: &mut Session,
    stream: &Arc<StreamJson>,
    inputs: Inputs,
    sdk: &crate::cli::sdk::requests::Sdk,
    replay: bool,
    sigint: &mut Signal,
    sigterm: &mut Signal,
    report: &dyn Fn(&crate::agent::session::TurnOutcome, u64) -> i32,
) -> Ended {
    let Inputs { mut rx, mut queue } = inputs;
    let mut open = true;
    let mut code = crate::cli::EXIT_OK;
    let mut last = None;
    let mut deferred: VecDeque<Deferred> = VecDeque::new();
    loop {
        while let Some((id, subtype, request)) = deferred.pop_front() {
            let answer = sdk.answer_with_session(session, &subtype, &request).await;
            emit_answer(stream, &id, answer);
        }
        let item = match queue.pop_front() {
            Some(item) => item,
            None if open => {
                tokio::select! {
                    item = rx.recv() => match item {
                        Some(item) => item,
                        None => break,
                    },
                    // A background command ended while nothing ran: it gets a turn of its
                    // own now, as Claude Code wakes the session for it.
                    () = background_ended(&sdk.background) => Input::BackgroundEnded,
                    _ = sigint.recv() => return Ended::Signal(130, "SIGINT"),
                    _ = sigterm.recv() => return Ended::Signal(143, "SIGTERM"),
                }
            }
            None => break,
        };
        let (text, message) = match item {
            Input::BackgroundEnded => (None, None),
            Input::Invalid { line, message } => {
                eprintln!("Error: stdin line {line}: {message}");
                return Ended::Finished(crate::cli::EXIT_ERROR, None);
            }
            Input::Skipped { line, message } => {
                eprintln!("rein: warning: stdin line {line}: {message}");
                continue;
            }
            Input::Interrupt { request_id } => {
                // Nothing runs: acknowledged, nothing to stop.
                stream.emit(&control_success(&request_id));
                continue;
            }
            Input::Control {
                line,
                request_id,
                subtype,
                request,
            } => {
                let Some(id) = answerable(line, request_id, &subtype) else {
                    continue;
                };
                match sdk.answer_now(&subtype, &request).await {
                    crate::cli::sdk::requests::Answer::Later => {
                        let answer = sdk.answer_with_session(session, &subtype, &request).await;
                        emit_answer(stream, &id, answer);
                    }
                    answer => emit_answer(stream, &id, answer),
                }
                continue;
            }
            Input::Response { line, .. } => {
                eprintln!(
                    "rein: warning: stdin line {line}: a control_response rein cannot route; ignored"
                );
                continue;
            }
            Input::User { text, message, .. } => (Some(text), Some(message)),
        };
        sdk.control.session_state("running");
        if let Some(message) = &message {
            stream.emit_turn_init();
            if replay {
                stream.emit(&stream.replay_line(message));
            }
        }
        let started = Instant::now();
        let before = session.usage().clone();
        let outcome = {
            let turn = async {
                match &text {
                    Some(text) => Some(session.run_prompt(text).await),
                    None => session.run_background_notification().await,
                }
            };
            tokio::pin!(turn);
            loop {
                tokio::select! {
                    outcome = &mut turn => break Ok(outcome),
                    item = rx.recv(), if open => match item {
                        Some(Input::Interrupt { request_id }) => {
                            stream.emit(&control_success(&request_id));
                            break Err(Cut::Interrupt);
                        }
                        Some(Input::Invalid { line, message }) if sdk.control.waiting() > 0 => {
                            break Err(Cut::Invalid(line, message));
                        }
                        Some(Input::Control { line, request_id, subtype, request }) => {
                            let Some(id) = answerable(line, request_id, &subtype) else {
                                continue;
                            };
                            match sdk.answer_now(&subtype, &request).await {
                                crate::cli::sdk::requests::Answer::Later => {
                                    deferred.push_back((id, subtype, request));
                                }
                                answer => emit_answer(stream, &id, answer),
                            }
                        }
                        Some(other) => queue.push_back(other),
                        None => open = false,
                    },
                    _ = sigint.recv() => break Err(Cut::Signal(130, "SIGINT")),
                    _ = sigterm.recv() => break Err(Cut::Signal(143, "SIGTERM")),
                }
            }
        };
        let elapsed = started.elapsed().as_millis() as u64;
        match outcome {
            // A background command's turn that found nothing to tell.
            Ok(None) => {}
            Ok(Some(outcome)) => {
                let turn_code = report(&outcome, elapsed);
                stream.turn_done();
                if turn_code != crate::cli::EXIT_OK {
                    code = turn_code;
                }
                last = Some(outcome);
            }
            Err(Cut::Interrupt) => {
                last = None;
                stream.turn_done();
                // The turn's future was dropped: its tools' process groups are gone.
                let answered = session.interrupted();
                let (note, terminal_reason) = if answered > 0 {
                    (
                        "[Request interrupted by user for tool use]",
                        "aborted_tools",
                    )
                } else {
                    ("[Request interrupted by user]", "aborted_streaming")
                };
                session.note_for_model(note);
                stream.emit(&stream.user_text_line(note));
                let spent = spent(&before, session.usage());
                stream.emit(&interrupted_result(
                    &stream.session_id,
                    elapsed,
                    terminal_reason,
                    &spent,
                ));
            }
            Err(Cut::Signal(c, name)) => {
                session.interrupted();
                return Ended::Signal(c, name);
            }
            Err(Cut::Invalid(line, message)) => {
                stream.turn_done();
                session.interrupted();
                eprintln!("Error: stdin line {line}: {message}");
                return Ended::Finished(crate::cli::EXIT_ERROR, None);
            }
        }
        // Nothing is owed once no background command runs or waits for its turn: the SDK may
        // close stdin (it keeps it open while the state is `running`).
        if sdk.background.running().is_empty() && !sdk.background.has_unannounced() {
            sdk.control.session_state("idle");
        }
    }
    while let Some((id, subtype, request)) = deferred.pop_front() {
        let answer = sdk.answer_with_session(session, &subtype, &request).await;
        emit_answer(stream, &id, answer);
    }
    Ended::Finished(code, last)
}

/// Returns once a background command has ended that the model has not been told about
/// (never, while none runs or waits).
async fn background_ended(background: &crate::tools::background::BackgroundTasks) {
    loop {
        if background.has_unannounced() {
            return;
        }
        if background.running().is_empty() {
            std::future::pending::<()>().await;
        }
        background.wait_any(None).await;
    }
}

/// The request's id, or `None` (with a warning) when it has none to answer to.
fn answerable(line: usize, request_id: Option<Value>, subtype: &str) -> Option<Value> {
    if request_id.is_none() {
        eprintln!(
            "rein: warning: stdin line {line}: a control_request ({}) without a request_id cannot be answered; ignored",
            if subtype.is_empty() {
                "no subtype"
            } else {
                subtype
            }
        );
    }
    request_id
}

fn emit_answer(stream: &StreamJson, id: &Value, answer: crate::cli::sdk::requests::Answer) {
    use crate::cli::sdk::requests::{Answer, response_line};
    let line = match answer {
        Answer::Done(v) => response_line(id, Ok(v)),
        Answer::Failed(text, code) => response_line(id, Err((text, code))),
        // Unreachable: answered with the session by the caller.
        Answer::Later => response_line(id, Err(("not answered".to_string(), None))),
    };
    stream.emit(&line);
}

/// What a turn that was cut short spent: the session's usage after it less before it.
struct Spent {
    requests: u64,
    usage: crate::model::Usage,
    by_model: Vec<(String, crate::model::Usage)>,
}

fn spent(
    before: &crate::agent::session::SessionUsage,
    after: &crate::agent::session::SessionUsage,
) -> Spent {
    let by_model = after
        .by_model
        .iter()
        .map(|(model, usage)| {
            let earlier = before
                .by_model
                .iter()
                .find(|(m, _)| m == model)
                .map(|(_, u)| *u)
                .unwrap_or_default();
            (model.clone(), usage.since(&earlier))
        })
        .filter(|(_, u)| *u != crate::model::Usage::default())
        .collect();
    Spent {
        requests: after.requests.saturating_sub(before.requests),
        usage: after.total.since(&before.total),
        by_model,
    }
}

/// The `result` line of a turn an `interrupt` stopped (Claude Code's subtype, `is_error` and
/// `terminal_reason`; no `result` text). `num_turns` counts the turn's model replies.
fn interrupted_result(
    session_id: &str,
    duration_ms: u64,
    terminal_reason: &str,
    spent: &Spent,
) -> Value {
    let cost = crate::agent::cost::total_usd(&spent.by_model);
    let mut line = json!({
        "type": "result",
        "subtype": "error_during_execution",
        "is_error": true,
        "duration_ms": duration_ms,
        "duration_api_ms": 0,
        "num_turns": spent.requests,
        "stop_reason": null,
        "terminal_reason": terminal_reason,
        "session_id": session_id,
        "total_cost_usd": cost,
        "usage": crate::cli::render::usage_json(&spent.usage),
        "modelUsage": crate::cli::render::model_usage_json(&spent.by_model),
        "permission_denials": [],
        "errors": ["Request interrupted by user"],
    });
    if let Some(obj) = line.as_object_mut() {
        crate::cli::render::number_result(obj);
    }
    line
}

/// The checks Claude Code 2.1.328 makes on these flags, with its texts (exit 1), in its
/// order; `print` is whether the session is headless (`-p`, a prompt, `rein run`).
pub fn check_flags(args: &crate::cli::RunArgs, print: bool) -> Result<(), &'static str> {
    use crate::cli::{InputFormat, OutputFormat};
    let stream_out = args.output_format == OutputFormat::StreamJson;
    let stream_in = args.input_format == InputFormat::StreamJson;
    if stream_in && !stream_out {
        return Err("Error: --input-format=stream-json requires output-format=stream-json.");
    }
    if stream_in && !print {
        return Err("Error: --input-format=stream-json requires --print.");
    }
    if args.replay_user_messages && !(stream_in && stream_out) {
        return Err(
            "Error: --replay-user-messages requires both --input-format=stream-json and --output-format=stream-json.",
        );
    }
    if args.include_partial_messages && !(print && stream_out) {
        return Err(
            "Error: --include-partial-messages requires --print and --output-format=stream-json.",
        );
    }
    Ok(())
}
