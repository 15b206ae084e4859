//! Which files Read, Write and Edit refuse before opening them: devices, pipes, sockets, and the
//! `/proc` and `/dev` names Claude Code 2.1.328 never reads (its "device guard").
//!
//! Two checks, both made before any `open`:
//! - **By name** ([`classify`]): the list Claude Code keeps — `/dev/zero`, `/dev/random`,
//!   terminals, `/proc/<pid>/mem`, `environ`, `maps`, another process's `fd/<n>`, … — after
//!   resolving `..`, `/proc/self/cwd`, `/proc/<pid>/root` and `/proc/<pid>/task/<tid>` the way
//!   it does. A path that goes *through* a `/proc` or `/dev` link (`/proc/<pid>/fd/3/x`,
//!   `/dev/stdin/x`, `..` out of `/proc/<pid>/…`) is refused as a link this tool does not follow.
//!   Each of the path as given and its resolved form is checked, so a symlink to `/dev/zero` is
//!   refused too.
//! - **By kind** ([`SpecialKind::of`]): a FIFO, socket, character or block device anywhere.
//!
//! Why both: a FIFO opened for reading blocks until a writer comes, and `/dev/zero` or
//! `/proc/kmsg` never end; either would hang the call or fill memory. The name check catches
//! files whose kind looks harmless (`/proc/self/environ` is a "regular" empty file).

use std::fs::Metadata;
use std::os::unix::fs::FileTypeExt;
use std::path::{Component, Path, PathBuf};

/// How many `/proc/<pid>/root` or `task/<tid>` hops are unwrapped before a path counts as a
/// link this tool does not follow (Claude Code's bound).
const MAX_UNWRAPS: usize = 8;

/// Device and process files Claude Code 2.1.328 refuses by their exact name.
const NAMED_FILES: &[&str] = &[
    "/dev/zero",
    "/dev/random",
    "/dev/urandom",
    "/dev/full",
    "/dev/hwrng",
    "/dev/stdin",
    "/dev/tty",
    "/dev/console",
    "/proc/kmsg",
    "/dev/kmsg",
    "/proc/kcore",
    "/proc/vmcore",
    "/dev/core",
    "/dev/mem",
    "/dev/kmem",
    "/dev/port",
    "/dev/stdout",
    "/dev/stderr",
    "/dev/fd/0",
    "/dev/fd/1",
    "/dev/fd/2",
];

/// Files of any `/proc/<pid>/` that Claude Code 2.1.328 refuses.
const PROCESS_FILES: &[&str] = &[
    "environ",
    "cmdline",
    "auxv",
    "maps",
    "smaps",
    "smaps_rollup",
    "numa_maps",
    "pagemap",
    "mem",
    "stat",
    "statm",
    "status",
    "syscall",
    "stack",
];

/// What a path names, when the tools refuse it by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameClass {
    /// A device or process file (`/dev/zero`, `/proc/self/mem`, a terminal, …).
    DeviceOrProcessFile,
    /// A path through a `/proc` or `/dev` link that the tools do not follow.
    ThroughLink,
}

/// A kind of file that is not a regular file or a directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpecialKind {
    Fifo,
    Socket,
    CharDevice,
    BlockDevice,
}

impl SpecialKind {
    /// The special kind of the file `meta` describes (`None` for files, directories, links).
    pub fn of(meta: &Metadata) -> Option<SpecialKind> {
        let kind = meta.file_type();
        if kind.is_fifo() {
            Some(SpecialKind::Fifo)
        } else if kind.is_socket() {
            Some(SpecialKind::Socket)
        } else if kind.is_char_device() {
            Some(SpecialKind::CharDevice)
        } else if kind.is_block_device() {
            Some(SpecialKind::BlockDevice)
        } else {
            None
        }
    }
}

/// Claude Code's text for a path Read refuses by name or kind.
///
/// Why the device text for a FIFO too: Claude Code 2.1.328 has no Read text of its own for a
/// pipe (it streams one from a non-blocking open); rein refuses it, and this is the text Claude
/// Code gives the model for files the Read tool does not read.
pub fn cannot_read(path: &str, class: NameClass) -> String {
    match class {
        NameClass::DeviceOrProcessFile => format!(
            "Cannot read '{path}': this path names a device or process file that this tool does \
             not read."
        ),
        NameClass::ThroughLink => format!(
            "Cannot read '{path}': it is or leads to a path through a /proc or /dev link that \
             this tool does not follow; give the file's own path."
        ),
    }
}

