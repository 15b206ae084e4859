//! One hook handler object: its `type`, the keys each type takes, and each type's fields read
//! into a [`HandlerKind`] (command, http, prompt/agent, mcp_tool) with file:line:col problems.

use super::*;

impl FileCx<'_> {
    pub(super) fn handler(
        &mut self,
        path: Path<'_>,
        index: usize,
        node: &Node,
        matcher: &Matcher,
        matcher_text: Option<&str>,
    ) -> Result<ConfiguredHandler, Malformed> {
        let Some(members) = node.value.as_object() else {
            return Err(malformed(
                node.offset,
                format!(
                    "{}[{}].hooks[{index}] must be an object, found {}",
                    path.event_key,
                    path.group,
                    node.value.type_name()
                ),
            ));
        };
        let f = Fields { members };
        let type_name = match spanned::get(members, "type") {
            None => {
                return Err(malformed(
                    node.offset,
                    format!("hook handler has no \"type\" (expected {HANDLER_TYPES})"),
                ));
            }
            Some(m) => match m.value.value.as_str() {
                Some(t @ ("command" | "http" | "prompt" | "agent" | "mcp_tool")) => t,
                Some(other) => {
                    return Err(malformed(
                        m.value.offset,
                        format!("unknown hook type \"{other}\" (expected {HANDLER_TYPES})"),
                    ));
                }
                None => {
                    return Err(malformed(
                        m.value.offset,
                        format!("\"type\" must be a string ({HANDLER_TYPES})"),
                    ));
                }
            },
        };
        let extra_keys = match type_name {
            "command" => COMMAND_KEYS,
            "http" => HTTP_KEYS,
            "prompt" | "agent" => PROMPT_KEYS,
            _ => MCP_KEYS,
        };
        let known: Vec<&str> = COMMON_KEYS.iter().chain(extra_keys).copied().collect();
        self.typo_check(members, &known, &format!("{type_name} hook"));
        if let Some(m) = spanned::get(members, "matcher") {
            // A classic slip: Claude Code ignores it here, so the hook runs for everything.
            self.warn(
                m.key_offset,
                "\"matcher\" belongs to the matcher group, not the handler; it is ignored here, so this hook runs for every match value",
            );
        }
        let if_member = f.string("if")?;
        let timeout = match spanned::get(members, "timeout") {
            None => None,
            Some(m) => match m.value.value.as_f64() {
                Some(t) if t > 0.0 && t.is_finite() => Some(t),
                Some(t) => {
                    return Err(malformed(
                        m.value.offset,
                        format!(
                            "\"timeout\" must be a number of seconds greater than 0, found {t}"
                        ),
                    ));
                }
                None => {
                    return Err(malformed(
                        m.value.offset,
                        format!(
                            "\"timeout\" must be a number of seconds, found {}",
                            m.value.value.type_name()
                        ),
                    ));
                }
            },
        };
        let status_message = f.string("statusMessage")?.map(|(s, _)| s.to_string());
        let once = f.boolean("once")?;
        let shadow = f.boolean("shadow")?;
        let warm = match spanned::get(members, "warm") {
            None => true,
            Some(_) => f.boolean("warm")?,
        };
        let on_failure_member = f.string("onFailure")?;
        let (kind, on_failure) = match type_name {
            "command" => (
                self.command_kind(&f, node.offset)?,
                parse_on_failure(on_failure_member)?,
            ),
            "http" => (
                http_kind(&f, node.offset)?,
                parse_on_failure(on_failure_member)?,
            ),
            "prompt" | "agent" => (
                prompt_kind(&f, type_name, node.offset)?,
                parse_on_failure(on_failure_member)?,
            ),
            // mcp_tool: any onFailure other than "continue" reads as "block" (spec §1.6).
            _ => (
                mcp_tool_kind(&f, node.offset)?,
                match on_failure_member {
                    None | Some(("continue", _)) => OnFailure::Continue,
                    Some(_) => OnFailure::Block,
                },
            ),
        };
        // Everything below is about whether the hook can run, not whether it is well-formed.
        let mut inactive: Option<Inactive> = None;
        let mut set = |reason: Inactive| {
            if inactive.is_none() {
                inactive = Some(reason);
            }
        };
        if path.event.is_none() {
            set(Inactive::UnknownEvent);
        }
        if let Matcher::Invalid(msg) = matcher {
            set(Inactive::InvalidMatcher(msg.clone()));
        }
        let mut if_condition = None;
        if let Some((text, off)) = if_member {
            match IfCondition::parse(text) {
                Ok(c) => if_condition = Some(c),
                Err(e) => {
                    self.error(
                        off,
                        format!("invalid \"if\" condition: {e}; this hook never runs"),
                    );
                    set(Inactive::InvalidIf(e.to_string()));
                }
            }
            if let Some(e) = path.event
                && !e.is_tool_event()
            {
                self.warn(
                    off,
                    format!("\"if\" cannot be evaluated for {e} (only tool events), so this hook never runs"),
                );
                set(Inactive::IfOnNonToolEvent);
            }
        }
        if path.event.is_some_and(|e| !e.fired_by_rein()) {
            set(Inactive::EventNotFired);
        }
        if let (HandlerKind::Prompt(_) | HandlerKind::Agent(_), Some(e)) = (&kind, path.event) {
            if !e.spec().model_hooks {
                set(Inactive::UnsupportedType);
                self.warn(
                    node.offset,
                    format!("{type_name} hooks need a conversation; Claude Code rejects them on {e} (use a command hook)"),
                );
            } else if matches!(kind, HandlerKind::Agent(_)) && !e.spec().agent_hooks {
                set(Inactive::UnsupportedType);
                self.warn(
                    node.offset,
                    "agent hooks are not allowed on PermissionRequest (an agent hook answers ok or not ok)",
                );
            }
        }
        if once && let Some(m) = spanned::get(members, "once") {
            self.warn(
                m.key_offset,
                "\"once\" has no effect in settings files (only skill/agent frontmatter hooks honour it); this hook runs every time",
            );
        }
        Ok(ConfiguredHandler {
            event: path.event,
            matcher_text: matcher_text.map(str::to_string),
            matcher: matcher.clone(),
            if_text: if_member.map(|(t, _)| t.to_string()),
            if_condition,
            kind,
            timeout,
            status_message,
            on_failure,
            once,
            shadow,
            warm,
            origin: HandlerOrigin {
                source: self.source,
                event_key: path.event_key.to_string(),
                group: path.group,
                index,
                location: self.location(node.offset),
                plugin: None,
            },
            inactive,
        })
    }

    /// `type: "command"` fields (spec §1.6).
    pub(super) fn command_kind(
        &mut self,
        f: &Fields<'_>,
        handler_offset: usize,
    ) -> Result<HandlerKind, Malformed> {
        let Some((command, _)) = f.string("command")? else {
            return Err(malformed(handler_offset, "command hook has no \"command\""));
        };
        let args = f.string_array("args")?;
        if let Some(m) = spanned::get(f.members, "args")
            && command.chars().any(char::is_whitespace)
            && !command.contains(['/', '\\'])
        {
            self.warn(
                m.key_offset,
                format!("with \"args\", \"command\" is one executable, but {command:?} contains whitespace; it will not be split"),
            );
        }
        let shell = match f.string("shell")? {
            None => None,
            Some((s @ ("bash" | "powershell"), _)) => Some(s.to_string()),
            Some((other, off)) => {
                return Err(malformed(
                    off,
                    format!("\"shell\" must be \"bash\" or \"powershell\", found {other:?}"),
                ));
            }
        };
        let is_async = f.boolean("async")?;
        let async_rewake = f.boolean("asyncRewake")?;
        for key in ["rewakeMessage", "rewakeSummary"] {
            if let Some(("", off)) = f.string(key)? {
                return Err(malformed(off, format!("\"{key}\" must not be empty")));
            }
        }
        f.string("cloud")?;
        Ok(HandlerKind::Command(CommandHandler {
            command: command.to_string(),
            args,
            shell,
            // asyncRewake implies async (spec §1.6).
            is_async: is_async || async_rewake,
            async_rewake,
        }))
    }
}

