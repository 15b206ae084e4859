//! Where MCP servers are configured and how a configuration is read.
//!
//! Sources, lowest precedence first (a later source's server replaces an earlier one of the
//! same name):
//! 1. **user**: `mcpServers` of `~/.claude.json` (`$CLAUDE_CONFIG_DIR/.claude.json` when set);
//! 2. **project**: `<project>/.mcp.json`, committed with the repository — its servers start only
//!    once approved ([`Approval`]);
//! 3. **local**: `projects["<project dir>"].mcpServers` of `~/.claude.json`;
//! 4. **dynamic**: each `--mcp-config FILE|JSON`, in command-line order.
//!
//! `--strict-mcp-config` keeps only the dynamic ones. Strings in `command`, `args`, `env`, `url`
//! and `headers` expand `${VAR}` and `${VAR:-default}` from the environment; a variable that is
//! unset and has no default stays as written and is reported.
//!
//! Nothing here fails as a whole: a file that is not JSON is reported with file:line:col and the
//! other sources still apply; a server entry that is wrong (unknown transport, no command, no
//! url) is reported by name and skipped.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use crate::origin::Location;
use crate::settings::spanned::{self, JsonValue, LineIndex, Member, Node};

/// Where a server was configured; the tool events' `mcp_server.source`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// `~/.claude.json` `mcpServers`.
    User,
    /// `.mcp.json`.
    Project,
    /// `~/.claude.json` `projects[<dir>].mcpServers`.
    Local,
    /// `--mcp-config`.
    Dynamic,
    /// A `type: "sdk"` server, served by the Agent SDK that drives rein (Claude Code 2.1.328
    /// says `sdk` whatever file or flag named it: fixture `agent_sdk/measure`).
    Sdk,
}

impl Scope {
    /// Claude Code's word for it.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::User => "user",
            Scope::Project => "project",
            Scope::Local => "local",
            Scope::Dynamic => "dynamic",
            Scope::Sdk => "sdk",
        }
    }
}

/// How rein talks to a server.
#[derive(Debug, Clone, PartialEq)]
pub enum Transport {
    /// A child process speaking JSON-RPC lines on stdin/stdout.
    Stdio {
        command: String,
        args: Vec<String>,
        env: Vec<(String, String)>,
    },
    /// Streamable HTTP (`type: "http"`), or the legacy HTTP+SSE transport (`type: "sse"`).
    Http {
        url: String,
        headers: Vec<(String, String)>,
        /// Configured as `type: "sse"`.
        sse: bool,
    },
    /// Served in-process by the program that drives rein (the Agent SDK's
    /// `create_sdk_mcp_server`), each JSON-RPC message carried by an `mcp_message` control
    /// request (`type: "sdk"`).
    Sdk,
}

impl Transport {
    /// `stdio`, `http` or `sse`.
    pub fn type_name(&self) -> &'static str {
        match self {
            Transport::Stdio { .. } => "stdio",
            Transport::Http { sse: false, .. } => "http",
            Transport::Http { sse: true, .. } => "sse",
            Transport::Sdk => "sdk",
        }
    }
}

/// One configured server.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerConfig {
    pub name: String,
    pub scope: Scope,
    pub transport: Transport,
    /// Where its entry starts.
    pub location: Location,
    /// The entry as written (before expansion), for `rein mcp get`.
    pub raw: Value,
}

/// A problem found while reading the configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub location: Location,
    /// The server it is about, when it is about one.
    pub server: Option<String>,
    pub message: String,
    /// An error (something skipped) rather than a warning.
    pub error: bool,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let sev = if self.error { "error" } else { "warning" };
        write!(f, "{}: {sev}: {}", self.location, self.message)
    }
}

/// Approval of `.mcp.json` servers (from the settings files).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Approval {
    pub enabled: Vec<String>,
    pub disabled: Vec<String>,
    pub enable_all: bool,
}

/// What approval says about one project server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApprovalState {
    Approved,
    Rejected,
    /// Neither: it needs a person's yes before it may start.
    Pending,
}

impl Approval {
    pub fn state(&self, name: &str) -> ApprovalState {
        if self.disabled.iter().any(|n| n == name) {
            ApprovalState::Rejected
        } else if self.enable_all || self.enabled.iter().any(|n| n == name) {
            ApprovalState::Approved
        } else {
            ApprovalState::Pending
        }
    }
}

