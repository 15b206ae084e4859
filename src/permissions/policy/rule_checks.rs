//! The rule checks: deny (with the file-path rules of Read/Edit and the denied directories), ask
//! and allow, each against the call's resolved input.

use super::*;

impl PermissionPolicy {
    /// The deny-rule check alone, for an input rewritten after the decision (PermissionRequest
    /// `updatedInput`, spec §6.4 step 4): the model-facing denial, if a deny rule covers it.
    pub fn check_deny(&self, tool_name: &str, input: &Value) -> Option<String> {
        match catch_unwind(AssertUnwindSafe(|| self.check_deny_inner(tool_name, input))) {
            Ok(v) => v,
            Err(_) => Some(format!(
                "Permission to use {tool_name} has been denied: rein's permission check failed internally."
            )),
        }
    }

    pub(super) fn check_deny_inner(&self, tool_name: &str, input: &Value) -> Option<String> {
        let tool = canonical_tool_name(tool_name);
        if let Some(b) = self
            .broken_deny
            .iter()
            .find(|b| b.covers(tool, RulePurpose::Deny))
        {
            return Some(format!(
                "Permission to use {tool} has been denied: the deny rule `{}` ({}) could not be parsed, \
                 so rein refuses every call it might cover.",
                b.text, b.origin
            ));
        }
        let ctx = self.ctx();
        let bash_line = bash_line(tool, input);
        for e in &self.deny {
            let hit = match &bash_line {
                Some((command, parsed)) => {
                    e.rule
                        .matches_bash_parsed(parsed, command, RulePurpose::Deny)
                }
                None => e.rule.matches(tool, input, &ctx, RulePurpose::Deny),
            };
            if hit {
                if let Some((command, parsed)) = &bash_line
                    && let Some(open) = e.rule.hidden_bash_match(parsed, command)
                {
                    return Some(format!(
                        "Permission to use Bash with command {command} has been denied: {}, and \
                         the deny rule `{}` might match what it runs.",
                        open.why.reason(),
                        e.text
                    ));
                }
                return Some(deny_message(tool, input, &e.rule));
            }
        }
        if let Some((_, parsed)) = &bash_line {
            // File rules mean the file, whichever tool touches it: Read deny rules cover the
            // files a command names or reads from, Edit deny rules the ones it writes.
            let targets = bash_file_targets(
                parsed,
                &[&self.paths.cwd, &self.paths.project_dir],
                &self.paths.home,
            );
            for (paths, as_tool) in [(&targets.writes, "Write"), (&targets.reads, "Read")] {
                for target in paths {
                    if self.path_denied(as_tool, target) {
                        return Some(FILE_DENIED.to_string());
                    }
                }
            }
        } else if let Some(real) = self.resolved_input(tool, input) {
            // The same call with its symlinks resolved: a link to a denied file is denied.
            let rctx_paths = self.resolved_dirs();
            let rctx = RuleContext {
                cwd: &rctx_paths.0,
                project_dir: &rctx_paths.1,
                home: &rctx_paths.2,
            };
            if let Some(e) = self.deny.iter().find(|e| {
                e.rule.matches(tool, &real, &ctx, RulePurpose::Deny)
                    || e.rule.matches(tool, &real, &rctx, RulePurpose::Deny)
            }) {
                return Some(deny_message(tool, &real, &e.rule));
            }
        }
        None
    }

    /// Whether a path deny rule covers `path` for `tool` (`Read` or `Write`), as spelled or
    /// with its symlinks resolved.
    pub(super) fn path_denied(&self, tool: &str, path: &Path) -> bool {
        if !self.deny.iter().any(|e| e.rule.is_path_rule()) {
            return false;
        }
        let ctx = self.ctx();
        let spelled = json!({ "file_path": path.to_string_lossy() });
        let real = resolve_links(path);
        let rdirs = self.resolved_dirs();
        let rctx = RuleContext {
            cwd: &rdirs.0,
            project_dir: &rdirs.1,
            home: &rdirs.2,
        };
        let resolved = json!({ "file_path": real.to_string_lossy() });
        self.deny.iter().any(|e| {
            e.rule.is_path_rule()
                && (e.rule.matches(tool, &spelled, &ctx, RulePurpose::Deny)
                    || (real != path
                        && (e.rule.matches(tool, &resolved, &ctx, RulePurpose::Deny)
                            || e.rule.matches(tool, &resolved, &rctx, RulePurpose::Deny))))
        })
    }

