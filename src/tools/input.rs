//! Validation and normalisation of model-sent tool inputs: required keys, JSON types, unknown
//! keys dropped, schema key order, relative paths made absolute (spec §7).
//!
//! Error texts follow Claude Code's `InputValidationError: <Tool> failed due to the following
//! issue:\n<issue>` form, because models have been trained on them.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

/// The JSON type a field must have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldKind {
    /// A JSON string.
    String,
    /// A whole number (`3`, `3.0`, or the string `"3"`, normalised to a JSON integer).
    Integer,
    /// Any finite number (`1500.5`, or the string `"1500.5"`, normalised to a JSON number).
    Number,
    /// A boolean (`true`, or the strings `"true"`/`"false"`, normalised to a JSON boolean).
    Boolean,
    /// One of the listed strings.
    Enum(&'static [&'static str]),
    /// A list of strings.
    Strings,
}

/// One field of a tool's input schema.
#[derive(Debug, Clone, Copy)]
pub struct Field {
    /// The key as the model sends it.
    pub name: &'static str,
    /// Its type.
    pub kind: FieldKind,
    /// Whether the key must be present.
    pub required: bool,
}

impl Field {
    /// A required field.
    pub const fn required(name: &'static str, kind: FieldKind) -> Field {
        Field {
            name,
            kind,
            required: true,
        }
    }

    /// An optional field.
    pub const fn optional(name: &'static str, kind: FieldKind) -> Field {
        Field {
            name,
            kind,
            required: false,
        }
    }
}

/// Checks `input` against `fields` and returns a new object holding only the known keys, in
/// schema order, with lenient scalars (`"3"`, `"true"`) converted to their JSON types.
///
/// Why lenient: Claude Code's schemas accept numeric and boolean strings (models send them), and
/// a hook reading `.tool_input.limit` should see the same number either way.
pub fn normalise(tool: &str, input: Value, fields: &[Field]) -> Result<Map<String, Value>, String> {
    let Value::Object(mut given) = input else {
        return Err(validation_error(
            tool,
            &[format!(
                "The input is expected as `object` but provided as `{}`",
                crate::json_kind::name(&input)
            )],
        ));
    };
    let mut issues = Vec::new();
    let mut out = Map::new();
    for field in fields {
        match given.remove(field.name) {
            None | Some(Value::Null) => {
                if field.required {
                    issues.push(format!(
                        "The required parameter `{}` is missing",
                        field.name
                    ));
                }
            }
            Some(value) => match coerce(field.kind, value) {
                Ok(value) => {
                    out.insert(field.name.to_string(), value);
                }
                Err(issue) => issues.push(issue.replace("{}", field.name)),
            },
        }
    }
    // Claude Code's schemas are strict: a parameter the tool does not take is an issue (listed
    // after the missing ones, in input order), except the few Claude Code takes and rein
    // ignores.
    for name in given.keys() {
        if !IGNORED_PARAMETERS.contains(&(tool, name.as_str())) {
            issues.push(format!("An unexpected parameter `{name}` was provided"));
        }
    }
    if issues.is_empty() {
        Ok(out)
    } else {
        Err(validation_error(tool, &issues))
    }
}

/// Parameters Claude Code 2.1.328's tools take that rein's do not act on: accepted and dropped
/// rather than refused (`dangerouslyDisableSandbox`: rein has no sandbox to leave; `pages`:
/// rein's Read has no PDF support; `allow_large`: rein's Read limits are fixed; Agent's
/// `effort` and `isolation`: a subagent runs with the session's effort, in the session's
/// directory). rein's schemas leave them out, so a model is not invited to send them.
const IGNORED_PARAMETERS: &[(&str, &str)] = &[
    ("Bash", "dangerouslyDisableSandbox"),
    ("Read", "pages"),
    ("Read", "allow_large"),
    ("Agent", "effort"),
    ("Agent", "isolation"),
];

/// The model-facing text for schema issues.
pub fn validation_error(tool: &str, issues: &[String]) -> String {
    let noun = if issues.len() == 1 { "issue" } else { "issues" };
    format!(
        "InputValidationError: {tool} failed due to the following {noun}:\n{}",
        issues.join("\n")
    )
}

