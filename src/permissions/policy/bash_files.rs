//! What a Bash line touches on disk: the file targets of writers and copiers, the working-directory
//! file commands acceptEdits auto-allows, and the protected places no mode may write without asking.

use super::*;

impl PermissionPolicy {
    pub(super) fn bash_allowance(&self, command: &str) -> BashAllowance {
        let whole_tool = self
            .allow
            .iter()
            .any(|e| e.rule.tool == "Bash" && e.rule.content.is_none());
        if whole_tool || self.session_commands.iter().any(|c| c == command) {
            return BashAllowance::Allowed;
        }
        let parsed = bash::parse(command);
        if let Some(u) = &parsed.unchecked {
            return BashAllowance::Unchecked(u.reason());
        }
        if parsed.parts.is_empty() {
            return BashAllowance::NotCovered;
        }
        let patterns: Vec<_> = self
            .allow
            .iter()
            .filter_map(|e| e.rule.bash_pattern())
            .collect();
        let by_rule = |part: &bash::SimpleCommand| patterns.iter().any(|p| p.allows_part(part));
        if !parsed.parts.iter().all(by_rule) && !self.rule_or_reads(&parsed, &by_rule) {
            return BashAllowance::NotCovered;
        }
        for part in &parsed.parts {
            for w in &part.writes {
                let target = normalize(Path::new(w), &self.paths.cwd);
                let as_write = json!({ "file_path": target.to_string_lossy() });
                let edit_ok = self.allowed_by_rule("Write", &as_write)
                    || (self.mode == PermissionMode::AcceptEdits
                        && self.in_working_dirs(&target)
                        && self.protected_place(&target).is_none());
                if !edit_ok {
                    return BashAllowance::Writes(target);
                }
            }
        }
        BashAllowance::Allowed
    }

    /// Whether every simple command of a line some allow rule covers only in part is allowed
    /// by a rule or only reads (`touch a && cat notes.txt` with `Bash(touch:*)`), as Claude
    /// Code 2.1.328 allows it (fixture `bash_rule_and_read_only`). Not in dontAsk mode (which
    /// lets no unruled reader through), and not for a line that changes directory: a `cd`
    /// the rule allows would move where the reading parts' paths lead.
    fn rule_or_reads(
        &self,
        parsed: &bash::ParsedCommand,
        by_rule: &impl Fn(&bash::SimpleCommand) -> bool,
    ) -> bool {
        if self.mode == PermissionMode::DontAsk
            || parsed.parts.iter().any(|part| {
                part.argv
                    .first()
                    .is_some_and(|name| matches!(name.as_str(), "cd" | "pushd" | "popd"))
            })
        {
            return false;
        }
        let readable = |p: &Path| self.reads_without_asking(p);
        let mut dir = self.paths.cwd.clone();
        parsed.parts.iter().all(|part| {
            by_rule(part)
                || crate::permissions::read_only::part_reads_only(part, &mut dir, &readable)
        })
    }

    /// Whether a reading Bash line may read `path` without asking: inside the working
    /// directories, and no deny rule covers reading it.
    pub(super) fn reads_without_asking(&self, path: &Path) -> bool {
        self.in_working_dirs(path)
            && self
                .check_deny("Read", &json!({"file_path": path}))
                .is_none()
    }

    /// acceptEdits' "simple filesystem Bash": every simple command is one of
    /// [`FS_COMMANDS`], fully checked, without expansions, and every operand, target directory
    /// (`-t DIR`, `-tDIR`, `--target-directory=DIR`), copied-to path (`DEST/<source name>`)
    /// and redirection target lies inside the working directories. `~` counts as the home
    /// directory. What the parser cannot pin down asks (fail closed): an operand brace or glob
    /// expansion could carry elsewhere (`.{.,}/x`, `link*/x`), an option value naming a path
    /// rein does not follow (`--suffix=/x`, `-r/etc/x`).
    pub(super) fn is_working_dir_fs_command(&self, command: &str) -> bool {
        let parsed = bash::parse(command);
        if parsed.unchecked.is_some() || parsed.parts.is_empty() {
            return false;
        }
        parsed.parts.iter().all(|part| {
            let Some((name, args)) = part.argv.split_first() else {
                return false;
            };
            let inside = |arg: &str| {
                if may_expand(arg) {
                    return false;
                }
                let expanded = match arg.strip_prefix('~') {
                    Some("") => self.paths.home.clone(),
                    Some(rest) if rest.starts_with('/') => self.paths.home.join(&rest[1..]),
                    Some(_) => return false,
                    None => PathBuf::from(arg),
                };
                let target = normalize(&expanded, &self.paths.cwd);
                // Strictly inside: `rm -rf .` on a working directory itself still asks.
                self.in_working_dirs(&target)
                    && !self.is_working_dir_root(&target)
                    && self.protected_place(&target).is_none()
            };
            if !FS_COMMANDS.contains(&name.as_str())
                || part.argv_expanded
                || part.deny_views.len() != 1
                || !part.writes.iter().all(|w| inside(w))
            {
                return false;
            }
            let words = command_words(name, args);
            if words.unread_path
                || !words
                    .operands
                    .iter()
                    .chain(&words.target_dir)
                    .all(|a| inside(a))
            {
                return false;
            }
            // A copy lands at `DEST/<source name>` when DEST is a directory.
            words
                .copies()
                .into_iter()
                .flatten()
                .all(|landing| inside(&landing))
        })
    }

