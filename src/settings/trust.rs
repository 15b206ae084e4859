//! Folder trust: a cloned repository is not trusted by being cloned.
//!
//! What a repository controls — `<project>/.claude/settings.json`, and
//! `.claude/settings.local.json` when git tracks it — may not raise permissions (allow rules,
//! `additionalDirectories`, a more permissive `defaultMode`, env vars that change what tools run)
//! until the user trusts the folder: `--trust` for one run, or a record written by
//! `rein hooks trust` in `<rein home>/trusted-projects.json`.
//!
//! A record holds a fingerprint per repository-controlled hook: a SHA-256 of its definition and
//! of the bytes of every script its command names, plus one of the escalating settings. A later
//! commit that changes a hook, a script or those settings no longer matches, and rein says which
//! hook changed. A store that cannot be read or parsed means "not trusted", with a message
//! naming the file.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

/// The trust store's file name under rein's home.
pub const STORE_FILE: &str = "trusted-projects.json";

/// One fingerprinted item of what the repository controls.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    /// What it is: `PreToolUse hook \`./hooks/guard.sh\``, `escalating settings`.
    pub label: String,
    /// SHA-256 (hex) of the definition and the bytes it runs.
    pub digest: String,
    /// The parts that digest covers, each with its own SHA-256: `definition`, and
    /// `script <path>` per script the command names. They say what changed.
    pub parts: Vec<(String, String)>,
}

/// The trust state of a project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TrustState {
    /// Trusted, and nothing changed since.
    Trusted,
    /// No record for this folder (or `--trust` not given).
    Untrusted,
    /// Trusted once, but these items changed or are new since.
    Changed(Vec<String>),
    /// The store could not be read: not trusted.
    Unreadable(String),
}

/// The repository-controlled settings files of a project: the project file, and the local file
/// when git tracks it.
pub fn repo_files(project_dir: &Path) -> Vec<PathBuf> {
    let project = project_dir.join(".claude/settings.json");
    let local = project_dir.join(".claude/settings.local.json");
    let mut out = vec![project];
    if local_is_tracked(project_dir) {
        out.push(local);
    }
    out
}

