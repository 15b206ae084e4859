//! The offline, deterministic mock model (the default provider).
//!
//! Without a script it understands simple English and Chinese requests in the latest user
//! prompt ("read file x" / "读文件 x", "run command ls" / "执行命令 ls", "write hi to a.txt" /
//! "写入 hi 到 a.txt", "edit a.txt replace X with Y", "list files *.rs", "grep PATTERN"). A prompt
//! with several clauses (separated by `;`, `；`, `, then`, ` then `, `，然后`, `然后`) plays them one
//! tool call per turn, in order; after the last result it summarises what happened, saying
//! plainly when a call was refused. With `--mock-script FILE` it plays scripted turns instead
//! (see [`MockScript`]).
//!
//! Which user message is "the prompt": the last user message without tool results that has
//! text outside `<system-reminder>` wrappers (hook context is sent wrapped that way). The step
//! within the prompt is the number of assistant messages after it, so the mock keeps no state
//! between calls and replays identically from a transcript.

use std::path::{Path, PathBuf};
use std::sync::LazyLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use regex::Regex;
use serde_json::{Map, Value, json};

use crate::model::{
    ContentBlock, Message, Model, ModelError, ModelErrorKind, ModelResponse, Role, StopReason,
    ToolSpec, Usage,
};
use crate::tools::BoxFuture;

mod clauses;
mod reply;
mod script;

use clauses::*;
use reply::*;
pub use script::MockScriptError;
use script::*;

/// The mock model.
#[derive(Debug, Default)]
pub struct MockModel {
    script: Option<MockScript>,
    /// Calls answered so far; indexes the script.
    calls: AtomicUsize,
}

impl MockModel {
    /// The rule-based mock.
    pub fn new() -> MockModel {
        MockModel::default()
    }

    /// A mock that plays `script`.
    pub fn with_script(script: MockScript) -> MockModel {
        MockModel {
            script: Some(script),
            calls: AtomicUsize::new(0),
        }
    }

    /// Loads and validates a script file.
    pub fn from_script_file(path: &Path) -> Result<MockModel, MockScriptError> {
        Ok(MockModel::with_script(MockScript::load(path)?))
    }

    fn respond(
        &self,
        messages: &[Message],
        tools: &[ToolSpec],
    ) -> Result<(ModelResponse, u64), ModelError> {
        let turn = messages
            .iter()
            .filter(|m| m.role == Role::Assistant)
            .count()
            + 1;
        let first = first_user_text(messages);
        // A closure so the early answers (hooks, agents) get their usage too.
        let mut delay = 0;
        let mut answer = || match &self.script {
            Some(script) => {
                if tools.is_empty()
                    && let Some(hook) = script.hooks.iter().find(|h| first.contains(&h.matches))
                {
                    return script.play_turn(&hook.answer, turn);
                }
                if let Some(agent) = script.agents.iter().find(|a| first.contains(&a.matches)) {
                    // Stateless: the step is the number of assistant messages so far, so
                    // subagents running at the same time each get their own turns.
                    return match agent.turns.get(turn - 1) {
                        Some(step) => script.play_turn(step, turn),
                        None => script.play(usize::MAX, turn),
                    };
                }
                if first.contains(HOOK_EVALUATOR_MARK) {
                    return Ok(response(
                        turn,
                        vec![ContentBlock::Text {
                            text: MOCK_HOOK_VERDICT.to_string(),
                        }],
                        StopReason::EndTurn,
                    ));
                }
                let index = self.calls.fetch_add(1, Ordering::Relaxed);
                delay = script.delays.get(index).copied().unwrap_or(0);
                script.play(index, turn)
            }
            None if first.contains(HOOK_EVALUATOR_MARK) => Ok(response(
                turn,
                vec![ContentBlock::Text {
                    text: MOCK_HOOK_VERDICT.to_string(),
                }],
                StopReason::EndTurn,
            )),
            None => Ok(respond_to_prompt(messages, tools, turn)),
        };
        let mut response = answer()?;
        response.usage = Some(estimated_usage(messages, &response));
        Ok((response, delay))
    }

