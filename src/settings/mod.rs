//! Settings discovery, merge order, schema and validation with file:line:col diagnostics.
//!
//! [`load`] reads every source Claude Code reads (spec §1.1) and never fails: a file that
//! cannot be read or parsed becomes a [`Diagnostic`](schema::Diagnostic) and the other files
//! still apply. The rules, in the order they are applied:
//!
//! 1. Sources, lowest precedence first: user (`$CLAUDE_CONFIG_DIR` or `~/.claude`), project,
//!    local (git root when we own it, then the legacy cwd copy, so the nearer file wins),
//!    each `--settings` in command-line order, policy (`managed-settings.json`, then
//!    `managed-settings.d/*.json` alphabetically). `--setting-sources` filters the first three.
//! 2. A file is read as strict JSON. A BOM is stripped (warning), invalid UTF-8 is replaced
//!    (warning), an empty file is `{}`, a duplicate key keeps the last value (warning), as
//!    `JSON.parse` does. Anything else that is not JSON skips the whole file (error).
//! 3. A malformed hook entry under PreToolUse/PermissionRequest voids its whole file: no hooks,
//!    allow rules, env or switches from it (spec §1.7); elsewhere only the entry is dropped.
//!    Its `deny` and `ask` rules still apply: rein fails closed where Claude Code drops them.
//! 4. Handlers concatenate in source order (file order within a file), inactive ones included.
//!    Permission rules concatenate with their locations; `env` merges higher over lower.
//! 5. Scalars take the highest tier that sets them — including `disableAllHooks`, so a local
//!    `false` overrides a user `true`. An escalating `defaultMode` set by the committed project
//!    file alone is refused (spec §6.1).
//! 6. `disableAllHooks: true` from policy switches off every hook; from any other file, all but
//!    managed hooks. `allowManagedHooksOnly` counts only in policy. Both mark handlers
//!    [`Inactive::Disabled`](schema::Inactive::Disabled) rather than dropping them, so
//!    `rein hooks list` can say why a hook does not run.

pub mod discover;
pub mod explain;
pub mod keys;
pub mod lint;
pub mod parse;
pub mod plugins;
pub mod schema;
pub mod spanned;
pub mod tool_names;
pub mod trust;

use std::path::PathBuf;

use crate::settings::discover::ReadOutcome;
use crate::settings::parse::{FileSettings, Located, MatcherCache, RuleText};
use crate::settings::schema::{
    Diagnostic, Inactive, LoadedFile, Location, RuleEntry, Settings, Severity, SourceKind,
};

/// Default directory of managed (policy) settings on Linux.
pub const DEFAULT_MANAGED_DIR: &str = "/etc/claude-code";

/// Where to look for settings.
#[derive(Debug, Clone)]
pub struct LoadOptions {
    /// The project root (`<project>/.claude/settings.json`).
    pub project_dir: PathBuf,
    /// The session's working directory (local settings, relative `--settings` paths).
    pub cwd: PathBuf,
    /// The home directory (`~/.claude/settings.json`).
    pub home: PathBuf,
    /// `CLAUDE_CONFIG_DIR`: replaces `~/.claude` for the user settings.
    pub config_dir: Option<PathBuf>,
    /// `--settings FILE|JSON`, in command-line order.
    pub flag_settings: Vec<String>,
    /// `--setting-sources`: limits user/project/local; flag and policy are always read.
    pub setting_sources: Option<Vec<SourceKind>>,
    /// Managed settings directory (`/etc/claude-code`; `REIN_MANAGED_SETTINGS_DIR` overrides).
    pub managed_dir: PathBuf,
    /// Whether the user trusts the project folder ([`trust`]): only then may the files the
    /// repository controls raise permissions.
    pub repo_trusted: bool,
    /// `--plugin-dir` folders, in command-line order ([`plugins`]).
    pub plugin_dirs: Vec<PathBuf>,
}

impl LoadOptions {
    /// Claude's config folder: `CLAUDE_CONFIG_DIR`, else `~/.claude` (plugins, user settings).
    pub fn claude_dir(&self) -> PathBuf {
        self.config_dir
            .clone()
            .unwrap_or_else(|| self.home.join(".claude"))
    }

