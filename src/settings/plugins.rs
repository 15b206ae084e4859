//! Plugins as Claude Code 2.1.328 loads them (spec §1.1 row 6): a folder with an optional
//! `.claude-plugin/plugin.json` and any of `hooks/hooks.json`, `commands/`, `agents/`,
//! `skills/`, `output-styles/`, `.mcp.json`.
//!
//! Where plugins come from, in load order:
//!
//! 1. `--plugin-dir DIR` (each, in command-line order): id `<name>@inline`.
//! 2. `enabledPlugins` of the merged settings (`"name@marketplace": true`), resolved through
//!    `<config dir>/plugins/installed_plugins.json` (what `rein plugin install` and
//!    `claude plugin install` write): id `name@marketplace`, run from its `installPath`. An
//!    entry that is not installed does not run — Claude Code skips it too ("marketplace not
//!    registered") — and rein says so with the entry's file and line.
//!
//! Each plugin's hooks are appended after every settings hook, in this order (Claude Code's
//! `settings ++ plugin hooks`). In their commands `${CLAUDE_PLUGIN_ROOT}` and
//! `${CLAUDE_PLUGIN_DATA}` are replaced by the folders as text (Claude Code shows the replaced
//! command to the model), and the hook process gets both as variables. The data folder
//! (`<config dir>/plugins/data/<name>-<marketplace>`) is made on load.
//!
//! A problem never stops the rest: a `plugin.json` that is not JSON is reported at its line
//! and column and the plugin still loads under its folder's name, so a guard plugin with a
//! broken manifest keeps guarding.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use crate::hooks::config::PluginRef;
use crate::origin::SourceKind;
use crate::settings::parse::{self, MatcherCache};
use crate::settings::schema::{ConfiguredHandler, Diagnostic, HandlerKind, Location, Severity};
use crate::settings::spanned;

/// The installed-plugins registry under the config dir (Claude Code's file and shape).
pub const INSTALLED_FILE: &str = "plugins/installed_plugins.json";
/// The marketplaces registry under the config dir.
pub const MARKETPLACES_FILE: &str = "plugins/known_marketplaces.json";

/// Why a plugin is loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EnabledBy {
    /// `--plugin-dir`.
    Flag,
    /// An `enabledPlugins` entry (the file and line that enabled it).
    Setting(Location),
}

/// One loaded plugin.
#[derive(Debug, Clone)]
pub struct Plugin {
    /// Id, root and data folder, shared with every hook it configured.
    pub reference: Arc<PluginRef>,
    /// The plugin's name (manifest `name`, else the folder's name).
    pub name: String,
    pub version: Option<String>,
    pub description: Option<String>,
    pub enabled_by: EnabledBy,
    /// How many hook handlers it configured.
    pub hooks: usize,
    /// Folders of slash commands (`commands/` and the manifest's `commands`).
    pub commands: Vec<PathBuf>,
    /// Folders of agents (`agents/` and the manifest's `agents`).
    pub agents: Vec<PathBuf>,
    /// Folders of skills (`skills/` and the manifest's `skills`).
    pub skills: Vec<PathBuf>,
    /// Folders of output styles (`output-styles/` and the manifest's `outputStyles`).
    pub output_styles: Vec<PathBuf>,
    /// Its MCP servers file (`.mcp.json`, or the manifest's `mcpServers` path).
    pub mcp_config: Option<PathBuf>,
}

/// What the loader needs besides the merged settings.
#[derive(Debug, Clone, Default)]
pub struct PluginSources {
    /// `--plugin-dir` folders, as given (relative ones against `cwd`).
    pub dirs: Vec<PathBuf>,
    /// The session's working directory.
    pub cwd: PathBuf,
    /// Claude's config folder (`CLAUDE_CONFIG_DIR`, or `~/.claude`).
    pub config_dir: PathBuf,
}

/// What loading plugins produced.
#[derive(Debug, Default)]
pub struct Loaded {
    pub plugins: Vec<Plugin>,
    pub handlers: Vec<ConfiguredHandler>,
    pub diagnostics: Vec<Diagnostic>,
}

