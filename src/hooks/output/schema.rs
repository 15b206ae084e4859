//! The output schema: the fields each event's stdout JSON may carry, their types, validation that
//! names every problem by its path, and the expected schema printed with a rejection.

use super::*;

pub(super) const fn opt(name: &'static str, ty: FieldType) -> Field {
    Field {
        name,
        ty,
        required: false,
    }
}

pub(super) const COMMON: &[Field] = &[
    opt("continue", FieldType::Bool),
    opt("suppressOutput", FieldType::Bool),
    opt("stopReason", FieldType::String),
    opt("decision", FieldType::Enum(&["approve", "block"])),
    opt("reason", FieldType::String),
    opt("systemMessage", FieldType::String),
    opt("terminalSequence", FieldType::TerminalSequence),
    opt("asyncTimeout", FieldType::Number),
];

/// The "Expected schema" block of a validation error, generated from the field tables.
pub fn expected_schema(event: HookEvent) -> String {
    let mut out = String::from("{\n");
    for field in COMMON {
        out.push_str(&format!(
            "  \"{}\"?: {},\n",
            field.name,
            field.ty.describe()
        ));
    }
    out.push_str("  \"hookSpecificOutput\"?: {\n");
    out.push_str(&format!("    \"hookEventName\": \"{event}\""));
    for field in event.spec().output {
        let mark = if field.required { "" } else { "?" };
        out.push_str(&format!(
            ",\n    \"{}\"{mark}: {}",
            field.name,
            field.ty.describe()
        ));
    }
    out.push_str("\n  }\n}");
    out
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Issue {
    pub(super) path: String,
    pub(super) message: String,
}

pub(super) enum Rejection {
    WrongEvent { got: String },
    Schema(Vec<Issue>),
}

pub(super) fn check_field(path: &str, ty: FieldType, value: &Value, issues: &mut Vec<Issue>) {
    let mut fail = |message: String| {
        issues.push(Issue {
            path: path.to_string(),
            message,
        })
    };
    // Claude Code's wording (its schema library's): `Invalid input: expected boolean, received
    // string`, `Invalid option: expected one of "approve"|"block"`.
    let expected = |what: &str| {
        format!(
            "Invalid input: expected {what}, received {}",
            crate::json_kind::name(value)
        )
    };
    match ty {
        FieldType::Bool => {
            if !value.is_boolean() {
                fail(expected("boolean"));
            }
        }
        FieldType::String => {
            if !value.is_string() {
                fail(expected("string"));
            }
        }
        FieldType::Number => {
            if !value.is_number() {
                fail(expected("number"));
            }
        }
        FieldType::Object => {
            if !value.is_object() {
                fail(expected("object"));
            }
        }
        FieldType::Any => {}
        FieldType::Enum(options) => match value.as_str() {
            Some(text) if options.contains(&text) => {}
            _ => fail(format!(
                "Invalid option: expected one of {}",
                options
                    .iter()
                    .map(|o| format!("\"{o}\""))
                    .collect::<Vec<_>>()
                    .join("|")
            )),
        },
        FieldType::StringArray => match value.as_array() {
            Some(items) => {
                for (i, item) in items.iter().enumerate() {
                    if !item.is_string() {
                        issues.push(Issue {
                            path: format!("{path}[{i}]"),
                            message: format!(
                                "expected string, got {}",
                                crate::json_kind::name(item)
                            ),
                        });
                    }
                }
            }
            None => fail(expected("string[]")),
        },
        FieldType::TerminalSequence => match value.as_str() {
            Some(text) => {
                if let Err(why) = check_terminal_sequence(text) {
                    fail(why);
                }
            }
            None => fail(expected("string")),
        },
        FieldType::PermissionRequestDecision => {
            check_permission_request_decision(path, value, issues)
        }
    }
}

pub(super) fn check_permission_request_decision(
    path: &str,
    value: &Value,
    issues: &mut Vec<Issue>,
) {
    let Some(map) = value.as_object() else {
        issues.push(Issue {
            path: path.to_string(),
            message: format!("expected object, got {}", crate::json_kind::name(value)),
        });
        return;
    };
    let sub = |name: &str| format!("{path}.{name}");
    match map.get("behavior").map(|b| (b, b.as_str())) {
        Some((_, Some("allow"))) => {
            if let Some(v) = map.get("updatedInput") {
                check_field(&sub("updatedInput"), FieldType::Object, v, issues);
            }
            if let Some(v) = map.get("updatedPermissions") {
                match v.as_array() {
                    Some(items) => {
                        for (i, item) in items.iter().enumerate() {
                            check_field(
                                &format!("{}[{i}]", sub("updatedPermissions")),
                                FieldType::Object,
                                item,
                                issues,
                            );
                        }
                    }
                    None => issues.push(Issue {
                        path: sub("updatedPermissions"),
                        message: format!("expected array, got {}", crate::json_kind::name(v)),
                    }),
                }
            }
        }
        Some((_, Some("deny"))) => {
            if let Some(v) = map.get("message") {
                check_field(&sub("message"), FieldType::String, v, issues);
            }
            if let Some(v) = map.get("interrupt") {
                check_field(&sub("interrupt"), FieldType::Bool, v, issues);
            }
        }
        Some((b, _)) => check_field(
            &sub("behavior"),
            FieldType::Enum(&["allow", "deny"]),
            b,
            issues,
        ),
        None => issues.push(Issue {
            path: sub("behavior"),
            message: "required field is missing".to_string(),
        }),
    }
}

/// OSC 0/1/2/9/99/777 (terminated by BEL or ST) or a lone BEL; an OSC 9 body may not start
/// with a digit unless it is the `9;4` progress form.
pub(super) fn check_terminal_sequence(text: &str) -> Result<(), String> {
    if text == "\u{7}" {
        return Ok(());
    }
    let bad =
        || "expected an OSC 0/1/2/9/99/777 sequence (ESC ] N ; … BEL or ESC \\) or BEL".to_string();
    let body = text.strip_prefix("\u{1b}]").ok_or_else(bad)?;
    let body = body
        .strip_suffix('\u{7}')
        .or_else(|| body.strip_suffix("\u{1b}\\"))
        .ok_or_else(bad)?;
    let (number, rest) = body.split_once(';').ok_or_else(bad)?;
    match number {
        "0" | "1" | "2" | "99" | "777" => Ok(()),
        "9" => {
            let starts_with_digit = rest.chars().next().is_some_and(|c| c.is_ascii_digit());
            if starts_with_digit && !rest.starts_with("4;") && rest != "4" {
                Err(
                    "an OSC 9 body may not start with a digit (except the 9;4 progress form)"
                        .to_string(),
                )
            } else {
                Ok(())
            }
        }
        _ => Err(bad()),
    }
}

pub(super) fn validate(event: HookEvent, value: &Value) -> Result<HookJsonOutput, Rejection> {
    let Some(map) = value.as_object() else {
        return Err(Rejection::Schema(vec![Issue {
            path: "(root)".to_string(),
            message: format!("expected object, got {}", crate::json_kind::name(value)),
        }]));
    };
    let mut issues = Vec::new();
    for field in COMMON {
        if let Some(v) = map.get(field.name) {
            check_field(field.name, field.ty, v, &mut issues);
        }
    }
    let mut specific = None;
    if let Some(hso) = map.get("hookSpecificOutput") {
        match hso.as_object() {
            None => issues.push(Issue {
                path: "hookSpecificOutput".to_string(),
                message: format!("expected object, got {}", crate::json_kind::name(hso)),
            }),
            Some(hso) => match hso.get("hookEventName") {
                None => issues.push(Issue {
                    path: "hookSpecificOutput.hookEventName".to_string(),
                    message: "required field is missing".to_string(),
                }),
                Some(Value::String(name)) if name != event.as_str() => {
                    return Err(Rejection::WrongEvent { got: name.clone() });
                }
                Some(Value::String(_)) => {
                    for field in event.spec().output {
                        let path = format!("hookSpecificOutput.{}", field.name);
                        match hso.get(field.name) {
                            Some(v) => check_field(&path, field.ty, v, &mut issues),
                            None if field.required => issues.push(Issue {
                                path,
                                message: "required field is missing".to_string(),
                            }),
                            None => {}
                        }
                    }
                    specific = Some(hso);
                }
                Some(other) => issues.push(Issue {
                    path: "hookSpecificOutput.hookEventName".to_string(),
                    message: format!("expected string, got {}", crate::json_kind::name(other)),
                }),
            },
        }
    }
    if !issues.is_empty() {
        return Err(Rejection::Schema(issues));
    }

    let string =
        |m: &Map<String, Value>, k: &str| m.get(k).and_then(Value::as_str).map(str::to_string);
    let boolean = |m: &Map<String, Value>, k: &str| m.get(k).and_then(Value::as_bool);
    Ok(HookJsonOutput {
        continue_: boolean(map, "continue"),
        stop_reason: string(map, "stopReason"),
        suppress_output: boolean(map, "suppressOutput"),
        decision: match map.get("decision").and_then(Value::as_str) {
            Some("approve") => Some(LegacyDecision::Approve),
            Some("block") => Some(LegacyDecision::Block),
            Some(_) | None => None,
        },
        reason: string(map, "reason"),
        system_message: string(map, "systemMessage"),
        terminal_sequence: string(map, "terminalSequence"),
        hook_specific: specific.cloned(),
    })
}
