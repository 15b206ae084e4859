//! The built-in tools' input schemas: well-formed JSON Schema (2020-12 keywords), every
//! property described, and in agreement with rein's own input validator — the golden inputs
//! Claude Code sent pass both, and every input the validator refuses for its shape is refused
//! by the schema too.
//!
//! The checker below implements the keywords rein's schemas use (`type`, `properties`,
//! `required`, `additionalProperties`, `enum`, `minimum`, `maximum`, `exclusiveMinimum`,
//! `exclusiveMaximum`); any other keyword fails the test, so a schema cannot use one the
//! checker would silently skip.

use std::path::Path;

use serde_json::{Map, Value, json};

use super::project;
use crate::agent::subagent::{AGENT_FIELDS, agent_description, agent_input_schema};
use crate::tools::input::{Field, FieldKind, normalise};
use crate::tools::{SCHEMA_DIALECT, ToolContext, builtin_tools};

/// Keywords a property schema may carry.
const PROPERTY_KEYWORDS: &[&str] = &[
    "type",
    "description",
    "enum",
    "default",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minLength",
    "items",
    // An annotation in 2020-12 (`uri`): says what the string is, refuses nothing.
    "format",
];

/// Keywords the top-level schema may carry.
const TOP_KEYWORDS: &[&str] = &[
    "$schema",
    "type",
    "properties",
    "required",
    "additionalProperties",
];

/// Why `value` does not satisfy `schema` (empty: it does).
fn violations(schema: &Value, value: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let Value::Object(value) = value else {
        return vec!["not an object".into()];
    };
    let properties = schema["properties"].as_object().expect("properties");
    for key in schema["required"].as_array().into_iter().flatten() {
        let key = key.as_str().expect("required names are strings");
        if !value.contains_key(key) {
            out.push(format!("missing required `{key}`"));
        }
    }
    for (key, v) in value {
        match properties.get(key) {
            None if schema["additionalProperties"] == json!(false) => {
                out.push(format!("unexpected `{key}`"));
            }
            None => {}
            Some(property) => out.extend(property_violations(property, v, key)),
        }
    }
    out
}

fn property_violations(property: &Value, v: &Value, key: &str) -> Vec<String> {
    let mut out = Vec::new();
    let ty = property["type"]
        .as_str()
        .expect("every property has a type");
    let type_ok = match ty {
        "string" => v.is_string(),
        "boolean" => v.is_boolean(),
        "number" => v.is_number(),
        // 2020-12: an integer is any number with a zero fractional part.
        "integer" => v.as_f64().is_some_and(|f| f.fract() == 0.0),
        "array" => {
            let item = property["items"]["type"]
                .as_str()
                .expect("array items have a type");
            assert_eq!(item, "string", "`{key}`: only lists of strings are used");
            v.as_array().is_some_and(|a| a.iter().all(Value::is_string))
        }
        other => panic!("`{key}`: type {other} is not used by built-in tools"),
    };
    if !type_ok {
        out.push(format!("`{key}` is not a {ty}"));
        return out;
    }
    if let Some(allowed) = property.get("enum").and_then(Value::as_array)
        && !allowed.contains(v)
    {
        out.push(format!("`{key}` is not one of {allowed:?}"));
    }
    if let (Some(min), Some(text)) = (
        property.get("minLength").and_then(Value::as_u64),
        v.as_str(),
    ) && (text.chars().count() as u64) < min
    {
        out.push(format!("`{key}` is shorter than {min}"));
    }
    if let Some(n) = v.as_f64() {
        let bound = |k: &str| property.get(k).and_then(Value::as_f64);
        if bound("minimum").is_some_and(|m| n < m)
            || bound("exclusiveMinimum").is_some_and(|m| n <= m)
            || bound("maximum").is_some_and(|m| n > m)
            || bound("exclusiveMaximum").is_some_and(|m| n >= m)
        {
            out.push(format!("`{key}` = {n} is out of range"));
        }
    }
    out
}

/// A tool under test: its name, schema, description, the validator's fields, and how to run
/// the validator.
struct Subject<'a> {
    name: String,
    schema: Value,
    description: String,
    fields: &'static [Field],
    validate: Box<dyn Fn(Value) -> Result<(), String> + 'a>,
}

