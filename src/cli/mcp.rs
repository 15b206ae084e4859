//! MCP on the command line: starting a session's servers (with the approval of `.mcp.json`
//! servers, asked on the terminal in an interactive session), and `rein mcp list|get|add|remove`.

use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use clap::{Args, Subcommand};
use serde_json::{Map, Value, json};

use crate::cli::{EXIT_ERROR, EXIT_OK, EXIT_USAGE};
use crate::mcp::client::{Limits, Status};
use crate::mcp::config::{self, Approval, ApprovalState, Loaded, Scope, Sources};
use crate::mcp::{McpSession, max_output_tokens, plan};
use crate::settings::schema::Settings;

/// `--mcp-config` / `--strict-mcp-config` as a session's flags carry them.
#[derive(Debug, Clone, Default)]
pub struct McpFlags {
    pub configs: Vec<String>,
    pub strict: bool,
    /// The Agent SDK serving `type: "sdk"` servers, when it drives rein.
    pub sdk: crate::mcp::sdk_transport::SdkLink,
}

fn home_dir() -> PathBuf {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/"))
}

fn config_dir() -> Option<PathBuf> {
    std::env::var_os("CLAUDE_CONFIG_DIR")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

fn sources(project_dir: &Path, flags: &McpFlags) -> Sources {
    Sources {
        project_dir: project_dir.to_path_buf(),
        user_file: Sources::user_file(&home_dir(), config_dir().as_deref()),
        flag_configs: flags.configs.clone(),
        strict: flags.strict,
    }
}

fn approval(settings: &Settings) -> Approval {
    Approval {
        enabled: settings.mcp_approval.enabled.clone(),
        disabled: settings.mcp_approval.disabled.clone(),
        enable_all: settings.mcp_approval.enable_all,
    }
}

/// Loads the configuration, asks about unapproved project servers when a person is at the
/// terminal (and records the answer in `.claude/settings.local.json`), starts the servers, and
/// reports every problem on stderr. Never fails: a session without its servers still runs.
pub async fn start_for_session(
    project_dir: &Path,
    settings: &Settings,
    flags: &McpFlags,
    interactive: bool,
) -> Arc<McpSession> {
    let lookup = crate::mcp::config::env_lookup(&settings.env);
    let mut loaded = config::load(&sources(project_dir, flags), &lookup);
    if !flags.strict {
        let from_plugins = config::load_plugins(&plugin_servers(settings), &lookup);
        loaded.problems.extend(from_plugins.problems);
        for server in from_plugins.servers {
            if !loaded.servers.iter().any(|s| s.name == server.name) {
                loaded.servers.push(server);
            }
        }
    }
    for p in &loaded.problems {
        eprintln!("rein: {p}");
    }
    let mut approval = approval(settings);
    if interactive && std::io::stdin().is_terminal() {
        ask_about_pending(project_dir, &loaded, &mut approval);
    }
    let plans = plan(&loaded, &approval);
    for p in &plans {
        if p.hold == Some(Status::Pending) {
            eprintln!(
                "rein: MCP server \"{}\" from {} is not approved, so it was not started; approve it with \"enabledMcpjsonServers\": [\"{}\"] in .claude/settings.local.json, or answer the question of an interactive rein session",
                p.config.name, p.config.location.file, p.config.name
            );
        }
    }
    if plans.is_empty() {
        return Arc::new(McpSession::default());
    }
    let mut limits = Limits::from_env(&lookup);
    limits.sdk = flags.sdk.clone();
    let session = McpSession::start(
        plans,
        &limits,
        project_dir,
        &settings.env,
        max_output_tokens(&lookup),
    )
    .await;
    for s in session.servers().servers() {
        if let Status::Failed(why) = s.status() {
            eprintln!(
                "rein: MCP server \"{}\" failed to start: {why}",
                s.config.name
            );
        }
        for note in s.notes() {
            eprintln!("rein: {note}");
        }
    }
    Arc::new(session)
}

/// The MCP servers files of the loaded plugins.
fn plugin_servers(settings: &Settings) -> Vec<config::PluginServers> {
    settings
        .plugins
        .iter()
        .filter_map(|p| {
            Some(config::PluginServers {
                plugin: p.name.clone(),
                file: p.mcp_config.clone()?,
                root: p.reference.root.clone(),
            })
        })
        .collect()
}

/// The names of every configured server (any scope, approved or not), for `rein hooks`.
pub fn configured_names(project_dir: &Path, settings: &Settings) -> Vec<String> {
    let lookup = crate::mcp::config::env_lookup(&settings.env);
    config::load(&sources(project_dir, &McpFlags::default()), &lookup)
        .servers
        .into_iter()
        .map(|s| s.name)
        .collect()
}

/// Starts the configured servers named in `names` (project ones only when approved), for
/// `rein hooks test` of mcp_tool hooks; problems go to stderr.
pub async fn start_named(
    project_dir: &Path,
    settings: &Settings,
    names: &[String],
) -> Arc<McpSession> {
    let lookup = crate::mcp::config::env_lookup(&settings.env);
    let mut loaded = config::load(&sources(project_dir, &McpFlags::default()), &lookup);
    loaded.servers.retain(|s| names.contains(&s.name));
    let plans = plan(&loaded, &approval(settings));
    let session = McpSession::start(
        plans,
        &Limits::from_env(&lookup),
        project_dir,
        &settings.env,
        max_output_tokens(&lookup),
    )
    .await;
    for s in session.servers().servers() {
        match s.status() {
            Status::Failed(why) => eprintln!(
                "rein: MCP server \"{}\" failed to start: {why}",
                s.config.name
            ),
            Status::Pending => eprintln!(
                "rein: MCP server \"{}\" (.mcp.json) is not approved, so it was not started",
                s.config.name
            ),
            Status::Connected | Status::Disabled => {}
        }
    }
    Arc::new(session)
}

/// Asks, for each project server nobody approved or rejected, whether it may start; the
/// answer is recorded in `.claude/settings.local.json` so it is asked once.
fn ask_about_pending(project_dir: &Path, loaded: &Loaded, approval: &mut Approval) {
    for server in &loaded.servers {
        if server.scope != Scope::Project || approval.state(&server.name) != ApprovalState::Pending
        {
            continue;
        }
        let mut err = std::io::stderr().lock();
        let _ = write!(
            err,
            "The project's .mcp.json asks to start MCP server \"{}\" ({}: {}).\nStart it? [y/N] ",
            server.name,
            server.transport.type_name(),
            crate::mcp::client::describe(server)
        );
        let _ = err.flush();
        drop(err);
        let mut line = String::new();
        if std::io::stdin().lock().read_line(&mut line).is_err() {
            return;
        }
        let yes = matches!(line.trim(), "y" | "Y" | "yes" | "Yes");
        let key = if yes {
            approval.enabled.push(server.name.clone());
            "enabledMcpjsonServers"
        } else {
            approval.disabled.push(server.name.clone());
            "disabledMcpjsonServers"
        };
        let local = project_dir.join(".claude").join("settings.local.json");
        if let Err(e) = add_to_list(&local, key, &server.name) {
            eprintln!(
                "rein: could not record the answer in {}: {e}",
                local.display()
            );
        }
    }
}

/// Adds `name` to the string list `key` of the JSON object in `path` (created if absent).
fn add_to_list(path: &Path, key: &str, name: &str) -> Result<(), String> {
    let mut root = read_object(path)?;
    let list = root
        .entry(key.to_string())
        .or_insert_with(|| Value::Array(Vec::new()));
    let Value::Array(items) = list else {
        return Err(format!("\"{key}\" there is not a list"));
    };
    if !items.iter().any(|v| v.as_str() == Some(name)) {
        items.push(Value::String(name.to_string()));
    }
    write_object(path, &root)
}

fn read_object(path: &Path) -> Result<Map<String, Value>, String> {
    match std::fs::read_to_string(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Map::new()),
        Err(e) => Err(e.to_string()),
        Ok(text) if text.trim().is_empty() => Ok(Map::new()),
        Ok(text) => match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(m)) => Ok(m),
            Ok(_) => Err("it is not a JSON object".to_string()),
            Err(e) => Err(format!("it is not valid JSON ({e}); not changed")),
        },
    }
}

