//! Property tests over the two parsers that read text rein does not control: the hook-stdout
//! recogniser and interpreter ([`crate::hooks::output`], spec §4.1–4.4) and the matcher compiler
//! ([`crate::hooks::matcher`], spec §3). Whatever the input — arbitrary bytes, JSON-ish noise,
//! structured hook JSON with the real keys and wrong value types, deep nesting, huge strings,
//! on every event — they never panic, answer the same way twice, never apply an output that is
//! not one strict-UTF-8 JSON object, keep their messages bounded, and a matcher never costs
//! unbounded time or memory.
//!
//! Case counts stay modest for a 2-core CI machine; `PROPTEST_CASES` overrides them.

use std::time::{Duration, Instant};

use crate::hooks::command::RawRun;
use crate::hooks::matcher::Matcher;
use crate::hooks::output::{
    ECHO_MAX_CHARS, MAX_JSON_DEPTH, Recognised, expected_schema, interpret, recognise,
};
use crate::hooks::run::{OutcomeKind, RunStatus};
use crate::hooks::spec::HookEvent;
use crate::settings::schema::OnFailure;
use proptest::collection::{btree_map, vec};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

/// `n` cases unless `PROPTEST_CASES` says otherwise.
fn cases(n: u32) -> ProptestConfig {
    let n = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(n);
    ProptestConfig::with_cases(n)
}

// ---------------------------------------------------------------------------------------------
// Hook stdout

/// Top-level keys of hook JSON (spec §4.3) plus the async marker.
const TOP_KEYS: &[&str] = &[
    "continue",
    "stopReason",
    "suppressOutput",
    "decision",
    "reason",
    "systemMessage",
    "terminalSequence",
    "asyncTimeout",
    "async",
    "hookSpecificOutput",
];

/// `hookSpecificOutput` keys of every event (spec §4.4), and keys nested inside them.
const SPECIFIC_KEYS: &[&str] = &[
    "hookEventName",
    "permissionDecision",
    "permissionDecisionReason",
    "updatedInput",
    "additionalContext",
    "permissionDisplay",
    "decision",
    "behavior",
    "message",
    "interrupt",
    "updatedPermissions",
    "updatedToolOutput",
    "updatedMCPToolOutput",
    "classifierContext",
    "sessionTitle",
    "suppressOriginalPrompt",
    "initialUserMessage",
    "watchPaths",
    "reloadSkills",
    "retry",
    "action",
    "content",
    "worktreePath",
    "displayContent",
];

/// Strings a validator compares against, and some that look close.
const WORDS: &[&str] = &[
    "allow",
    "deny",
    "ask",
    "defer",
    "block",
    "approve",
    "accept",
    "decline",
    "cancel",
    "Allow",
    "",
    " ",
    "\u{1b}]0;t\u{7}",
    "\u{0}",
];

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => proptest::sample::select(TOP_KEYS).prop_map(str::to_string),
        3 => proptest::sample::select(SPECIFIC_KEYS).prop_map(str::to_string),
        1 => "\\PC{0,8}",
    ]
}

fn string_value() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => proptest::sample::select(WORDS).prop_map(str::to_string),
        2 => proptest::sample::select(HookEvent::ALL.to_vec()).prop_map(|e| e.as_str().to_string()),
        2 => ".{0,24}",
    ]
}

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("JSON numbers are finite", |f| f.is_finite())
            .prop_map(Value::from),
        string_value().prop_map(Value::from),
    ]
}

/// Any JSON value, objects keyed mostly by the real field names.
fn value() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            vec(inner.clone(), 0..5).prop_map(Value::Array),
            btree_map(key(), inner, 0..6).prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// A value of the type `key` has in hook JSON (spec §4.3–4.4); `specific` picks the