fn fields_of(name: &str) -> &'static [Field] {
    match name {
        "Bash" => crate::tools::bash::FIELDS,
        "Read" => crate::tools::read::FIELDS,
        "Write" => crate::tools::write::FIELDS,
        "Edit" => crate::tools::edit::FIELDS,
        "Glob" => crate::tools::glob::FIELDS,
        "Grep" => crate::tools::grep::FIELDS,
        "TaskStop" => crate::tools::task_stop::FIELDS,
        "NotebookEdit" => crate::tools::notebook_edit::FIELDS,
        "WebFetch" => crate::tools::web::FETCH_FIELDS,
        "WebSearch" => crate::tools::web::SEARCH_FIELDS,
        "ToolSearch" => crate::tools::tool_search::FIELDS,
        other => panic!("no field list for {other}"),
    }
}

/// Every built-in tool plus Agent. A TaskStop input that passes validation is refused after
/// it for naming no running task: that refusal is not about the shape, so it counts as
/// accepted.
fn subjects(ctx: &ToolContext) -> Vec<Subject<'_>> {
    let mut out: Vec<Subject<'_>> = builtin_tools()
        .into_iter()
        .map(|tool| {
            let name = tool.name().to_string();
            Subject {
                schema: tool.input_schema(),
                description: tool.description().to_string(),
                fields: fields_of(&name),
                name,
                validate: Box::new(move |input| match tool.prepare(input, ctx) {
                    Ok(_) => Ok(()),
                    Err(e) if e.starts_with("No task found with ID") => Ok(()),
                    // NotebookEdit checks the file after the shape: not about the shape.
                    Err(e) if e.starts_with("File has not been read yet") => Ok(()),
                    Err(e) => Err(e),
                }),
            }
        })
        .collect();
    out.push(Subject {
        name: "Agent".into(),
        schema: agent_input_schema(),
        description: agent_description(&crate::agent::subagent::builtin_definitions()),
        fields: AGENT_FIELDS,
        validate: Box::new(|input| normalise("Agent", input, AGENT_FIELDS).map(|_| ())),
    });
    out
}

#[test]
fn every_schema_is_well_formed_and_described() {
    let (_dir, _root, ctx) = project();
    for s in subjects(&ctx) {
        let name = &s.name;
        let schema = s.schema.as_object().expect("a schema is an object");
        for key in schema.keys() {
            assert!(
                TOP_KEYWORDS.contains(&key.as_str()),
                "{name}: keyword {key}"
            );
        }
        assert_eq!(schema["$schema"], SCHEMA_DIALECT, "{name}");
        assert_eq!(schema["type"], "object", "{name}");
        assert_eq!(schema["additionalProperties"], json!(false), "{name}");
        let properties = schema["properties"].as_object().expect("properties");
        for required in schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let required = required.as_str().expect("string");
            assert!(properties.contains_key(required), "{name}: {required}");
        }
        for (key, property) in properties {
            let property = property.as_object().expect("property schema");
            for keyword in property.keys() {
                assert!(
                    PROPERTY_KEYWORDS.contains(&keyword.as_str()),
                    "{name}.{key}: keyword {keyword}"
                );
            }
            let description = property["description"].as_str().unwrap_or_default();
            assert!(
                description.len() >= 15 && description.ends_with('.'),
                "{name}.{key}: a property needs a sentence of description, got {description:?}"
            );
            if let Some(default) = property.get("default") {
                assert!(
                    property_violations(&Value::Object(property.clone()), default, key).is_empty(),
                    "{name}.{key}: the default must satisfy the property"
                );
            }
        }
        // The description says what the tool does, when to use it, and its limits; the
        // built-ins end with how a refusal looks.
        assert!(s.description.len() > 300, "{name}: {}", s.description);
        if name != "Agent" {
            assert!(
                s.description
                    .ends_with(crate::tools::refusal_note!().trim_start()),
                "{name}: the refusal paragraph closes the description"
            );
        }
    }
}

