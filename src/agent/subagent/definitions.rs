//! Subagent definitions: the built-in ones, `.claude/agents/*.md` files (front matter read with
//! file and line in every error), `--agents` JSON, and the model each one asks for.

use super::*;

/// Claude Code's model aliases; rein has no mapping of them to a provider's ids, so a
/// definition or hook naming one uses the session's model.
pub(super) const MODEL_ALIASES: [&str; 5] = ["sonnet", "opus", "haiku", "fable", "inherit"];

/// The model for a definition's or hook's `model`: the session's for none or an alias, else
/// the same provider with that id (when the provider can be rebuilt).
pub(crate) fn pick_model(
    session: &Arc<dyn Model>,
    factory: Option<&ModelFactory>,
    wanted: Option<&str>,
) -> Arc<dyn Model> {
    match (wanted, factory) {
        (Some(id), Some(factory)) if !id.is_empty() && !MODEL_ALIASES.contains(&id) => {
            factory(id).unwrap_or_else(|| Arc::clone(session))
        }
        _ => Arc::clone(session),
    }
}

/// Where a definition came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DefinitionSource {
    /// Built into rein.
    BuiltIn,
    /// A `.md` file.
    File(PathBuf),
    /// `--agents JSON`.
    Flag,
}

/// One subagent type.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentDefinition {
    /// `subagent_type` that selects it.
    pub name: String,
    /// When to use it (listed to the model).
    pub description: String,
    /// The subagent's instructions (the file's body).
    pub prompt: String,
    /// The tools it may use; `None` = every tool the session has (but Agent).
    pub tools: Option<Vec<String>>,
    /// A model name, if the definition names one.
    pub model: Option<String>,
    /// rein's deadline for this type.
    pub timeout: Option<Duration>,
    /// Where it came from.
    pub source: DefinitionSource,
}

/// The built-in types: `general-purpose` (every tool) and `Explore` (read-only tools).
pub fn builtin_definitions() -> Vec<AgentDefinition> {
    vec![
        AgentDefinition {
            name: "general-purpose".to_string(),
            description: "General agent for multi-step tasks: searching, reading and changing \
                          code, running commands."
                .to_string(),
            prompt: "You are a subagent. Do the task you are given with the tools you have, \
                     then answer with a concise report of what you found or changed."
                .to_string(),
            tools: None,
            model: None,
            timeout: None,
            source: DefinitionSource::BuiltIn,
        },
        AgentDefinition {
            name: "Explore".to_string(),
            description: "Read-only agent for finding things in the code base.".to_string(),
            prompt: "You are a read-only search subagent. Find what you are asked for and \
                     report where it is; change nothing."
                .to_string(),
            tools: Some(vec![
                "Read".to_string(),
                "Glob".to_string(),
                "Grep".to_string(),
            ]),
            model: None,
            timeout: None,
            source: DefinitionSource::BuiltIn,
        },
    ]
}