/// `hookSpecificOutput` meaning of `decision`.
fn typed(key: &'static str, specific: bool) -> BoxedStrategy<Value> {
    let pick = |words: &'static [&'static str]| {
        proptest::sample::select(words)
            .prop_map(Value::from)
            .boxed()
    };
    match key {
        "continue"
        | "suppressOutput"
        | "reloadSkills"
        | "suppressOriginalPrompt"
        | "retry"
        | "interrupt"
        | "async" => any::<bool>().prop_map(Value::from).boxed(),
        "decision" if specific => (
            pick(&["allow", "deny"]),
            proptest::option::of(btree_map("[a-z]{1,8}", value(), 0..3)),
            proptest::option::of(string_value()),
            proptest::option::of(any::<bool>()),
        )
            .prop_map(|(behavior, input, message, interrupt)| {
                let mut m = Map::new();
                m.insert("behavior".to_string(), behavior);
                if let Some(input) = input {
                    m.insert(
                        "updatedInput".to_string(),
                        Value::Object(input.into_iter().collect()),
                    );
                }
                if let Some(message) = message {
                    m.insert("message".to_string(), Value::from(message));
                }
                if let Some(interrupt) = interrupt {
                    m.insert("interrupt".to_string(), Value::from(interrupt));
                }
                Value::Object(m)
            })
            .boxed(),
        "decision" => pick(&["approve", "block"]),
        "permissionDecision" => pick(&["allow", "deny", "ask", "defer"]),
        "action" => pick(&["accept", "decline", "cancel"]),
        "terminalSequence" => pick(&["\u{1b}]0;title\u{7}", "\u{7}", "\u{1b}]9;4;1;50\u{1b}\\"]),
        "asyncTimeout" => (0..100_000u32).prop_map(Value::from).boxed(),
        "updatedInput" | "content" => btree_map("[a-z_]{1,10}", value(), 0..4)
            .prop_map(|m| Value::Object(m.into_iter().collect()))
            .boxed(),
        "watchPaths" => vec(string_value(), 0..4)
            .prop_map(|v| Value::Array(v.into_iter().map(Value::from).collect()))
            .boxed(),
        "updatedPermissions" => vec(value(), 0..3).prop_map(Value::Array).boxed(),
        "updatedToolOutput" | "updatedMCPToolOutput" | "permissionDisplay" => value().boxed(),
        _ => string_value().prop_map(Value::from).boxed(),
    }
}

/// Fields under `keys`: mostly well typed (so outputs get applied), sometimes any value.
fn fields(keys: &'static [&'static str], specific: bool) -> BoxedStrategy<Map<String, Value>> {
    vec(proptest::sample::select(keys), 0..5)
        .prop_flat_map(move |names| {
            names
                .into_iter()
                .map(|k| {
                    let v = prop_oneof![4 => typed(k, specific), 1 => value()];
                    (Just(k.to_string()), v)
                })
                .collect::<Vec<_>>()
        })
        .prop_map(|pairs| pairs.into_iter().collect())
        .boxed()
}

/// A hook output object: some top-level keys, often a `hookSpecificOutput` whose
/// `hookEventName` names some event (only one of the 33 it is checked on), sometimes not a
/// string.
fn hook_json() -> impl Strategy<Value = Value> {
    let event_name = prop_oneof![
        6 => proptest::sample::select(HookEvent::ALL.to_vec()).prop_map(|e| Value::from(e.as_str())),
        1 => value(),
    ];
    let specific = (
        proptest::option::weighted(0.9, event_name),
        fields(&SPECIFIC_KEYS[1..], true),
    )
        .prop_map(|(name, mut map)| {
            if let Some(name) = name {
                map.insert("hookEventName".to_string(), name);
            }
            Value::Object(map)
        });
    (
        fields(&TOP_KEYS[..TOP_KEYS.len() - 1], false),
        proptest::option::weighted(0.6, specific),
    )
        .prop_map(|(mut map, specific)| {
            if let Some(s) = specific {
                map.insert("hookSpecificOutput".to_string(), s);
            }
            Value::Object(map)
        })
}

/// Hook JSON as a hook might print it: padded, truncated, followed by junk or by a second
/// document, or wrapped `levels` deep.
fn printed_json() -> impl Strategy<Value = Vec<u8>> {
    (
        hook_json(),
        0..10u8,
        any::<prop::sample::Index>(),
        "[ \n\t]{0,3}",
    )
        .prop_map(|(json, how, cut, pad)| {
            let text = if how % 2 == 0 {
                json.to_string()
            } else {
                serde_json::to_string_pretty(&json).unwrap()
            };
            let printed = match how {
                0..=5 => format!("{pad}{text}{pad}\n"),
                6 => {
                    let at = cut.index(text.len() + 1);
                    let at = (0..=at)
                        .rev()
                        .find(|i| text.is_char_boundary(*i))
                        .unwrap_or(0);
                    text[..at].to_string()
                }
                7 => format!("{text} trailing words"),
                8 => format!("{text}\n{text}\n"),
                _ => format!("{text}}}"),
            };
            printed.into_bytes()
        })
}