    /// Options from the process environment: `HOME`, `CLAUDE_CONFIG_DIR`,
    /// `REIN_MANAGED_SETTINGS_DIR`.
    pub fn from_env(project_dir: PathBuf, cwd: PathBuf, flag_settings: Vec<String>) -> LoadOptions {
        let non_empty = |name: &str| {
            std::env::var_os(name)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        LoadOptions {
            project_dir,
            cwd,
            home: non_empty("HOME").unwrap_or_else(|| PathBuf::from("/")),
            config_dir: non_empty("CLAUDE_CONFIG_DIR"),
            flag_settings,
            setting_sources: None,
            managed_dir: non_empty("REIN_MANAGED_SETTINGS_DIR")
                .unwrap_or_else(|| PathBuf::from(DEFAULT_MANAGED_DIR)),
            repo_trusted: false,
            plugin_dirs: Vec::new(),
        }
    }
}

/// Parses a `--setting-sources` value such as `user,project,local`.
pub fn parse_setting_sources(value: &str) -> Result<Vec<SourceKind>, String> {
    value
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| match s {
            "user" => Ok(SourceKind::User),
            "project" => Ok(SourceKind::Project),
            "local" => Ok(SourceKind::Local),
            other => Err(format!(
                "invalid setting source {other:?} (expected user, project or local)"
            )),
        })
        .collect()
}

/// Reads, validates and merges every settings source. Never fails; problems are in
/// [`Settings::diagnostics`].
pub fn load(opts: &LoadOptions) -> Settings {
    let mut settings = Settings::default();
    let mut cache = MatcherCache::new();
    let mut files: Vec<FileSettings> = Vec::new();
    for candidate in discover::candidates(opts) {
        let label = candidate.label();
        match discover::read(&candidate) {
            ReadOutcome::Absent => settings.files.push(LoadedFile {
                source: candidate.source,
                path: candidate.path(),
                applied: false,
            }),
            ReadOutcome::Failed(message) => {
                settings.diagnostics.push(Diagnostic {
                    severity: Severity::Error,
                    location: Location {
                        file: label.as_str().into(),
                        line: 1,
                        col: 1,
                    },
                    message: format!("{message}; this settings file is skipped"),
                });
                settings.files.push(LoadedFile {
                    source: candidate.source,
                    path: candidate.path(),
                    applied: false,
                });
            }
            ReadOutcome::Bytes(bytes) => {
                let fs = parse::parse_file(candidate.source, &label, &bytes, &mut cache);
                settings.files.push(LoadedFile {
                    source: candidate.source,
                    path: candidate.path(),
                    applied: fs.parsed && fs.voided.is_none(),
                });
                files.push(fs);
            }
        }
    }
    let local_tracked = !opts.repo_trusted && trust::local_is_tracked(&opts.project_dir);
    let warm_off = files.iter().any(|f| f.warm_hooks == Some(false));
    let merged = merge(files, &mut settings, opts.repo_trusted, local_tracked);
    let sources = plugins::PluginSources {
        dirs: opts.plugin_dirs.clone(),
        cwd: opts.cwd.clone(),
        config_dir: opts.claude_dir(),
    };
    let mut loaded = plugins::load(&sources, &merged.enabled_plugins, &mut cache);
    if warm_off {
        for h in &mut loaded.handlers {
            h.warm = false;
        }
    }
    settings.handlers.append(&mut loaded.handlers);
    settings.diagnostics.append(&mut loaded.diagnostics);
    settings.plugins = loaded.plugins;
    settings.repo_trusted = opts.repo_trusted;
    settings.claude_dir = opts.claude_dir();
    apply_switches(&mut settings, merged.disable, merged.managed_only);
    settings
}

/// What [`merge`] leaves for after the plugins are loaded.
struct Merged {
    disable: Option<(Located<bool>, SourceKind, String)>,
    managed_only: Option<(Located<bool>, String)>,
    /// `enabledPlugins` entries that are on, highest tier's word per id, in first-seen order.
    enabled_plugins: Vec<(String, crate::origin::Location)>,
}

