//! Files only the user may read: rein's home (`~/.rein` or `REIN_HOME`), transcripts, run logs,
//! spilled hook and Bash outputs, session env files, and the Bash tool's temporary files.
//!
//! Directories are created 0700 and files 0600 (whatever the umask), files are opened with
//! `O_NOFOLLOW` so a symlink planted where rein writes is refused rather than followed, and
//! temporary files live in one private directory per process whose name is random and which
//! is created with a plain `mkdir` (it fails if anything already has that name).

use std::fs::{DirBuilder, File, OpenOptions, Permissions};
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Creates `dir` and its missing parents 0700; an existing `dir` that others may read is
/// narrowed to 0700 when the user owns it.
pub fn create_dir_all(dir: &Path) -> io::Result<()> {
    DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
    narrow(dir, 0o700)
}

/// Makes `path` (owned by the user) no more open than `mode`.
fn narrow(path: &Path, mode: u32) -> io::Result<()> {
    let meta = std::fs::symlink_metadata(path)?;
    // SAFETY: geteuid has no preconditions and cannot fail.
    let euid = unsafe { libc::geteuid() };
    if std::os::unix::fs::MetadataExt::uid(&meta) == euid && meta.permissions().mode() & 0o077 != 0
    {
        std::fs::set_permissions(path, Permissions::from_mode(mode))?;
    }
    Ok(())
}

fn options() -> OpenOptions {
    let mut o = OpenOptions::new();
    o.mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC);
    o
}

/// Writes `bytes` to `path` (created 0600, its directory 0700), replacing what was there.
pub fn write(path: &Path, bytes: &[u8]) -> io::Result<()> {
    if let Some(dir) = path.parent() {
        create_dir_all(dir)?;
    }
    let mut f = options()
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)?;
    narrow(path, 0o600)?;
    f.write_all(bytes)
}

/// Opens `path` for appending (created 0600, its directory 0700).
pub fn open_append(path: &Path) -> io::Result<File> {
    if let Some(dir) = path.parent() {
        create_dir_all(dir)?;
    }
    let f = options().create(true).append(true).open(path)?;
    narrow(path, 0o600)?;
    Ok(f)
}

/// Creates `path`, which must not exist yet (`O_EXCL`), 0600.
pub fn create_new(path: &Path) -> io::Result<File> {
    options().write(true).create_new(true).open(path)
}

/// This process's private temporary directory: `$TMPDIR/rein-<uid>-<random>`, created 0700 on
/// first use with a name nobody could have guessed in advance.
static DIR: OnceLock<Result<PathBuf, String>> = OnceLock::new();

pub fn temp_dir() -> io::Result<&'static Path> {
    let made = DIR.get_or_init(|| {
        // SAFETY: geteuid has no preconditions and cannot fail.
        let uid = unsafe { libc::geteuid() };
        let mut last = String::new();
        for _ in 0..8 {
            let id = crate::id::uuid_v4();
            let dir = std::env::temp_dir().join(format!("rein-{uid}-{}", &id[..18]));
            // Not recursive: an existing entry (a planted dir or link) is an error.
            match DirBuilder::new().mode(0o700).create(&dir) {
                Ok(()) => return Ok(dir),
                Err(e) => last = format!("cannot create {}: {e}", dir.display()),
            }
        }
        Err(last)
    });
    match made {
        Ok(dir) => Ok(dir.as_path()),
        Err(e) => Err(io::Error::other(e.clone())),
    }
}

/// A fresh path in [`temp_dir`] named after `kind` (nothing is created).
pub fn temp_path(kind: &str) -> io::Result<PathBuf> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    Ok(temp_dir()?.join(format!("{kind}-{n}")))
}

/// Removes [`temp_dir`] if this process created it (at the end of a run).
pub fn remove_temp_dir() {
    if let Some(Ok(dir)) = DIR.get() {
        let _ = std::fs::remove_dir_all(dir);
    }
}