fn write_object(path: &Path, root: &Map<String, Value>) -> Result<(), String> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    }
    let mut text = serde_json::to_string_pretty(root).map_err(|e| e.to_string())?;
    text.push('\n');
    crate::tools::atomic_write::replace(path, text.as_bytes())
        .map(|_| ())
        .map_err(|e| e.to_string())
}

// ---------------------------------------------------------------------------------------------
// rein mcp …

/// `rein mcp`: the configured MCP servers.
#[derive(Debug, Args)]
pub struct McpArgs {
    #[command(subcommand)]
    pub command: McpCommand,
    /// Project directory (default: the current directory).
    #[arg(long = "cwd", value_name = "DIR", global = true)]
    pub cwd: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum McpCommand {
    /// List the configured servers and whether each connects.
    List,
    /// Show one server's configuration and status.
    Get { name: String },
    /// Add a server: `rein mcp add NAME COMMAND [ARGS…]`, or `-t http NAME URL`.
    Add {
        /// Where to record it: local (default: this project, in ~/.claude.json), user
        /// (~/.claude.json, every project) or project (.mcp.json, shared with the repository).
        #[arg(short = 's', long = "scope", default_value = "local", value_parser = ["local", "user", "project"])]
        scope: String,
        /// stdio (default), http or sse.
        #[arg(short = 't', long = "transport", default_value = "stdio", value_parser = ["stdio", "http", "sse"])]
        transport: String,
        /// Environment of a stdio server, `KEY=value` (repeatable).
        #[arg(short = 'e', long = "env", value_name = "KEY=value")]
        env: Vec<String>,
        /// Header of an http/sse server, `Name: value` (repeatable).
        #[arg(short = 'H', long = "header", value_name = "HEADER")]
        header: Vec<String>,
        name: String,
        /// The command (stdio) or URL (http, sse).
        command_or_url: String,
        /// Arguments of the command.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Remove a server.
    Remove {
        name: String,
        /// Only from this scope (local, user, project); default: the one that has it.
        #[arg(short = 's', long = "scope", value_parser = ["local", "user", "project"])]
        scope: Option<String>,
    },
}

/// Runs `rein mcp …`; the exit code.
pub fn run(args: McpArgs, runtime: &tokio::runtime::Runtime) -> i32 {
    let project_dir = match args.cwd.clone().map_or_else(std::env::current_dir, Ok) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("rein: cannot read the current directory: {e}");
            return EXIT_ERROR;
        }
    };
    let flags = McpFlags::default();
    let lookup = |name: &str| std::env::var(name).ok();
    match args.command {
        McpCommand::List => {
            let loaded = config::load(&sources(&project_dir, &flags), &lookup);
            for p in &loaded.problems {
                eprintln!("rein: {p}");
            }
            if loaded.servers.is_empty() {
                println!("No MCP servers configured. Add one with `rein mcp add`.");
                return EXIT_OK;
            }
            let settings = load_settings(&project_dir);
            let session = runtime.block_on(start_checked(&project_dir, &loaded, &settings));
            println!("Checking MCP server health...\n");
            for s in session.servers().servers() {
                println!(
                    "{}: {} - {}",
                    s.config.name,
                    crate::mcp::client::describe(&s.config),
                    status_text(&s.status())
                );
            }
            runtime.block_on(session.shutdown());
            EXIT_OK
        }
        McpCommand::Get { name } => {
            let loaded = config::load(&sources(&project_dir, &flags), &lookup);
            let Some(server) = loaded.servers.iter().find(|s| s.name == name) else {
                eprintln!("rein: no MCP server named \"{name}\"");
                return EXIT_ERROR;
            };
            let settings = load_settings(&project_dir);
            let one = Loaded {
                servers: vec![server.clone()],
                problems: Vec::new(),
            };
            let session = runtime.block_on(start_checked(&project_dir, &one, &settings));
            println!("{name}:");
            println!("  Scope: {}", server.scope.as_str());
            println!("  Configured at: {}", server.location);
            println!("  Type: {}", server.transport.type_name());
            match &server.transport {
                config::Transport::Stdio { command, args, env } => {
                    println!("  Command: {command}");
                    println!("  Args: {}", args.join(" "));
                    if !env.is_empty() {
                        println!("  Environment:");
                        for (k, _) in env {
                            println!("    {k}=…");
                        }
                    }
                }
                config::Transport::Http { url, headers, .. } => {
                    println!("  URL: {url}");
                    for (k, _) in headers {
                        println!("  Header: {k}: …");
                    }
                }
                config::Transport::Sdk => {
                    println!("  Served by: the Agent SDK that starts rein (in-process)");
                }
            }
            if let Some(s) = session.servers().get(&name) {
                println!("  Status: {}", status_text(&s.status()));
                if s.is_connected() {
                    println!("  Tools: {}", s.tools().len());
                    for t in s.tools() {
                        println!("    {}", crate::mcp::tool::tool_name(&name, &t.name));
                    }
                }
            }
            runtime.block_on(session.shutdown());
            EXIT_OK
        }
        McpCommand::Add {
            scope,
            transport,
            env,
            header,
            name,
            command_or_url,
            args,
        } => add(
            &project_dir,
            &scope,
            &transport,
            &env,
            &header,
            &name,
            &command_or_url,
            &args,
        ),
        McpCommand::Remove { name, scope } => remove(&project_dir, &name, scope.as_deref()),
    }
}