/// Loads every plugin: `--plugin-dir` ones first, then the enabled ones, each once.
pub fn load(
    sources: &PluginSources,
    enabled: &[(String, Location)],
    cache: &mut MatcherCache,
) -> Loaded {
    let mut out = Loaded::default();
    for dir in &sources.dirs {
        let root = absolute(&sources.cwd, dir);
        let flag_at = Location {
            file: Arc::from("--plugin-dir"),
            line: 1,
            col: 1,
        };
        if !root.is_dir() {
            out.diagnostics.push(Diagnostic {
                severity: Severity::Error,
                location: flag_at,
                message: format!(
                    "plugin folder {} does not exist or is not a folder; nothing from it runs",
                    root.display()
                ),
            });
            continue;
        }
        load_one(&root, "inline", EnabledBy::Flag, sources, cache, &mut out);
    }
    if enabled.is_empty() {
        return out;
    }
    let installed = read_installed(&sources.config_dir, &mut out.diagnostics);
    for (id, at) in enabled {
        let Some((name, marketplace)) = id.rsplit_once('@') else {
            continue;
        };
        if out.plugins.iter().any(|p| p.reference.id == *id) {
            continue;
        }
        let Some(path) = installed.iter().find(|(i, _)| i == id).map(|(_, p)| p) else {
            out.diagnostics.push(Diagnostic {
                severity: Severity::Warning,
                location: at.clone(),
                message: format!(
                    "\"enabledPlugins\" names \"{id}\", which is not installed ({} has no entry for it), so its hooks, commands, agents and skills do not load; install it with `rein plugin install {id}` (Claude Code skips it too)",
                    sources.config_dir.join(INSTALLED_FILE).display()
                ),
            });
            continue;
        };
        if !path.is_dir() {
            out.diagnostics.push(Diagnostic {
                severity: Severity::Error,
                location: at.clone(),
                message: format!(
                    "plugin \"{id}\" is installed at {}, which is not a folder; nothing from it runs (reinstall it with `rein plugin install {id}`)",
                    path.display()
                ),
            });
            continue;
        }
        let before = out.plugins.len();
        load_one(
            path,
            marketplace,
            EnabledBy::Setting(at.clone()),
            sources,
            cache,
            &mut out,
        );
        if let Some(p) = out.plugins.get(before)
            && p.name != name
        {
            out.diagnostics.push(Diagnostic {
                severity: Severity::Warning,
                location: at.clone(),
                message: format!(
                    "plugin \"{id}\" calls itself \"{}\" in its plugin.json; rein names it \"{id}\" as enabled",
                    p.name
                ),
            });
        }
    }
    out
}

/// `installed_plugins.json` (version 2): `{"plugins": {"name@mkt": [{"installPath": …}]}}`.
/// The first entry of each id is used. A file that is missing means nothing is installed; one
/// that cannot be read is an error naming it.
pub fn read_installed(config_dir: &Path, diags: &mut Vec<Diagnostic>) -> Vec<(String, PathBuf)> {
    let file = config_dir.join(INSTALLED_FILE);
    let text = match std::fs::read_to_string(&file) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Vec::new(),
        Err(e) => {
            diags.push(at_file(&file, Severity::Error, format!("cannot read: {e}")));
            return Vec::new();
        }
    };
    let value: Value = match serde_json::from_str(&text) {
        Ok(v) => v,
        Err(e) => {
            diags.push(Diagnostic {
                severity: Severity::Error,
                location: Location {
                    file: Arc::from(file.to_string_lossy().as_ref()),
                    line: u32::try_from(e.line()).unwrap_or(u32::MAX),
                    col: u32::try_from(e.column()).unwrap_or(u32::MAX),
                },
                message: format!("not valid JSON: {e}; no installed plugin loads"),
            });
            return Vec::new();
        }
    };
    let mut out = Vec::new();
    for (id, entries) in value
        .get("plugins")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        let path = entries
            .as_array()
            .and_then(|a| a.first())
            .and_then(|e| e.get("installPath"))
            .and_then(Value::as_str);
        if let Some(path) = path {
            out.push((id.clone(), PathBuf::from(path)));
        }
    }
    out
}

fn at_file(file: &Path, severity: Severity, message: String) -> Diagnostic {
    Diagnostic {
        severity,
        location: Location {
            file: Arc::from(file.to_string_lossy().as_ref()),
            line: 1,
            col: 1,
        },
        message,
    }
}