    /// Whether the step that would answer these messages is a scripted `{"hang": true}`.
    fn hangs(&self, messages: &[Message], tools: &[ToolSpec]) -> bool {
        let Some(script) = &self.script else {
            return false;
        };
        let first = first_user_text(messages);
        let turn = messages
            .iter()
            .filter(|m| m.role == Role::Assistant)
            .count();
        if tools.is_empty()
            && let Some(hook) = script.hooks.iter().find(|h| first.contains(&h.matches))
        {
            return hook.answer == ScriptTurn::Hang;
        }
        if let Some(agent) = script.agents.iter().find(|a| first.contains(&a.matches)) {
            return agent.turns.get(turn) == Some(&ScriptTurn::Hang);
        }
        false
    }
}

impl Model for MockModel {
    fn name(&self) -> &str {
        "mock"
    }

    fn complete<'a>(
        &'a self,
        messages: &'a [Message],
        tools: &'a [ToolSpec],
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        Box::pin(async move {
            if self.hangs(messages, tools) {
                // A scripted hang: never answers (the caller's deadline ends it).
                std::future::pending::<()>().await;
            }
            let (response, delay) = self.respond(messages, tools)?;
            if delay > 0 {
                tokio::time::sleep(std::time::Duration::from_millis(delay)).await;
            }
            Ok(response)
        })
    }
}

/// Text every hook-evaluator request (prompt and agent hooks) starts with; the mock answers
/// such a request with [`MOCK_HOOK_VERDICT`] unless its script says otherwise.
pub const HOOK_EVALUATOR_MARK: &str = "You judge one hook event for rein.";

/// The rule-based mock's verdict for a prompt or agent hook.
pub const MOCK_HOOK_VERDICT: &str = r#"{"ok": true, "reason": "mock model: no objection"}"#;

