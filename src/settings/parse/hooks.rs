//! The `hooks` key: events, matcher groups (matchers compiled once, through the cache), and the
//! typo check that names the closest known key.

use super::*;

impl FileCx<'_> {
    pub(super) fn hooks(&mut self, node: &Node) {
        let Some(events) = node.value.as_object() else {
            // Why void the file, not just drop its hooks: the unreadable value may have held
            // the PreToolUse hooks that guard the allow rules beside it — the same reason a
            // malformed PreToolUse entry voids its file (spec §1.7). Fail closed.
            let location = self.location(node.offset);
            let found = node.value.type_name();
            self.error(
                node.offset,
                format!(
                    "\"hooks\" must be an object mapping event names to arrays, found {found}; because it may have held the PreToolUse hooks that guard this file's permissions, none of this file's hooks, allow rules or env apply until it is fixed (its deny and ask rules still do)"
                ),
            );
            if self.out.voided.is_none() {
                self.out.voided =
                    Some(format!("\"hooks\" at {location} is {found}, not an object"));
            }
            return;
        };
        for member in spanned::last_wins(events) {
            self.event(member);
        }
    }

    pub(super) fn event(&mut self, member: &Member) {
        let event = HookEvent::parse(&member.key);
        match event {
            None => {
                let hint = closest(&member.key, HookEvent::ALL.iter().map(|e| e.as_str()))
                    .map(|s| format!(" (did you mean \"{s}\"?)"))
                    .unwrap_or_default();
                self.error(
                    member.key_offset,
                    format!(
                        "Unknown hook event \"{}\" was ignored{hint}; its hooks are listed but never run",
                        member.key
                    ),
                );
            }
            Some(e) if !e.fired_by_rein() => {
                self.warn(
                    member.key_offset,
                    format!(
                        "rein never fires {e}; hooks configured for it are loaded but never run"
                    ),
                );
            }
            Some(_) => {}
        }
        let Some(groups) = (match &member.value.value {
            JsonValue::Array(items) => Some(items),
            _ => None,
        }) else {
            let m = malformed(
                member.value.offset,
                format!(
                    "the value of \"{}\" must be an array of matcher groups, found {}",
                    member.key,
                    member.value.value.type_name()
                ),
            );
            self.report_malformed(event, m);
            return;
        };
        for (gi, group) in groups.iter().enumerate() {
            let path = Path {
                event_key: &member.key,
                event,
                group: gi,
            };
            if let Err(m) = self.group(path, group) {
                self.report_malformed(event, m);
            }
        }
    }

    pub(super) fn report_malformed(&mut self, event: Option<HookEvent>, m: Malformed) {
        match event {
            Some(e) if e.spec().decides_permission => {
                let location = self.location(m.offset);
                self.error(
                    m.offset,
                    format!(
                        "{}; because this entry is under {e}, none of this file's hooks, allow rules or env apply until it is fixed, as in Claude Code (its deny and ask rules still do)",
                        m.message
                    ),
                );
                if self.out.voided.is_none() {
                    self.out.voided =
                        Some(format!("malformed {e} entry at {location}: {}", m.message));
                }
            }
            _ => self.error(m.offset, format!("{}; this entry is ignored", m.message)),
        }
    }

    pub(super) fn group(&mut self, path: Path<'_>, node: &Node) -> Result<(), Malformed> {
        let Some(members) = node.value.as_object() else {
            return Err(malformed(
                node.offset,
                format!(
                    "{}[{}] must be an object {{\"matcher\": …, \"hooks\": […]}}, found {}",
                    path.event_key,
                    path.group,
                    node.value.type_name()
                ),
            ));
        };
        self.typo_check(members, GROUP_KEYS, "matcher group");
        let matcher_member = spanned::get(members, "matcher");
        let matcher_text = match matcher_member {
            None => None,
            Some(m) => match &m.value.value {
                JsonValue::String(s) => Some(s.clone()),
                other => {
                    return Err(malformed(
                        m.value.offset,
                        format!("\"matcher\" must be a string, found {}", other.type_name()),
                    ));
                }
            },
        };
        let hooks = match spanned::get(members, "hooks") {
            None => {
                let hint = if spanned::get(members, "type").is_some()
                    || spanned::get(members, "command").is_some()
                {
                    " (handler fields go inside it: {\"matcher\": …, \"hooks\": [{\"type\": …}]})"
                } else {
                    ""
                };
                return Err(malformed(
                    node.offset,
                    format!(
                        "{}[{}] has no \"hooks\" array{hint}",
                        path.event_key, path.group
                    ),
                ));
            }
            Some(m) => match &m.value.value {
                JsonValue::Array(items) => items,
                other => {
                    return Err(malformed(
                        m.value.offset,
                        format!(
                            "\"hooks\" must be an array of handlers, found {}",
                            other.type_name()
                        ),
                    ));
                }
            },
        };
        let class = MatcherClass::of(path.event);
        let matcher = self.compile(class, matcher_text.as_deref());
        if let (Some(m), Some(text)) = (matcher_member, matcher_text.as_deref()) {
            match &matcher {
                Matcher::Invalid(msg) => self.error(
                    m.value.offset,
                    format!("{msg}; the hooks of this group never run"),
                ),
                Matcher::Exact(names) if names.is_empty() => self.warn(
                    m.value.offset,
                    format!("matcher {text:?} names nothing; the hooks of this group never run"),
                ),
                Matcher::All
                    if class == MatcherClass::NoTarget && !text.is_empty() && text != "*" =>
                {
                    if let Some(e) = path.event {
                        self.warn(
                            m.value.offset,
                            format!("{e} has no match target, so the matcher is ignored and these hooks always run"),
                        );
                    }
                }
                Matcher::All | Matcher::Exact(_) | Matcher::Regex(_) => {}
            }
        }
        for (hi, handler) in hooks.iter().enumerate() {
            match self.handler(path, hi, handler, &matcher, matcher_text.as_deref()) {
                Ok(h) => self.out.handlers.push(h),
                Err(m) => self.report_malformed(path.event, m),
            }
        }
        Ok(())
    }

    pub(super) fn compile(&mut self, class: MatcherClass, text: Option<&str>) -> Matcher {
        let Some(text) = text else {
            return Matcher::All;
        };
        if let Some(m) = self.cache.get(&(class, text.to_string())) {
            return m.clone();
        }
        let m = Matcher::compile_class(class, Some(text));
        self.cache.insert((class, text.to_string()), m.clone());
        m
    }

    pub(super) fn typo_check(&mut self, members: &[Member], known: &[&str], what: &str) {
        for m in members {
            if known.contains(&m.key.as_str()) {
                continue;
            }
            if let Some(s) = closest(&m.key, known.iter().copied()) {
                self.warn(
                    m.key_offset,
                    format!(
                        "unknown key \"{}\" in a {what} (did you mean \"{s}\"?); ignored",
                        m.key
                    ),
                );
            }
        }
    }
}