/// `type: "http"` fields (spec §1.6).
pub(super) fn http_kind(f: &Fields<'_>, handler_offset: usize) -> Result<HandlerKind, Malformed> {
    let url = match f.string("url")? {
        None => return Err(malformed(handler_offset, "http hook has no \"url\"")),
        Some((u, off)) => {
            if !looks_like_url(u) {
                return Err(malformed(off, format!("\"url\" is not a valid URL: {u:?}")));
            }
            u.to_string()
        }
    };
    let headers = match spanned::get(f.members, "headers") {
        None => Vec::new(),
        Some(m) => {
            let Some(hs) = m.value.value.as_object() else {
                return Err(malformed(
                    m.value.offset,
                    "\"headers\" must be an object of strings",
                ));
            };
            let mut out = Vec::new();
            for h in spanned::last_wins(hs) {
                match h.value.value.as_str() {
                    Some(v) => out.push((h.key.clone(), v.to_string())),
                    None => {
                        return Err(malformed(
                            h.value.offset,
                            format!("header \"{}\" must be a string", h.key),
                        ));
                    }
                }
            }
            out
        }
    };
    f.string("cloud")?;
    Ok(HandlerKind::Http(HttpHandler {
        url,
        headers,
        allowed_env_vars: f.string_array("allowedEnvVars")?.unwrap_or_default(),
    }))
}

