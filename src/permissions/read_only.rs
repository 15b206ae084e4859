//! Bash command lines that only read, which Claude Code 2.1.328 runs without asking in the
//! default mode (fixture `tests/fixtures/cc-2.1.328/read_only_bash`: `ls`, `cat` of a file in
//! the project, `git status`, `git diff`, `find -name`, `grep`, `wc`, pipes of these, `cd sub &&
//! ls`, … run; `cat /etc/hostname`, `echo hi > out.txt`, `find -delete`, `git commit`, `rm`
//! ask).
//!
//! The policy consults this only after deny and ask rules and hooks have had their say, for a
//! line no allow rule covers: it can turn an "ask" into "allow", never a "deny" or an
//! explicit "ask" into anything. A line is read-only when every simple command in it is:
//! - a command from [`READERS`] (or `git` with a subcommand from [`GIT_READERS`], `find`
//!   without an action that runs or writes, `cd`), with no option that writes or runs
//!   something ([`WRITING_OPTIONS`]);
//! - with no output redirection, and no word that expands (`$X`, `$(…)`): what runs must be
//!   what was checked;
//! - whose path arguments all name places the caller may read (inside the working
//!   directories, and not covered by a Read deny rule).

use std::path::{Component, Path, PathBuf};

use super::bash::{ParsedCommand, SimpleCommand};

/// Commands that only read files or print, whose non-option arguments are paths (or text that
/// is harmless read as one).
const READERS: &[&str] = &[
    "ls",
    "cat",
    "head",
    "tail",
    "wc",
    "sort",
    "nl",
    "stat",
    "file",
    "du",
    "tree",
    "diff",
    "cmp",
    "cut",
    "od",
    "pwd",
    "echo",
    "which",
    "type",
    "basename",
    "dirname",
    "realpath",
    "true",
    "false",
    "date",
    "whoami",
    "id",
    "uname",
    "grep",
    "egrep",
    "fgrep",
    "rg",
    "tr",
    "comm",
    "column",
    "md5sum",
    "sha1sum",
    "sha256sum",
    "readlink",
];

/// Commands whose arguments are text, not paths.
const TEXT_ARGS: &[&str] = &[
    "echo", "which", "type", "basename", "dirname", "true", "false", "date", "whoami", "id",
    "uname", "tr",
];

/// `git` subcommands that only read the repository.
const GIT_READERS: &[&str] = &[
    "status",
    "log",
    "diff",
    "show",
    "rev-parse",
    "ls-files",
    "blame",
    "describe",
    "shortlog",
];

/// Options that make an otherwise reading command write a file or run another program, per
/// command (`sort -o`, `rg --pre`, `git -c`, `git diff --output`, `--ext-diff`).
const WRITING_OPTIONS: &[(&str, &[&str])] = &[
    ("sort", &["-o", "--output", "--compress-program"]),
    ("rg", &["--pre", "--search-zip", "-z"]),
    ("tree", &["-o"]),
    (
        "git",
        &[
            "-c",
            "--exec-path",
            "--config-env",
            "--output",
            "--ext-diff",
            "--textconv",
            "-o",
            "--no-index",
        ],
    ),
];

/// `find` expressions that run a command or write.
const FIND_ACTIONS: &[&str] = &[
    "-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0", "-fprintf", "-fls",
];

/// Whether `parsed` only reads; `cwd` is where relative paths start; `readable` says whether
/// a path (absolute, lexically cleaned) may be read without asking.
pub fn is_read_only(parsed: &ParsedCommand, cwd: &Path, readable: impl Fn(&Path) -> bool) -> bool {
    if parsed.unchecked.is_some() || parsed.parts.is_empty() {
        return false;
    }
    let mut dir = cwd.to_path_buf();
    parsed
        .parts
        .iter()
        .all(|part| part_reads_only(part, &mut dir, &readable))
}