/// What to read.
#[derive(Debug, Clone)]
pub struct Sources {
    pub project_dir: PathBuf,
    /// `~/.claude.json` (or `$CLAUDE_CONFIG_DIR/.claude.json`).
    pub user_file: PathBuf,
    /// `--mcp-config` values, in order.
    pub flag_configs: Vec<String>,
    /// `--strict-mcp-config`.
    pub strict: bool,
}

impl Sources {
    /// `~/.claude.json`, or `$CLAUDE_CONFIG_DIR/.claude.json` when that is set.
    pub fn user_file(home: &Path, config_dir: Option<&Path>) -> PathBuf {
        match config_dir {
            Some(dir) => dir.join(".claude.json"),
            None => home.join(".claude.json"),
        }
    }

    /// `<project>/.mcp.json`.
    pub fn project_file(&self) -> PathBuf {
        self.project_dir.join(".mcp.json")
    }
}

/// Every configured server after precedence, in configuration order, and what was wrong.
#[derive(Debug, Clone, Default)]
pub struct Loaded {
    pub servers: Vec<ServerConfig>,
    pub problems: Vec<Problem>,
}

/// How `${VAR}` in a server definition is looked up: the settings' `env` (the last entry of a
/// name wins), then rein's own environment.
pub(crate) fn env_lookup(
    settings_env: &[(String, String)],
) -> impl Fn(&str) -> Option<String> + '_ {
    move |name: &str| {
        settings_env
            .iter()
            .rev()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
            .or_else(|| std::env::var(name).ok())
    }
}

/// Reads every source ([`Sources`]); `env` looks a variable up for `${VAR}` expansion.
pub fn load(sources: &Sources, env: &dyn Fn(&str) -> Option<String>) -> Loaded {
    let mut out = Loaded::default();
    let mut all: Vec<ServerConfig> = Vec::new();
    if !sources.strict {
        if let Some(doc) = read_file(&sources.user_file, &mut out.problems) {
            all.extend(servers_at(
                &doc,
                &["mcpServers"],
                Scope::User,
                env,
                &mut out.problems,
            ));
        }
        if let Some(doc) = read_file(&sources.project_file(), &mut out.problems) {
            all.extend(servers_at(
                &doc,
                &["mcpServers"],
                Scope::Project,
                env,
                &mut out.problems,
            ));
        }
        if let Some(doc) = read_file(&sources.user_file, &mut Vec::new()) {
            let dir = sources.project_dir.display().to_string();
            all.extend(servers_at(
                &doc,
                &["projects", &dir, "mcpServers"],
                Scope::Local,
                env,
                &mut out.problems,
            ));
        }
    }
    for (i, value) in sources.flag_configs.iter().enumerate() {
        let trimmed = value.trim_start();
        let doc = if trimmed.starts_with('{') {
            parse_text(
                value,
                Arc::from(format!("--mcp-config #{}", i + 1)),
                &mut out.problems,
            )
        } else {
            let path = PathBuf::from(value);
            if !path.exists() {
                out.problems.push(Problem {
                    location: Location {
                        file: Arc::from(format!("--mcp-config #{}", i + 1)),
                        line: 0,
                        col: 0,
                    },
                    server: None,
                    message: format!("MCP config file not found: {value}"),
                    error: true,
                });
                continue;
            }
            read_file(&path, &mut out.problems)
        };
        if let Some(doc) = doc {
            all.extend(servers_at(
                &doc,
                &["mcpServers"],
                Scope::Dynamic,
                env,
                &mut out.problems,
            ));
        }
    }
    for server in all {
        if let Some(existing) = out.servers.iter_mut().find(|s| s.name == server.name) {
            *existing = server;
        } else {
            out.servers.push(server);
        }
    }
    out
}

/// A plugin's MCP servers file (its `.mcp.json`, or the manifest's `mcpServers` path).
#[derive(Debug, Clone)]
pub struct PluginServers {
    /// The plugin's name.
    pub plugin: String,
    pub file: PathBuf,
    /// `${CLAUDE_PLUGIN_ROOT}` in its entries.
    pub root: PathBuf,
}