fn load_settings(project_dir: &Path) -> Settings {
    let opts = crate::settings::LoadOptions::from_env(
        project_dir.to_path_buf(),
        project_dir.to_path_buf(),
        Vec::new(),
    );
    crate::settings::load(&opts)
}

/// Starts the servers to see whether they connect (project servers only when approved).
async fn start_checked(project_dir: &Path, loaded: &Loaded, settings: &Settings) -> McpSession {
    let lookup = crate::mcp::config::env_lookup(&settings.env);
    let plans = plan(loaded, &approval(settings));
    McpSession::start(
        plans,
        &Limits::from_env(&lookup),
        project_dir,
        &settings.env,
        max_output_tokens(&lookup),
    )
    .await
}

fn status_text(status: &Status) -> String {
    match status {
        Status::Connected => "✓ Connected".to_string(),
        Status::Failed(why) => format!("✗ Failed to connect ({why})"),
        Status::Pending => "⏸ Needs approval (.mcp.json)".to_string(),
        Status::Disabled => "✗ Disabled (disabledMcpjsonServers)".to_string(),
    }
}

/// The file and key path of a scope.
fn scope_place(project_dir: &Path, scope: &str) -> (PathBuf, Vec<String>) {
    let user_file = Sources::user_file(&home_dir(), config_dir().as_deref());
    match scope {
        "user" => (user_file, vec!["mcpServers".to_string()]),
        "project" => (
            project_dir.join(".mcp.json"),
            vec!["mcpServers".to_string()],
        ),
        _ => (
            user_file,
            vec![
                "projects".to_string(),
                project_dir.display().to_string(),
                "mcpServers".to_string(),
            ],
        ),
    }
}

