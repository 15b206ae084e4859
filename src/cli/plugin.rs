//! `rein plugin …`: local-folder marketplaces and the plugins installed from them, in Claude
//! Code 2.1.328's files (so `claude` and `rein` share them): `<config dir>/plugins/
//! known_marketplaces.json`, `installed_plugins.json`, the copy under `cache/<marketplace>/
//! <name>/<version>`, and `enabledPlugins` in the user settings file.
//!
//! Every file is rewritten whole through a temporary file and a rename: a user's settings are
//! never torn, and one that is not JSON is never overwritten (the command fails naming it).

use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};
use serde_json::{Map, Value, json};

use crate::cli::{EXIT_ERROR, EXIT_USAGE};
use crate::settings::plugins::{INSTALLED_FILE, MARKETPLACES_FILE};

#[derive(Debug, Args)]
pub struct PluginArgs {
    #[command(subcommand)]
    pub command: PluginCommand,
}

#[derive(Debug, Subcommand)]
pub enum PluginCommand {
    /// Installed plugins and whether each is enabled in the user settings.
    List,
    /// Register a folder holding `.claude-plugin/marketplace.json` as a marketplace.
    #[command(name = "marketplace-add")]
    MarketplaceAdd {
        /// The marketplace's folder.
        dir: PathBuf,
    },
    /// Copy `name@marketplace` into the plugin cache and enable it in the user settings.
    Install {
        /// `name@marketplace`.
        id: String,
    },
    /// Enable an installed plugin in the user settings.
    Enable { id: String },
    /// Disable a plugin in the user settings (it stays installed).
    Disable { id: String },
}

struct Failure(String, i32);

fn fail<T>(message: impl Into<String>) -> Result<T, Failure> {
    Err(Failure(message.into(), EXIT_ERROR))
}

pub fn run(args: PluginArgs) -> i32 {
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/"));
    let config = std::env::var_os("CLAUDE_CONFIG_DIR")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| home.join(".claude"));
    let result = match args.command {
        PluginCommand::List => list(&config),
        PluginCommand::MarketplaceAdd { dir } => marketplace_add(&config, &dir),
        PluginCommand::Install { id } => install(&config, &id),
        PluginCommand::Enable { id } => set_enabled(&config, &id, true),
        PluginCommand::Disable { id } => set_enabled(&config, &id, false),
    };
    match result {
        Ok(text) => {
            print!("{text}");
            0
        }
        Err(Failure(message, code)) => {
            eprintln!("rein plugin: {message}");
            code
        }
    }
}

/// A JSON object file, or an empty object when it does not exist.
fn read_object(path: &Path) -> Result<Map<String, Value>, Failure> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Map::new()),
        Err(e) => return fail(format!("cannot read {}: {e}", path.display())),
    };
    if text.trim().is_empty() {
        return Ok(Map::new());
    }
    match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => fail(format!(
            "{} is not a JSON object; left unchanged",
            path.display()
        )),
        Err(e) => fail(format!(
            "{}:{}:{}: not valid JSON ({e}); left unchanged",
            path.display(),
            e.line(),
            e.column()
        )),
    }
}

fn write_object(path: &Path, value: &Map<String, Value>) -> Result<(), Failure> {
    let mut text = serde_json::to_string_pretty(value).unwrap_or_default();
    text.push('\n');
    if let Some(dir) = path.parent()
        && let Err(e) = std::fs::create_dir_all(dir)
    {
        return fail(format!("cannot make {}: {e}", dir.display()));
    }
    crate::tools::atomic_write::replace(path, text.as_bytes())
        .map(|_| ())
        .or_else(|e| fail(format!("cannot write {}: {e}", path.display())))
}

fn now() -> String {
    crate::agent::transcript::timestamp_now()
}

fn split_id(id: &str) -> Result<(&str, &str), Failure> {
    match id.rsplit_once('@') {
        Some((name, mkt)) if !name.is_empty() && !mkt.is_empty() => Ok((name, mkt)),
        _ => Err(Failure(
            format!("{id:?} is not name@marketplace"),
            EXIT_USAGE,
        )),
    }
}

fn marketplace_add(config: &Path, dir: &Path) -> Result<String, Failure> {
    let dir = std::fs::canonicalize(dir)
        .or_else(|e| fail(format!("marketplace folder {}: {e}", dir.display())))?;
    let manifest = dir.join(".claude-plugin/marketplace.json");
    let m = read_object(&manifest)?;
    let Some(name) = m.get("name").and_then(Value::as_str) else {
        return fail(format!("{} has no \"name\"", manifest.display()));
    };
    let file = config.join(MARKETPLACES_FILE);
    let mut known = read_object(&file)?;
    known.insert(
        name.to_string(),
        json!({
            "source": {"source": "directory", "path": dir.to_string_lossy()},
            "installLocation": dir.to_string_lossy(),
            "lastUpdated": now(),
        }),
    );
    write_object(&file, &known)?;
    Ok(format!("added marketplace {name} ({})\n", dir.display()))
}