fn coerce(kind: FieldKind, value: Value) -> Result<Value, String> {
    match kind {
        FieldKind::String => match value {
            Value::String(_) => Ok(value),
            other => Err(type_issue("string", &other)),
        },
        FieldKind::Integer => {
            let number = match &value {
                Value::Number(n) => n.as_i64().or_else(|| {
                    n.as_f64()
                        .filter(|f| f.fract() == 0.0 && f.abs() < 9.0e15)
                        .map(|f| f as i64)
                }),
                Value::String(s) => s.trim().parse::<i64>().ok(),
                _ => None,
            };
            number
                .map(Value::from)
                .ok_or_else(|| type_issue("number", &value))
        }
        FieldKind::Number => {
            let number = match &value {
                Value::Number(n) => n.as_f64(),
                Value::String(s) => s.trim().parse::<f64>().ok(),
                _ => None,
            };
            match number.filter(|f| f.is_finite()) {
                Some(_) if value.is_number() => Ok(value),
                Some(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => Ok(Value::from(f as i64)),
                Some(f) => serde_json::Number::from_f64(f)
                    .map(Value::Number)
                    .ok_or_else(|| type_issue("number", &value)),
                None => Err(type_issue("number", &value)),
            }
        }
        FieldKind::Strings => match &value {
            Value::Array(items) if items.iter().all(Value::is_string) => Ok(value),
            other => Err(type_issue("array", other)),
        },
        FieldKind::Boolean => match &value {
            Value::Bool(_) => Ok(value),
            Value::String(s) if s == "true" => Ok(Value::Bool(true)),
            Value::String(s) if s == "false" => Ok(Value::Bool(false)),
            other => Err(type_issue("boolean", other)),
        },
        FieldKind::Enum(allowed) => match &value {
            Value::String(s) if allowed.contains(&s.as_str()) => Ok(value),
            Value::String(s) => Err(format!(
                "The parameter `{{}}` must be one of {} but provided as \"{s}\"",
                allowed
                    .iter()
                    .map(|a| format!("\"{a}\""))
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
            other => Err(type_issue("string", other)),
        },
    }
}

fn type_issue(expected: &str, value: &Value) -> String {
    format!(
        "The parameter `{{}}` type is expected as `{expected}` but provided as `{}`",
        crate::json_kind::name(value)
    )
}

/// Makes the string at `key` (if present) an absolute path against `cwd`.
pub fn absolutise_key(map: &mut Map<String, Value>, key: &str, cwd: &Path) {
    if let Some(Value::String(path)) = map.get_mut(key) {
        *path = absolutise(path, cwd).to_string_lossy().into_owned();
    }
}

/// `path` made absolute against `cwd`, with `~/` expanded.
///
/// Why no lexical cleaning (`./`, `..`): rein hands hooks the path the model asked for, made
/// absolute, and leaves normalisation to them (`hooks/normalize-paths.py` rewrites it with
/// `updatedInput`, the demo this project grew from). Permission rules clean paths themselves
/// before matching, so `src/../.env` cannot slip past `Edit(.env)`.
pub fn absolutise(path: &str, cwd: &Path) -> PathBuf {
    let expanded = match path.strip_prefix("~/") {
        Some(rest) => std::env::var_os("HOME").map(|home| Path::new(&home).join(rest)),
        None if path == "~" => std::env::var_os("HOME").map(PathBuf::from),
        None => None,
    };
    expanded.unwrap_or_else(|| cwd.join(path))
}

/// `path` as shown to the model and in Glob/Grep responses: relative to `cwd` when inside it,
/// absolute otherwise.
pub fn display_path(path: &Path, cwd: &Path) -> String {
    match path.strip_prefix(cwd) {
        Ok(rel) if !rel.as_os_str().is_empty() => rel.to_string_lossy().into_owned(),
        _ => path.to_string_lossy().into_owned(),
    }
}

/// Claude Code's text for a path that does not exist.
pub fn missing_file_error(cwd: &Path) -> String {
    format!(
        "File does not exist. Note: your current working directory is {}.",
        cwd.display()
    )
}