/// Claude Code's text when Write or Edit (`tool`) meets a FIFO, socket or device.
pub fn not_regular(path: &str, tool: &str) -> String {
    let what = if tool == "Write" {
        "Write only creates or overwrites regular files."
    } else {
        "Edit only changes regular files."
    };
    format!("{path} exists but is not a regular file (a device, FIFO or socket). {what}")
}

/// Checks `path` (absolute, as the model gave it once made absolute) and its resolved form
/// against the name list; the refusal text when either is refused.
pub fn refuse_by_name(path: &str) -> Option<String> {
    let given = Path::new(path);
    let resolved = std::fs::canonicalize(given).ok();
    let classes = [Some(given), resolved.as_deref()].map(|p| p.and_then(classify));
    let class = if classes.contains(&Some(NameClass::DeviceOrProcessFile)) {
        NameClass::DeviceOrProcessFile
    } else if classes.contains(&Some(NameClass::ThroughLink)) {
        NameClass::ThroughLink
    } else {
        return None;
    };
    Some(cannot_read(path, class))
}

/// Whether an absolute `path` names a device or process file, or goes through a `/proc` or
/// `/dev` link, by the rules of Claude Code 2.1.328's list.
pub fn classify(path: &Path) -> Option<NameClass> {
    let text = path.to_str()?;
    // Why this first: every path that resolves into /proc or /dev spells one of them, and the
    // walk of a Grep asks this of every file.
    if !text.starts_with('/') || !(text.contains("/proc") || text.contains("/dev")) {
        return None;
    }
    if climbs_out_of_proc_or_dev(text) {
        return Some(NameClass::ThroughLink);
    }
    let own_pid = std::process::id().to_string();
    let mut current = normalize(text);
    for round in 0.. {
        if let Some(rest) = own_cwd_rest(&current, &own_pid)
            && let Ok(cwd) = std::env::current_dir()
        {
            current = normalize(&format!("{}{rest}", cwd.display()));
        }
        let segs: Vec<&str> = current[1..].split('/').collect();
        if !matches!(segs[0], "proc" | "dev") {
            return None;
        }
        if goes_through_link(&segs) {
            return Some(NameClass::ThroughLink);
        }
        if names_device_or_process_file(&current, &segs, &own_pid) {
            return Some(NameClass::DeviceOrProcessFile);
        }
        let unwrapped = unwrap_proc_hops(&segs)?;
        if round >= MAX_UNWRAPS {
            return Some(NameClass::ThroughLink);
        }
        current = unwrapped;
    }
    None
}

/// A `..` that climbs out of a `/proc/<x>/…` or `/dev/<x>/…` path (not `/dev/shm`): what it
/// lands on depends on a link the tools do not follow.
fn climbs_out_of_proc_or_dev(path: &str) -> bool {
    if !path.contains("/..") {
        return false;
    }
    let mut stack: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            ".." => {
                if let [first, second, ..] = stack.as_slice()
                    && (*first == "proc" || (*first == "dev" && *second != "shm"))
                {
                    return true;
                }
                stack.pop();
            }
            "" | "." => {}
            part => stack.push(part),
        }
    }
    false
}

/// `path` with `.`, `..` and repeated slashes resolved lexically; a trailing slash is kept.
fn normalize(path: &str) -> String {
    let mut out = PathBuf::from("/");
    for component in Path::new(path).components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(part) => out.push(part),
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    let mut text = out.to_string_lossy().into_owned();
    if path.ends_with('/') && !text.ends_with('/') {
        text.push('/');
    }
    text
}

/// For `/proc/self/cwd/<rest>` (or rein's own pid), `/<rest>`: the path inside rein's cwd.
fn own_cwd_rest<'a>(path: &'a str, own_pid: &str) -> Option<&'a str> {
    let rest = path.strip_prefix("/proc/")?;
    let (pid, rest) = rest.split_once('/')?;
    if pid != "self" && pid != own_pid {
        return None;
    }
    let rest = rest.strip_prefix("cwd")?;
    rest.starts_with('/').then_some(rest)
}

