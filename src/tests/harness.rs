//! The filesystem half of the test harness: a temp dir holding a project and an isolated home
//! ([`Sandbox`]), files and executable scripts. Nothing here runs the built binary (unit tests
//! have none), so `tests/it/harness.rs` includes this file and adds that half.

use std::path::{Path, PathBuf};

/// A fresh temp dir (removed on drop) holding the project `<root>/<name>` and the home
/// `<root>/home`. Paths are canonical, so they agree with what `pwd -P` and rein report.
pub struct Sandbox {
    _tmp: tempfile::TempDir,
    pub root: PathBuf,
    pub project: PathBuf,
    pub home: PathBuf,
}

impl Sandbox {
    /// Creates the project `<root>/<project>`, the home `<root>/home`, and `dirs` (relative to
    /// the root, e.g. `"proj/.claude"`).
    pub fn new(project: &str, dirs: &[&str]) -> Sandbox {
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = std::fs::canonicalize(tmp.path()).expect("canonicalize tempdir");
        for dir in [project, "home"].iter().chain(dirs) {
            std::fs::create_dir_all(root.join(dir)).expect("mkdir");
        }
        Sandbox {
            project: root.join(project),
            home: root.join("home"),
            root,
            _tmp: tmp,
        }
    }
}

/// Writes `path`, creating its parent dirs.
pub fn write(path: &Path, text: &str) {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).expect("mkdir");
    }
    std::fs::write(path, text).expect("write");
}

/// Writes `path` with `text` and mode 0755, creating its parent dirs.
pub fn write_executable(path: &Path, text: impl AsRef<[u8]>) {
    use std::os::unix::fs::PermissionsExt;
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).expect("mkdir");
    }
    std::fs::write(path, text).expect("write script");
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// The text of a `/bin/sh` script running `body`.
pub fn sh_script(body: &str) -> String {
    format!("#!/bin/sh\n{body}\n")
}