fn absolute(cwd: &Path, dir: &Path) -> PathBuf {
    let joined = if dir.is_absolute() {
        dir.to_path_buf()
    } else {
        cwd.join(dir)
    };
    std::fs::canonicalize(&joined).unwrap_or(joined)
}

/// The manifest's fields rein reads.
#[derive(Default)]
struct Manifest {
    name: Option<String>,
    version: Option<String>,
    description: Option<String>,
    /// `hooks`: paths (relative to the root) or inline objects.
    hooks: Vec<ManifestHooks>,
    commands: Vec<PathBuf>,
    agents: Vec<PathBuf>,
    skills: Vec<PathBuf>,
    output_styles: Vec<PathBuf>,
    mcp_servers: Option<PathBuf>,
}

enum ManifestHooks {
    File(PathBuf),
    /// The `{"hooks": …}` object as its own JSON text, with where it sits.
    Inline(String),
}

fn read_manifest(root: &Path, diags: &mut Vec<Diagnostic>) -> Manifest {
    let file = root.join(".claude-plugin/plugin.json");
    let Ok(text) = std::fs::read_to_string(&file) else {
        return Manifest::default();
    };
    let label: Arc<str> = Arc::from(file.to_string_lossy().as_ref());
    let index = spanned::LineIndex::new(&text);
    let at = |offset: usize| {
        let (line, col) = index.line_col(&text, offset);
        Location {
            file: label.clone(),
            line,
            col,
        }
    };
    let doc = match spanned::parse(&text) {
        Ok(doc) => doc,
        Err(e) => {
            diags.push(Diagnostic {
                severity: Severity::Error,
                location: at(e.offset),
                message: format!(
                    "not valid JSON: {e}; the plugin still loads under its folder's name, with its default folders (hooks/hooks.json, commands/, agents/, skills/, .mcp.json)"
                ),
            });
            return Manifest::default();
        }
    };
    let Some(members) = doc.root.value.as_object() else {
        diags.push(Diagnostic {
            severity: Severity::Error,
            location: at(doc.root.offset),
            message: "plugin.json must be a JSON object; its fields are ignored".to_string(),
        });
        return Manifest::default();
    };
    let mut m = Manifest::default();
    let text_of = |key: &str| {
        spanned::get(members, key).and_then(|m| m.value.value.as_str().map(str::to_string))
    };
    m.name = text_of("name");
    m.version = text_of("version");
    m.description = text_of("description");
    let paths = |key: &str, diags: &mut Vec<Diagnostic>| -> Vec<PathBuf> {
        let Some(member) = spanned::get(members, key) else {
            return Vec::new();
        };
        let v = member.value.value.to_serde();
        let items: Vec<Value> = match v {
            Value::String(_) => vec![v],
            Value::Array(a) => a,
            _ => Vec::new(),
        };
        let mut out = Vec::new();
        for item in items {
            match item.as_str() {
                Some(p) => out.push(root.join(p)),
                None => diags.push(Diagnostic {
                    severity: Severity::Error,
                    location: at(member.value.offset),
                    message: format!("\"{key}\" must be a path or a list of paths; an entry that is not is ignored"),
                }),
            }
        }
        out
    };
    m.commands = paths("commands", diags);
    m.agents = paths("agents", diags);
    m.skills = paths("skills", diags);
    m.output_styles = paths("outputStyles", diags);
    if let Some(member) = spanned::get(members, "hooks") {
        let v = member.value.value.to_serde();
        let items: Vec<Value> = match v {
            Value::Array(a) => a,
            other => vec![other],
        };
        for item in items {
            match item {
                Value::String(p) => m.hooks.push(ManifestHooks::File(root.join(p))),
                Value::Object(_) => m.hooks.push(ManifestHooks::Inline(item.to_string())),
                _ => diags.push(Diagnostic {
                    severity: Severity::Error,
                    location: at(member.value.offset),
                    message: "\"hooks\" must be a path, a hooks object, or a list of them; an entry that is neither is ignored".to_string(),
                }),
            }
        }
    }
    if let Some(member) = spanned::get(members, "mcpServers")
        && let Some(p) = member.value.value.as_str()
    {
        m.mcp_servers = Some(root.join(p));
    }
    m
}

