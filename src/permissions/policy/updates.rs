//! Changing the policy during a session: hooks' `updatedPermissions`, "don't ask again" answers,
//! and the suggestions offered with a PermissionRequest.

use super::*;

impl PermissionPolicy {
    /// Applies a hook's `updatedPermissions` (PermissionRequest `allow`) to this session only,
    /// refusing what would escalate past the user's own settings: removing or replacing deny or
    /// ask rules, and `setMode` to bypassPermissions when `disableBypassPermissionsMode` is set.
    /// Allow rules a hook adds still come after deny and ask rules. Returns one message per
    /// update not applied.
    pub fn apply_hook_updates(&mut self, updates: &[Value]) -> Vec<String> {
        let mut refused = Vec::new();
        for update in updates {
            let kind = update.get("type").and_then(Value::as_str).unwrap_or("");
            let behavior = update.get("behavior").and_then(Value::as_str).unwrap_or("");
            let why = if matches!(kind, "removeRules" | "replaceRules")
                && matches!(behavior, "deny" | "ask")
            {
                Some(format!("a hook may not remove {behavior} rules"))
            } else {
                None
            };
            let result = match why {
                Some(why) => Err(why),
                None => self.apply_update(update),
            };
            if let Err(e) = result {
                refused.push(format!(
                    "updatedPermissions entry {update} not applied: {e}"
                ));
            }
        }
        refused
    }

    /// `permission_suggestions` for a PermissionRequest about this call (SDK `PermissionUpdate`
    /// objects): for edits and filesystem-only Bash lines, working in acceptEdits (plus the
    /// directory, when outside the working directories), as Claude Code suggests for
    /// `touch c.txt`; for other Bash lines, an allow rule per simple command not yet allowed; for
    /// other tools, an allow rule for the tool.
    pub fn permission_suggestions(&self, tool_name: &str, input: &Value) -> Vec<Value> {
        let tool = canonical_tool_name(tool_name);
        let accept_edits = |dir: &Path| {
            vec![
                json!({"type": "addDirectories", "directories": [dir.to_string_lossy()], "destination": "session"}),
                json!({"type": "setMode", "mode": "acceptEdits", "destination": "session"}),
            ]
        };
        match ToolTier::of(tool) {
            ToolTier::ReadOnly => Vec::new(),
            ToolTier::Edit => match input_path(tool, input, &self.paths.cwd) {
                Some(p) if !self.in_working_dirs(&p) => {
                    accept_edits(p.parent().unwrap_or(Path::new("/")))
                }
                _ => vec![
                    json!({"type": "setMode", "mode": "acceptEdits", "destination": "session"}),
                ],
            },
            ToolTier::Command if tool == "Bash" => {
                let command = input
                    .get("command")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let parsed = bash::parse(command);
                let fs_only = parsed.unchecked.is_none()
                    && !parsed.parts.is_empty()
                    && parsed.parts.iter().all(|p| {
                        p.argv
                            .first()
                            .is_some_and(|n| FS_COMMANDS.contains(&n.as_str()))
                    });
                if fs_only {
                    return accept_edits(&self.paths.cwd);
                }
                if parsed.unchecked.is_some() {
                    return Vec::new();
                }
                let patterns: Vec<_> = self
                    .allow
                    .iter()
                    .filter_map(|e| e.rule.bash_pattern())
                    .collect();
                let rules: Vec<Value> = parsed
                    .parts
                    .iter()
                    .filter(|p| !patterns.iter().any(|pat| pat.allows_part(p)))
                    .filter_map(|p| p.allow_views.first())
                    .map(|v| json!({"toolName": "Bash", "ruleContent": v}))
                    .collect();
                if rules.is_empty() {
                    return Vec::new();
                }
                vec![
                    json!({"type": "addRules", "rules": rules, "behavior": "allow", "destination": "localSettings"}),
                ]
            }
            ToolTier::Command => vec![json!({
                "type": "addRules",
                "rules": [{"toolName": tool}],
                "behavior": "allow",
                "destination": "localSettings"
            })],
        }
    }

