//! Replacing a file's content so that, whatever happens, it is either wholly the old content or
//! wholly the new one — never torn.
//!
//! [`replace`] writes a temp file in the target's own directory (`O_EXCL`, never following a
//! planted link), gives it the target's owner (when permitted) and mode, writes and `fsync`s it,
//! renames it over the target and `fsync`s the directory. On any failure the temp file is
//! removed and the target is untouched; a full disk is reported as such.
//!
//! Choices where "atomic" is not the whole story:
//! - A symlinked target is written through: the link's final target is replaced, the link stays
//!   a link (the path rules see the resolved file too).
//! - A target rein may not write (mode `0444`, another owner) is refused as an in-place write
//!   would be, although a rename over it would succeed.
//! - A directory rein may not write in, holding a file it may write, gets an in-place write
//!   (there is nowhere to put a temp file); [`Replaced::InPlace`] says so.
//! - Other hard links to the target keep the old content, as with editors' safe writes.

use std::ffi::{CString, OsString};
use std::fs::{File, OpenOptions, Permissions};
use std::io::{self, Write};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Most symlinks followed from the path to the file it names (Linux's own limit).
const MAX_LINK_HOPS: usize = 40;
/// Bytes of the target's name kept in the temp file's name (names are at most 255 bytes).
const NAME_BYTES_IN_TEMP: usize = 100;

/// How the content got there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Replaced {
    /// Through a temp file renamed over the target.
    Atomically,
    /// Written in place, because the directory does not let rein create a temp file.
    InPlace,
}

/// Why the content could not be written; the target is as it was.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// `ENOSPC` while writing or syncing.
    #[error("disk full (no space left on device)")]
    DiskFull,
    /// `EDQUOT` while writing or syncing.
    #[error("disk quota exceeded")]
    QuotaExceeded,
    /// Any other failure, with the step it happened in.
    #[error("{step}: {source}")]
    Io {
        step: &'static str,
        source: io::Error,
    },
}

impl WriteError {
    fn at(step: &'static str) -> impl FnOnce(io::Error) -> WriteError {
        move |source| match source.raw_os_error() {
            Some(libc::ENOSPC) => WriteError::DiskFull,
            Some(libc::EDQUOT) => WriteError::QuotaExceeded,
            _ => WriteError::Io { step, source },
        }
    }
}

/// Replaces the content of `path` (created if missing; its directory must exist) with `bytes`.
pub fn replace(path: &Path, bytes: &[u8]) -> Result<Replaced, WriteError> {
    let target = resolve_links(path).map_err(WriteError::at("resolving links"))?;
    let existing = match std::fs::metadata(&target) {
        Ok(meta) => Some(meta),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(WriteError::at("reading the file's status")(e)),
    };
    if existing.is_some() {
        ensure_writable(&target).map_err(WriteError::at("opening the file"))?;
    }
    let dir = match target.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let (mut temp, temp_path) = match create_temp(&dir, &target, existing.is_some()) {
        Ok(created) => created,
        Err(e)
            if existing.is_some()
                && matches!(e.raw_os_error(), Some(libc::EACCES | libc::EPERM)) =>
        {
            return write_in_place(&target, bytes);
        }
        Err(e) => return Err(WriteError::at("creating a temporary file")(e)),
    };
    let written = fill(&mut temp, existing.as_ref(), bytes);
    drop(temp);
    let renamed = written
        .and_then(|()| std::fs::rename(&temp_path, &target).map_err(WriteError::at("renaming")));
    if let Err(e) = renamed {
        let _ = std::fs::remove_file(&temp_path);
        return Err(e);
    }
    // Why best effort: the rename has happened; a directory that cannot be synced (some file
    // systems refuse `fsync` on a directory) leaves the new name to the next sync.
    if let Ok(d) = File::open(&dir) {
        let _ = d.sync_all();
    }
    Ok(Replaced::Atomically)
}

/// The file `path` names after following symlinks (a dangling link names the file it would
/// create); directories on the way are left as they are.
pub fn resolve_links(path: &Path) -> io::Result<PathBuf> {
    let mut current = path.to_path_buf();
    for _ in 0..MAX_LINK_HOPS {
        match std::fs::symlink_metadata(&current) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let to = std::fs::read_link(&current)?;
                current = match current.parent() {
                    Some(parent) if to.is_relative() => parent.join(to),
                    _ => to,
                };
            }
            Ok(_) => return Ok(current),
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(current),
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::from_raw_os_error(libc::ELOOP))
}