/// `{"hookSpecificOutput": {"additionalContext": "x", "n": [[[…]]]}}` nested `levels` deep.
fn nested(levels: usize, event: &str) -> Vec<u8> {
    format!(
        r#"{{"hookSpecificOutput":{{"hookEventName":"{event}","additionalContext":"x","n":{}1{}}}}}"#,
        "[".repeat(levels),
        "]".repeat(levels)
    )
    .into_bytes()
}

fn stdout_bytes() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        2 => vec(any::<u8>(), 0..256),
        2 => "[ \n{}\\[\\]\":,.0-9a-z\u{e9}\u{1F600}\\\\-]{0,96}".prop_map(String::into_bytes),
        5 => printed_json(),
        1 => (100usize..160, proptest::sample::select(HookEvent::ALL.to_vec()))
            .prop_map(|(levels, e)| nested(levels, e.as_str())),
    ]
}

fn status() -> impl Strategy<Value = RunStatus> {
    prop_oneof![
        6 => proptest::sample::select(vec![0, 0, 0, 2, 2, 1, 3, 127, -1]).prop_map(RunStatus::Exited),
        1 => any::<i32>().prop_map(RunStatus::Exited),
        1 => (1..65i32).prop_map(RunStatus::Signaled),
        1 => Just(RunStatus::TimedOut),
        1 => ".{0,16}".prop_map(RunStatus::SpawnFailed),
        1 => ".{0,16}".prop_map(RunStatus::Crashed),
        1 => Just(RunStatus::Backgrounded),
    ]
}

fn stderr_bytes() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        Just(Vec::new()),
        Just(b"/bin/sh: 1: ./hook.sh: not found\nNo such file or directory".to_vec()),
        vec(any::<u8>(), 0..64),
    ]
}

#[derive(Debug, Clone)]
struct Case {
    raw: RawRun,
    on_failure: OnFailure,
}

fn case_with(stdout: impl Strategy<Value = Vec<u8>>) -> impl Strategy<Value = Case> {
    (
        stdout,
        stderr_bytes(),
        status(),
        proptest::bool::weighted(0.1),
        any::<(bool, bool, bool)>(),
        proptest::bool::weighted(0.3),
    )
        .prop_map(
            |(stdout, stderr, status, capped, (err_capped, cancelled, lingering), block)| Case {
                raw: RawRun {
                    status,
                    stdout_bytes: stdout.len() as u64 + u64::from(capped) * 1024,
                    stderr_bytes: stderr.len() as u64 + u64::from(err_capped) * 1024,
                    stdout,
                    stderr,
                    stdout_capped: capped,
                    stderr_capped: err_capped,
                    duration: Duration::from_millis(1500),
                    stdin_error: None,
                    pid: None,
                    cancelled,
                    lingering_killed: lingering,
                    warm: false,
                },
                on_failure: if block {
                    OnFailure::Block
                } else {
                    OnFailure::Continue
                },
            },
        )
}

const COMMAND: &str = "/hooks/check.sh";

/// Longest text an interpretation may carry for `raw` on `event`: the stderr verbatim (exit 2
/// reasons show it whole, as Claude Code does), an echo of at most [`ECHO_MAX_CHARS`] of the
/// output, the expected schema, and fixed wording.
fn text_bound(event: HookEvent, raw: &RawRun) -> usize {
    raw.stderr.len() * 3 + 4 * ECHO_MAX_CHARS + expected_schema(event).len() + 4096
}