/// Whether one simple command only reads, with relative paths starting at `dir` (a `cd` that
/// reads moves `dir` for the parts after it).
pub fn part_reads_only(
    part: &SimpleCommand,
    dir: &mut PathBuf,
    readable: &impl Fn(&Path) -> bool,
) -> bool {
    if part.argv_expanded || !part.writes.is_empty() || !part.risky_flags.is_empty() {
        return false;
    }
    let Some((name, args)) = part.argv.split_first() else {
        return false;
    };
    let name = name.as_str();
    // A wrapper (`sudo ls`, `timeout 5 ls`) is not a plain reader: the outermost command
    // must be the reader itself.
    let outermost = part
        .deny_views
        .first()
        .and_then(|v| v.split_whitespace().next());
    if outermost != Some(name) {
        return false;
    }
    match name {
        "cd" => match args {
            [] => true,
            [target] => {
                let next = clean(dir, target);
                let fine = readable(&next);
                *dir = next;
                fine
            }
            _ => false,
        },
        "git" => git_reads(args),
        "find" => find_reads(args, dir, readable),
        _ if READERS.contains(&name) => {
            !args.iter().any(|a| writes_option(name, a))
                && (TEXT_ARGS.contains(&name) || paths_readable(name, args, dir, readable))
        }
        _ => false,
    }
}

fn writes_option(command: &str, arg: &str) -> bool {
    WRITING_OPTIONS
        .iter()
        .filter(|(name, _)| *name == command)
        .flat_map(|(_, options)| options.iter())
        .any(|o| {
            arg == *o
                || (o.starts_with("--") && arg.starts_with(&format!("{o}=")))
                // `-ofile`: a short option with its value attached.
                || (o.len() == 2 && !o.starts_with("--") && arg.starts_with(o) && !arg.starts_with("--"))
        })
}

fn git_reads(args: &[String]) -> bool {
    let Some(sub) = args.first() else {
        return false;
    };
    // Options before the subcommand (`git -c …`, `git --exec-path=…`) can run anything.
    !sub.starts_with('-')
        && GIT_READERS.contains(&sub.as_str())
        && !args[1..].iter().any(|a| writes_option("git", a))
}

fn find_reads(args: &[String], dir: &Path, readable: &impl Fn(&Path) -> bool) -> bool {
    if args.iter().any(|a| FIND_ACTIONS.contains(&a.as_str())) {
        return false;
    }
    args.iter()
        .take_while(|a| !a.starts_with('-') && *a != "(" && *a != "!")
        .all(|a| readable(&clean(dir, a)))
}

/// The non-option arguments of a reading command are paths, except a search pattern (the first
/// one of `grep`/`rg` when no `-e`/`-f` gives it).
fn paths_readable(
    name: &str,
    args: &[String],
    dir: &Path,
    readable: &impl Fn(&Path) -> bool,
) -> bool {
    let searches = matches!(name, "grep" | "egrep" | "fgrep" | "rg");
    let pattern_given = args
        .iter()
        .any(|a| a == "-e" || a == "-f" || a.starts_with("--regexp"));
    let mut skip_pattern = searches && !pattern_given;
    let mut after_dashdash = false;
    let mut pattern_value = false;
    for arg in args {
        // `-e PATTERN`'s value is text, not a path (`-f FILE`'s is a path and is checked).
        if pattern_value {
            pattern_value = false;
            continue;
        }
        if searches && !after_dashdash && (arg == "-e" || arg == "--regexp") {
            pattern_value = true;
            continue;
        }
        if !after_dashdash && arg == "--" {
            after_dashdash = true;
            continue;
        }
        if !after_dashdash && arg.starts_with('-') && arg != "-" {
            continue;
        }
        if skip_pattern {
            skip_pattern = false;
            continue;
        }
        if arg == "-" {
            continue;
        }
        if !readable(&clean(dir, arg)) {
            return false;
        }
    }
    true
}

/// `arg` made absolute against `dir` and cleaned lexically (`.`/`..` resolved, no file system
/// access); `~` is not expanded by the parser, so a `~/…` word stays relative and is judged as
/// written.
fn clean(dir: &Path, arg: &str) -> PathBuf {
    let joined = dir.join(arg);
    let mut out = PathBuf::new();
    for c in joined.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}