fn load_one(
    root: &Path,
    marketplace: &str,
    enabled_by: EnabledBy,
    sources: &PluginSources,
    cache: &mut MatcherCache,
    out: &mut Loaded,
) {
    let manifest = read_manifest(root, &mut out.diagnostics);
    let name = manifest.name.clone().unwrap_or_else(|| {
        root.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "plugin".to_string())
    });
    let data = sources
        .config_dir
        .join("plugins/data")
        .join(format!("{name}-{marketplace}"));
    if let Err(e) = std::fs::create_dir_all(&data) {
        out.diagnostics.push(at_file(
            &data,
            Severity::Warning,
            format!("cannot make plugin {name}'s data folder (CLAUDE_PLUGIN_DATA): {e}"),
        ));
    }
    let reference = Arc::new(PluginRef {
        id: format!("{name}@{marketplace}"),
        root: root.to_path_buf(),
        data,
    });
    let mut hook_files: Vec<(String, Vec<u8>)> = Vec::new();
    let default_hooks = root.join("hooks/hooks.json");
    let mut listed = false;
    for h in &manifest.hooks {
        match h {
            ManifestHooks::File(p) => {
                listed |= *p == default_hooks;
                match std::fs::read(p) {
                    Ok(bytes) => hook_files.push((p.to_string_lossy().into_owned(), bytes)),
                    Err(e) => out.diagnostics.push(at_file(
                        &root.join(".claude-plugin/plugin.json"),
                        Severity::Error,
                        format!("its \"hooks\" file {} cannot be read: {e}", p.display()),
                    )),
                }
            }
            ManifestHooks::Inline(json) => hook_files.push((
                format!(
                    "{} (inline hooks)",
                    root.join(".claude-plugin/plugin.json").display()
                ),
                json.clone().into_bytes(),
            )),
        }
    }
    if !listed && let Ok(bytes) = std::fs::read(&default_hooks) {
        hook_files.insert(0, (default_hooks.to_string_lossy().into_owned(), bytes));
    }
    let mut hooks = 0;
    for (label, bytes) in hook_files {
        let mut fs = parse::parse_plugin_hooks(SourceKind::User, &label, &bytes, cache);
        out.diagnostics.append(&mut fs.diagnostics);
        for mut h in fs.handlers {
            if let Some(reason) = &fs.voided
                && h.inactive.is_none()
            {
                h.inactive = Some(crate::settings::schema::Inactive::FileVoided(
                    reason.clone(),
                ));
            }
            substitute(&mut h, &reference);
            h.origin.plugin = Some(reference.clone());
            hooks += 1;
            out.handlers.push(h);
        }
    }
    let dirs = |default: &str, extra: &[PathBuf]| -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = Vec::new();
        let d = root.join(default);
        if d.is_dir() {
            v.push(d);
        }
        for e in extra {
            if !v.contains(e) {
                v.push(e.clone());
            }
        }
        v
    };
    let mcp = root.join(".mcp.json");
    out.plugins.push(Plugin {
        reference,
        name,
        version: manifest.version,
        description: manifest.description,
        enabled_by,
        hooks,
        commands: dirs("commands", &manifest.commands),
        agents: dirs("agents", &manifest.agents),
        skills: dirs("skills", &manifest.skills),
        output_styles: dirs("output-styles", &manifest.output_styles),
        mcp_config: manifest.mcp_servers.or(mcp.is_file().then_some(mcp)),
    });
}

/// `${CLAUDE_PLUGIN_ROOT}` and `${CLAUDE_PLUGIN_DATA}` in a command (and its exec-form
/// arguments) become the folders, as text.
fn substitute(h: &mut ConfiguredHandler, plugin: &PluginRef) {
    let root = plugin.root.to_string_lossy();
    let data = plugin.data.to_string_lossy();
    let replace = |s: &str| {
        s.replace("${CLAUDE_PLUGIN_ROOT}", &root)
            .replace("${CLAUDE_PLUGIN_DATA}", &data)
    };
    if let HandlerKind::Command(c) = &mut h.kind {
        c.command = replace(&c.command);
        if let Some(args) = &mut c.args {
            for a in args {
                *a = replace(a);
            }
        }
    }
}