/// A file the repository controls, in a folder the user has not trusted: what in it would raise
/// permissions is dropped, each with a warning (Claude Code 2.1.328 ignores project allow
/// rules, `additionalDirectories` and permissive modes in an untrusted folder too; rein also
/// drops env vars that change what tools run, and treats a committed local file the same).
fn drop_escalations(fs: &mut FileSettings, diagnostics: &mut Vec<Diagnostic>) {
    let why = "the folder is not trusted (run `rein hooks trust` or pass --trust)";
    let at = |line| Location {
        file: fs.label.to_string().into(),
        line,
        col: 1,
    };
    if !fs.allow.is_empty() {
        let first = fs.allow[0].location.clone();
        diagnostics.push(Diagnostic {
            severity: Severity::Warning,
            location: first,
            message: format!(
                "{} allow rule(s) from this repository-controlled file are ignored: {why}",
                fs.allow.len()
            ),
        });
        fs.allow.clear();
    }
    if !fs.additional_directories.is_empty() {
        diagnostics.push(Diagnostic {
            severity: Severity::Warning,
            location: at(1),
            message: format!(
                "\"additionalDirectories\" ({}) from this repository-controlled file is ignored: {why}",
                fs.additional_directories.join(", ")
            ),
        });
        fs.additional_directories.clear();
    }
    if let Some(mode) = &fs.default_mode
        && (is_escalating(&mode.value) || mode.value == "dontAsk")
    {
        diagnostics.push(Diagnostic {
            severity: Severity::Warning,
            location: mode.location.clone(),
            message: format!(
                "\"defaultMode\": \"{}\" from this repository-controlled file is ignored: {why}",
                mode.value
            ),
        });
        fs.default_mode = None;
    }
    if let Some(dir) = fs.transcript_dir.take() {
        // Why: a repository choosing where transcripts go could put them inside itself, where
        // what the session read (secrets included) gets committed with the next `git add .`.
        diagnostics.push(Diagnostic {
            severity: Severity::Warning,
            location: at(1),
            message: format!(
                "\"transcriptDir\" ({dir}) from this repository-controlled file is ignored: {why}"
            ),
        });
    }
    let (risky, kept): (Vec<_>, Vec<_>) = std::mem::take(&mut fs.env)
        .into_iter()
        .partition(|(k, _)| crate::permissions::bash::env_changes_what_runs(k));
    fs.env = kept;
    if !risky.is_empty() {
        diagnostics.push(Diagnostic {
            severity: Severity::Warning,
            location: at(1),
            message: format!(
                "\"env\" {} from this repository-controlled file is ignored: it changes what tools run, and {why}",
                risky.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>().join(", ")
            ),
        });
    }
}

fn rule_entries(
    rules: Vec<Located<RuleText>>,
    source: SourceKind,
) -> impl Iterator<Item = RuleEntry> {
    rules.into_iter().map(move |r| RuleEntry {
        text: r.value.text,
        source,
        location: r.location,
        compiled: r.value.compiled,
    })
}

/// Modes a repo-committed project file may not switch on by itself (spec §6.1).
fn is_escalating(mode: &str) -> bool {
    matches!(mode, "bypassPermissions" | "auto" | "acceptEdits")
}

/// Modes the project-local file may not switch on even when it is the user's own: every call
/// would run unasked. Claude Code 2.1.328 ignores both from `.claude/settings.local.json` in
/// `-p`, tracked or not (fixtures `local_bypass`, `local_auto`; it honours `acceptEdits` there:
/// `local_accept_edits`); rein ignores them on a terminal as well.
fn skips_every_question(mode: &str) -> bool {
    matches!(mode, "bypassPermissions" | "auto")
}

