//! Tools a person answers: `AskUserQuestion` here, and the [`PersonDialog`] through which a
//! terminal (or an embedding program) shows their question. Offered only where a person is
//! attending (rein's interactive terminal), as Claude Code 2.1.328 offers it; in `-p` and SDK
//! sessions the tool is disabled ([`crate::pipeline::DISABLED_TOOLS`]).
//!
//! Measured (fixture `tests/fixtures/cc-2.1.328/interactive`, run7 and run8): the dialog is the
//! call's permission step. PreToolUse sees the model's input; PermissionRequest fires (no
//! `permission_suggestions`), then a `permission_prompt` Notification, then the dialog. The
//! answers join the input (`answers`: question → label, a multiSelect's labels joined by
//! `, `, a typed answer as typed; `annotations: {}`), so PostToolUse's `tool_input` carries
//! them and `tool_response` is `{questions, answers, annotations}`. A cancelled dialog stops
//! the turn as Esc does: no PostToolUse, no Stop.

#![deny(missing_docs)]

use serde_json::{Map, Value, json};

use super::{BoxFuture, Tool, ToolContext, ToolOutcome};

/// One option of a question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    /// What the person picks (and what the answer says).
    pub label: String,
    /// What picking it means.
    pub description: String,
}

/// One question of an AskUserQuestion call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Question {
    /// The question's full text (the key of its answer).
    pub question: String,
    /// A short tag shown above it.
    pub header: String,
    /// 2–4 options; the person may always type an answer of their own instead.
    pub options: Vec<Choice>,
    /// Whether several options may be picked.
    pub multi_select: bool,
}

/// A person's answer to one question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// The label picked (several joined by `, `), or the text typed.
    pub text: String,
    /// Whether the person typed it rather than picking options.
    pub typed: bool,
}

/// Shows a person what a tool asks them. Blocking: the pipeline calls it on a thread of its
/// own. Implemented by rein's terminal; an embedding program may bring its own.
pub trait PersonDialog: Send + Sync {
    /// Asks `questions`; `None` when the person cancelled. After a cancel the dialog's owner
    /// stops the turn (rein's terminal drops it as for Ctrl+C).
    fn ask_questions(&self, questions: &[Question]) -> Option<Vec<Answer>>;
    /// Shows the plan (`None`: the plan file `path` was not written) for approval. After
    /// [`PlanReview::Stop`] the dialog's owner stops the turn.
    fn review_plan(&self, plan: Option<&str>, path: &std::path::Path) -> PlanReview;
}

/// A person's verdict on a plan ([`PersonDialog::review_plan`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlanReview {
    /// Leave plan mode; the session goes on in `mode` (`default` or `acceptEdits`).
    Approve {
        /// The permission mode the session goes on in.
        mode: String,
    },
    /// Stay in plan mode; the model is told what to change and the turn goes on.
    Revise(String),
    /// No, or a cancel: the turn stops (see [`PersonAnswer::Stop`]).
    Stop,
}

/// How a person answered a tool's question ([`Tool::ask_person`]).
#[derive(Debug, Clone, PartialEq)]
pub enum PersonAnswer {
    /// Go on with this input (the question's answers in it).
    Proceed(Value),
    /// Refused, with the model-facing text; the turn goes on.
    Refuse(String),
    /// The person stopped the turn. Whoever shows the dialog drops the turn (rein's terminal
    /// does, exactly as for Ctrl+C: no PostToolUse, no Stop); until then the call waits.
    Stop,
}

const DESCRIPTION: &str = concat!(
    "Asks the user one to four multiple-choice questions and waits for their answers.\n\n\
Use it only when you cannot go on without a decision that is the user's to make, one that \
neither the request, the code nor a sensible default settles. Do not use it to ask for \
permission to proceed or for approval of a plan.\n\n\
Each question needs its full text (a question ending in `?`, understandable on its own: the \
user may see only the dialog), a `header` of at most 12 characters, 2 to 4 distinct `options` \
(each a short `label` and a `description` of what it means) and `multiSelect` (true when \
several options may be picked). The user can always type an answer of their own instead, so \
do not add an \"Other\" option. Put a recommended option first and end its label with \
\"(Recommended)\".\n\n\
The result gives each question's answer. If the user cancels, the turn stops: wait for them.",
    super::refusal_note!()
);

