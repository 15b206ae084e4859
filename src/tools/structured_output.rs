//! `StructuredOutput`: the tool a model answers with when the caller asked for a JSON answer
//! (`--json-schema`, the Agent SDK's `output_format` / `outputFormat`). Its input schema is the
//! caller's schema; an input that does not match it is refused with what is wrong, so the model
//! can try again; a matching one is kept and becomes the `result`'s `structured_output`.
//!
//! The schema check covers the keywords answers are usually described with — `type` (one or a
//! list), `enum`, `const`, `required`, `properties`, `additionalProperties: false`, `items`,
//! `minItems`/`maxItems`, `minLength`/`maxLength`, `minimum`/`maximum` — and ignores others
//! (`$ref`, `anyOf`, `pattern`, formats): an answer they would refuse is accepted.

use std::sync::{Arc, Mutex};

use serde_json::Value;

use crate::tools::{BoxFuture, Tool, ToolContext, ToolOutcome};

/// The last structured answer of the turn, shared with whoever writes the `result`.
pub type StructuredAnswer = Arc<Mutex<Option<Value>>>;

/// The tool; see the module doc.
pub struct StructuredOutput {
    schema: Value,
    answer: StructuredAnswer,
}

impl StructuredOutput {
    /// The tool for `schema` (a JSON Schema whose root is an object), and where its answers
    /// land. `Err` says why the schema cannot be used.
    pub fn new(schema: Value) -> Result<(StructuredOutput, StructuredAnswer), String> {
        if !schema.is_object() {
            return Err("the schema is not a JSON object".to_string());
        }
        match schema.get("type") {
            None => {}
            Some(Value::String(t)) if t == "object" => {}
            Some(other) => {
                return Err(format!(
                    "the schema's root must be of type \"object\" (a tool's input is an object), not {other}"
                ));
            }
        }
        let answer: StructuredAnswer = Arc::new(Mutex::new(None));
        Ok((
            StructuredOutput {
                schema,
                answer: Arc::clone(&answer),
            },
            answer,
        ))
    }
}

/// What rein tells the model the tool is for.
pub const DESCRIPTION: &str = "Give your final answer in the structured form the caller asked for. \
Call this once, when the work is done, with the answer as the input; if the input does not match \
the required shape you get the reasons back and should call it again.";

/// Added to the system prompt when the tool is offered.
pub const INSTRUCTION: &str = "The caller wants your final answer as structured data: when you are \
done, call the StructuredOutput tool with it (its input schema is the required shape).";