    /// The cwd, project dir and home with their symlinks resolved.
    pub(super) fn resolved_dirs(&self) -> (PathBuf, PathBuf, PathBuf) {
        (
            resolve_links(&self.paths.cwd),
            resolve_links(&self.paths.project_dir),
            resolve_links(&self.paths.home),
        )
    }

    /// For a file tool: its input with the path's symlinks resolved, when that changes it.
    pub(super) fn resolved_input(&self, tool: &str, input: &Value) -> Option<Value> {
        let field = match tool {
            "Read" | "Edit" | "Write" | "MultiEdit" => "file_path",
            "NotebookEdit" | "NotebookRead" => "notebook_path",
            "Grep" | "Glob" | "LS" => "path",
            _ => return None,
        };
        let spelled = match input.get(field).and_then(Value::as_str) {
            Some(p) if !p.is_empty() => normalize(Path::new(p), &self.paths.cwd),
            _ if field == "path" => self.paths.cwd.clone(),
            _ => return None,
        };
        let real = resolve_links(&spelled);
        if real == spelled {
            return None;
        }
        let mut out = input.clone();
        if let Some(map) = out.as_object_mut() {
            map.insert(field.to_string(), json!(real.to_string_lossy()));
        }
        Some(out)
    }

    /// Whether `path` is a file Read deny rules cover (Grep and Glob leave such files out of
    /// what they return).
    pub fn read_denied(&self, path: &Path) -> bool {
        catch_unwind(AssertUnwindSafe(|| self.path_denied("Read", path))).unwrap_or(true)
    }

    /// The ask rule covering this call, if any (for an input a hook rewrote after the decision).
    pub fn check_ask(&self, tool_name: &str, input: &Value) -> Option<String> {
        let tool = canonical_tool_name(tool_name);
        catch_unwind(AssertUnwindSafe(|| self.ask_rule(tool, input)))
            .unwrap_or_else(|_| Some("(rein's permission check failed internally)".to_string()))
    }

    pub(super) fn ask_rule(&self, tool: &str, input: &Value) -> Option<String> {
        if let Some(b) = self
            .broken_ask
            .iter()
            .find(|b| b.covers(tool, RulePurpose::Ask))
        {
            return Some(b.text.clone());
        }
        let ctx = self.ctx();
        let bash_line = bash_line(tool, input);
        let real = self.resolved_input(tool, input);
        let rdirs = real.as_ref().map(|_| self.resolved_dirs());
        self.ask
            .iter()
            .find(|e| match &bash_line {
                Some((command, parsed)) => {
                    e.rule
                        .matches_bash_parsed(parsed, command, RulePurpose::Ask)
                }
                None => {
                    e.rule.matches(tool, input, &ctx, RulePurpose::Ask)
                        || real.as_ref().zip(rdirs.as_ref()).is_some_and(|(r, d)| {
                            let rctx = RuleContext {
                                cwd: &d.0,
                                project_dir: &d.1,
                                home: &d.2,
                            };
                            e.rule.matches(tool, r, &ctx, RulePurpose::Ask)
                                || e.rule.matches(tool, r, &rctx, RulePurpose::Ask)
                        })
                }
            })
            .map(|e| e.text.clone())
    }

    /// Allow rules vouch for a file by where it really is: with its symlinks resolved, the
    /// path must match (against the dirs as given or resolved).
    pub(super) fn allowed_by_rule(&self, tool: &str, input: &Value) -> bool {
        let ctx = self.ctx();
        match self.resolved_input(tool, input) {
            None => self
                .allow
                .iter()
                .any(|e| e.rule.matches(tool, input, &ctx, RulePurpose::Allow)),
            Some(real) => {
                let rdirs = self.resolved_dirs();
                let rctx = RuleContext {
                    cwd: &rdirs.0,
                    project_dir: &rdirs.1,
                    home: &rdirs.2,
                };
                self.allow.iter().any(|e| {
                    if e.rule.is_path_rule() {
                        e.rule.matches(tool, &real, &ctx, RulePurpose::Allow)
                            || e.rule.matches(tool, &real, &rctx, RulePurpose::Allow)
                    } else {
                        e.rule.matches(tool, input, &ctx, RulePurpose::Allow)
                    }
                })
            }
        }
    }
}