    pub(super) fn is_working_dir_root(&self, path: &Path) -> bool {
        let p = &self.paths;
        std::iter::once(&p.cwd)
            .chain(std::iter::once(&p.project_dir))
            .chain(p.additional_dirs.iter())
            .any(|d| path == normalize(d, Path::new("/")))
    }

    /// [`protected_place`] judged on the part of `path` below the working directory holding it
    /// (a project that itself lives under some `.claude` directory is not all protected).
    pub(super) fn protected_place(&self, path: &Path) -> Option<&'static str> {
        let p = &self.paths;
        let below = |path: &Path| -> PathBuf {
            std::iter::once(&p.cwd)
                .chain(std::iter::once(&p.project_dir))
                .chain(p.additional_dirs.iter())
                .filter_map(|d| path.strip_prefix(normalize(d, Path::new("/"))).ok())
                .min_by_key(|rel| rel.components().count())
                .map_or_else(|| path.to_path_buf(), Path::to_path_buf)
        };
        let real = resolve_links(path);
        protected_place(&below(path)).or_else(|| {
            let rdirs: Vec<PathBuf> = std::iter::once(&p.cwd)
                .chain(std::iter::once(&p.project_dir))
                .chain(p.additional_dirs.iter())
                .map(|d| resolve_links(d))
                .collect();
            let rel = rdirs
                .iter()
                .filter_map(|d| real.strip_prefix(d).ok())
                .min_by_key(|rel| rel.components().count())
                .map_or_else(|| below(&real), Path::to_path_buf);
            protected_place(&rel)
        })
    }

    /// Whether `path` is inside a working directory, as spelled and with its symlinks resolved
    /// (a link in the project pointing at `~/.ssh` is not inside).
    pub(super) fn in_working_dirs(&self, path: &Path) -> bool {
        let p = &self.paths;
        let dirs = || {
            std::iter::once(&p.cwd)
                .chain(std::iter::once(&p.project_dir))
                .chain(p.additional_dirs.iter())
        };
        if !dirs().any(|d| path.starts_with(normalize(d, Path::new("/")))) {
            return false;
        }
        let real = resolve_links(path);
        real == path
            || dirs().any(|d| {
                real.starts_with(normalize(d, Path::new("/"))) || real.starts_with(resolve_links(d))
            })
    }

    pub(super) fn in_readable_dirs(&self, path: &Path) -> bool {
        let real = resolve_links(path);
        self.paths.readable_dirs.iter().any(|d| {
            path.starts_with(d) && (real.starts_with(d) || real.starts_with(resolve_links(d)))
        })
    }
}

/// Commands acceptEdits runs without a prompt when they stay inside the working directories.
pub(super) const FS_COMMANDS: &[&str] = &["mkdir", "touch", "rm", "rmdir", "mv", "cp"];

pub(super) enum BashAllowance {
    Allowed,
    NotCovered,
    Unchecked(String),
    Writes(PathBuf),
}

/// A Bash call's command line and its decomposition; `None` for other tools and for a Bash
/// input without a `command` string (rules then fail closed on their own).
pub(super) fn bash_line<'a>(
    tool: &str,
    input: &'a Value,
) -> Option<(&'a str, bash::ParsedCommand)> {
    if tool != "Bash" {
        return None;
    }
    let command = input.get("command").and_then(Value::as_str)?;
    Some((command, bash::parse(command)))
}