fn merge(
    files: Vec<FileSettings>,
    settings: &mut Settings,
    repo_trusted: bool,
    local_tracked: bool,
) -> Merged {
    // id → (on?, where, set by a file the repository controls in an untrusted folder)
    let mut plugins: Vec<(String, bool, crate::origin::Location, bool)> = Vec::new();
    let mut disable: Option<(Located<bool>, SourceKind, String)> = None;
    let mut managed_only: Option<(Located<bool>, String)> = None;
    let mut default_mode: Option<(String, SourceKind)> = None;
    let mut user_mode: Option<String> = None;
    let warm_off = files.iter().any(|f| f.warm_hooks == Some(false));
    for mut fs in files {
        if warm_off {
            for h in &mut fs.handlers {
                h.warm = false;
            }
        }
        settings.diagnostics.append(&mut fs.diagnostics);
        if let Some(reason) = &fs.voided {
            for h in &mut fs.handlers {
                if h.inactive != Some(Inactive::UnknownEvent) {
                    h.inactive = Some(Inactive::FileVoided(reason.clone()));
                }
            }
        }
        settings.handlers.append(&mut fs.handlers);
        if fs.parsed && fs.voided.is_some() {
            // Why keep these: voiding is about hooks that may guard the file's permissions;
            // dropping its deny/ask rules too would make a typo in a hook open doors the
            // user closed. rein fails closed here where Claude Code drops the whole file.
            let p = &mut settings.permissions;
            p.ask
                .extend(rule_entries(std::mem::take(&mut fs.ask), fs.source));
            p.deny
                .extend(rule_entries(std::mem::take(&mut fs.deny), fs.source));
        }
        if !fs.parsed || fs.voided.is_some() {
            continue;
        }
        let repo_controlled =
            fs.source == SourceKind::Project || (fs.source == SourceKind::Local && local_tracked);
        if repo_controlled && !repo_trusted {
            drop_escalations(&mut fs, &mut settings.diagnostics);
        }
        for (id, on) in std::mem::take(&mut fs.enabled_plugins) {
            let untrusted_repo = repo_controlled && !repo_trusted;
            match plugins.iter_mut().find(|(i, ..)| *i == id) {
                // Why: a cloned repository switching off a plugin the user enabled would
                // silence the user's guard hooks by being cloned; Claude Code lets it, rein
                // keeps the plugin on until the folder is trusted.
                Some(entry) if entry.1 && !on.value && untrusted_repo && !entry.3 => {
                    settings.diagnostics.push(Diagnostic {
                        severity: Severity::Warning,
                        location: on.location.clone(),
                        message: format!(
                            "\"enabledPlugins\": \"{id}\": false from this repository-controlled file is ignored: it would switch off a plugin enabled at {} (its hooks may guard you); trust the folder (`rein hooks trust` or --trust) to let it",
                            entry.2
                        ),
                    });
                }
                Some(entry) => *entry = (id, on.value, on.location, untrusted_repo),
                None => plugins.push((id, on.value, on.location, untrusted_repo)),
            }
        }
        let p = &mut settings.permissions;
        // Restrictive: any tier may switch bypassPermissions off, none back on.
        p.disable_bypass_mode |= fs.disable_bypass_mode;
        p.allow.extend(rule_entries(fs.allow, fs.source));
        p.ask.extend(rule_entries(fs.ask, fs.source));
        p.deny.extend(rule_entries(fs.deny, fs.source));
        for dir in fs.additional_directories {
            if !p.additional_directories.contains(&dir) {
                p.additional_directories.push(dir);
            }
        }
        if let Some(mode) = fs.default_mode {
            if fs.source == SourceKind::Project && is_escalating(&mode.value) {
                settings.diagnostics.push(Diagnostic {
                    severity: Severity::Warning,
                    location: mode.location.clone(),
                    message: format!(
                        "\"defaultMode\": \"{}\" from project settings is ignored: a repository cannot switch on an escalating mode by itself (set it in {})",
                        mode.value,
                        if skips_every_question(&mode.value) {
                            "user settings or with --permission-mode"
                        } else {
                            "user or local settings"
                        }
                    ),
                });
                default_mode = user_mode.clone().map(|m| (m, SourceKind::User));
            } else if fs.source == SourceKind::Local && skips_every_question(&mode.value) {
                settings.diagnostics.push(Diagnostic {
                    severity: Severity::Warning,
                    location: mode.location.clone(),
                    message: format!(
                        "\"defaultMode\": \"{}\" from .claude/settings.local.json is ignored: anything that writes the repository can write that file (Claude Code ignores it too); set it in user settings or pass --permission-mode",
                        mode.value
                    ),
                });
            } else {
                if fs.source == SourceKind::User {
                    user_mode = Some(mode.value.clone());
                }
                default_mode = Some((mode.value, fs.source));
            }
        }
        for (k, v) in fs.env {
            match settings.env.iter_mut().find(|(key, _)| *key == k) {
                Some(entry) => entry.1 = v,
                None => settings.env.push((k, v)),
            }
        }
        let mut network = std::mem::take(&mut fs.network);
        if fs.source == SourceKind::Local && local_tracked && !repo_trusted {
            // A settings.local.json that git tracks came with the repository: like the project
            // file, it may not approve the repository's own .mcp.json servers.
            if network.enabled_mcpjson_servers.take().is_some()
                | network.enable_all_project_mcp_servers.take().is_some()
            {
                settings.diagnostics.push(Diagnostic {
                    severity: Severity::Warning,
                    location: crate::origin::Location {
                        file: fs.label.clone(),
                        line: 0,
                        col: 0,
                    },
                    message: "git tracks this settings.local.json, so its approval of .mcp.json servers is ignored until the folder is trusted".to_string(),
                });
            }
        }
        parse::network::merge(
            network,
            fs.source,
            &mut settings.http_policy,
            &mut settings.mcp_approval,
        );
        if fs.model.is_some() {
            settings.model = fs.model;
        }
        if fs.effort_level.is_some() {
            settings.effort_level = fs.effort_level;
        }
        if fs.transcript_dir.is_some() {
            settings.transcript_dir = fs.transcript_dir;
        }
        if let Some(line) = fs.status_line.take() {
            // A command the repository would run, as a hook is: not before the folder is
            // trusted (a lower tier's status line stays).
            if repo_controlled && !repo_trusted {
                settings.diagnostics.push(Diagnostic {
                    severity: Severity::Warning,
                    location: line.location,
                    message: "\"statusLine\" of this repository-controlled file does not run until the folder is trusted (`rein hooks trust` or --trust); it is a command, like a hook".to_string(),
                });
            } else {
                settings.status_line = Some((line.value, line.location, fs.source));
            }
        }
        if let Some(style) = fs.output_style.take() {
            settings.output_style = Some((style.value, style.location));
        }
        if let Some(d) = fs.disable_all_hooks {
            disable = Some((d, fs.source, fs.label.to_string()));
        }
        if let Some(m) = fs.allow_managed_hooks_only {
            managed_only = Some((m, fs.label.to_string()));
        }
    }
    settings.permissions.default_mode = default_mode;
    Merged {
        disable,
        managed_only,
        enabled_plugins: plugins
            .into_iter()
            .filter(|(_, on, ..)| *on)
            .map(|(id, _, at, _)| (id, at))
            .collect(),
    }
}