/// Whether `.claude/settings.local.json` exists and git tracks it (committed: the repository
/// controls it). No git, no repository, or git failing: not tracked.
pub fn local_is_tracked(project_dir: &Path) -> bool {
    let local = project_dir.join(".claude/settings.local.json");
    if !local.is_file() {
        return false;
    }
    std::process::Command::new("git")
        .args([
            "ls-files",
            "--error-unmatch",
            "--",
            ".claude/settings.local.json",
        ])
        .current_dir(project_dir)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// An item of what the repository runs: its definition's digest and that of every script its
/// command names.
fn fingerprint(label: String, definition: &Value, command: &str, project_dir: &Path) -> Item {
    let definition = serde_json::to_vec(definition).unwrap_or_default();
    let mut parts = vec![("definition".to_string(), sha256_hex(&definition))];
    let mut bytes = definition;
    for script in scripts_named(command, project_dir) {
        let content = std::fs::read(&script).unwrap_or_default();
        parts.push((format!("script {}", script.display()), sha256_hex(&content)));
        bytes.extend_from_slice(script.to_string_lossy().as_bytes());
        bytes.push(0);
        bytes.extend(content);
    }
    Item {
        label,
        digest: sha256_hex(&bytes),
        parts,
    }
}

/// The fingerprinted items of what the repository controls in `project_dir`.
pub fn items(project_dir: &Path) -> Vec<Item> {
    let mut out = Vec::new();
    let mut escalating = Vec::new();
    for file in repo_files(project_dir) {
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        let Ok(value) = serde_json::from_str::<Value>(&text) else {
            // An unparsable file applies nothing; its bytes still count.
            escalating.extend_from_slice(text.as_bytes());
            continue;
        };
        if let Some(hooks) = value.get("hooks").and_then(Value::as_object) {
            for (event, groups) in hooks {
                for group in groups.as_array().into_iter().flatten() {
                    let matcher = group.get("matcher").cloned().unwrap_or(Value::Null);
                    for handler in group
                        .get("hooks")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                    {
                        let command = handler
                            .get("command")
                            .or_else(|| handler.get("url"))
                            .or_else(|| handler.get("prompt"))
                            .and_then(Value::as_str)
                            .unwrap_or_default();
                        out.push(fingerprint(
                            format!("{event} hook `{command}`"),
                            &json!({"event": event, "matcher": matcher, "handler": handler}),
                            command,
                            project_dir,
                        ));
                    }
                }
            }
        }
        // The status line is a command the repository runs, as a hook is.
        if let Some(line) = value.get("statusLine") {
            let command = line
                .get("command")
                .and_then(Value::as_str)
                .unwrap_or_default();
            out.push(fingerprint(
                format!("statusLine command `{command}`"),
                &json!({"statusLine": line}),
                command,
                project_dir,
            ));
        }
        let esc = json!({
            "permissions": value.get("permissions"),
            "env": value.get("env"),
        });
        escalating.extend(serde_json::to_vec(&esc).unwrap_or_default());
        if let Some(dir) = value.get("transcriptDir") {
            escalating.extend(serde_json::to_vec(dir).unwrap_or_default());
        }
    }
    let digest = sha256_hex(&escalating);
    out.push(Item {
        label: "permission and env settings".to_string(),
        parts: vec![("definition".to_string(), digest.clone())],
        digest,
    });
    out
}

/// What the folder's settings files (the project file and the local file, tracked or not)
/// would do, one line each: hooks
/// (event and command), allow rules, directories, the mode, and every env var (those that
/// change what runs are marked). Empty when there is nothing to trust.
pub fn describe(project_dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    // Why the local file even when git does not track it: a folder that came as an archive
    // brings one too, and Claude Code asks before any of a folder's settings apply.
    let mut files = repo_files(project_dir);
    let local = project_dir.join(".claude/settings.local.json");
    if !files.contains(&local) {
        files.push(local);
    }
    for file in files {
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        let Ok(value) = serde_json::from_str::<Value>(&text) else {
            continue;
        };
        let rel = file
            .strip_prefix(project_dir)
            .unwrap_or(&file)
            .display()
            .to_string();
        if let Some(hooks) = value.get("hooks").and_then(Value::as_object) {
            for (event, groups) in hooks {
                for group in groups.as_array().into_iter().flatten() {
                    for h in group
                        .get("hooks")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                    {
                        let what = h
                            .get("command")
                            .or_else(|| h.get("url"))
                            .or_else(|| h.get("prompt"))
                            .and_then(Value::as_str)
                            .unwrap_or("?");
                        out.push(format!("{rel}: {event} hook runs `{what}`"));
                    }
                }
            }
        }
        if let Some(command) = value
            .get("statusLine")
            .and_then(|l| l.get("command"))
            .and_then(Value::as_str)
        {
            out.push(format!("{rel}: runs the status line command `{command}`"));
        }
        let perms = value.get("permissions");
        for rule in perms
            .and_then(|p| p.get("allow"))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            out.push(format!("{rel}: allows {rule}"));
        }
        for dir in perms
            .and_then(|p| p.get("additionalDirectories"))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            out.push(format!("{rel}: adds the directory {dir}"));
        }
        if let Some(dir) = value.get("transcriptDir").and_then(Value::as_str) {
            out.push(format!("{rel}: writes transcripts to {dir}"));
        }
        if let Some(mode) = perms
            .and_then(|p| p.get("defaultMode"))
            .and_then(Value::as_str)
        {
            out.push(format!("{rel}: sets defaultMode {mode}"));
        }
        for key in value
            .get("env")
            .and_then(Value::as_object)
            .into_iter()
            .flat_map(|m| m.keys())
        {
            if crate::permissions::bash::env_changes_what_runs(key) {
                out.push(format!(
                    "{rel}: sets {key} for every tool and hook (it changes what runs)"
                ));
            } else {
                out.push(format!("{rel}: sets {key} for every tool and hook"));
            }
        }
    }
    out
}