/// The AskUserQuestion tool, answered through `dialog`.
pub struct AskUserQuestionTool {
    dialog: std::sync::Arc<dyn PersonDialog>,
}

impl AskUserQuestionTool {
    /// The tool, asking through `dialog`.
    pub fn new(dialog: std::sync::Arc<dyn PersonDialog>) -> AskUserQuestionTool {
        AskUserQuestionTool { dialog }
    }
}

/// The questions of a prepared input (`prepare` checked their shape).
pub fn questions(input: &Value) -> Vec<Question> {
    let Some(list) = input.get("questions").and_then(Value::as_array) else {
        return Vec::new();
    };
    list.iter()
        .map(|q| Question {
            question: str_of(q, "question"),
            header: str_of(q, "header"),
            options: q
                .get("options")
                .and_then(Value::as_array)
                .map(|options| {
                    options
                        .iter()
                        .map(|o| Choice {
                            label: str_of(o, "label"),
                            description: str_of(o, "description"),
                        })
                        .collect()
                })
                .unwrap_or_default(),
            multi_select: q.get("multiSelect").and_then(Value::as_bool) == Some(true),
        })
        .collect()
}

fn str_of(v: &Value, key: &str) -> String {
    v.get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

/// Checks the shape the schema states; the first problem, in words.
fn check(input: &Value) -> Result<(), String> {
    let Some(obj) = input.as_object() else {
        return Err("the input must be an object".to_string());
    };
    let Some(list) = obj.get("questions").and_then(Value::as_array) else {
        return Err("`questions` is required and must be an array".to_string());
    };
    if list.is_empty() || list.len() > 4 {
        return Err(format!(
            "`questions` must hold 1 to 4 questions, not {}",
            list.len()
        ));
    }
    let mut seen = std::collections::HashSet::new();
    for (i, q) in list.iter().enumerate() {
        let at = format!("questions[{i}]");
        for key in ["question", "header"] {
            if !q.get(key).is_some_and(Value::is_string) {
                return Err(format!("`{at}.{key}` is required and must be a string"));
            }
        }
        if !q.get("multiSelect").is_none_or(Value::is_boolean) {
            return Err(format!("`{at}.multiSelect` must be a boolean"));
        }
        let text = str_of(q, "question");
        if !seen.insert(text.clone()) {
            return Err(format!(
                "`{at}.question` repeats an earlier question ({text:?}); each answer is keyed by its question, so each must be unique"
            ));
        }
        let Some(options) = q.get("options").and_then(Value::as_array) else {
            return Err(format!("`{at}.options` is required and must be an array"));
        };
        if options.len() < 2 || options.len() > 4 {
            return Err(format!(
                "`{at}.options` must hold 2 to 4 options, not {}",
                options.len()
            ));
        }
        for (k, o) in options.iter().enumerate() {
            for key in ["label", "description"] {
                if !o.get(key).is_some_and(Value::is_string) {
                    return Err(format!(
                        "`{at}.options[{k}].{key}` is required and must be a string"
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Claude Code 2.1.328's result text for these answers (fixture run8): a different closing
/// when any answer was typed rather than picked.
pub fn result_text(answers: &Map<String, Value>, typed: bool) -> String {
    let pairs: Vec<String> = answers
        .iter()
        .map(|(q, a)| format!("\"{q}\"=\"{}\"", a.as_str().unwrap_or_default()))
        .collect();
    if typed {
        format!(
            "The user answered: {}. Read the answers carefully \u{2014} they may request clarification, changes, or that you not proceed \u{2014} and follow what they actually say.",
            pairs.join(", ")
        )
    } else {
        format!(
            "Your questions have been answered: {}. You can now continue with these answers in mind.",
            pairs.join(", ")
        )
    }
}

/// Whether an answer is not one of its question's labels (nor several of them joined).
fn is_typed(question: Option<&Question>, answer: &str) -> bool {
    let Some(q) = question else {
        return true;
    };
    let labels: Vec<&str> = q.options.iter().map(|o| o.label.as_str()).collect();
    if labels.contains(&answer) {
        return false;
    }
    !(q.multi_select && answer.split(", ").all(|part| labels.contains(&part)))
}

/// Whether any of `answers` was typed rather than picked from its question's options.
fn any_typed(questions: &[Question], answers: &Map<String, Value>) -> bool {
    answers.iter().any(|(q, a)| {
        is_typed(
            questions.iter().find(|x| &x.question == q),
            a.as_str().unwrap_or_default(),
        )
    })
}

impl Tool for AskUserQuestionTool {
    fn name(&self) -> &str {
        "AskUserQuestion"
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn input_schema(&self) -> Value {
        // Claude Code 2.1.328's field names, types, bounds and required lists (fixture
        // run10-schemas.json); the descriptions are rein's.
        json!({
            "$schema": super::SCHEMA_DIALECT,
            "type": "object",
            "properties": {
                "questions": {
                    "description": "The questions to ask (1 to 4).",
                    "minItems": 1,
                    "maxItems": 4,
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "question": {
                                "description": "The full question, ending with a question mark and understandable on its own.",
                                "type": "string"
                            },
                            "header": {
                                "description": "A tag of at most 12 characters shown above the question, e.g. \"Database\".",
                                "type": "string"
                            },
                            "options": {
                                "description": "2 to 4 distinct choices. The user can always type their own answer, so do not add an \"Other\" option.",
                                "minItems": 2,
                                "maxItems": 4,
                                "type": "array",
                                "items": {
                                    "type": "object",
                                    "properties": {
                                        "label": {
                                            "description": "The choice as the user sees and picks it, in 1 to 5 words.",
                                            "type": "string"
                                        },
                                        "description": {
                                            "description": "What picking this choice means or leads to.",
                                            "type": "string"
                                        },
                                        "preview": {
                                            "description": "Optional text shown beside the choice (a mock-up, a snippet) when it is focused; single-select questions only.",
                                            "type": "string"
                                        }
                                    },
                                    "required": ["label", "description"],
                                    "additionalProperties": false
                                }
                            },
                            "multiSelect": {
                                "description": "True when several choices may be picked together.",
                                "default": false,
                                "type": "boolean"
                            }
                        },
                        "required": ["question", "header", "options", "multiSelect"],
                        "additionalProperties": false
                    }
                },
                "answers": {
                    "description": "Filled in with the user's answers (question → answer); do not send it.",
                    "type": "object",
                    "propertyNames": {"type": "string"},
                    "additionalProperties": {"type": "string"}
                },
                "annotations": {
                    "description": "Filled in with the user's notes per question; do not send it.",
                    "type": "object",
                    "propertyNames": {"type": "string"},
                    "additionalProperties": {
                        "type": "object",
                        "properties": {
                            "preview": {"type": "string"},
                            "notes": {"type": "string"}
                        },
                        "additionalProperties": false
                    }
                },
                "metadata": {
                    "description": "Optional tracking data, not shown to the user.",
                    "type": "object",
                    "properties": {"source": {"type": "string"}},
                    "additionalProperties": false
                }
            },
            "required": ["questions"],
            "additionalProperties": false
        })
    }

    fn prepare(&self, input: Value, _ctx: &ToolContext) -> Result<Value, String> {
        check(&input).map_err(|issue| {
            super::input::validation_error("AskUserQuestion", std::slice::from_ref(&issue))
        })?;
        Ok(input)
    }

    fn prepare_touches_files(&self) -> bool {
        false
    }

    fn asks_person(&self) -> Option<&str> {
        Some("rein needs your answer")
    }

    fn ask_person<'a>(
        &'a self,
        input: Value,
        _ctx: &'a ToolContext,
    ) -> BoxFuture<'a, PersonAnswer> {
        Box::pin(async move {
            // Answers a PermissionRequest hook (or the host) already supplied stand.
            if input.get("answers").and_then(Value::as_object).is_some() {
                return PersonAnswer::Proceed(input);
            }
            let asked = questions(&input);
            let dialog = std::sync::Arc::clone(&self.dialog);
            let shown = asked.clone();
            let answers =
                match tokio::task::spawn_blocking(move || dialog.ask_questions(&shown)).await {
                    Ok(answers) => answers,
                    Err(_) => {
                        return PersonAnswer::Refuse(
                            "The question could not be shown: the dialog crashed".to_string(),
                        );
                    }
                };
            let Some(answers) = answers else {
                return PersonAnswer::Stop;
            };
            let mut map = Map::new();
            for (q, a) in asked.iter().zip(answers) {
                map.insert(q.question.clone(), Value::String(a.text));
            }
            let mut input = input;
            if let Some(obj) = input.as_object_mut() {
                obj.insert("answers".to_string(), Value::Object(map));
                obj.insert("annotations".to_string(), json!({}));
            }
            PersonAnswer::Proceed(input)
        })
    }

    fn main_agent_only(&self) -> bool {
        true
    }

    fn execute<'a>(&'a self, input: Value, _ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutcome> {
        Box::pin(async move {
            let asked = questions(&input);
            let answers = input
                .get("answers")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            let content = result_text(&answers, any_typed(&asked, &answers));
            let response = json!({
                "questions": input.get("questions").cloned().unwrap_or(Value::Null),
                "answers": Value::Object(answers),
                "annotations": input.get("annotations").cloned().unwrap_or_else(|| json!({})),
            });
            ToolOutcome::Success { response, content }
        })
    }

    fn render(&self, response: &Value) -> Option<String> {
        let answers = response.get("answers")?.as_object()?;
        Some(result_text(
            answers,
            any_typed(&questions(response), answers),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input() -> Value {
        json!({"questions": [
            {"question": "Which colour do you want?", "header": "Colour",
             "options": [{"label": "Red", "description": "A warm colour"},
                         {"label": "Blue", "description": "A cool colour"}],
             "multiSelect": false},
            {"question": "Which sizes?", "header": "Sizes",
             "options": [{"label": "Small", "description": "S"},
                         {"label": "Large", "description": "L"},
                         {"label": "Huge", "description": "XL"}],
             "multiSelect": true}
        ]})
    }

    #[test]
    fn picked_and_typed_answers_get_claude_codes_texts() {
        // Fixture run8: two picked answers (one a multiSelect of two labels).
        let mut answers = Map::new();
        answers.insert("Which colour do you want?".into(), json!("Red"));
        answers.insert("Which sizes?".into(), json!("Small, Huge"));
        let qs = questions(&input());
        assert!(!is_typed(qs.first(), "Red"));
        assert!(!is_typed(qs.get(1), "Small, Huge"));
        assert!(is_typed(qs.first(), "Red, Blue"), "single-select");
        assert!(is_typed(qs.first(), "Carol the third"));
        assert_eq!(
            result_text(&answers, false),
            "Your questions have been answered: \"Which colour do you want?\"=\"Red\", \"Which sizes?\"=\"Small, Huge\". You can now continue with these answers in mind."
        );
        let mut typed = Map::new();
        typed.insert("Pick a name?".into(), json!("Carol the third"));
        assert_eq!(
            result_text(&typed, true),
            "The user answered: \"Pick a name?\"=\"Carol the third\". Read the answers carefully \u{2014} they may request clarification, changes, or that you not proceed \u{2014} and follow what they actually say."
        );
    }

    #[test]
    fn malformed_questions_are_named() {
        assert_eq!(check(&input()), Ok(()));
        let mut one_option = input();
        one_option["questions"][1]["options"] = json!([{"label": "a", "description": "b"}]);
        assert_eq!(
            check(&one_option),
            Err("`questions[1].options` must hold 2 to 4 options, not 1".to_string())
        );
        let mut twice = input();
        twice["questions"][1]["question"] = json!("Which colour do you want?");
        assert!(
            check(&twice)
                .unwrap_err()
                .contains("repeats an earlier question")
        );
        assert!(check(&json!({"questions": []})).is_err());
        let mut no_label = input();
        no_label["questions"][0]["options"][1] = json!({"description": "x"});
        assert_eq!(
            check(&no_label),
            Err("`questions[0].options[1].label` is required and must be a string".to_string())
        );
    }
}