/// A definition that could not be read; it was skipped.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}:{line}: {message}; agent definition skipped", .path.display())]
pub struct DefinitionError {
    /// The file (or `--agents` for the flag).
    pub path: PathBuf,
    /// 1-based line.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

/// Parses one `.md` agent definition.
pub fn parse_definition(path: &Path, text: &str) -> Result<AgentDefinition, DefinitionError> {
    let err = |line: usize, message: String| DefinitionError {
        path: path.to_path_buf(),
        line,
        message,
    };
    let mut lines = text.lines().enumerate();
    match lines.next() {
        Some((_, first)) if first.trim_end() == "---" => {}
        _ => {
            return Err(err(
                1,
                "expected front matter starting with a `---` line".to_string(),
            ));
        }
    }
    let mut fields: Vec<(usize, String, FieldValue)> = Vec::new();
    let mut body_start = None;
    for (i, raw) in lines.by_ref() {
        let line_no = i + 1;
        let line = raw.trim_end();
        if line == "---" {
            body_start = Some(i + 1);
            break;
        }
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        if let Some(item) = line.trim_start().strip_prefix("- ") {
            if !line.starts_with(' ') && !line.starts_with('-') {
                return Err(err(line_no, format!("unexpected line `{line}`")));
            }
            match fields.last_mut() {
                Some((_, _, FieldValue::List(items))) => items.push(unquote(item.trim())),
                Some((_, key, FieldValue::Scalar(s))) if s.is_empty() => {
                    let key = key.clone();
                    let last = fields.len() - 1;
                    fields[last] = (line_no, key, FieldValue::List(vec![unquote(item.trim())]));
                }
                _ => {
                    return Err(err(
                        line_no,
                        "a list item `- …` outside a list field".to_string(),
                    ));
                }
            }
            continue;
        }
        let Some((key, value)) = line.split_once(':') else {
            return Err(err(
                line_no,
                format!("expected `key: value`, found `{line}`"),
            ));
        };
        let key = key.trim();
        if key.is_empty() || key.contains(' ') || line.starts_with(' ') {
            return Err(err(line_no, format!("invalid key in `{line}`")));
        }
        let value = value.trim();
        let value = if let Some(inner) = value.strip_prefix('[').and_then(|v| v.strip_suffix(']')) {
            FieldValue::List(
                inner
                    .split(',')
                    .map(|s| unquote(s.trim()))
                    .filter(|s| !s.is_empty())
                    .collect(),
            )
        } else {
            FieldValue::Scalar(unquote(value))
        };
        fields.push((line_no, key.to_string(), value));
    }
    let Some(body_start) = body_start else {
        return Err(err(
            text.lines().count().max(1),
            "front matter is not closed by a `---` line".to_string(),
        ));
    };
    let body: Vec<&str> = text.lines().skip(body_start).collect();
    let mut def = AgentDefinition {
        name: String::new(),
        description: String::new(),
        prompt: body.join("\n").trim().to_string(),
        tools: None,
        model: None,
        timeout: None,
        source: DefinitionSource::File(path.to_path_buf()),
    };
    for (line_no, key, value) in fields {
        match (key.as_str(), value) {
            ("name", FieldValue::Scalar(v)) => def.name = v,
            ("description", FieldValue::Scalar(v)) => def.description = v,
            ("tools", FieldValue::Scalar(v)) => def.tools = tool_list(&v),
            ("tools", FieldValue::List(v)) => def.tools = Some(v),
            ("model", FieldValue::Scalar(v)) => {
                def.model = (!v.is_empty() && v != "inherit").then_some(v)
            }
            ("timeout", FieldValue::Scalar(v)) => match v.parse::<f64>() {
                Ok(secs) if secs > 0.0 && secs.is_finite() => {
                    def.timeout = Some(Duration::from_secs_f64(secs))
                }
                _ => {
                    return Err(err(
                        line_no,
                        format!("`timeout` must be a positive number of seconds, found `{v}`"),
                    ));
                }
            },
            ("name" | "description" | "model" | "timeout", FieldValue::List(_)) => {
                return Err(err(line_no, format!("`{key}` must be a single value")));
            }
            // Claude Code's other keys (color, permissionMode, …) are accepted and unused.
            _ => {}
        }
    }
    if def.name.is_empty() {
        return Err(err(1, "front matter has no `name`".to_string()));
    }
    if def.description.is_empty() {
        return Err(err(1, "front matter has no `description`".to_string()));
    }
    Ok(def)
}

pub(super) enum FieldValue {
    Scalar(String),
    List(Vec<String>),
}

pub(super) fn unquote(text: &str) -> String {
    let t = text.trim();
    for q in ['"', '\''] {
        if let Some(inner) = t.strip_prefix(q).and_then(|s| s.strip_suffix(q)) {
            return inner.to_string();
        }
    }
    t.to_string()
}

/// `tools: Bash, Read` → `["Bash", "Read"]`; `*` or empty → every tool.
pub(super) fn tool_list(text: &str) -> Option<Vec<String>> {
    let items: Vec<String> = text
        .split(',')
        .map(|s| unquote(s.trim()))
        .filter(|s| !s.is_empty())
        .collect();
    if items.is_empty() || items.iter().any(|s| s == "*") {
        None
    } else {
        Some(items)
    }
}

/// Reads `dir/*.md` in name order; bad files become errors, the rest load.
pub fn load_dir(dir: &Path) -> (Vec<AgentDefinition>, Vec<DefinitionError>) {
    let mut defs = Vec::new();
    let mut errors = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return (defs, errors);
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "md") && p.is_file())
        .collect();
    paths.sort();
    for path in paths {
        match std::fs::read_to_string(&path) {
            Ok(text) => match parse_definition(&path, &text) {
                Ok(def) => defs.push(def),
                Err(e) => errors.push(e),
            },
            Err(e) => errors.push(DefinitionError {
                path: path.clone(),
                line: 1,
                message: format!("cannot read: {e}"),
            }),
        }
    }
    (defs, errors)
}