/// The servers of the plugins' files, named `plugin:<plugin>:<server>` (so their tools are
/// `mcp__plugin_<plugin>_<server>__<tool>`), with `${CLAUDE_PLUGIN_ROOT}` expanded. A file may
/// hold `{"mcpServers": {…}}` or the servers object itself. They need no approval: the user
/// enabled the plugin.
pub fn load_plugins(plugins: &[PluginServers], env: &dyn Fn(&str) -> Option<String>) -> Loaded {
    let mut out = Loaded::default();
    for p in plugins {
        let Some(doc) = read_file(&p.file, &mut out.problems) else {
            continue;
        };
        let root = p.root.to_string_lossy().into_owned();
        let lookup = |name: &str| {
            if name == "CLAUDE_PLUGIN_ROOT" {
                Some(root.clone())
            } else {
                env(name)
            }
        };
        let wrapped = doc
            .root
            .value
            .as_object()
            .is_some_and(|m| spanned::get(m, "mcpServers").is_some());
        let path: &[&str] = if wrapped { &["mcpServers"] } else { &[] };
        for mut server in servers_at(&doc, path, Scope::Dynamic, &lookup, &mut out.problems) {
            server.name = format!("plugin:{}:{}", p.plugin, server.name);
            out.servers.retain(|s| s.name != server.name);
            out.servers.push(server);
        }
    }
    out
}

/// A parsed file with what is needed to locate its parts.
pub(crate) struct Doc {
    pub(crate) root: Node,
    pub(crate) text: String,
    pub(crate) index: LineIndex,
    pub(crate) label: Arc<str>,
}

impl Doc {
    fn location(&self, offset: usize) -> Location {
        let (line, col) = self.index.line_col(&self.text, offset);
        Location {
            file: self.label.clone(),
            line,
            col,
        }
    }
}

fn read_file(path: &Path, problems: &mut Vec<Problem>) -> Option<Doc> {
    let label: Arc<str> = Arc::from(path.display().to_string());
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => {
            problems.push(Problem {
                location: Location {
                    file: label,
                    line: 0,
                    col: 0,
                },
                server: None,
                message: format!("cannot read: {e}"),
                error: true,
            });
            return None;
        }
    };
    let text = String::from_utf8_lossy(&bytes).into_owned();
    parse_text(&text, label, problems)
}

pub(crate) fn parse_text(text: &str, label: Arc<str>, problems: &mut Vec<Problem>) -> Option<Doc> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text).to_string();
    let index = LineIndex::new(&text);
    if text.trim().is_empty() {
        return None;
    }
    match spanned::parse(&text) {
        Ok(doc) => Some(Doc {
            root: doc.root,
            text,
            index,
            label,
        }),
        Err(e) => {
            let (line, col) = index.line_col(&text, e.offset);
            problems.push(Problem {
                location: Location {
                    file: label,
                    line,
                    col,
                },
                server: None,
                message: format!("{}; no MCP server from this file is started", e.message),
                error: true,
            });
            None
        }
    }
}

/// The servers of the object at `path` (a key path from the root), each checked on its own.
fn servers_at(
    doc: &Doc,
    path: &[&str],
    scope: Scope,
    env: &dyn Fn(&str) -> Option<String>,
    problems: &mut Vec<Problem>,
) -> Vec<ServerConfig> {
    let mut node = &doc.root;
    for key in path {
        let Some(members) = node.value.as_object() else {
            return Vec::new();
        };
        let Some(m) = spanned::get(members, key) else {
            return Vec::new();
        };
        node = &m.value;
    }
    let Some(members) = node.value.as_object() else {
        problems.push(Problem {
            location: doc.location(node.offset),
            server: None,
            message: format!(
                "\"mcpServers\" must be an object, found {}",
                node.value.type_name()
            ),
            error: true,
        });
        return Vec::new();
    };
    let mut out = Vec::new();
    for m in spanned::last_wins(members) {
        match server(doc, m, scope, env, problems) {
            Ok(s) => out.push(s),
            Err(message) => problems.push(Problem {
                location: doc.location(m.value.offset),
                server: Some(m.key.clone()),
                message: format!("MCP server \"{}\" skipped: {message}", m.key),
                error: true,
            }),
        }
    }
    out
}

