//! The wrappers table: commands that run their arguments as a command (`sudo`, `env`,
//! `timeout`, `nice`, `xargs`, `watch`, …), and how many of their own options to skip to find
//! the command they run.

use super::*;

/// Commands that run their arguments as another command, with options rein does not model:
/// every suffix of their arguments is also a view deny/ask rules are matched against.
pub(super) const RUNS_ARGS: &[&str] = &[
    "flock",
    "chrt",
    "taskset",
    "unshare",
    "strace",
    "ltrace",
    "setpriv",
    "nsenter",
    "firejail",
    "bwrap",
    "cgexec",
    "runuser",
    "pkexec",
    "numactl",
    "prlimit",
    "systemd-run",
    "catchsegv",
    "valgrind",
    "busybox",
    "toybox",
    "torsocks",
    "proxychains",
    "proxychains4",
    "faketime",
    "fakeroot",
    "sg",
    "dbus-run-session",
    "xvfb-run",
    "caffeinate",
    "coproc",
    "setarch",
    "linux32",
    "linux64",
    "schedtool",
    "cpulimit",
    "unbuffer",
    "rlwrap",
    "daemonize",
    "start-stop-daemon",
    "parallel",
    "sem",
    "script",
    "ssh-agent",
    "dotenv",
    "with-contenv",
    "env",
    "nohup",
    "nice",
    "timeout",
    "stdbuf",
    "ionice",
    "time",
    "command",
    "builtin",
    "exec",
    "xargs",
    "sudo",
    "doas",
    "chroot",
    "setsid",
    "watch",
    "su",
];

/// The variable a wrapper's argument assigns before the command, if it is one. `env` takes
/// every word with a `=` as an assignment, whatever its name (`BASH_FUNC_ls%%=…`, which every
/// bash started under it runs as the function `ls`); the shell only takes identifiers.
pub(super) fn wrapper_assignment<'w>(wrapper: &str, w: &'w Word) -> Option<&'w str> {
    if wrapper == "env" {
        w.text
            .split_once('=')
            .map(|(name, _)| name)
            .filter(|n| !n.is_empty())
    } else {
        assignment_name(&w.raw)
    }
}

/// Commands in [`RUNS_ARGS`] that [`strip_wrapper`] and the named cases do not model.
pub(super) fn is_generic_wrapper(name: &str) -> bool {
    RUNS_ARGS.contains(&name)
        && strip_wrapper_options(name).is_none()
        && !matches!(name, "watch" | "su")
}

/// `watch` options; returns the command words and whether `-x` (exec form) was given.
pub(super) fn skip_watch_options(args: &[Word]) -> (&[Word], bool) {
    let mut i = 0;
    let mut exec_form = false;
    while let Some(w) = args.get(i) {
        let t = w.text.as_str();
        if t == "--" {
            i += 1;
            break;
        }
        if !t.starts_with('-') || t == "-" {
            break;
        }
        if t == "-x" || t == "--exec" {
            exec_form = true;
        }
        let takes_arg = matches!(t, "-n" | "--interval" | "-q" | "--equexit");
        i += if takes_arg { 2 } else { 1 };
    }
    (args.get(i..).unwrap_or(&[]), exec_form)
}

/// For a known wrapper, the words of the wrapped command and whether the wrapper keeps the
/// caller's privileges (only then may allow rules see through it). `None`: not a wrapper, or a
/// wrapper form that runs no command (`ionice -p PID`, `command -v x`).
pub(super) fn strip_wrapper<'a>(name: &str, args: &'a [Word]) -> Option<(&'a [Word], bool)> {
    let (with_value, safe) = strip_wrapper_options(name)?;
    strip_wrapper_args(name, args, with_value, safe)
}

/// For a wrapper [`strip_wrapper`] models: its options taking a separate value, and whether it
/// keeps the caller's privileges.
pub(super) fn strip_wrapper_options(name: &str) -> Option<(&'static [&'static str], bool)> {
    // Options taking a separate value, per wrapper.
    let (with_value, safe): (&'static [&'static str], bool) = match name {
        "timeout" => (&["-s", "--signal", "-k", "--kill-after"], true),
        "nice" => (&["-n", "--adjustment"], true),
        "nohup" | "setsid" | "builtin" => (&[], true),
        "time" => (&["-f", "--format", "-o", "--output"], true),
        "stdbuf" => (&["-i", "-o", "-e"], true),
        "ionice" => (&["-c", "--class", "-n", "--classdata"], true),
        "env" => (&["-u", "--unset", "-C", "--chdir"], true),
        "command" => (&[], true),
        "exec" => (&["-a"], true),
        "xargs" => (
            &[
                "-a",
                "-d",
                "-E",
                "-I",
                "-L",
                "-n",
                "-P",
                "-s",
                "--arg-file",
                "--delimiter",
                "--max-args",
                "--max-procs",
                "--max-lines",
                "--max-chars",
            ],
            true,
        ),
        "sudo" => (
            &[
                "-u",
                "--user",
                "-g",
                "--group",
                "-C",
                "-D",
                "--chdir",
                "-h",
                "--host",
                "-p",
                "--prompt",
                "-r",
                "--role",
                "-t",
                "--type",
                "-U",
                "--other-user",
                "-T",
                "--command-timeout",
            ],
            false,
        ),
        "doas" => (&["-u", "-C"], false),
        "chroot" => (&["--userspec", "--groups"], false),
        _ => return None,
    };
    Some((with_value, safe))
}

pub(super) fn strip_wrapper_args<'a>(
    name: &str,
    args: &'a [Word],
    with_value: &[&str],
    safe: bool,
) -> Option<(&'a [Word], bool)> {
    let mut i = 0;
    while let Some(w) = args.get(i) {
        let t = w.text.as_str();
        if t == "--" {
            i += 1;
            break;
        }
        if !t.starts_with('-') || t == "-" {
            break;
        }
        if (name == "ionice" && (t == "-p" || t == "-P" || t == "-u"))
            || (name == "command" && (t == "-v" || t == "-V"))
        {
            return None;
        }
        i += if with_value.contains(&t) { 2 } else { 1 };
    }
    match name {
        // The duration (timeout) or the new root (chroot) comes before the command.
        "timeout" | "chroot" => i += 1,
        _ => {}
    }
    args.get(i..).map(|inner| (inner, safe))
}
