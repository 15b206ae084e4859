//! The `permissions` key: mode, directories and the allow/ask/deny rule lists, each rule parsed
//! with its position.

use super::*;

impl FileCx<'_> {
    pub(super) fn permissions(&mut self, node: &Node) {
        let Some(members) = node.value.as_object() else {
            self.error(
                node.offset,
                format!(
                    "\"permissions\" must be an object, found {}; ignored",
                    node.value.type_name()
                ),
            );
            return;
        };
        for list in ["allow", "ask", "deny"] {
            let Some(m) = spanned::get(members, list) else {
                continue;
            };
            let rules = self.rule_list(list, &m.value);
            match list {
                "allow" => self.out.allow = rules,
                "ask" => self.out.ask = rules,
                _ => self.out.deny = rules,
            }
        }
        if let Some(m) = spanned::get(members, "defaultMode") {
            match m.value.value.as_str() {
                Some(mode) if MODES.contains(&mode) => {
                    self.out.default_mode = Some(Located {
                        value: mode.to_string(),
                        location: self.location(m.value.offset),
                    });
                }
                _ => self.error(
                    m.value.offset,
                    format!(
                        "\"defaultMode\" must be one of {}; ignored",
                        MODES.join(", ")
                    ),
                ),
            }
        }
        if let Some(m) = spanned::get(members, "disableBypassPermissionsMode") {
            match m.value.value.as_str() {
                Some("disable") => self.out.disable_bypass_mode = true,
                _ => self.error(
                    m.value.offset,
                    "\"disableBypassPermissionsMode\" takes only \"disable\"; ignored",
                ),
            }
        }
        if let Some(m) = spanned::get(members, "additionalDirectories") {
            match &m.value.value {
                JsonValue::Array(items) => {
                    for item in items {
                        match item.value.as_str() {
                            Some(s) => self.out.additional_directories.push(s.to_string()),
                            None => self.error(
                                item.offset,
                                "additional directory must be a string; ignored",
                            ),
                        }
                    }
                }
                other => self.error(
                    m.value.offset,
                    format!(
                        "\"additionalDirectories\" must be an array, found {}; ignored",
                        other.type_name()
                    ),
                ),
            }
        }
    }

    pub(super) fn rule_list(&mut self, list: &str, node: &Node) -> Vec<Located<RuleText>> {
        let JsonValue::Array(items) = &node.value else {
            self.error(
                node.offset,
                format!(
                    "\"permissions.{list}\" must be an array of rule strings, found {}; ignored",
                    node.value.type_name()
                ),
            );
            return Vec::new();
        };
        let mut out = Vec::with_capacity(items.len());
        for item in items {
            let Some(text) = item.value.as_str() else {
                self.error(
                    item.offset,
                    format!(
                        "permission rule must be a string, found {}; ignored",
                        item.value.type_name()
                    ),
                );
                continue;
            };
            let compiled = crate::permissions::rule::Rule::parse(text);
            if let Err(e) = &compiled {
                self.error(item.offset, e.to_string());
            }
            out.push(Located {
                value: RuleText {
                    text: text.to_string(),
                    compiled,
                },
                location: self.location(item.offset),
            });
        }
        out
    }
}