/// Every property of one interpretation; `Err` names the first that fails.
fn check_interpretation(event: HookEvent, case: &Case) -> Result<(), TestCaseError> {
    let raw = &case.raw;
    let got = interpret(event, COMMAND, raw, case.on_failure);
    let again = interpret(event, COMMAND, raw, case.on_failure);
    prop_assert_eq!(&got, &again, "interpret is not deterministic on {}", event);
    prop_assert_eq!(recognise(event, raw), recognise(event, raw));

    let ran = matches!(raw.status, RunStatus::Exited(_) | RunStatus::Signaled(_));
    if let Some(output) = &got.output {
        // Applied only from a finished run's complete, strict-UTF-8 stdout holding one object.
        prop_assert!(
            ran,
            "output applied from a run with status {:?}",
            raw.status
        );
        prop_assert!(!raw.stdout_capped, "output applied from capped stdout");
        let text = std::str::from_utf8(&raw.stdout);
        prop_assert!(text.is_ok(), "output applied from non-UTF-8 stdout");
        let parsed: Result<Value, _> = serde_json::from_str(text.unwrap_or("").trim());
        prop_assert!(
            parsed.as_ref().is_ok_and(Value::is_object),
            "not one JSON object"
        );
        let parsed = parsed.unwrap_or_default();
        prop_assert!(crate::hooks::output::MAX_JSON_DEPTH >= depth(&parsed));
        if let Some(name) = parsed["hookSpecificOutput"]["hookEventName"].as_str() {
            prop_assert_eq!(
                name,
                event.as_str(),
                "hookSpecificOutput of another event applied"
            );
        }
        if output.hook_specific.is_some() {
            prop_assert!(parsed["hookSpecificOutput"].is_object());
        }
    }
    if !ran {
        prop_assert!(got.output.is_none() && got.json.is_none() && got.plain_stdout.is_none());
    }
    let block_on_failure = case.on_failure == OnFailure::Block && !ignores(event);
    if raw.status == RunStatus::TimedOut {
        let cancelled = !block_on_failure || raw.cancelled;
        prop_assert_eq!(got.outcome == OutcomeKind::Cancelled, cancelled);
    }
    if raw.status == RunStatus::Exited(2) {
        let missing_script = matches!(&got.outcome,
            OutcomeKind::NonBlocking(t) if t.starts_with("Hook script appears to be missing: "));
        let blocks_or_refuses = matches!(got.outcome, OutcomeKind::Blocking(_))
            || got.output.as_ref().is_some_and(|o| o.refuses())
            || got.backgrounded
            || (missing_script && ignores(event));
        prop_assert!(blocks_or_refuses, "exit 2 did not block: {:?}", got.outcome);
    }
    let bound = text_bound(event, raw);
    // A `decision: "block"` reason is the hook's own message to the model and is passed on
    // whole, like stderr on exit 2; everything else rein writes is bounded.
    let own_reason = got.output.as_ref().and_then(|o| o.block_reason());
    let texts = match &got.outcome {
        OutcomeKind::Blocking(t) if Some(t) == own_reason.as_ref() => Vec::new(),
        OutcomeKind::Blocking(t) | OutcomeKind::NonBlocking(t) => vec![t.len()],
        OutcomeKind::Success | OutcomeKind::Cancelled => Vec::new(),
    };
    for len in texts.into_iter().chain(got.notices.iter().map(String::len)) {
        prop_assert!(
            len <= bound,
            "a {len}-byte text for a {}-byte output",
            raw.stdout.len()
        );
    }
    Ok(())
}

/// Stop-like events ignore `onFailure` and downgrade a missing script (spec §4.1).
fn ignores(event: HookEvent) -> bool {
    !event.spec().on_failure
}

fn depth(v: &Value) -> usize {
    match v {
        Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
        Value::Object(map) => 1 + map.values().map(depth).max().unwrap_or(0),
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => 0,
    }
}

proptest! {
    #![proptest_config(cases(256))]

    /// Arbitrary bytes, JSON-ish noise, structured hook JSON and deep nesting, on every event:
    /// total, deterministic, strict, bounded.
    #[test]
    fn hook_stdout_interpretation_holds_on_every_event(case in case_with(stdout_bytes())) {
        for event in HookEvent::ALL {
            check_interpretation(event, &case)?;
        }
    }
}