/// `type: "prompt"` / `"agent"` fields (spec §1.6).
pub(super) fn prompt_kind(
    f: &Fields<'_>,
    type_name: &str,
    handler_offset: usize,
) -> Result<HandlerKind, Malformed> {
    let Some((prompt, _)) = f.string("prompt")? else {
        return Err(malformed(
            handler_offset,
            format!("{type_name} hook has no \"prompt\""),
        ));
    };
    let model = f.string("model")?.map(|(s, _)| s.to_string());
    let continue_on_block = f.boolean("continueOnBlock")?;
    let p = PromptHandler {
        prompt: prompt.to_string(),
        model,
        continue_on_block,
    };
    if type_name == "prompt" {
        Ok(HandlerKind::Prompt(p))
    } else {
        Ok(HandlerKind::Agent(p))
    }
}

/// `type: "mcp_tool"` fields (spec §1.6).
pub(super) fn mcp_tool_kind(
    f: &Fields<'_>,
    handler_offset: usize,
) -> Result<HandlerKind, Malformed> {
    let server = f.string("server")?;
    let tool = f.string("tool")?;
    let (Some((server, _)), Some((tool, _))) = (server, tool) else {
        return Err(malformed(
            handler_offset,
            "mcp_tool hook needs both \"server\" and \"tool\"",
        ));
    };
    let input = match spanned::get(f.members, "input") {
        None => None,
        Some(m) if m.value.value.as_object().is_some() => Some(m.value.value.to_serde()),
        Some(m) => {
            return Err(malformed(m.value.offset, "\"input\" must be an object"));
        }
    };
    Ok(HandlerKind::McpTool(McpToolHandler {
        server: server.to_string(),
        tool: tool.to_string(),
        input,
    }))
}

pub(super) fn parse_on_failure(member: Option<(&str, usize)>) -> Result<OnFailure, Malformed> {
    match member {
        None | Some(("continue", _)) => Ok(OnFailure::Continue),
        Some(("block", _)) => Ok(OnFailure::Block),
        Some((other, off)) => Err(malformed(
            off,
            format!("\"onFailure\" must be \"continue\" or \"block\", found {other:?}"),
        )),
    }
}

/// `scheme://host…` with an http(s) scheme and a non-empty host: what `new URL()` accepts for
/// the URLs an http hook can use.
pub(super) fn looks_like_url(u: &str) -> bool {
    let Some((scheme, rest)) = u.split_once("://") else {
        return false;
    };
    let host = rest.split(['/', '?', '#']).next().unwrap_or("");
    matches!(scheme.to_ascii_lowercase().as_str(), "http" | "https")
        && !host.is_empty()
        && !u.chars().any(char::is_whitespace)
}

/// Typed access to a handler's fields; a wrong type is a [`Malformed`] at the value.
pub(super) struct Fields<'a> {
    pub(super) members: &'a [Member],
}

impl<'a> Fields<'a> {
    fn string(&self, key: &str) -> Result<Option<(&'a str, usize)>, Malformed> {
        match spanned::get(self.members, key) {
            None => Ok(None),
            Some(m) => match &m.value.value {
                JsonValue::String(s) => Ok(Some((s.as_str(), m.value.offset))),
                other => Err(malformed(
                    m.value.offset,
                    format!("\"{key}\" must be a string, found {}", other.type_name()),
                )),
            },
        }
    }

    fn boolean(&self, key: &str) -> Result<bool, Malformed> {
        match spanned::get(self.members, key) {
            None => Ok(false),
            Some(m) => m.value.value.as_bool().ok_or_else(|| {
                malformed(
                    m.value.offset,
                    format!(
                        "\"{key}\" must be true or false, found {}",
                        m.value.value.type_name()
                    ),
                )
            }),
        }
    }

    fn string_array(&self, key: &str) -> Result<Option<Vec<String>>, Malformed> {
        let Some(m) = spanned::get(self.members, key) else {
            return Ok(None);
        };
        let JsonValue::Array(items) = &m.value.value else {
            return Err(malformed(
                m.value.offset,
                format!(
                    "\"{key}\" must be an array of strings, found {}",
                    m.value.value.type_name()
                ),
            ));
        };
        items
            .iter()
            .map(|item| {
                item.value.as_str().map(str::to_string).ok_or_else(|| {
                    malformed(
                        item.offset,
                        format!(
                            "\"{key}\" must contain only strings, found {}",
                            item.value.type_name()
                        ),
                    )
                })
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some)
    }
}