fn is_number(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// `/proc/<x>/cwd/…`, `/proc/<x>/fd/<n>/…`, `/dev/fd/<n>/…`, `/dev/stdin/…` (and stdout, stderr).
fn goes_through_link(segs: &[&str]) -> bool {
    match segs {
        ["proc", pid, "cwd", _, ..] => !pid.is_empty(),
        ["proc", pid, "fd", n, _, ..] => !pid.is_empty() && is_number(n),
        ["dev", "fd", n, _, ..] => is_number(n),
        ["dev", "stdin" | "stdout" | "stderr", _, ..] => true,
        _ => false,
    }
}

fn names_device_or_process_file(path: &str, segs: &[&str], own_pid: &str) -> bool {
    if NAMED_FILES.contains(&path) {
        return true;
    }
    match segs {
        ["dev", "pts", n] => is_number(n) || *n == "ptmx",
        ["dev", "ptmx"] => true,
        ["dev", tty] => tty.starts_with("tty"),
        ["proc", pid, "map_files", ..] => !pid.is_empty(),
        ["proc", pid, "fd", n] if is_number(n) => {
            *pid != "self" && *pid != own_pid || matches!(*n, "0" | "1" | "2")
        }
        ["proc", pid, file] => !pid.is_empty() && PROCESS_FILES.contains(file),
        _ => {
            path.starts_with("/proc/")
                && ["/fd/0", "/fd/1", "/fd/2"]
                    .iter()
                    .any(|s| path.ends_with(s))
        }
    }
}

/// `/proc/<x>/root/<rest>` → `/<rest>`; `/proc/<x>/task/<t>/<rest>` → `/proc/<x>/<rest>`;
/// `None` when neither applies.
fn unwrap_proc_hops(segs: &[&str]) -> Option<String> {
    match segs {
        ["proc", pid, "root", rest @ ..] if !pid.is_empty() && !rest.is_empty() => {
            Some(format!("/{}", rest.join("/")))
        }
        ["proc", pid, "task", tid, rest @ ..]
            if !pid.is_empty() && !tid.is_empty() && !rest.is_empty() =>
        {
            Some(format!("/proc/{pid}/{}", rest.join("/")))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(p: &str) -> Option<NameClass> {
        classify(Path::new(p))
    }

    #[test]
    fn claude_codes_named_devices_and_process_files_are_refused() {
        use NameClass::*;
        for p in [
            "/dev/zero",
            "/dev/urandom",
            "/dev/stdin",
            "/dev/fd/0",
            "/proc/kmsg",
            "/dev/tty",
            "/dev/ttyS0",
            "/dev/pts/3",
            "/dev/ptmx",
            "/proc/self/environ",
            "/proc/1/mem",
            "/proc/1/maps",
            "/proc/1/status",
            "/proc/1/map_files/x",
            "/proc/1/fd/7",
            "/proc/self/fd/1",
            "/proc/1/task/1/status",
            "/proc/1/root/dev/zero",
            "/dev/./zero",
            "//dev//zero",
        ] {
            assert_eq!(class(p), Some(DeviceOrProcessFile), "{p}");
        }
        for p in [
            "/proc/1/cwd/x",
            "/proc/self/fd/3/x",
            "/dev/fd/3/x",
            "/dev/stdin/x",
            "/proc/1/../etc/passwd",
            "/dev/disk/../zero",
        ] {
            assert_eq!(class(p), Some(ThroughLink), "{p}");
        }
    }

    #[test]
    fn ordinary_paths_and_harmless_proc_files_pass() {
        for p in [
            "/tmp/zero",
            "/home/u/dev/zero",
            "/dev/null",
            "/dev/shm/x",
            "/dev/shm/a/../b",
            "/proc/cpuinfo",
            "/proc/version",
            "/proc/self/fd/3",
            "/proc/1/comm",
            "/proc/1/task/2/comm",
        ] {
            assert_eq!(class(p), None, "{p}");
        }
    }

    #[test]
    fn own_cwd_through_proc_is_the_file_in_the_cwd() {
        // `/proc/self/cwd/<f>` is rein's cwd joined with <f>: an ordinary file.
        assert_eq!(class("/proc/self/cwd/README.md"), None);
    }
}