/// A huge string placed where a hook's output puts text: in a known field, as the
/// `hookEventName`, as an unknown key, or as a whole non-JSON stdout.
fn huge_output() -> impl Strategy<Value = Vec<u8>> {
    (
        proptest::sample::select(vec![64 * 1024, 300 * 1024, 1024 * 1024]),
        0..8u8,
        proptest::sample::select(HookEvent::ALL.to_vec()),
    )
        .prop_map(|(size, place, event)| {
            let s = "é".repeat(size / 2);
            let e = event.as_str();
            let v = match place {
                0 => json!({"decision": "block", "reason": s}),
                1 => json!({"decision": s}),
                2 => json!({"hookSpecificOutput": {"hookEventName": s}}),
                3 => json!({"hookSpecificOutput": {"hookEventName": e, "additionalContext": s}}),
                4 => json!({ s.clone(): true, "hookSpecificOutput": {"hookEventName": e, s: 1} }),
                // A schema problem per item, and a notice per unknown key.
                5 => json!({"hookSpecificOutput": {"hookEventName": "SessionStart",
                             "watchPaths": vec![1; size / 4],
                             "updatedPermissions": vec![1; size / 4]}}),
                6 => Value::Object(
                    (0..size / 16)
                        .map(|i| (format!("k{i}"), Value::from(i)))
                        .collect(),
                ),
                _ => return format!("{{{s}}}").into_bytes(),
            };
            v.to_string().into_bytes()
        })
}

proptest! {
    #![proptest_config(cases(10))]

    /// Megabyte strings anywhere in the output: messages echo at most a bounded part.
    #[test]
    fn huge_strings_are_echoed_only_in_part(case in case_with(huge_output())) {
        for event in [HookEvent::PreToolUse, HookEvent::PermissionRequest, HookEvent::Stop,
                      HookEvent::SessionStart, HookEvent::PostToolUse] {
            check_interpretation(event, &case)?;
        }
    }
}

#[test]
fn nesting_far_beyond_the_limit_is_rejected_without_recursion() {
    // 100,000 levels would overflow the stack of a recursive parse (and of dropping the value).
    let raw = RawRun {
        status: RunStatus::Exited(0),
        stdout: nested(100_000, "PreToolUse"),
        stderr: Vec::new(),
        stdout_bytes: 0,
        stderr_bytes: 0,
        stdout_capped: false,
        stderr_capped: false,
        duration: Duration::ZERO,
        stdin_error: None,
        pid: None,
        cancelled: false,
        lingering_killed: false,
        warm: false,
    };
    let event = HookEvent::PreToolUse;
    let handle = std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(move || {
            let got = interpret(event, COMMAND, &raw, OnFailure::Continue);
            (got, recognise(event, &raw))
        })
        .unwrap();
    let (got, recognised) = handle.join().expect("interpretation crashed");
    assert!(got.output.is_none());
    match (&got.outcome, recognised) {
        (OutcomeKind::NonBlocking(text), Recognised::Invalid { .. }) => assert!(
            text.contains(&format!("at most {MAX_JSON_DEPTH} are accepted")),
            "{text:.300}"
        ),
        other => panic!("{other:.300?}"),
    }
}

// ---------------------------------------------------------------------------------------------
// Matchers

/// Events of the three matcher classes (extended, strict, no target) and an unknown event.
const MATCHER_EVENTS: [Option<HookEvent>; 4] = [
    Some(HookEvent::PreToolUse),
    Some(HookEvent::FileChanged),
    Some(HookEvent::Stop),
    None,
];

/// A small regex in the syntax JS and Rust read alike (literals, `.`, classes, groups,
/// alternation, bounded quantifiers), as text.
fn common_regex() -> impl Strategy<Value = String> {
    let atom = prop_oneof![
        4 => "[a-d]".prop_map(String::from),
        1 => Just(".".to_string()),
        1 => Just("[a-c]".to_string()),
        1 => Just("[^b]".to_string()),
        1 => Just("\\d".to_string()),
    ];
    let quantified = (atom, 0..7u8, 0..3u32, 0..3u32).prop_map(|(a, q, m, n)| {
        let (lo, hi) = (m.min(n), m.max(n));
        let suffix = match q {
            0 => "*".to_string(),
            1 => "+".to_string(),
            2 => "?".to_string(),
            3 => format!("{{{lo},{hi}}}"),
            _ => String::new(),
        };
        format!("{a}{suffix}")
    });
    let seq = vec(quantified, 0..5).prop_map(|v| v.concat());
    seq.prop_recursive(3, 16, 3, |inner| {
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("{a}|{b}")),
            (inner.clone(), proptest::bool::ANY, 0..4u8).prop_map(|(a, capture, q)| {
                let open = if capture { "(" } else { "(?:" };
                let q = ["", "*", "+", "?"][usize::from(q)];
                format!("{open}{a}){q}")
            }),
            (inner.clone(), inner).prop_map(|(a, b)| format!("{a}{b}")),
            Just("^".to_string()),
            Just("$".to_string()),
        ]
    })
}