/// `--agents JSON`: `{"name": {"description": …, "prompt": …, "tools"?: […], "model"?: …}}`.
pub fn parse_agents_flag(text: &str) -> Result<Vec<AgentDefinition>, DefinitionError> {
    let flag = PathBuf::from("--agents");
    let err = |line: usize, message: String| DefinitionError {
        path: flag.clone(),
        line,
        message,
    };
    let value: Value =
        serde_json::from_str(text).map_err(|e| err(e.line(), format!("invalid JSON: {e}")))?;
    let Value::Object(map) = value else {
        return Err(err(
            1,
            "expected a JSON object of agents by name".to_string(),
        ));
    };
    let mut defs = Vec::new();
    for (name, spec) in map {
        let Value::Object(spec) = spec else {
            return Err(err(1, format!("agent `{name}`: expected an object")));
        };
        let text_field = |key: &str| spec.get(key).and_then(Value::as_str).map(str::to_string);
        let Some(description) = text_field("description") else {
            return Err(err(
                1,
                format!("agent `{name}`: `description` (a string) is required"),
            ));
        };
        let Some(prompt) = text_field("prompt") else {
            return Err(err(
                1,
                format!("agent `{name}`: `prompt` (a string) is required"),
            ));
        };
        let tools = match spec.get("tools") {
            None | Some(Value::Null) => None,
            Some(Value::Array(items)) => Some(
                items
                    .iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect(),
            ),
            Some(Value::String(s)) => tool_list(s),
            Some(_) => {
                return Err(err(
                    1,
                    format!("agent `{name}`: `tools` must be a list of names"),
                ));
            }
        };
        defs.push(AgentDefinition {
            name,
            description,
            prompt,
            tools,
            model: text_field("model").filter(|m| m != "inherit"),
            timeout: spec
                .get("timeout")
                .and_then(Value::as_f64)
                .filter(|s| *s > 0.0 && s.is_finite())
                .map(Duration::from_secs_f64),
            source: DefinitionSource::Flag,
        });
    }
    Ok(defs)
}

/// Every definition a session offers: built-ins, then plugin agents (named
/// `<plugin>:<name>`), user files, project files, the flag (a later one with the same name
/// wins, as in Claude Code: project over user over plugin); and what could not be read.
pub fn discover(
    home: &Path,
    project_dir: &Path,
    plugin_agents: &[(String, PathBuf)],
    agents_flag: Option<&str>,
) -> (Vec<AgentDefinition>, Vec<DefinitionError>) {
    let mut all = builtin_definitions();
    let mut errors = Vec::new();
    for (plugin, dir) in plugin_agents {
        let (defs, errs) = load_dir(dir);
        all.extend(defs.into_iter().map(|mut d| {
            d.name = format!("{plugin}:{}", d.name);
            d
        }));
        errors.extend(errs);
    }
    for dir in [
        home.join(".claude").join("agents"),
        project_dir.join(".claude").join("agents"),
    ] {
        let (defs, errs) = load_dir(&dir);
        all.extend(defs);
        errors.extend(errs);
    }
    if let Some(text) = agents_flag {
        match parse_agents_flag(text) {
            Ok(defs) => all.extend(defs),
            Err(e) => errors.push(e),
        }
    }
    let mut merged: Vec<AgentDefinition> = Vec::new();
    for def in all {
        merged.retain(|d| d.name != def.name);
        merged.push(def);
    }
    (merged, errors)
}