/// Files a hook command names: each word (after `$CLAUDE_PROJECT_DIR` is put in) that is an
/// existing file, relative words against the project dir.
fn scripts_named(command: &str, project_dir: &Path) -> Vec<PathBuf> {
    let dir = project_dir.to_string_lossy();
    let expanded = command
        .replace("${CLAUDE_PROJECT_DIR}", &dir)
        .replace("$CLAUDE_PROJECT_DIR", &dir);
    let mut out = Vec::new();
    for word in expanded.split_whitespace() {
        let word = word.trim_matches(|c| c == '"' || c == '\'' || c == ';');
        if word.is_empty() {
            continue;
        }
        let path = crate::permissions::path::normalize(Path::new(word), project_dir);
        if path.is_file() && !out.contains(&path) {
            out.push(path);
        }
    }
    out
}

/// The trust state of `project_dir` against the store in `rein_home`.
pub fn state(rein_home: &Path, project_dir: &Path) -> TrustState {
    let store_path = rein_home.join(STORE_FILE);
    let store = match read_store(&store_path) {
        Ok(s) => s,
        Err(e) => return TrustState::Unreadable(e),
    };
    let key = project_dir.to_string_lossy();
    let Some(record) = store.get(key.as_ref()).and_then(Value::as_object) else {
        return TrustState::Untrusted;
    };
    let trusted: Vec<Item> = record
        .get("items")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|i| {
            let parts = i
                .get("parts")
                .and_then(Value::as_object)
                .into_iter()
                .flatten()
                .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                .collect();
            Some(Item {
                label: i.get("label")?.as_str()?.to_string(),
                digest: i.get("digest")?.as_str()?.to_string(),
                parts,
            })
        })
        .collect();
    let now = items(project_dir);
    let changed: Vec<String> = now
        .iter()
        .filter(|i| !trusted.iter().any(|t| t.digest == i.digest))
        .map(|i| {
            let Some(before) = trusted.iter().find(|t| t.label == i.label) else {
                return format!("{} (new)", i.label);
            };
            let what: Vec<&str> = i
                .parts
                .iter()
                .filter(|(k, d)| !before.parts.iter().any(|(bk, bd)| bk == k && bd == d))
                .map(|(k, _)| k.as_str())
                .collect();
            if what.is_empty() {
                i.label.clone()
            } else {
                format!("{} ({} changed)", i.label, what.join(", "))
            }
        })
        .collect();
    let removed = trusted
        .iter()
        .filter(|t| !now.iter().any(|i| i.digest == t.digest))
        .count();
    if changed.is_empty() && removed == 0 {
        TrustState::Trusted
    } else if changed.is_empty() {
        TrustState::Changed(vec![format!("{removed} trusted hook(s) removed")])
    } else {
        TrustState::Changed(changed)
    }
}

fn read_store(path: &Path) -> Result<Map<String, Value>, String> {
    match std::fs::read_to_string(path) {
        Ok(text) => match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(mut m)) => match m.remove("projects") {
                Some(Value::Object(p)) => Ok(p),
                None => Ok(Map::new()),
                Some(_) => Err(format!(
                    "{}: \"projects\" is not an object; no folder is trusted",
                    path.display()
                )),
            },
            Ok(_) => Err(format!(
                "{}: not a JSON object; no folder is trusted",
                path.display()
            )),
            Err(e) => Err(format!(
                "{}: line {}, column {}: {e}; no folder is trusted",
                path.display(),
                e.line(),
                e.column()
            )),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Map::new()),
        Err(e) => Err(format!(
            "{}: cannot read: {e}; no folder is trusted",
            path.display()
        )),
    }
}

