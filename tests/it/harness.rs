//! What most modules need to run rein for real: a temp dir holding a project and an isolated
//! home ([`Sandbox`]), the built `rein` binary with the developer's environment sealed off
//! ([`Sandbox::rein`]), files and executable scripts, transcripts, and the redactions that make
//! outputs snapshot-stable.
//!
//! The filesystem half ([`Sandbox`] itself, [`write`], [`write_executable`], [`sh_script`]) is
//! `src/tests/harness.rs`, shared with the library's unit tests, which have no binary to run.
//!
//! Helpers that only one family needs stay with it (the fault suite's RSS-sampling runner).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

#[path = "../../src/tests/harness.rs"]
mod files;

pub use files::{Sandbox, sh_script, write, write_executable};

/// The built `rein` binary.
pub fn rein_bin() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_rein"))
}

/// Variables of the developer's environment that would change what rein does (real API keys,
/// their config dirs, log and timeout knobs); every sealed run clears them.
pub const LEAKY_VARS: &[&str] = &[
    "ANTHROPIC_API_KEY",
    "OPENAI_API_KEY",
    "REIN_PROVIDER",
    "REIN_MOCK_SCRIPT",
    "REIN_LOG",
    "CLAUDE_CONFIG_DIR",
    "CLAUDE_PROJECT_DIR",
    "CLAUDE_CODE_STOP_HOOK_BLOCK_CAP",
    "CLAUDE_CODE_SESSIONEND_HOOKS_TIMEOUT_MS",
    "REIN_SUBAGENT_TIMEOUT_MS",
    "REIN_GATE_LEDGER",
];