/// Matcher text: arbitrary Unicode, regex metacharacter soup, or a well-formed small regex.
fn matcher_text() -> impl Strategy<Value = String> {
    prop_oneof![
        2 => any::<String>(),
        3 => "[\\\\()\\[\\]{}<>?*+|^$.,:=!#&~a-dk0-9_ \\-\u{e9}\u{2028}]{0,48}",
        3 => common_regex(),
        1 => "[a-z_|, -]{0,24}",
    ]
}

proptest! {
    #![proptest_config(cases(256))]

    /// Compiling any text never panics, and a compiled matcher answers every value the same
    /// way each time, in line with what it says it is.
    #[test]
    fn matcher_compile_and_match_are_total_and_deterministic(
        text in matcher_text(),
        values in vec(".{0,24}", 1..4),
    ) {
        for event in MATCHER_EVENTS {
            let m = Matcher::compile(event, Some(&text));
            let again = Matcher::compile(event, Some(&text));
            prop_assert_eq!(m.describe(), again.describe());
            for value in &values {
                let hit = m.matches(value);
                prop_assert_eq!(hit, again.matches(value), "{:?} on {:?}", text, value);
                match &m {
                    Matcher::All => prop_assert!(hit),
                    Matcher::Exact(names) => prop_assert_eq!(hit, names.contains(value)),
                    Matcher::Regex(re) => prop_assert_eq!(re.as_str(), text.as_str()),
                    Matcher::Invalid(msg) => {
                        prop_assert!(!hit);
                        prop_assert!(msg.contains(text.as_str()), "{msg}");
                    }
                }
            }
        }
    }

    /// On the syntax both dialects share, rein's matcher agrees with the `regex` crate run on
    /// the same source (search semantics), so the JS translation changes nothing it should not.
    #[test]
    fn matcher_agrees_with_a_reference_engine_on_common_syntax(
        text in common_regex(),
        values in vec("[a-d0-9]{0,12}", 1..6),
    ) {
        let reference = regex::Regex::new(&text);
        prop_assert!(reference.is_ok(), "the generator made {:?}", text);
        let reference = reference.unwrap();
        let m = Matcher::compile(Some(HookEvent::PreToolUse), Some(&text));
        for value in &values {
            let expected = match &m {
                Matcher::All => true,
                // Name characters only (`ab|cd`): an exact list, not a regex (spec §3.2).
                Matcher::Exact(names) => names.contains(value),
                Matcher::Regex(_) => reference.is_match(value),
                Matcher::Invalid(msg) => {
                    return Err(TestCaseError::fail(format!("{text:?} rejected: {msg}")));
                }
            };
            prop_assert_eq!(m.matches(value), expected, "{:?} on {:?} ({})", text, value, m.describe());
        }
    }
}

/// Patterns that take exponential time on a backtracking engine against `aaa…a!`. The
/// linear engine skips some outright (a required literal or `$` that cannot match); the ones
/// ending in a class must scan the whole input. The last three need look-around or a
/// backreference and so run on the bounded backtracking engine.
const PATHOLOGICAL: &[&str] = &[
    "(a+)+$",
    "(a|aa)+$",
    "(a*)*b",
    "(a+)+[0-9]",
    "([a-z]+)*\\d",
    "(\\w+\\s?)+\\d",
    "^(a|a?)+$",
    "(.*a){12}\\d",
    "^(a+)+\\1b",
    "(?=a)(a|aa)+$",
    "(?<=a)(a+)+b",
];

/// The fastest of seven runs of `m` against `input` (the minimum filters out scheduler noise).
fn fastest(m: &Matcher, input: &str) -> Duration {
    (0..7)
        .map(|_| {
            let t = Instant::now();
            std::hint::black_box(m.matches(std::hint::black_box(input)));
            t.elapsed()
        })
        .min()
        .unwrap_or_default()
}