/// Fails as an in-place write would when rein may not write the file.
fn ensure_writable(path: &Path) -> io::Result<()> {
    let c = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: access(2) with a valid NUL-terminated path.
    if unsafe { libc::access(c.as_ptr(), libc::W_OK) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Creates `.<name>.rein-<pid>-<n>.tmp` beside `target`, exclusively and without following a
/// link. A file that replaces an existing one starts private (0600) and gets its mode later;
/// a new file gets the usual `0666 & !umask`.
fn create_temp(dir: &Path, target: &Path, replacing: bool) -> io::Result<(File, PathBuf)> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let name = target.file_name().map(|n| n.as_bytes()).unwrap_or(b"file");
    let name = &name[..name.len().min(NAME_BYTES_IN_TEMP)];
    let mode = if replacing { 0o600 } else { 0o666 };
    let mut attempts = 0;
    loop {
        attempts += 1;
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let mut temp_name = b".".to_vec();
        temp_name.extend_from_slice(name);
        temp_name.extend_from_slice(format!(".rein-{}-{n}.tmp", std::process::id()).as_bytes());
        let temp_path = dir.join(OsString::from_vec(temp_name));
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&temp_path)
        {
            Ok(file) => return Ok((file, temp_path)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && attempts < 100 => continue,
            Err(e) => return Err(e),
        }
    }
}

/// Owner and mode of `existing` (owner only where permitted), then the bytes, then `fsync`.
fn fill(
    temp: &mut File,
    existing: Option<&std::fs::Metadata>,
    bytes: &[u8],
) -> Result<(), WriteError> {
    if let Some(meta) = existing {
        // Why chown first: chown clears set-user-ID and set-group-ID bits that chmod then sets.
        if let Err(e) = std::os::unix::fs::fchown(&*temp, Some(meta.uid()), Some(meta.gid()))
            && !matches!(e.raw_os_error(), Some(libc::EPERM | libc::EINVAL))
        {
            return Err(WriteError::at("setting the owner")(e));
        }
        temp.set_permissions(Permissions::from_mode(meta.mode() & 0o7777))
            .map_err(WriteError::at("setting the mode"))?;
    }
    temp.write_all(bytes).map_err(WriteError::at("writing"))?;
    temp.sync_all().map_err(WriteError::at("syncing"))
}

/// The fallback for a directory rein may not create files in: truncate and write the target.
fn write_in_place(target: &Path, bytes: &[u8]) -> Result<Replaced, WriteError> {
    let mut file = OpenOptions::new()
        .write(true)
        .truncate(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(target)
        .map_err(WriteError::at("opening the file"))?;
    file.write_all(bytes).map_err(WriteError::at("writing"))?;
    file.sync_all().map_err(WriteError::at("syncing"))?;
    Ok(Replaced::InPlace)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn replaces_content_keeps_the_mode_and_leaves_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.sh");
        std::fs::write(&path, "old").unwrap();
        std::fs::set_permissions(&path, Permissions::from_mode(0o751)).unwrap();
        assert_eq!(replace(&path, b"new").unwrap(), Replaced::Atomically);
        assert_eq!(std::fs::read(&path).unwrap(), b"new");
        let mode = std::fs::metadata(&path).unwrap().mode() & 0o7777;
        assert_eq!(mode, 0o751);
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().flatten().collect();
        assert_eq!(names.len(), 1);
    }

    #[test]
    fn a_symlink_is_written_through_and_stays_a_link() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("real")).unwrap();
        let real = dir.path().join("real/f.txt");
        std::fs::write(&real, "old").unwrap();
        let link = dir.path().join("link.txt");
        symlink("real/f.txt", &link).unwrap();
        replace(&link, b"new").unwrap();
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read(&real).unwrap(), b"new");
        // A dangling link creates the file it points at.
        let dangling = dir.path().join("dangling");
        symlink("real/new.txt", &dangling).unwrap();
        replace(&dangling, b"made").unwrap();
        assert_eq!(
            std::fs::read(dir.path().join("real/new.txt")).unwrap(),
            b"made"
        );
    }

    #[test]
    fn creates_missing_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("new.txt");
        replace(&path, b"hi").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"hi");
    }
}
