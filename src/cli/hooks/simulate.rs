//! Building an event's input exactly as a session does, for `test` and `explain`: the sample
//! input, `--input` merged over it, the tool input prepared by the tool.

use super::*;

/// The session-like identity of a simulated firing.
pub(super) struct Simulated {
    pub(super) session_id: String,
    pub(super) transcript: PathBuf,
    pub(super) firing: Box<dyn Firing>,
}

pub(super) fn parse_input(arg: Option<&str>) -> Result<Option<Map<String, Value>>, CliError> {
    let Some(arg) = arg else {
        return Ok(None);
    };
    let (text, what) = match arg.strip_prefix('@') {
        Some(path) => (
            std::fs::read_to_string(path)
                .map_err(|e| usage(format!("--input {arg}: cannot read: {e}")))?,
            format!("--input {arg}"),
        ),
        None => (arg.to_string(), "--input".to_string()),
    };
    let value: Value = serde_json::from_str(&text).map_err(|e| {
        let full = e.to_string();
        let suffix = format!(" at line {} column {}", e.line(), e.column());
        let msg = full.strip_suffix(&suffix).unwrap_or(&full);
        usage(format!(
            "{what} is not valid JSON: line {}, column {}: {msg}",
            e.line(),
            e.column()
        ))
    })?;
    match value {
        Value::Object(map) => Ok(Some(map)),
        other => Err(usage(format!(
            "{what} must be a JSON object, found {}",
            crate::json_kind::with_article(&other)
        ))),
    }
}

/// The events `hooks test` can fire, for messages.
pub(super) fn fired_events() -> String {
    HookEvent::ALL
        .iter()
        .filter(|e| e.fired_by_rein())
        .map(|e| e.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

pub(super) fn parse_event(name: &str) -> Result<HookEvent, CliError> {
    let Some(event) = HookEvent::parse(name) else {
        let hint = HookEvent::ALL
            .iter()
            .find(|e| e.as_str().eq_ignore_ascii_case(name))
            .map(|e| format!(" (did you mean {e}?)"))
            .unwrap_or_default();
        return Err(usage(format!(
            "unknown event {name:?}{hint}; rein fires: {}",
            fired_events()
        )));
    };
    if !event.fired_by_rein() {
        return Err(usage(format!(
            "rein never fires {event}, so hooks configured for it never run (`rein hooks list` shows them); rein fires: {}",
            fired_events()
        )));
    }
    Ok(event)
}

/// Builds the input of one firing the way the session and the tool pipeline do: fresh
/// session id, transcript path under the rein home, `cwd` = the project directory, the base
/// fields the event carries (spec §2.4), the event's defaults
/// ([`crate::hooks::events::Event::sample_input`]), and a tool input prepared by the tool
/// itself (absolute paths, defaults). `--input` fields override the defaults and are checked
/// against the event's fields; the result is parsed as the event's input type.
pub(super) fn simulate(args: &FiringArgs, project_dir: &Path) -> Result<Simulated, CliError> {
    let event = parse_event(&args.event)?;
    let spec = event.spec();
    let Some(fires) = spec.fires else {
        return Err(usage(format!("rein never fires {event}")));
    };
    let map = parse_input(args.input.as_deref())?.unwrap_or_default();
    let session_id = uuid_v4();
    let transcript = transcript_path(&rein_home(), project_dir, &session_id);
    let base = BaseInput {
        session_id: session_id.clone(),
        transcript_path: transcript.to_string_lossy().into_owned(),
        cwd: project_dir.to_string_lossy().into_owned(),
        prompt_id: spec.prompt_id.then(uuid_v4),
        permission_mode: spec.permission_mode.then(|| "default".to_string()),
        agent_id: None,
        agent_type: None,
        effort: None,
    };
    let tool_event = spec.tool_event;
    if tool_event && args.tool.is_none() {
        return Err(usage(format!(
            "{event} is a tool event: give the tool with --tool NAME (e.g. --tool Bash)"
        )));
    }
    if !tool_event && args.tool.is_some() {
        return Err(usage(format!(
            "{event} is not a tool event; --tool does not apply"
        )));
    }
    if let Some(v) = &args.matcher_value {
        if tool_event {
            return Err(usage(format!(
                "{event} matches on the tool name: use --tool, not --matcher-value {v:?}"
            )));
        }
        if spec.matcher == MatcherClass::NoTarget {
            return Err(usage(format!(
                "{event} has no match target (its matchers are ignored); --matcher-value does not apply"
            )));
        }
    }
    let tool = args.tool.clone().unwrap_or_default();
    let mut input = fires.sample_input(base, &tool);
    // `{"tool_input": …, other fields}` or, on tool events, just the tool input.
    let (raw_tool_input, fields) = if tool_event && !map.contains_key("tool_input") {
        (Some(Value::Object(map)), Map::new())
    } else {
        let mut fields = map;
        (fields.remove("tool_input"), fields)
    };
    let known: Vec<&str> = fires
        .fields()
        .iter()
        .copied()
        .filter(|f| *f != "tool_name" && (tool_event || *f != "tool_input"))
        .collect();
    if let Some(bad) = fields.keys().find(|k| !known.contains(&k.as_str())) {
        return Err(usage(format!(
            "--input: {event} has no field {bad:?} (fields: {})",
            known.join(", ")
        )));
    }
    if tool_event {
        let raw = raw_tool_input.unwrap_or_else(|| json!({}));
        if !raw.is_object() {
            return Err(usage("--input: tool_input must be a JSON object"));
        }
        let prepared = prepare_tool_input(&tool, raw, project_dir, event)?;
        input.insert("tool_input".to_string(), prepared);
    }
    input.extend(fields);
    if let (Some(v), Some(field)) = (&args.matcher_value, spec.match_field) {
        input.insert(field.to_string(), Value::String(v.clone()));
    }
    let firing = fires
        .parse_input(Value::Object(input))
        .map_err(|e| usage(format!("--input: {event}: {e}")))?;
    Ok(Simulated {
        session_id,
        transcript,
        firing,
    })
}

/// The tool input as the session hands it to hooks: validated and normalised by the tool
/// (absolute `file_path`, defaults). Unknown tools (MCP, …) get the input as given.
pub(super) fn prepare_tool_input(
    tool: &str,
    input: Value,
    project_dir: &Path,
    event: HookEvent,
) -> Result<Value, CliError> {
    let Some(t) = builtin_tools().into_iter().find(|t| t.name() == tool) else {
        return Ok(input);
    };
    let ctx = ToolContext::new(project_dir.to_path_buf());
    t.prepare(input, &ctx).map_err(|message| {
        usage(format!(
            "the {tool} tool rejects this input, so a session would not fire {event} for it (the model gets this error instead): {message}"
        ))
    })
}