/// Places acceptEdits never edits without asking, by tool or by Bash: version control and
/// editor/agent configuration (a hook or a task there runs code), and shell start-up files.
/// Returns what the place is. `path` is relative to the working directory holding it.
pub(super) fn protected_place(path: &Path) -> Option<&'static str> {
    const DIRS: &[&str] = &[".git", ".claude", ".vscode", ".idea", ".husky"];
    const FILES: &[&str] = &[
        ".bashrc",
        ".bash_profile",
        ".bash_login",
        ".bash_logout",
        ".profile",
        ".zshrc",
        ".zshenv",
        ".zprofile",
        ".zlogin",
        ".zlogout",
        ".kshrc",
        ".cshrc",
        ".tcshrc",
        ".inputrc",
        ".gitconfig",
        ".gitmodules",
        ".envrc",
    ];
    for c in path.components() {
        if let std::path::Component::Normal(name) = c
            && let Some(name) = name.to_str()
            && let Some(d) = DIRS.iter().find(|d| **d == name)
        {
            return Some(match *d {
                ".git" => "the .git directory",
                ".claude" => "the .claude directory",
                ".vscode" => "the .vscode directory",
                ".idea" => "the .idea directory",
                _ => "the .husky directory",
            });
        }
    }
    if path
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| FILES.contains(&n))
    {
        return Some("a shell or git start-up file");
    }
    None
}

/// The files a Bash line reads and writes, as far as its words say.
#[derive(Debug, Default)]
pub(super) struct FileTargets {
    pub(super) reads: Vec<PathBuf>,
    pub(super) writes: Vec<PathBuf>,
}

/// Commands whose file operands are written (or removed, or have their mode changed).
pub(super) const WRITERS: &[&str] = &[
    "tee", "touch", "truncate", "rm", "unlink", "shred", "chmod", "chown", "chgrp", "mkdir",
    "rmdir", "mkfifo", "mknod",
];

/// Commands that copy or move operands to a destination (the last operand or `-t DIR`).
pub(super) const COPIERS: &[&str] = &["cp", "mv", "install", "ln", "rsync", "scp"];

/// What each simple command of `parsed` reads and writes: every literal operand is a file it
/// may read (fail closed: `cat`, `base64`, `cp`, `tar` all read their operands), input
/// redirections are reads; output redirections, the operands of [`WRITERS`], the destinations
/// of [`COPIERS`] (and `dest/<name>` for each source) and the files of `sed -i`/`perl -i` are
/// writes. A literal `cd DIR` earlier on the line moves where later relative paths point; every
/// directory the line may be in is tried, so a subshell's `cd` cannot hide a path.
pub(super) fn bash_file_targets(
    parsed: &bash::ParsedCommand,
    cwds: &[&Path],
    home: &Path,
) -> FileTargets {
    let expand = |arg: &str, dir: &Path| -> Option<PathBuf> {
        if arg.contains(['$', '`']) || arg.is_empty() {
            return None;
        }
        let p = match arg.strip_prefix('~') {
            Some("") => home.to_path_buf(),
            Some(rest) if rest.starts_with('/') => home.join(&rest[1..]),
            Some(_) => return None,
            None => PathBuf::from(arg),
        };
        Some(normalize(&p, dir))
    };
    let mut dirs: Vec<PathBuf> = Vec::new();
    for d in cwds {
        if !dirs.iter().any(|x| x == d) {
            dirs.push(d.to_path_buf());
        }
    }
    let mut out = FileTargets::default();
    for part in &parsed.parts {
        let argv = &part.argv;
        let name = argv
            .first()
            .map(|n| n.rsplit('/').next().unwrap_or(n).to_string())
            .unwrap_or_default();
        let operands: Vec<&str> = argv
            .iter()
            .skip(1)
            .map(String::as_str)
            .filter(|a| !a.starts_with('-'))
            .collect();
        let push = |list: &mut Vec<PathBuf>, arg: &str| {
            for d in &dirs {
                if let Some(p) = expand(arg, d)
                    && !list.contains(&p)
                {
                    list.push(p);
                }
            }
        };
        for a in &operands {
            push(&mut out.reads, a);
        }
        // `--opt=value` values may name files too.
        for a in argv.iter().skip(1) {
            if let Some((_, v)) = a.split_once('=')
                && a.starts_with('-')
            {
                push(&mut out.reads, v);
            }
        }
        for r in &part.reads {
            push(&mut out.reads, r);
        }
        for w in &part.writes {
            push(&mut out.writes, w);
        }
        if WRITERS.contains(&name.as_str()) {
            for a in &operands {
                push(&mut out.writes, a);
            }
        }
        let in_place = matches!(name.as_str(), "sed" | "perl" | "ruby")
            && argv.iter().skip(1).any(|a| {
                a.starts_with("-i")
                    || a == "--in-place"
                    || a.starts_with("--in-place=")
                    || (a.starts_with('-') && !a.starts_with("--") && a.contains('i'))
            });
        if in_place {
            for a in &operands {
                push(&mut out.writes, a);
            }
        }
        if name == "dd" {
            for a in argv.iter().skip(1) {
                if let Some(f) = a.strip_prefix("of=") {
                    push(&mut out.writes, f);
                }
            }
        }
        if COPIERS.contains(&name.as_str()) {
            let words = command_words(&name, &argv[1..]);
            for landing in words
                .destination()
                .into_iter()
                .chain(words.copies().into_iter().flatten())
            {
                push(&mut out.writes, &landing);
            }
        }
        if matches!(name.as_str(), "cd" | "pushd") && !part.argv_expanded {
            let target = operands.first().copied().unwrap_or("~");
            let new: Vec<PathBuf> = dirs.iter().filter_map(|d| expand(target, d)).collect();
            for d in new {
                if !dirs.contains(&d) && dirs.len() < 16 {
                    dirs.push(d);
                }
            }
        }
    }
    out
}