/// `disableAllHooks` (highest tier that sets it wins, like any scalar) and
/// `allowManagedHooksOnly` (policy only) mark handlers [`Inactive::Disabled`].
fn apply_switches(
    settings: &mut Settings,
    disable: Option<(Located<bool>, SourceKind, String)>,
    managed_only: Option<(Located<bool>, String)>,
) {
    let switch_off = |settings: &mut Settings, include_policy: bool, file: &str| -> usize {
        let mut n = 0;
        for h in &mut settings.handlers {
            let keeps_own_reason = matches!(
                h.inactive,
                Some(Inactive::UnknownEvent)
                    | Some(Inactive::FileVoided(_))
                    | Some(Inactive::Disabled(_))
            );
            if keeps_own_reason || (h.origin.source == SourceKind::Policy && !include_policy) {
                continue;
            }
            h.inactive = Some(Inactive::Disabled(file.to_string()));
            n += 1;
        }
        n
    };
    if let Some((d, source, file)) = disable
        && d.value
    {
        settings.disable_all_hooks = true;
        let policy = source == SourceKind::Policy;
        let n = switch_off(settings, policy, &file);
        let scope = if policy {
            "every hook is switched off, managed ones included"
        } else {
            "hooks from user, project, local and --settings files are switched off; managed hooks keep running"
        };
        settings.diagnostics.push(Diagnostic {
            severity: Severity::Warning,
            location: d.location,
            message: format!("\"disableAllHooks\": true — {scope} (handlers switched off: {n})"),
        });
    }
    if let Some((m, file)) = managed_only
        && m.value
    {
        settings.allow_managed_hooks_only = true;
        let n = switch_off(settings, false, &file);
        settings.diagnostics.push(Diagnostic {
            severity: Severity::Warning,
            location: m.location,
            message: format!(
                "\"allowManagedHooksOnly\": true — only managed hooks run (handlers switched off: {n})"
            ),
        });
    }
}