/// The schema and the validator describe the same keys, in the same order, with the same
/// types and the same required set.
#[test]
fn schema_and_validator_list_the_same_fields() {
    let (_dir, _root, ctx) = project();
    for s in subjects(&ctx) {
        let name = &s.name;
        let properties = s.schema["properties"].as_object().expect("properties");
        let keys: Vec<&str> = properties.keys().map(String::as_str).collect();
        let fields: Vec<&str> = s.fields.iter().map(|f| f.name).collect();
        assert_eq!(keys, fields, "{name}: schema keys vs validator fields");
        let required: Vec<&str> = s.schema["required"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let field_required: Vec<&str> = s
            .fields
            .iter()
            .filter(|f| f.required)
            .map(|f| f.name)
            .collect();
        assert_eq!(required, field_required, "{name}: required");
        for field in s.fields {
            let property = &properties[field.name];
            let (ty, allowed) = match field.kind {
                FieldKind::String => ("string", None),
                FieldKind::Integer => ("integer", None),
                FieldKind::Number => ("number", None),
                FieldKind::Boolean => ("boolean", None),
                FieldKind::Enum(values) => ("string", Some(json!(values))),
                FieldKind::Strings => ("array", None),
            };
            assert_eq!(property["type"], ty, "{name}.{}", field.name);
            assert_eq!(
                property.get("enum").cloned(),
                allowed,
                "{name}.{}",
                field.name
            );
        }
    }
}

/// `tool_input` of a golden sample with `<PROJECT>` replaced by `root`.
fn golden_input(name: &str, root: &Path) -> (String, Value) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/golden")
        .join(name);
    let text = std::fs::read_to_string(path).expect("fixture");
    let text = text.replace("<PROJECT>", &root.to_string_lossy());
    let sample: Value = serde_json::from_str(&text).expect("fixture json");
    (
        sample["tool_name"].as_str().expect("tool_name").to_string(),
        sample["tool_input"].clone(),
    )
}

/// Inputs Claude Code sent (golden samples, the recorded Agent calls) and inputs its schemas
/// take for the tools without a golden sample: both the schema and the validator accept them.
#[test]
fn schema_and_validator_accept_claude_codes_inputs() {
    let (_dir, root, ctx) = project();
    // The files the golden Edit samples change, so Edit's own checks pass.
    std::fs::write(root.join("notes.txt"), "hello\nline two\n").expect("write");
    let mut inputs: Vec<(String, Value)> = [
        "stdin-PreToolUse-Bash.json",
        "stdin-PreToolUse-Edit.json",
        "stdin-PreToolUse-Read.json",
        "stdin-PreToolUse-Write.json",
        "stdin-PostToolUse-Bash.json",
        "stdin-PostToolUse-Edit.json",
        "stdin-PostToolUse-Read-offset.json",
        "stdin-PostToolUse-Read.json",
        "stdin-PostToolUse-Write.json",
        "stdin-PermissionRequest-Bash.json",
    ]
    .iter()
    .map(|f| golden_input(f, &root))
    .collect();
    // The Agent calls of tests/fixtures/subagents/scenarios/sub_fg.json, as Claude Code took
    // them.
    inputs.push((
        "Agent".into(),
        json!({"description": "run echo", "prompt": "SUBTASK-ALPHA: run echo hi", "subagent_type": "helper", "run_in_background": false}),
    ));
    inputs.push((
        "Agent".into(),
        json!({"description": "bad type", "prompt": "SUBTASK-BETA", "subagent_type": "no-such-agent"}),
    ));
    // Every key of the tools without a golden sample, with the types Claude Code's schemas
    // give them.
    inputs.push((
        "Grep".into(),
        json!({"pattern": "fn\\s+main", "path": root, "glob": "*.rs", "output_mode": "content",
               "-B": 1, "-A": 2, "-C": 0, "context": 3, "-n": true, "-i": false, "-o": false,
               "type": "rust", "head_limit": 0, "offset": 5, "multiline": false}),
    ));
    inputs.push(("Glob".into(), json!({"pattern": "**/*.txt", "path": root})));
    inputs.push(("TaskStop".into(), json!({"task_id": "b1"})));
    inputs.push(("TaskStop".into(), json!({"shell_id": "b1"})));
    inputs.push((
        "Bash".into(),
        json!({"command": "sleep 1", "timeout": 1500.5, "description": "wait", "run_in_background": true}),
    ));
    inputs.push((
        "Read".into(),
        json!({"file_path": "notes.txt", "offset": 0, "limit": 1}),
    ));
    let subjects = subjects(&ctx);
    for (tool, input) in inputs {
        let s = subjects.iter().find(|s| s.name == tool).expect("tool");
        assert_eq!(
            violations(&s.schema, &input),
            Vec::<String>::new(),
            "{tool}: {input}"
        );
        if let Err(e) = (s.validate)(input.clone()) {
            panic!("{tool}: the validator refused {input}: {e}");
        }
    }
}

