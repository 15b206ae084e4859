//! Settings keys about what reaches beyond the machine's processes: the http-hook lists
//! (`allowedHttpHookUrls`, `httpHookAllowedEnvVars`, spec §1.3) and the approval of project
//! MCP servers from `.mcp.json` (`enabledMcpjsonServers`, `disabledMcpjsonServers`,
//! `enableAllProjectMcpServers`).
//!
//! Lists concatenate across files (duplicates dropped); a list that appears in any file is set,
//! so `[]` in one file means "none" unless another file adds entries. The boolean takes the
//! highest tier that sets it.

use crate::hooks::http::HttpHookPolicy;
use crate::origin::SourceKind;
use crate::settings::spanned::{self, JsonValue, Member};

use super::FileCx;

/// These keys as one file sets them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NetworkKeys {
    pub allowed_http_hook_urls: Option<Vec<String>>,
    pub http_hook_allowed_env_vars: Option<Vec<String>>,
    pub enabled_mcpjson_servers: Option<Vec<String>>,
    pub disabled_mcpjson_servers: Option<Vec<String>>,
    pub enable_all_project_mcp_servers: Option<bool>,
}

/// Approval of `.mcp.json` servers, merged over every settings file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct McpJsonApproval {
    /// `enabledMcpjsonServers`.
    pub enabled: Vec<String>,
    /// `disabledMcpjsonServers` (wins over `enabled` and over the switch below).
    pub disabled: Vec<String>,
    /// `enableAllProjectMcpServers`.
    pub enable_all: bool,
    /// Which tier set `enable_all` (a repository's own project file may not approve its own
    /// servers: see [`McpJsonApproval::merge`]).
    pub enable_all_source: Option<SourceKind>,
}

impl FileCx<'_> {
    pub(super) fn network_keys(&mut self, members: &[Member]) {
        let keys = NetworkKeys {
            allowed_http_hook_urls: self.string_list(members, "allowedHttpHookUrls"),
            http_hook_allowed_env_vars: self.string_list(members, "httpHookAllowedEnvVars"),
            enabled_mcpjson_servers: self.string_list(members, "enabledMcpjsonServers"),
            disabled_mcpjson_servers: self.string_list(members, "disabledMcpjsonServers"),
            enable_all_project_mcp_servers: match spanned::get(
                members,
                "enableAllProjectMcpServers",
            ) {
                None => None,
                Some(m) => match m.value.value.as_bool() {
                    Some(b) => Some(b),
                    None => {
                        self.error(
                            m.value.offset,
                            format!(
                                "\"enableAllProjectMcpServers\" must be true or false, found {}; ignored",
                                m.value.value.type_name()
                            ),
                        );
                        None
                    }
                },
            },
        };
        let mut keys = keys;
        if self.source == SourceKind::Project {
            // Why: the project file is committed with the repository; if it could approve the
            // repository's own `.mcp.json`, cloning a repository would start its processes.
            for key in ["enabledMcpjsonServers", "enableAllProjectMcpServers"] {
                if let Some(m) = spanned::get(members, key) {
                    self.warn(
                        m.key_offset,
                        format!(
                            "\"{key}\" in the project's own settings cannot approve its .mcp.json servers; \
                             set it in .claude/settings.local.json or ~/.claude/settings.json (ignored)"
                        ),
                    );
                }
            }
            keys.enabled_mcpjson_servers = None;
            keys.enable_all_project_mcp_servers = None;
        }
        self.out.network = keys;
    }

    /// An array of strings; anything else is an error naming the key, and the list is ignored
    /// (for an allow-list, "ignored" would mean "everything allowed", so a malformed
    /// `allowedHttpHookUrls` reads as `[]`: nothing allowed).
    fn string_list(&mut self, members: &[Member], key: &str) -> Option<Vec<String>> {
        let m = spanned::get(members, key)?;
        let fail_closed = key == "allowedHttpHookUrls" || key == "httpHookAllowedEnvVars";
        let JsonValue::Array(items) = &m.value.value else {
            self.error(
                m.value.offset,
                format!(
                    "\"{key}\" must be an array of strings, found {}; {}",
                    m.value.value.type_name(),
                    if fail_closed {
                        "read as [] (nothing allowed)"
                    } else {
                        "ignored"
                    }
                ),
            );
            return fail_closed.then(Vec::new);
        };
        let mut out = Vec::new();
        for item in items {
            match item.value.as_str() {
                Some(s) => out.push(s.to_string()),
                None => self.error(
                    item.offset,
                    format!("an entry of \"{key}\" must be a string; this entry is ignored"),
                ),
            }
        }
        Some(out)
    }
}

fn extend_unique(into: &mut Option<Vec<String>>, from: Option<Vec<String>>) {
    let Some(from) = from else { return };
    let list = into.get_or_insert_with(Vec::new);
    for item in from {
        if !list.contains(&item) {
            list.push(item);
        }
    }
}

/// Folds one applied file's keys into the merged policy and approval.
pub(in crate::settings) fn merge(
    keys: NetworkKeys,
    source: SourceKind,
    http: &mut HttpHookPolicy,
    mcp: &mut McpJsonApproval,
) {
    extend_unique(&mut http.allowed_urls, keys.allowed_http_hook_urls);
    extend_unique(&mut http.allowed_env_vars, keys.http_hook_allowed_env_vars);
    let mut enabled = Some(std::mem::take(&mut mcp.enabled));
    extend_unique(&mut enabled, keys.enabled_mcpjson_servers);
    mcp.enabled = enabled.unwrap_or_default();
    let mut disabled = Some(std::mem::take(&mut mcp.disabled));
    extend_unique(&mut disabled, keys.disabled_mcpjson_servers);
    mcp.disabled = disabled.unwrap_or_default();
    if let Some(all) = keys.enable_all_project_mcp_servers {
        mcp.enable_all = all;
        mcp.enable_all_source = Some(source);
    }
}