fn install(config: &Path, id: &str) -> Result<String, Failure> {
    let (name, mkt) = split_id(id)?;
    let known = read_object(&config.join(MARKETPLACES_FILE))?;
    let Some(location) = known
        .get(mkt)
        .and_then(|m| m.get("installLocation"))
        .and_then(Value::as_str)
    else {
        return fail(format!(
            "marketplace {mkt} is not known; add its folder first with `rein plugin marketplace-add DIR`"
        ));
    };
    let root = PathBuf::from(location);
    let manifest = read_object(&root.join(".claude-plugin/marketplace.json"))?;
    let entry = manifest
        .get("plugins")
        .and_then(Value::as_array)
        .and_then(|ps| ps.iter().find(|p| p["name"] == name));
    let Some(entry) = entry else {
        return fail(format!("marketplace {mkt} lists no plugin named {name}"));
    };
    let Some(source) = entry["source"].as_str() else {
        return fail(format!(
            "plugin {id}: only a folder source (\"./path\") can be installed offline"
        ));
    };
    let from = root.join(source);
    if !from.is_dir() {
        return fail(format!("plugin {id}: {} is not a folder", from.display()));
    }
    let plugin_manifest = read_object(&from.join(".claude-plugin/plugin.json")).unwrap_or_default();
    let version = plugin_manifest
        .get("version")
        .or_else(|| entry.get("version"))
        .and_then(Value::as_str)
        .unwrap_or("unknown")
        .to_string();
    let dest = config
        .join("plugins/cache")
        .join(mkt)
        .join(name)
        .join(&version);
    // Copied into a fresh folder beside the destination, then renamed over it: a failed copy
    // never leaves a half plugin where sessions load it from.
    let staging = dest.with_extension(format!("tmp-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&staging);
    copy_tree(&from, &staging).or_else(|e| fail(format!("copying {}: {e}", from.display())))?;
    let _ = std::fs::remove_dir_all(&dest);
    std::fs::rename(&staging, &dest)
        .or_else(|e| fail(format!("moving the copy to {}: {e}", dest.display())))?;
    let file = config.join(INSTALLED_FILE);
    let mut installed = read_object(&file)?;
    installed.insert("version".into(), json!(2));
    let plugins = installed.entry("plugins").or_insert_with(|| json!({}));
    if let Some(plugins) = plugins.as_object_mut() {
        let at = now();
        plugins.insert(
            id.to_string(),
            json!([{
                "scope": "user",
                "installPath": dest.to_string_lossy(),
                "version": version,
                "installedAt": at,
                "lastUpdated": at,
            }]),
        );
    }
    write_object(&file, &installed)?;
    set_enabled(config, id, true)?;
    Ok(format!(
        "installed {id} {version} at {} and enabled it in {}\n",
        dest.display(),
        config.join("settings.json").display()
    ))
}

fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let target = to.join(entry.file_name());
        if kind.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else if kind.is_file() {
            std::fs::copy(entry.path(), &target)?;
        } else if kind.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(entry.path())?, &target)?;
        }
    }
    Ok(())
}

fn set_enabled(config: &Path, id: &str, on: bool) -> Result<String, Failure> {
    split_id(id)?;
    let file = config.join("settings.json");
    let mut settings = read_object(&file)?;
    let enabled = settings
        .entry("enabledPlugins")
        .or_insert_with(|| json!({}));
    let Some(enabled) = enabled.as_object_mut() else {
        return fail(format!(
            "{}: \"enabledPlugins\" is not an object; left unchanged",
            file.display()
        ));
    };
    enabled.insert(id.to_string(), Value::Bool(on));
    write_object(&file, &settings)?;
    Ok(format!(
        "{} {id} in {}\n",
        if on { "enabled" } else { "disabled" },
        file.display()
    ))
}

fn list(config: &Path) -> Result<String, Failure> {
    let mut diags = Vec::new();
    let installed = crate::settings::plugins::read_installed(config, &mut diags);
    if let Some(d) = diags.first() {
        return fail(d.to_string());
    }
    let settings = read_object(&config.join("settings.json"))?;
    let enabled = settings.get("enabledPlugins").and_then(Value::as_object);
    if installed.is_empty() {
        return Ok("No plugins installed.\n".to_string());
    }
    let mut out = String::new();
    for (id, path) in installed {
        let on = enabled
            .and_then(|e| e.get(&id))
            .and_then(Value::as_bool)
            .unwrap_or(false);
        out.push_str(&format!(
            "{id:<32} {}  {}\n",
            if on { "enabled " } else { "disabled" },
            path.display()
        ));
    }
    Ok(out)
}