/// Records `project_dir` as trusted with what its repository controls now. A store that cannot
/// be read is an error (it is not overwritten).
pub fn trust(rein_home: &Path, project_dir: &Path) -> Result<Vec<Item>, String> {
    let path = rein_home.join(STORE_FILE);
    let mut store = read_store(&path)?;
    let now = items(project_dir);
    store.insert(
        project_dir.to_string_lossy().into_owned(),
        json!({
            "items": now.iter().map(|i| json!({
                "label": i.label,
                "digest": i.digest,
                "parts": i.parts.iter().map(|(k, d)| (k.clone(), Value::String(d.clone()))).collect::<Map<String, Value>>(),
            })).collect::<Vec<_>>(),
        }),
    );
    let text =
        serde_json::to_string_pretty(&json!({ "projects": store })).map_err(|e| e.to_string())?;
    crate::private_fs::write(&path, text.as_bytes())
        .map_err(|e| format!("{}: cannot write: {e}", path.display()))?;
    Ok(now)
}

/// Removes the trust record of `project_dir`; whether there was one. A store that cannot be
/// read is an error (it is not overwritten).
pub fn revoke(rein_home: &Path, project_dir: &Path) -> Result<bool, String> {
    let path = rein_home.join(STORE_FILE);
    let mut store = read_store(&path)?;
    if store
        .remove(project_dir.to_string_lossy().as_ref())
        .is_none()
    {
        return Ok(false);
    }
    let text =
        serde_json::to_string_pretty(&json!({ "projects": store })).map_err(|e| e.to_string())?;
    crate::private_fs::write(&path, text.as_bytes())
        .map_err(|e| format!("{}: cannot write: {e}", path.display()))?;
    Ok(true)
}

/// SHA-256 of `data`, lower-case hex (FIPS 180-4; small and dependency-free, checked against
/// the standard test vectors in the unit tests).
pub fn sha256_hex(data: &[u8]) -> String {
    const K: [u32; 64] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
        0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
        0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
        0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
        0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
        0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
        0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
        0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
        0xc67178f2,
    ];
    let mut h: [u32; 8] = [
        0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab,
        0x5be0cd19,
    ];
    let mut msg = data.to_vec();
    let bit_len = (data.len() as u64).wrapping_mul(8);
    msg.push(0x80);
    while msg.len() % 64 != 56 {
        msg.push(0);
    }
    msg.extend_from_slice(&bit_len.to_be_bytes());
    for block in msg.chunks_exact(64) {
        let mut w = [0u32; 64];
        for (i, word) in block.chunks_exact(4).enumerate() {
            w[i] = u32::from_be_bytes([word[0], word[1], word[2], word[3]]);
        }
        for i in 16..64 {
            let s0 = w[i - 15].rotate_right(7) ^ w[i - 15].rotate_right(18) ^ (w[i - 15] >> 3);
            let s1 = w[i - 2].rotate_right(17) ^ w[i - 2].rotate_right(19) ^ (w[i - 2] >> 10);
            w[i] = w[i - 16]
                .wrapping_add(s0)
                .wrapping_add(w[i - 7])
                .wrapping_add(s1);
        }
        let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut hh] = h;
        for i in 0..64 {
            let s1 = e.rotate_right(6) ^ e.rotate_right(11) ^ e.rotate_right(25);
            let ch = (e & f) ^ (!e & g);
            let t1 = hh
                .wrapping_add(s1)
                .wrapping_add(ch)
                .wrapping_add(K[i])
                .wrapping_add(w[i]);
            let s0 = a.rotate_right(2) ^ a.rotate_right(13) ^ a.rotate_right(22);
            let maj = (a & b) ^ (a & c) ^ (b & c);
            let t2 = s0.wrapping_add(maj);
            hh = g;
            g = f;
            f = e;
            e = d.wrapping_add(t1);
            d = c;
            c = b;
            b = a;
            a = t1.wrapping_add(t2);
        }
        for (x, v) in h.iter_mut().zip([a, b, c, d, e, f, g, hh]) {
            *x = x.wrapping_add(v);
        }
    }
    h.iter().map(|x| format!("{x:08x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::sha256_hex;

    #[test]
    fn sha256_standard_vectors() {
        assert_eq!(
            sha256_hex(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(
            sha256_hex(b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        );
        let million = vec![b'a'; 1_000_000];
        assert_eq!(
            sha256_hex(&million),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"
        );
    }
}