/// The text of the first user message (its text blocks joined), where a subagent's task and a
/// hook evaluator's question are.
fn first_user_text(messages: &[Message]) -> String {
    let Some(first) = messages.iter().find(|m| m.role == Role::User) else {
        return String::new();
    };
    first
        .content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text { text } => Some(text.as_str()),
            ContentBlock::ToolUse { .. }
            | ContentBlock::SystemNote { .. }
            | ContentBlock::ToolResult { .. } => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The mock's token counts: a quarter of the characters of the conversation and of the reply
/// (an estimate, as there is no real tokenizer behind the mock), so `/cost`, the json outputs
/// and auto-compaction work offline too.
fn estimated_usage(messages: &[Message], response: &ModelResponse) -> Usage {
    let chars = |blocks: &[ContentBlock]| -> u64 {
        blocks
            .iter()
            .map(|b| match b {
                ContentBlock::Text { text } | ContentBlock::SystemNote { text } => text.len(),
                ContentBlock::ToolUse { name, input, .. } => name.len() + input.to_string().len(),
                ContentBlock::ToolResult { content, .. } => content.len(),
            } as u64)
            .sum()
    };
    let prompt: u64 = messages.iter().map(|m| chars(&m.content)).sum();
    Usage {
        input_tokens: prompt.div_ceil(4),
        output_tokens: chars(&response.content).div_ceil(4),
        ..Usage::default()
    }
}

fn tool_id(turn: usize, index: usize) -> String {
    format!("toolu_mock_{turn}_{index}")
}

fn response(turn: usize, content: Vec<ContentBlock>, stop_reason: StopReason) -> ModelResponse {
    ModelResponse {
        id: Some(format!("msg_mock_{turn}")),
        model: "mock".to_string(),
        content,
        stop_reason,
        usage: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(clause: &str) -> (String, Value) {
        let call = parse_clause(clause).unwrap_or_else(|| panic!("not understood: {clause}"));
        (call.name, call.input)
    }

    /// `delay_ms` holds a main turn's answer back that long; a bad value names the element.
    #[tokio::test]
    async fn a_delayed_turn_answers_after_its_delay() {
        let path = Path::new("script.json");
        let script = MockScript::parse(
            path,
            r#"[{"text": "late", "delay_ms": 80}, {"text": "now"}]"#,
        )
        .unwrap();
        assert_eq!(script.delays, [80, 0]);
        let model = MockModel::with_script(script);
        let ask = vec![Message {
            role: Role::User,
            content: vec![ContentBlock::Text {
                text: "hi".to_string(),
            }],
        }];
        let started = std::time::Instant::now();
        let first = model.complete(&ask, &[]).await.unwrap();
        assert!(started.elapsed() >= std::time::Duration::from_millis(80));
        assert!(matches!(&first.content[0], ContentBlock::Text { text } if text == "late"));
        let bad = MockScript::parse(path, r#"[{"text": "x", "delay_ms": "soon"}]"#).unwrap_err();
        assert!(
            bad.to_string()
                .contains("\"delay_ms\" must be a whole number"),
            "{bad}"
        );
    }

    #[test]
    fn builtin_regexes_compile() {
        for re in [
            &*SEPARATOR,
            &*FILLER,
            &*EDIT_EN,
            &*EDIT_ZH,
            &*WRITE_EN,
            &*WRITE_EN_FILE_FIRST,
            &*WRITE_ZH,
            &*READ_EN,
            &*READ_ZH,
            &*GLOB_EN,
            &*GLOB_ZH,
            &*GREP_EN,
            &*GREP_ZH,
            &*BASH_EN,
            &*BASH_ZH,
            &*HOOK_CONTEXT,
            &*LINE_NUMBER,
        ] {
            assert!(!re.as_str().is_empty());
        }
    }

    #[test]
    fn clauses_in_both_languages() {
        let cases: Vec<(&str, &str, Value)> = vec![
            (
                "read file package.json",
                "Read",
                json!({"file_path": "package.json"}),
            ),
            (
                "读文件 package.json",
                "Read",
                json!({"file_path": "package.json"}),
            ),
            (
                "读取文件 ./src/main.rs",
                "Read",
                json!({"file_path": "./src/main.rs"}),
            ),
            ("run command whoami", "Bash", json!({"command": "whoami"})),
            ("执行命令 rm -rf /", "Bash", json!({"command": "rm -rf /"})),
            ("运行命令 ls -la", "Bash", json!({"command": "ls -la"})),
            (
                "write hello to a.txt",
                "Write",
                json!({"file_path": "a.txt", "content": "hello"}),
            ),
            (
                "写入 hello 到 a.txt",
                "Write",
                json!({"file_path": "a.txt", "content": "hello"}),
            ),
            (
                "edit a.txt replace foo with bar",
                "Edit",
                json!({"file_path": "a.txt", "old_string": "foo", "new_string": "bar"}),
            ),
            (
                "编辑 a.txt 把 foo 替换为 bar",
                "Edit",
                json!({"file_path": "a.txt", "old_string": "foo", "new_string": "bar"}),
            ),
            ("list files *.rs", "Glob", json!({"pattern": "*.rs"})),
            (
                "grep TODO in src",
                "Grep",
                json!({"pattern": "TODO", "path": "src"}),
            ),
        ];
        for (clause, name, input) in cases {
            assert_eq!(parsed(clause), (name.to_string(), input), "{clause}");
        }
        assert_eq!(parse_clause("tell me a joke"), None);
    }

    #[test]
    fn separators() {
        assert_eq!(
            split_clauses("读文件 ./Cargo.toml；执行命令 whoami；执行命令 rm -rf /"),
            vec![
                "读文件 ./Cargo.toml",
                "执行命令 whoami",
                "执行命令 rm -rf /"
            ]
        );
        assert_eq!(
            split_clauses("read file a, then run command ls then run command pwd; read file b"),
            vec![
                "read file a",
                "run command ls",
                "run command pwd",
                "read file b"
            ]
        );
        assert_eq!(
            split_clauses("读文件 a，然后执行命令 ls 然后 执行命令 pwd"),
            vec!["读文件 a", "执行命令 ls", "执行命令 pwd"]
        );
    }
}