/// The object at `path` inside `root`, created on the way.
fn object_at<'a>(
    root: &'a mut Map<String, Value>,
    path: &[String],
) -> Result<&'a mut Map<String, Value>, String> {
    let mut cur = root;
    for key in path {
        let next = cur
            .entry(key.clone())
            .or_insert_with(|| Value::Object(Map::new()));
        cur = match next {
            Value::Object(m) => m,
            _ => return Err(format!("\"{key}\" is not an object")),
        };
    }
    Ok(cur)
}

#[allow(clippy::too_many_arguments)]
fn add(
    project_dir: &Path,
    scope: &str,
    transport: &str,
    env: &[String],
    header: &[String],
    name: &str,
    command_or_url: &str,
    args: &[String],
) -> i32 {
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        eprintln!(
            "rein: invalid name \"{name}\": names may contain only letters, numbers, hyphens and underscores"
        );
        return EXIT_USAGE;
    }
    let entry = if transport == "stdio" {
        let mut env_map = Map::new();
        for e in env {
            let Some((k, v)) = e.split_once('=') else {
                eprintln!("rein: --env {e:?} is not KEY=value");
                return EXIT_USAGE;
            };
            env_map.insert(k.to_string(), Value::String(v.to_string()));
        }
        let mut o = json!({"type": "stdio", "command": command_or_url, "args": args});
        if let Value::Object(m) = &mut o {
            m.insert("env".to_string(), Value::Object(env_map));
        }
        o
    } else {
        let mut headers = Map::new();
        for h in header {
            let Some((k, v)) = h.split_once(':') else {
                eprintln!("rein: --header {h:?} is not \"Name: value\"");
                return EXIT_USAGE;
            };
            headers.insert(k.trim().to_string(), Value::String(v.trim().to_string()));
        }
        json!({"type": transport, "url": command_or_url, "headers": headers})
    };
    let (file, path) = scope_place(project_dir, scope);
    let result = read_object(&file).and_then(|mut root| {
        let servers = object_at(&mut root, &path)?;
        if servers.contains_key(name) {
            return Err(format!(
                "MCP server {name} already exists in {scope} config"
            ));
        }
        servers.insert(name.to_string(), entry);
        write_object(&file, &root)
    });
    match result {
        Ok(()) => {
            println!(
                "Added {transport} MCP server {name} to {scope} config\nFile modified: {}",
                file.display()
            );
            EXIT_OK
        }
        Err(e) => {
            eprintln!("rein: {}: {e}", file.display());
            EXIT_ERROR
        }
    }
}

fn remove(project_dir: &Path, name: &str, scope: Option<&str>) -> i32 {
    let scopes: Vec<&str> = match scope {
        Some(s) => vec![s],
        None => vec!["local", "project", "user"],
    };
    for scope in scopes {
        let (file, path) = scope_place(project_dir, scope);
        let Ok(mut root) = read_object(&file) else {
            continue;
        };
        let Ok(servers) = object_at(&mut root, &path) else {
            continue;
        };
        if servers.shift_remove(name).is_some() {
            return match write_object(&file, &root) {
                Ok(()) => {
                    println!(
                        "Removed MCP server {name} from {scope} config\nFile modified: {}",
                        file.display()
                    );
                    EXIT_OK
                }
                Err(e) => {
                    eprintln!("rein: {}: {e}", file.display());
                    EXIT_ERROR
                }
            };
        }
    }
    eprintln!("rein: no MCP server named \"{name}\" found");
    EXIT_ERROR
}