/// The variables that give a run `home` as its own: `HOME`, rein's home `<home>/.rein`, and a
/// managed-settings dir that does not exist.
pub fn home_vars(home: &Path) -> [(&'static str, PathBuf); 3] {
    [
        ("HOME", home.to_path_buf()),
        ("REIN_HOME", home.join(".rein")),
        ("REIN_MANAGED_SETTINGS_DIR", home.join("no-managed")),
    ]
}

impl Sandbox {
    /// The built `rein`, run in the project with the home's variables ([`home_vars`]), none of
    /// [`LEAKY_VARS`], and stdin from `/dev/null`.
    pub fn rein(&self) -> Command {
        let mut c = Command::new(rein_bin());
        c.current_dir(&self.project)
            .envs(home_vars(&self.home))
            .stdin(Stdio::null());
        for var in LEAKY_VARS {
            c.env_remove(var);
        }
        c
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.project.join(rel)
    }

    pub fn exists(&self, rel: &str) -> bool {
        self.path(rel).exists()
    }

    /// Writes `<project>/<rel>`, creating its parent dirs.
    pub fn write(&self, rel: &str, text: &str) {
        write(&self.path(rel), text);
    }

    pub fn write_json(&self, rel: &str, value: &Value) {
        self.write(rel, &serde_json::to_string_pretty(value).expect("JSON"));
    }

    /// Writes `<project>/.claude/settings.json`.
    pub fn settings(&self, settings: Value) {
        self.write_json(".claude/settings.json", &settings);
    }

    /// Writes `<project>/.claude/settings.json` with `{"hooks": hooks}`.
    pub fn hooks(&self, hooks: Value) {
        self.settings(json!({ "hooks": hooks }));
    }

    /// An executable `<project>/hooks/<name>` with exactly `text` (shebang included); returns
    /// its absolute path.
    pub fn raw_script(&self, name: &str, text: &[u8]) -> String {
        let path = self.project.join("hooks").join(name);
        write_executable(&path, text);
        path.display().to_string()
    }

    /// An executable `/bin/sh` script `<project>/hooks/<name>` running `body`; returns its
    /// absolute path.
    pub fn script(&self, name: &str, body: &str) -> String {
        self.raw_script(name, sh_script(body).as_bytes())
    }

    /// `<project>/mock.json` holding `steps`, for `--mock-script`.
    pub fn mock(&self, steps: Value) -> PathBuf {
        let path = self.path("mock.json");
        std::fs::write(&path, steps.to_string()).expect("write mock script");
        path
    }

    /// Files of every transcript written under rein's home (`<home>/.rein/projects/*/*.jsonl`).
    pub fn transcript_files(&self) -> Vec<PathBuf> {
        let mut out = Vec::new();
        let Ok(dirs) = std::fs::read_dir(self.home.join(".rein/projects")) else {
            return out;
        };
        for dir in dirs.flatten() {
            for f in std::fs::read_dir(dir.path()).expect("read_dir").flatten() {
                if f.path().extension().is_some_and(|x| x == "jsonl") {
                    out.push(f.path());
                }
            }
        }
        out
    }
}

/// A Bash tool call, one step of a `--mock-script`.
pub fn bash(command: &str) -> Value {
    json!({"tool_use": [{"name": "Bash", "input": {"command": command}}]})
}

/// A final text, one step of a `--mock-script`.
pub fn say(text: &str) -> Value {
    json!({"text": text})
}

/// CLI output with what differs between runs replaced: the temp dir `root` by `[TMP]` (and its
/// `-`-encoded form, as in rein's project dirs, by `[TMP-ENCODED]`), UUIDs by `[UUID]`,
/// durations by `[N] ms` / `"duration_ms": [N]`, tool-use ids by `toolu_[ID]`.
pub fn redact(text: &str, root: &Path) -> String {
    let root = root.to_str().expect("temp dir path is UTF-8");
    let encoded: String = root
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let text = text
        .replace(root, "[TMP]")
        .replace(&encoded, "[TMP-ENCODED]");
    let uuid = regex::Regex::new(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
        .expect("regex");
    let text = uuid.replace_all(&text, "[UUID]");
    let ms = regex::Regex::new(r"\b\d+ ms\b").expect("regex");
    let text = ms.replace_all(&text, "[N] ms");
    let ms_json = regex::Regex::new(r#""duration_ms": \d+"#).expect("regex");
    let text = ms_json.replace_all(&text, r#""duration_ms": [N]"#);
    let tool = regex::Regex::new(r"toolu_[0-9a-f]{24}").expect("regex");
    tool.replace_all(&text, "toolu_[ID]").into_owned()
}

/// A transcript line (or any JSON) with what differs between runs replaced: ids and timestamps
/// by `"[<key>]"` (where not null), `durationMs` by `"[ms]"`, and `project` inside strings by
/// `[PROJECT]`.
/// Every uuid in `text` as `[uuid]`.
fn redact_uuids(text: &str) -> String {
    let re =
        regex::Regex::new(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}").unwrap();
    re.replace_all(text, "[uuid]").into_owned()
}

pub fn redact_json(v: &mut Value, project: &Path) {
    match v {
        Value::Object(map) => {
            for (k, val) in map.iter_mut() {
                match k.as_str() {
                    "uuid" | "parentUuid" | "sessionId" | "promptId" | "timestamp" => {
                        if !val.is_null() {
                            *val = json!(format!("[{k}]"));
                        }
                    }
                    "durationMs" => *val = json!("[ms]"),
                    "sourceToolAssistantUUID" => *val = json!(format!("[{k}]")),
                    // A firing's id (`toolUseID` of a non-tool event) is a fresh uuid.
                    "toolUseID" => {
                        if let Some(text) = val.as_str() {
                            *val = json!(redact_uuids(text));
                        }
                    }
                    _ => redact_json(val, project),
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|x| redact_json(x, project)),
        Value::String(s) => {
            *s = s.replace(&project.display().to_string(), "[PROJECT]");
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

/// A request's messages without the `cache_control` keys of their blocks: the Anthropic
/// provider's cache breakpoint moves to each request's last block, which is not part of what
/// the model was told.
pub fn without_cache_control(messages: &[serde_json::Value]) -> Vec<serde_json::Value> {
    let mut messages = messages.to_vec();
    for block in messages
        .iter_mut()
        .filter_map(|m| m["content"].as_array_mut())
        .flatten()
    {
        if let Some(block) = block.as_object_mut() {
            block.remove("cache_control");
        }
    }
    messages
}