fn server(
    doc: &Doc,
    m: &Member,
    scope: Scope,
    env: &dyn Fn(&str) -> Option<String>,
    problems: &mut Vec<Problem>,
) -> Result<ServerConfig, String> {
    let name = m.key.clone();
    if name.is_empty() {
        return Err("a server needs a name".to_string());
    }
    let Some(fields) = m.value.value.as_object() else {
        return Err(format!(
            "its entry must be an object, found {}",
            m.value.value.type_name()
        ));
    };
    let location = doc.location(m.value.offset);
    let mut missing: Vec<String> = Vec::new();
    let mut expand = |s: &str| expand_vars(s, env, &mut missing);
    let string = |key: &str| -> Result<Option<String>, String> {
        match spanned::get(fields, key) {
            None => Ok(None),
            Some(f) => match &f.value.value {
                JsonValue::String(s) => Ok(Some(s.clone())),
                other => Err(format!(
                    "\"{key}\" must be a string, found {}",
                    other.type_name()
                )),
            },
        }
    };
    let string_map = |key: &str| -> Result<Vec<(String, String)>, String> {
        match spanned::get(fields, key) {
            None => Ok(Vec::new()),
            Some(f) => {
                let Some(entries) = f.value.value.as_object() else {
                    return Err(format!("\"{key}\" must be an object of strings"));
                };
                spanned::last_wins(entries)
                    .into_iter()
                    .map(|e| match e.value.value.as_str() {
                        Some(v) => Ok((e.key.clone(), v.to_string())),
                        None => Err(format!("\"{key}.{}\" must be a string", e.key)),
                    })
                    .collect()
            }
        }
    };
    let kind = string("type")?;
    let transport = match kind.as_deref() {
        None | Some("stdio") => {
            let Some(command) = string("command")? else {
                return Err(if kind.is_none() && string("url")?.is_some() {
                    "it has a \"url\" but no \"type\" (write \"type\": \"http\" or \"sse\")"
                        .to_string()
                } else {
                    "a stdio server needs a \"command\"".to_string()
                });
            };
            if command.trim().is_empty() {
                return Err("its \"command\" is empty".to_string());
            }
            let args = match spanned::get(fields, "args") {
                None => Vec::new(),
                Some(f) => match &f.value.value {
                    JsonValue::Array(items) => items
                        .iter()
                        .map(|i| {
                            i.value
                                .as_str()
                                .map(str::to_string)
                                .ok_or_else(|| "\"args\" must be an array of strings".to_string())
                        })
                        .collect::<Result<Vec<_>, _>>()?,
                    other => {
                        return Err(format!(
                            "\"args\" must be an array of strings, found {}",
                            other.type_name()
                        ));
                    }
                },
            };
            let env_vars = string_map("env")?;
            Transport::Stdio {
                command: expand(&command),
                args: args.iter().map(|a| expand(a)).collect(),
                env: env_vars
                    .iter()
                    .map(|(k, v)| (k.clone(), expand(v)))
                    .collect(),
            }
        }
        Some(t @ ("http" | "sse")) => {
            let Some(url) = string("url")? else {
                return Err(format!("a {t} server needs a \"url\""));
            };
            let headers = string_map("headers")?;
            Transport::Http {
                url: expand(&url),
                headers: headers
                    .iter()
                    .map(|(k, v)| (k.clone(), expand(v)))
                    .collect(),
                sse: t == "sse",
            }
        }
        Some("sdk") => Transport::Sdk,
        Some(other) => {
            return Err(format!(
                "unknown transport \"{other}\" (rein speaks \"stdio\", \"http\", \"sse\" and, under the Agent SDK, \"sdk\")"
            ));
        }
    };
    if !missing.is_empty() {
        missing.sort();
        missing.dedup();
        problems.push(Problem {
            location: location.clone(),
            server: Some(name.clone()),
            message: format!(
                "MCP server \"{name}\": Missing environment variables: {}",
                missing.join(", ")
            ),
            error: false,
        });
    }
    let scope = if transport == Transport::Sdk {
        Scope::Sdk
    } else {
        scope
    };
    Ok(ServerConfig {
        name,
        scope,
        transport,
        location,
        raw: m.value.value.to_serde(),
    })
}

/// `${VAR}` and `${VAR:-default}` expanded from `env`; an unset variable without a default
/// stays as written and is added to `missing`.
pub fn expand_vars(
    text: &str,
    env: &dyn Fn(&str) -> Option<String>,
    missing: &mut Vec<String>,
) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[start..]);
            return out;
        };
        let inner = &after[..end];
        let (name, default) = match inner.split_once(":-") {
            Some((n, d)) => (n, Some(d)),
            None => (inner, None),
        };
        match (env(name), default) {
            (Some(v), _) => out.push_str(&v),
            (None, Some(d)) => out.push_str(d),
            (None, None) => {
                missing.push(name.to_string());
                out.push_str(&rest[start..start + 2 + end + 1]);
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    out
}