/// A file command's words with its options read, not skipped: the one reading both the
/// acceptEdits auto-allow and the write targets Edit deny rules are matched against.
pub(super) struct CommandWords<'a> {
    /// The words that are not options (all of them after `--`).
    pub(super) operands: Vec<&'a str>,
    /// A coreutils copier's (`cp`, `mv`, `install`, `ln`) target directory, however spelled:
    /// `-t DIR`, `-tDIR`, inside a cluster (`-ftDIR`, `-ft DIR`), `--target-directory[=]DIR`.
    pub(super) target_dir: Option<&'a str>,
    /// An option carries a value rein does not follow that may name a path (`--suffix=/x`,
    /// `-r/etc/x`, a `-t` with nothing after it).
    pub(super) unread_path: bool,
    /// Whether the command copies its operands to a destination ([`COPIERS`]).
    copies: bool,
}

impl<'a> CommandWords<'a> {
    /// Where a copier writes: the target directory, else its last operand.
    pub(super) fn destination(&self) -> Option<String> {
        if !self.copies {
            return None;
        }
        self.target_dir
            .or_else(|| self.operands.last().copied())
            .map(str::to_string)
    }

    /// `DEST/<source name>` for each source of a copier (where it lands when DEST is a
    /// directory); `None` for other commands.
    pub(super) fn copies(&self) -> Option<Vec<String>> {
        let dest = self.destination()?;
        let sources = match self.target_dir {
            Some(_) => &self.operands[..],
            None => &self.operands[..self.operands.len().saturating_sub(1)],
        };
        Some(
            sources
                .iter()
                .map(|src| src.trim_end_matches('/').rsplit('/').next().unwrap_or(src))
                .filter(|base| !base.is_empty())
                .map(|base| format!("{}/{base}", dest.trim_end_matches('/')))
                .collect(),
        )
    }
}

/// Reads `args` of the command `name` (see [`CommandWords`]).
pub(super) fn command_words<'a>(name: &str, args: &'a [String]) -> CommandWords<'a> {
    let coreutils_copier = matches!(name, "cp" | "mv" | "install" | "ln");
    let mut words = CommandWords {
        operands: Vec::new(),
        target_dir: None,
        unread_path: false,
        copies: COPIERS.contains(&name),
    };
    let mut args = args.iter().map(String::as_str);
    while let Some(a) = args.next() {
        if a == "--" {
            words.operands.extend(args.by_ref());
            break;
        }
        if let Some(long) = a.strip_prefix("--") {
            match long.split_once('=') {
                Some(("target-directory", dir)) if coreutils_copier => words.target_dir = Some(dir),
                Some((_, value)) if value.contains(['/', '~']) || may_expand(value) => {
                    words.unread_path = true;
                }
                Some(_) => {}
                None if coreutils_copier && long == "target-directory" => match args.next() {
                    Some(dir) => words.target_dir = Some(dir),
                    None => words.unread_path = true,
                },
                None => {}
            }
        } else if let Some(cluster) = a.strip_prefix('-').filter(|c| !c.is_empty()) {
            // `-t` takes the rest of its cluster (`-tDIR`, `-ftDIR`) or the next word.
            match cluster.find('t').filter(|_| coreutils_copier) {
                Some(at) if at + 1 < cluster.len() => words.target_dir = Some(&cluster[at + 1..]),
                Some(_) => match args.next() {
                    Some(dir) => words.target_dir = Some(dir),
                    None => words.unread_path = true,
                },
                None if cluster.contains(['/', '~']) || may_expand(cluster) => {
                    words.unread_path = true;
                }
                None => {}
            }
        } else {
            words.operands.push(a);
        }
    }
    words
}

/// Whether the shell may turn `word` into other paths: brace expansion (`.{.,}/x` is `../x`
/// and `./x`), a glob (which follows links: `link*/x`), or a tilde past the start.
fn may_expand(word: &str) -> bool {
    word.contains(['*', '?', '[', '{']) || word.char_indices().any(|(i, c)| c == '~' && i > 0)
}