impl Tool for StructuredOutput {
    fn name(&self) -> &str {
        "StructuredOutput"
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn input_schema(&self) -> Value {
        self.schema.clone()
    }

    fn prepare_touches_files(&self) -> bool {
        false
    }

    fn prepare(&self, input: Value, _ctx: &ToolContext) -> Result<Value, String> {
        let mut problems = Vec::new();
        check(&self.schema, &input, "input", &mut problems);
        if problems.is_empty() {
            Ok(input)
        } else {
            Err(format!(
                "The answer does not match the required schema: {}",
                problems.join("; ")
            ))
        }
    }

    fn execute<'a>(&'a self, input: Value, _ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutcome> {
        Box::pin(async move {
            if let Ok(mut slot) = self.answer.lock() {
                *slot = Some(input.clone());
            }
            ToolOutcome::Success {
                response: input,
                content: "Structured output provided successfully".to_string(),
            }
        })
    }

    fn render(&self, _response: &Value) -> Option<String> {
        None
    }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn has_type(v: &Value, wanted: &str) -> bool {
    let actual = type_name(v);
    actual == wanted
        || (wanted == "number" && actual == "integer")
        || (wanted == "integer" && v.as_f64().is_some_and(|f| f.fract() == 0.0))
}

/// Checks `value` against `schema`, pushing one line per problem (`at` names where).
pub fn check(schema: &Value, value: &Value, at: &str, problems: &mut Vec<String>) {
    let Some(schema) = schema.as_object() else {
        return;
    };
    match schema.get("type") {
        Some(Value::String(t)) if !has_type(value, t) => {
            problems.push(format!("{at} should be {t}, not {}", type_name(value)));
            return;
        }
        Some(Value::Array(ts))
            if !ts
                .iter()
                .filter_map(Value::as_str)
                .any(|t| has_type(value, t)) =>
        {
            problems.push(format!(
                "{at} should be one of {}, not {}",
                Value::Array(ts.clone()),
                type_name(value)
            ));
            return;
        }
        _ => {}
    }
    if let Some(Value::Array(options)) = schema.get("enum")
        && !options.contains(value)
    {
        problems.push(format!(
            "{at} should be one of {}",
            Value::Array(options.clone())
        ));
    }
    if let Some(c) = schema.get("const")
        && c != value
    {
        problems.push(format!("{at} should be {c}"));
    }
    let bound = |key: &str| schema.get(key).and_then(Value::as_f64);
    if let Some(n) = value.as_f64() {
        if let Some(min) = bound("minimum").filter(|m| n < *m) {
            problems.push(format!("{at} should be at least {min}"));
        }
        if let Some(max) = bound("maximum").filter(|m| n > *m) {
            problems.push(format!("{at} should be at most {max}"));
        }
    }
    if let Some(s) = value.as_str() {
        let len = s.chars().count() as f64;
        if let Some(min) = bound("minLength").filter(|m| len < *m) {
            problems.push(format!("{at} should have at least {min} characters"));
        }
        if let Some(max) = bound("maxLength").filter(|m| len > *m) {
            problems.push(format!("{at} should have at most {max} characters"));
        }
    }
    if let Some(items) = value.as_array() {
        let len = items.len() as f64;
        if let Some(min) = bound("minItems").filter(|m| len < *m) {
            problems.push(format!("{at} should have at least {min} items"));
        }
        if let Some(max) = bound("maxItems").filter(|m| len > *m) {
            problems.push(format!("{at} should have at most {max} items"));
        }
        if let Some(item_schema) = schema.get("items") {
            for (i, item) in items.iter().enumerate() {
                check(item_schema, item, &format!("{at}[{i}]"), problems);
            }
        }
    }
    if let Some(object) = value.as_object() {
        let properties = schema.get("properties").and_then(Value::as_object);
        for name in schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            if !object.contains_key(name) {
                problems.push(format!("{at} is missing the required property \"{name}\""));
            }
        }
        for (name, v) in object {
            match properties.and_then(|p| p.get(name)) {
                Some(s) => check(s, v, &format!("{at}.{name}"), problems),
                None if schema.get("additionalProperties") == Some(&Value::Bool(false)) => {
                    problems.push(format!(
                        "{at} has a property \"{name}\" the schema does not allow"
                    ));
                }
                None => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn problems(schema: Value, value: Value) -> Vec<String> {
        let mut out = Vec::new();
        check(&schema, &value, "input", &mut out);
        out
    }

    #[test]
    fn the_check_names_each_problem_and_accepts_a_match() {
        let schema = json!({"type": "object", "required": ["answer", "tags"],
            "additionalProperties": false,
            "properties": {"answer": {"type": "integer", "minimum": 0},
                           "tags": {"type": "array", "items": {"enum": ["a", "b"]}, "maxItems": 2}}});
        assert!(problems(schema.clone(), json!({"answer": 4, "tags": ["a"]})).is_empty());
        assert_eq!(
            problems(
                schema.clone(),
                json!({"answer": -1.5, "tags": ["c", "a", "b"], "x": 1})
            ),
            vec![
                "input.answer should be integer, not number",
                "input.tags should have at most 2 items",
                "input.tags[0] should be one of [\"a\",\"b\"]",
                "input has a property \"x\" the schema does not allow",
            ]
        );
        assert_eq!(
            problems(schema, json!({})),
            vec![
                "input is missing the required property \"answer\"",
                "input is missing the required property \"tags\"",
            ]
        );
        assert!(StructuredOutput::new(json!({"type": "array"})).is_err());
    }
}