/// A value of the wrong JSON type for `kind`.
fn wrong_type(kind: FieldKind) -> Value {
    match kind {
        FieldKind::String | FieldKind::Enum(_) => json!(["not", "a", "string"]),
        FieldKind::Integer | FieldKind::Number => json!({"n": 1}),
        FieldKind::Boolean => json!(7),
        FieldKind::Strings => json!("not a list"),
    }
}

/// A value of the right type for `kind`.
fn good_value(kind: FieldKind) -> Value {
    match kind {
        FieldKind::String => json!("x"),
        FieldKind::Enum(values) => json!(values[0]),
        FieldKind::Integer | FieldKind::Number => json!(1),
        FieldKind::Boolean => json!(true),
        FieldKind::Strings => json!(["x"]),
    }
}

/// Every input the validator refuses for its shape, the schema refuses: a missing required
/// key, an unknown key, a wrong type for each key, an enum value not listed, a number out of
/// the range rein enforces. Each case is checked to be refused by the validator first, so
/// the list cannot drift into inputs nobody refuses.
#[test]
fn what_the_validator_refuses_the_schema_refuses() {
    let (_dir, root, ctx) = project();
    std::fs::write(root.join("notes.txt"), "hello\n").expect("write");
    let subjects = subjects(&ctx);
    let mut checked = 0;
    for s in &subjects {
        let base: Map<String, Value> = s
            .fields
            .iter()
            .filter(|f| f.required)
            .map(|f| (f.name.to_string(), good_value(f.kind)))
            .collect();
        let mut cases: Vec<Value> = Vec::new();
        for field in s.fields.iter().filter(|f| f.required) {
            let mut input = base.clone();
            input.remove(field.name);
            cases.push(Value::Object(input));
        }
        let mut extra = base.clone();
        extra.insert("no_such_parameter".into(), json!(1));
        cases.push(Value::Object(extra));
        for field in s.fields {
            let mut input = base.clone();
            input.insert(field.name.into(), wrong_type(field.kind));
            cases.push(Value::Object(input));
            if let FieldKind::Enum(_) = field.kind {
                let mut input = base.clone();
                input.insert(field.name.into(), json!("no-such-mode"));
                cases.push(Value::Object(input));
            }
        }
        let ranged: &[(&str, Value)] = match s.name.as_str() {
            "Bash" => &[("timeout", json!(0)), ("timeout", json!(-5))],
            "Read" => &[("offset", json!(-1)), ("limit", json!(-1))],
            "Grep" => &[
                ("-B", json!(-1)),
                ("-A", json!(-1)),
                ("-C", json!(-1)),
                ("context", json!(-1)),
                ("head_limit", json!(-1)),
                ("offset", json!(-1)),
            ],
            _ => &[],
        };
        for (key, value) in ranged {
            let mut input = base.clone();
            input.insert((*key).into(), value.clone());
            cases.push(Value::Object(input));
        }
        // A fractional value for a whole-number key.
        for field in s.fields.iter().filter(|f| f.kind == FieldKind::Integer) {
            let mut input = base.clone();
            input.insert(field.name.into(), json!(1.5));
            cases.push(Value::Object(input));
        }
        for input in cases {
            // TaskStop's keys are both optional; `{}` is refused after validation.
            if s.name == "TaskStop" && input == json!({}) {
                continue;
            }
            assert!(
                (s.validate)(input.clone()).is_err(),
                "{}: the validator took {input}",
                s.name
            );
            assert!(
                !violations(&s.schema, &input).is_empty(),
                "{}: the schema took {input}, which the validator refuses",
                s.name
            );
            checked += 1;
        }
    }
    assert!(checked > 60, "only {checked} cases");
}