    /// The path a permission prompt is about (`blocked_path` of the Agent SDK's
    /// `can_use_tool`): the file an edit tool writes, or the first file a Bash line redirects
    /// its output to (as Claude Code 2.1.328 names it for `echo hi > f.txt`), absolute.
    pub fn blocked_path(&self, tool_name: &str, input: &Value) -> Option<String> {
        let tool = canonical_tool_name(tool_name);
        match ToolTier::of(tool) {
            ToolTier::Edit => {
                input_path(tool, input, &self.paths.cwd).map(|p| p.to_string_lossy().into_owned())
            }
            ToolTier::Command if tool == "Bash" => {
                let command = input.get("command").and_then(Value::as_str)?;
                let parsed = bash::parse(command);
                let target = parsed
                    .parts
                    .iter()
                    .flat_map(|p| p.writes.iter())
                    .find(|w| !w.contains('$') && !w.starts_with('~'))?;
                Some(self.paths.cwd.join(target).to_string_lossy().into_owned())
            }
            ToolTier::ReadOnly | ToolTier::Command => None,
        }
    }

    /// Applies one `PermissionUpdate` (from a PermissionRequest hook's `updatedPermissions` or a
    /// chosen suggestion) to this session: `addRules`, `replaceRules`, `removeRules`, `setMode`,
    /// `addDirectories`, `removeDirectories`. rein never writes settings files here: every
    /// destination takes effect for the session only. A malformed update changes nothing and
    /// returns what is wrong with it.
    pub fn apply_update(&mut self, update: &Value) -> Result<(), String> {
        let kind = update
            .get("type")
            .and_then(Value::as_str)
            .ok_or("update without a `type`")?;
        match kind {
            "addRules" | "replaceRules" | "removeRules" => {
                let behavior = update
                    .get("behavior")
                    .and_then(Value::as_str)
                    .ok_or("rules update without `behavior`")?;
                let list = update
                    .get("rules")
                    .and_then(Value::as_array)
                    .ok_or("rules update without `rules`")?;
                let mut rules = Vec::new();
                for r in list {
                    let tool = r
                        .get("toolName")
                        .and_then(Value::as_str)
                        .ok_or("rule without `toolName`")?;
                    if tool.contains(['(', ')']) || Rule::parse(tool).is_err() {
                        return Err(format!("`{tool}` is not a tool name"));
                    }
                    let text = match r.get("ruleContent").and_then(Value::as_str) {
                        Some(c) => format!("{tool}({})", c.replace('(', "\\(").replace(')', "\\)")),
                        None => tool.to_string(),
                    };
                    let rule = Rule::parse(&text).map_err(|e| e.to_string())?;
                    rules.push(Entry { rule, text });
                }
                let target = match behavior {
                    "allow" => &mut self.allow,
                    "ask" => &mut self.ask,
                    "deny" => &mut self.deny,
                    other => return Err(format!("unknown rule behavior `{other}`")),
                };
                match kind {
                    "addRules" => target.extend(rules),
                    "replaceRules" => *target = rules,
                    _ => target.retain(|e| !rules.iter().any(|r| r.rule == e.rule)),
                }
                Ok(())
            }
            "setMode" => {
                let mode = update
                    .get("mode")
                    .and_then(Value::as_str)
                    .ok_or("setMode without `mode`")?;
                let (mode, _) = PermissionMode::parse(mode).map_err(|e| e.to_string())?;
                self.switch_mode(mode)
            }
            "addDirectories" | "removeDirectories" => {
                let dirs = update
                    .get("directories")
                    .and_then(Value::as_array)
                    .ok_or("directories update without `directories`")?;
                let dirs: Vec<PathBuf> = dirs
                    .iter()
                    .map(|d| {
                        d.as_str()
                            .map(|d| normalize(Path::new(d), &self.paths.cwd))
                            .ok_or("a directory that is not a string")
                    })
                    .collect::<Result<_, _>>()?;
                if kind == "addDirectories" {
                    for d in dirs {
                        if !self.paths.additional_dirs.contains(&d) {
                            self.paths.additional_dirs.push(d);
                        }
                    }
                } else {
                    self.paths.additional_dirs.retain(|d| !dirs.contains(d));
                }
                Ok(())
            }
            other => Err(format!("unknown permission update type `{other}`")),
        }
    }
}
