//! Where settings files are (spec §1.1): the candidate list in Claude Code's precedence order,
//! and reading one candidate without ever hanging or panicking.

use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::settings::LoadOptions;
use crate::settings::schema::SourceKind;

/// Files larger than this are refused (a settings file is a few KiB; this guards against
/// pointing `--settings` at something huge).
const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// One place settings may come from.
#[derive(Debug, Clone)]
pub struct Candidate {
    pub source: SourceKind,
    pub origin: Origin,
    /// Whether absence is worth a diagnostic (an explicit `--settings FILE`).
    pub required: bool,
}

#[derive(Debug, Clone)]
pub enum Origin {
    File(PathBuf),
    /// Inline JSON from `--settings`, with the label used in diagnostics.
    Inline {
        label: String,
        text: String,
    },
}

impl Candidate {
    /// The name used in diagnostics and `Location::file`.
    pub fn label(&self) -> String {
        match &self.origin {
            Origin::File(p) => p.display().to_string(),
            Origin::Inline { label, .. } => label.clone(),
        }
    }

    /// The path recorded in [`crate::settings::schema::LoadedFile`].
    pub fn path(&self) -> PathBuf {
        match &self.origin {
            Origin::File(p) => p.clone(),
            Origin::Inline { label, .. } => PathBuf::from(label),
        }
    }
}

/// The outcome of reading a candidate.
#[derive(Debug)]
pub enum ReadOutcome {
    Absent,
    /// Raw bytes (decoding and BOM handling belong to the parser, which reports positions).
    Bytes(Vec<u8>),
    /// Could not be read; the message names the problem.
    Failed(String),
}

/// Every candidate, lowest precedence first: user → project → local → flag → policy.
pub fn candidates(opts: &LoadOptions) -> Vec<Candidate> {
    let wanted = |kind: SourceKind| {
        opts.setting_sources
            .as_ref()
            .is_none_or(|list| list.contains(&kind))
    };
    let file = |source, path: PathBuf| Candidate {
        source,
        origin: Origin::File(path),
        required: false,
    };
    let mut out = Vec::new();
    let user_dir = match &opts.config_dir {
        Some(dir) => dir.clone(),
        None => opts.home.join(".claude"),
    };
    let user = user_dir.join("settings.json");
    if wanted(SourceKind::User) {
        out.push(file(SourceKind::User, user.clone()));
    }
    if wanted(SourceKind::Project) {
        let project = opts.project_dir.join(".claude").join("settings.json");
        // Started in the home directory, the project file *is* the user file: read it once.
        if !same_file(&project, &user) || !wanted(SourceKind::User) {
            out.push(file(SourceKind::Project, project));
        }
    }
    if wanted(SourceKind::Local) {
        let root = local_root(&opts.cwd);
        out.push(file(
            SourceKind::Local,
            root.join(".claude").join("settings.local.json"),
        ));
        if !same_dir(&root, &opts.cwd) {
            // The legacy per-cwd copy is read after the canonical one, so the nearer file
            // wins a scalar conflict (rein's rule; Claude Code does not document one).
            out.push(file(
                SourceKind::Local,
                opts.cwd.join(".claude").join("settings.local.json"),
            ));
        }
    }
    let inline_count = opts
        .flag_settings
        .iter()
        .filter(|v| v.trim_start().starts_with('{'))
        .count();
    for (i, value) in opts.flag_settings.iter().enumerate() {
        let trimmed = value.trim();
        let origin = if trimmed.starts_with('{') {
            let label = if inline_count == 1 {
                "<--settings>".to_string()
            } else {
                format!("<--settings #{}>", i + 1)
            };
            Origin::Inline {
                label,
                text: value.clone(),
            }
        } else {
            Origin::File(opts.cwd.join(trimmed))
        };
        out.push(Candidate {
            source: SourceKind::Flag,
            origin,
            required: true,
        });
    }
    out.push(file(
        SourceKind::Policy,
        opts.managed_dir.join("managed-settings.json"),
    ));
    for path in managed_dropins(&opts.managed_dir.join("managed-settings.d")) {
        out.push(file(SourceKind::Policy, path));
    }
    out
}

/// `managed-settings.d/*.json` in byte-wise alphabetical order; hidden files are skipped.
fn managed_dropins(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut names: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.ends_with(".json") && !n.starts_with('.'))
        })
        .collect();
    names.sort();
    names
}

/// The git root when the repository, its `.git` and its `.claude` belong to us; else `cwd`
/// (spec §1.1 row 3).
fn local_root(cwd: &Path) -> PathBuf {
    let Some(root) = cwd
        .ancestors()
        .find(|dir| std::fs::symlink_metadata(dir.join(".git")).is_ok())
    else {
        return cwd.to_path_buf();
    };
    // SAFETY: geteuid has no preconditions and cannot fail.
    let uid = unsafe { libc::geteuid() };
    let owned = |p: &Path, must_exist: bool| match std::fs::symlink_metadata(p) {
        Ok(meta) => meta.uid() == uid,
        Err(_) => !must_exist,
    };
    if owned(root, true) && owned(&root.join(".git"), true) && owned(&root.join(".claude"), false) {
        root.to_path_buf()
    } else {
        cwd.to_path_buf()
    }
}

fn same_dir(a: &Path, b: &Path) -> bool {
    a == b
        || matches!(
            (std::fs::canonicalize(a), std::fs::canonicalize(b)),
            (Ok(x), Ok(y)) if x == y
        )
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
        _ => a == b,
    }
}

/// Reads a candidate. Never blocks on a FIFO (only regular files are opened) and turns every
/// I/O problem — permissions, symlink loops, directories — into [`ReadOutcome::Failed`].
pub fn read(candidate: &Candidate) -> ReadOutcome {
    let path = match &candidate.origin {
        Origin::Inline { text, .. } => return ReadOutcome::Bytes(text.clone().into_bytes()),
        Origin::File(p) => p,
    };
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            // A dangling symlink is worth mentioning; a missing file is normal.
            return match std::fs::symlink_metadata(path) {
                Ok(_) => ReadOutcome::Failed(match std::fs::read_link(path) {
                    Ok(target) => {
                        format!("cannot read: dangling symlink to {}", target.display())
                    }
                    Err(_) => format!("cannot read: {e} (dangling symlink)"),
                }),
                Err(_) if candidate.required => ReadOutcome::Failed(
                    "settings file given with --settings does not exist".to_string(),
                ),
                Err(_) => ReadOutcome::Absent,
            };
        }
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            return ReadOutcome::Failed(format!("cannot read: a symlink loop ({e})"));
        }
        Err(e) => return ReadOutcome::Failed(format!("cannot read: {e}")),
    };
    if !meta.is_file() {
        return ReadOutcome::Failed(format!(
            "cannot read: not a regular file ({})",
            file_kind(&meta.file_type())
        ));
    }
    if meta.len() > MAX_FILE_BYTES {
        return ReadOutcome::Failed(format!(
            "cannot read: file is {} bytes, more than the {MAX_FILE_BYTES} rein accepts",
            meta.len()
        ));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    match std::fs::File::open(path).and_then(|f| f.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes))
    {
        Ok(_) => ReadOutcome::Bytes(bytes),
        Err(e) => ReadOutcome::Failed(format!("cannot read: {e}")),
    }
}

/// What a non-regular file is, for the "not a regular file" diagnostic.
fn file_kind(t: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a named pipe"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_block_device() || t.is_char_device() {
        "a device"
    } else {
        "an unknown kind of file"
    }
}