#[test]
fn pathological_matchers_finish_and_grow_linearly() {
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut report = Vec::new();
        for pattern in PATHOLOGICAL {
            let m = Matcher::compile(Some(HookEvent::PreToolUse), Some(pattern));
            assert!(
                matches!(m, Matcher::Regex(_)),
                "{pattern}: {}",
                m.describe()
            );
            // 10k vs 40k: linear time grows 4x, quadratic 16x, exponential never finishes.
            let small = format!("{}!", "a".repeat(10_000));
            let large = format!("{}!", "a".repeat(40_000));
            let (t_small, t_large) = (fastest(&m, &small), fastest(&m, &large));
            // A floor keeps a near-zero small time (an early exit) from making the ratio noise;
            // the scanning patterns take ~20 µs per 10k characters in a debug build.
            let floor = Duration::from_micros(10);
            let ratio = t_large.as_secs_f64() / t_small.max(floor).as_secs_f64();
            report.push(format!(
                "{pattern}: {t_small:?} → {t_large:?} (×{ratio:.1})"
            ));
            assert!(ratio < 10.0, "{pattern} grows super-linearly: {report:#?}");
        }
        let _ = done.send(report);
    });
    // Generous: the slowest debug-build run measured is well under a second.
    match finished.recv_timeout(Duration::from_secs(60)) {
        Ok(report) => eprintln!("{report:#?}"),
        Err(e) => panic!("a pathological matcher did not finish (or failed): {e}"),
    }
}

/// Repetitions whose expansion would need millions of NFA states.
const HUGE: &[&str] = &[
    "(a{1000}){1000}",
    "((a{100}){100}){100}",
    "(?:[a-z]{1000}){1000}",
    "(?:.{1000}){1000}",
    "(?=a)(a{1000}){1000}",
    "(x|(a{1000}){1000})$",
];

#[test]
fn huge_repetitions_are_refused_as_too_large_not_compiled() {
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for pattern in HUGE {
            let m = Matcher::compile(Some(HookEvent::PreToolUse), Some(pattern));
            let Matcher::Invalid(msg) = &m else {
                panic!("{pattern} compiled: {}", m.describe());
            };
            assert!(msg.contains("pattern is too large"), "{pattern}: {msg}");
        }
        // `a{1000}{1000}` is not even a pattern in JavaScript.
        let m = Matcher::compile(Some(HookEvent::PreToolUse), Some("a{1000}{1000}"));
        assert!(
            m.describe().contains("Nothing to repeat"),
            "{}",
            m.describe()
        );
        let _ = done.send(());
    });
    finished
        .recv_timeout(Duration::from_secs(60))
        .expect("compiling a huge repetition did not finish (or failed)");
}

/// The size cap must not refuse what Claude Code accepts: JavaScript's `.` and `\\w` become
/// large classes, so a thousand of them is a big (but bounded) program.
#[test]
fn large_but_sane_repetitions_still_compile() {
    for (pattern, hit, miss) in [
        (".{1000}", "é".repeat(1000), "a".repeat(999)),
        ("^[a-z]{1000}$", "q".repeat(1000), "q".repeat(1001)),
    ] {
        let m = Matcher::compile(Some(HookEvent::PreToolUse), Some(pattern));
        assert!(m.matches(&hit), "{pattern}: {}", m.describe());
        assert!(!m.matches(&miss), "{pattern}: {}", m.describe());
    }
}

proptest! {
    #![proptest_config(cases(48))]

    /// `(a{n}){m}`: small products compile and match exactly `n·m` a's; products of a
    /// million or more are refused. Nothing in between panics.
    #[test]
    fn repetition_counts_compile_or_are_refused(n in 1usize..3000, m in 1usize..3000, fancy in any::<bool>()) {
        let prefix = if fancy { "(?=a)" } else { "" };
        let pattern = format!("{prefix}^(a{{{n}}}){{{m}}}$");
        let compiled = Matcher::compile(Some(HookEvent::PreToolUse), Some(&pattern));
        if n * m <= 2_000 {
            prop_assert!(compiled.matches(&"a".repeat(n * m)), "{}", compiled.describe());
            prop_assert!(!compiled.matches(&"a".repeat(n * m + 1)));
        } else if n * m >= 1_000_000 {
            prop_assert!(compiled.describe().contains("pattern is too large"), "{}", compiled.describe());
        }
    }
}
