//! The names of JSON value kinds in error messages (`expected object, got array`, `found a
//! number`): one place, so every message names a kind the same way.

use serde_json::Value;

/// The kind's bare name: `null`, `boolean`, `number`, `string`, `array`, `object`.
pub(crate) fn name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// The kind with its article, for a sentence: `null`, `a boolean`, `an array`, …
pub(crate) fn with_article(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
