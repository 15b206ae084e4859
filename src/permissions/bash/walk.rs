//! The command-word walk: a finished command's words past assignments and wrappers to the
//! command that really runs, into nested shells (`bash -c`, `eval`, `xargs sh -c`) and hidden
//! words, each found command recorded with what keeps it from being checked.

use super::*;

impl Parser {
    /// Turns the tokens of one simple command into a [`SimpleCommand`].
    pub(super) fn finish(&mut self, tokens: &mut Vec<Token>) {
        let tokens = std::mem::take(tokens);
        let mut words = Vec::new();
        let mut writes = Vec::new();
        let mut reads = Vec::new();
        for t in tokens {
            match t {
                Token::Word(w) => words.push(w),
                Token::Write(w) => writes.push(w.text),
                Token::Read(w) => reads.push(w.text),
            }
        }
        // Reserved words that open or close a compound command carry no command themselves.
        let mut start = 0;
        while let Some(w) = words.get(start) {
            match w.raw.as_str() {
                "!" | "{" | "}" | "then" | "else" | "elif" | "do" | "if" | "while" | "until"
                | "fi" | "done" | "esac" => start += 1,
                _ => break,
            }
        }
        if let Some(first) = words.get(start) {
            match first.raw.as_str() {
                // `for x in a b` / `select …`: the list itself runs nothing.
                "for" | "select" => return,
                "case" => {
                    self.flag(Unchecked::Syntax("a case statement"));
                    return;
                }
                "function" => {
                    self.flag(Unchecked::HiddenCommand("a function defined on the line"));
                    return;
                }
                _ => {}
            }
        }
        // Env-var prefixes (`FOO=1 cmd`) are skipped for matching; see `env_prefix`.
        while let Some(w) = words.get(start) {
            if assignment_name(&w.raw).is_none() {
                break;
            }
            let command_follows = words.len() > start + 1;
            self.env_prefix(w, command_follows);
            start += 1;
        }
        let words = &words[start..];
        if words.is_empty() {
            if !writes.is_empty() || !reads.is_empty() {
                self.parts.push(SimpleCommand {
                    writes,
                    reads,
                    ..SimpleCommand::default()
                });
            }
            return;
        }
        let mut part = SimpleCommand {
            writes,
            reads,
            ..SimpleCommand::default()
        };
        self.unwrap_into(words, &mut part, !self.escalated);
        self.parts.push(part);
    }

    /// One `NAME=value` word before a command (or alone, a plain assignment). Only names on
    /// [`SAFE_ENV`] leave the command auto-allowable; names that change which code runs
    /// ([`HIJACK_ENV`]) hide the command from deny rules too; names whose value is run as a
    /// command ([`SCRIPT_ENV`]) have the value parsed as a script.
    pub(super) fn env_prefix(&mut self, w: &Word, command_follows: bool) {
        if let Some(name) = assignment_name(&w.raw) {
            self.env_assignment(name, w, command_follows);
        }
    }

    /// [`Parser::env_prefix`] for an assignment to `name`.
    pub(super) fn env_assignment(&mut self, name: &str, w: &Word, command_follows: bool) {
        let value = w.text.split_once('=').map_or("", |(_, v)| v);
        if !command_follows {
            // `X=1` alone sets a shell variable for the rest of the line: a later `$X` in
            // command position is already hidden; `PATH=…; ls` changes what `ls` is.
            if is_hijack_env(name) {
                self.flag(Unchecked::DangerousEnv(name.to_string()));
            }
            return;
        }
        if SCRIPT_ENV.contains(&name) {
            if w.expanded {
                self.flag(Unchecked::DangerousEnv(name.to_string()));
            } else {
                self.parse_script(value, true);
                self.flag(Unchecked::EnvPrefix(name.to_string()));
            }
        } else if is_hijack_env(name) {
            self.flag(Unchecked::DangerousEnv(name.to_string()));
        } else if w.expanded || !is_safe_env(name, value) {
            self.flag(Unchecked::EnvPrefix(name.to_string()));
        }
    }

    /// Records `words` as a view of `part`, then unwraps wrappers / `sh -c` into further views
    /// or parts. `allowable`: whether these views may be matched by allow rules.
    pub(super) fn unwrap_into(
        &mut self,
        words: &[Word],
        part: &mut SimpleCommand,
        allowable: bool,
    ) {
        let view = join_raw(words);
        part.argv = words.iter().map(|w| w.text.clone()).collect();
        part.argv_expanded = words.iter().any(|w| w.expanded);
        // Deny rules also see the line without quotes and with the bare command name, so
        // `'rm' -rf x`, `\rm -rf x` and `/bin/rm -rf x` cannot slip past `Bash(rm *)`.
        let unquoted = part.argv.join(" ");
        let bare = match part.argv.split_first() {
            Some((name, rest)) => {
                let base = name.rsplit('/').next().unwrap_or(name);
                std::iter::once(base)
                    .chain(rest.iter().map(String::as_str))
                    .collect::<Vec<_>>()
                    .join(" ")
            }
            None => String::new(),
        };
        for v in [view.clone(), unquoted, bare] {
            if !v.is_empty() && !part.deny_views.contains(&v) {
                part.deny_views.push(v);
            }
        }
        if allowable {
            part.allow_views.push(view);
        }
        let Some(first) = words.first() else {
            return;
        };
        if self.wrap_depth >= MAX_NEST || part.deny_views.len() > MAX_VIEWS {
            self.flag(Unchecked::Syntax("wrappers nested too deeply"));
            return;
        }
        self.open_hidden_words(words);
        if first.expanded {
            self.flag(Unchecked::Variable);
            return;
        }
        if first.glob_at.is_some() {
            self.flag(Unchecked::HiddenCommand(
                "a pattern or brace expansion as the command",
            ));
            return;
        }
        self.wrap_depth += 1;
        self.unwrap_named(words, part, allowable);
        self.wrap_depth -= 1;
    }

    /// For the first word holding an expansion (or, as the command word, a glob): the command
    /// is known only up to it, in full and with the bare command name.
    pub(super) fn open_hidden_words(&mut self, words: &[Word]) {
        let Some((i, at)) = words.iter().enumerate().find_map(|(i, w)| {
            let at = if i == 0 {
                match (w.expand_at, w.glob_at) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                }
            } else {
                w.expand_at
            };
            at.map(|at| (i, at))
        }) else {
            return;
        };
        let mut known: Vec<&str> = words[..i].iter().map(|w| w.text.as_str()).collect();
        let partial = words[i].text.get(..at).unwrap_or_default();
        known.push(partial);
        let full = known.join(" ");
        let why = Unchecked::HiddenCommand("an expansion whose value decides the command");
        if let Some(head) = known.first_mut() {
            *head = head.rsplit('/').next().unwrap_or(head);
        }
        let bare = known.join(" ");
        if bare != full {
            self.open_command(bare, why.clone());
        }
        self.open_command(full, why);
    }

    /// The wrappers and shells `words` (whose command word is literal) may hide a command in.
    pub(super) fn unwrap_named(
        &mut self,
        words: &[Word],
        part: &mut SimpleCommand,
        allowable: bool,
    ) {
        let Some(first) = words.first() else {
            return;
        };
        let name = first.text.rsplit('/').next().unwrap_or(first.text.as_str());
        let args = &words[1..];
        match name {
            "eval" => {
                self.flag(Unchecked::Eval);
                if args.iter().any(|w| w.expanded) {
                    self.flag(Unchecked::HiddenCommand("eval of an expansion"));
                }
                let script = args
                    .iter()
                    .map(|w| w.text.as_str())
                    .collect::<Vec<_>>()
                    .join(" ");
                self.parse_script(&script, !allowable);
            }
            "sh" | "bash" | "zsh" | "dash" | "ksh" | "mksh" | "ash" | "yash" | "posh" | "fish"
            | "tcsh" | "csh" | "rbash" => match shell_script_arg(args) {
                ShellScript::Word(script) => self.run_script_word(script, part, !allowable),
                ShellScript::Missing => self.flag(Unchecked::HiddenCommand(
                    "a shell reading its commands from input",
                )),
                ShellScript::File => {}
            },
            "alias" if args.iter().any(|w| w.text.contains('=')) => {
                self.flag(Unchecked::HiddenCommand("alias"));
            }
            "trap" => {
                let action = args.iter().find(|w| !w.text.starts_with('-'));
                let listing = args.iter().any(|w| w.text == "-p" || w.text == "-l");
                match action {
                    Some(a) if !listing && a.expanded => {
                        self.flag(Unchecked::HiddenCommand("trap"));
                    }
                    Some(a) if !listing => self.parse_script(&a.text, !allowable),
                    _ => {}
                }
            }
            "mapfile" | "readarray" if args.iter().any(|w| w.text.starts_with("-C")) => {
                self.flag(Unchecked::HiddenCommand("mapfile -C"));
            }
            "export" | "declare" | "typeset" | "local" | "readonly" => {
                for w in args {
                    self.env_prefix(w, false);
                }
            }
            _ if is_generic_wrapper(name) => self.unwrap_generic(args, part),
            "su" => {
                if let Some(i) = args
                    .iter()
                    .position(|w| w.text == "-c" || w.text == "--command")
                    && let Some(script) = args.get(i + 1)
                {
                    self.run_script_word(script, part, true);
                }
            }
            "watch" => {
                let (inner, exec_form) = skip_watch_options(args);
                if exec_form {
                    self.unwrap_into(inner, part, allowable);
                } else if !inner.is_empty() {
                    if inner.iter().any(|w| w.expanded) {
                        self.flag(Unchecked::Variable);
                    }
                    let script = inner
                        .iter()
                        .map(|w| w.text.as_str())
                        .collect::<Vec<_>>()
                        .join(" ");
                    part.transparent = allowable;
                    self.parse_script(&script, !allowable);
                }
            }
            "find" => {
                let mut i = 0;
                while i < args.len() {
                    let flag = args[i].text.as_str();
                    match flag {
                        "-exec" | "-execdir" | "-ok" | "-okdir" => {
                            part.risky_flags.push(static_flag(flag));
                            let end = args[i + 1..]
                                .iter()
                                .position(|w| w.text == ";" || w.text == "+")
                                .map_or(args.len(), |p| i + 1 + p);
                            let inner = &args[i + 1..end];
                            if !inner.is_empty() {
                                let mut sub = SimpleCommand::default();
                                self.unwrap_into(inner, &mut sub, allowable);
                                self.parts.push(sub);
                            }
                            i = end + 1;
                        }
                        "-delete" | "-fprint" | "-fprint0" | "-fprintf" | "-fls" => {
                            part.risky_flags.push(static_flag(flag));
                            i += 1;
                        }
                        _ => i += 1,
                    }
                }
            }
            _ => {
                if let Some((inner, safe)) = strip_wrapper(name, args) {
                    if name == "env"
                        && args
                            .iter()
                            .any(|w| w.text == "-S" || w.text.starts_with("--split-string"))
                    {
                        self.flag(Unchecked::Syntax("env -S"));
                    }
                    let assignments = inner
                        .iter()
                        .take_while(|w| wrapper_assignment(name, w).is_some())
                        .count();
                    for w in &inner[..assignments] {
                        if let Some(var) = wrapper_assignment(name, w) {
                            self.env_assignment(var, w, inner.len() > assignments);
                        }
                    }
                    if name == "xargs" && xargs_replaces_command(args, inner) {
                        self.flag(Unchecked::HiddenCommand("xargs -I feeding a shell"));
                    }
                    let inner = &inner[assignments..];
                    if !inner.is_empty() {
                        self.unwrap_into(inner, part, allowable && safe);
                    }
                }
            }
        }
    }

    /// A command that runs its arguments with options rein does not model (`flock`, `strace`,
    /// `unshare`, …): every suffix of its arguments is a deny view, `-c SCRIPT` is parsed as a
    /// script, and the first suffix starting with a shell or wrapper is unwrapped further.
    /// Allow rules never see through it.
    pub(super) fn unwrap_generic(&mut self, args: &[Word], part: &mut SimpleCommand) {
        let mut unwrapped = false;
        for (i, w) in args.iter().enumerate() {
            if part.deny_views.len() > MAX_VIEWS {
                self.flag(Unchecked::Syntax("wrappers nested too deeply"));
                return;
            }
            let t = w.text.as_str();
            if matches!(t, "-c" | "--command" | "-e" | "--exec")
                && let Some(script) = args.get(i + 1)
            {
                if script.expanded {
                    self.flag(Unchecked::HiddenCommand("a wrapper's -c"));
                } else {
                    self.parse_script(&script.text, true);
                }
            }
            if let Some(script) = t.strip_prefix("--command=") {
                self.parse_script(script, true);
            }
            if t.starts_with('-') || w.expanded {
                continue;
            }
            let rest = &args[i..];
            let base = t.rsplit('/').next().unwrap_or(t);
            let special = is_generic_wrapper(base)
                || matches!(
                    base,
                    "sh" | "bash" | "zsh" | "dash" | "ksh" | "mksh" | "ash" | "eval" | "find"
                );
            if special && !unwrapped {
                unwrapped = true;
                self.unwrap_into(rest, part, false);
            } else {
                let unquoted = rest.iter().map(|w| w.text.as_str()).collect::<Vec<_>>();
                let mut bare = unquoted.clone();
                bare[0] = base;
                for v in [join_raw(rest), unquoted.join(" "), bare.join(" ")] {
                    if !part.deny_views.contains(&v) {
                        part.deny_views.push(v);
                    }
                }
            }
        }
    }

    /// A script word of `sh -c` / `su -c`: parsed into separate parts.
    pub(super) fn run_script_word(
        &mut self,
        script: &Word,
        part: &mut SimpleCommand,
        escalated: bool,
    ) {
        if script.expanded {
            // The calling shell expands the string before the nested one reads it: a value or a
            // command's output can become any command (`c='; rm x'; sh -c "echo $c"`), so the
            // nested commands are unknown and deny/ask rules fail closed on them.
            self.flag(Unchecked::HiddenCommand(
                "a command string built when it runs",
            ));
            return;
        }
        part.transparent = !escalated;
        self.parse_script(&script.text, escalated);
    }

    pub(super) fn parse_script(&mut self, script: &str, escalated: bool) {
        if self.depth + 1 > MAX_DEPTH {
            self.flag(Unchecked::Syntax("shells nested too deeply"));
            return;
        }
        let mut sub = Parser::new(script, self.depth + 1, escalated || self.escalated);
        sub.parse_list(None);
        sub.finish_heredocs_at_eof();
        self.parts.append(&mut sub.parts);
        // The nested shell's partly known commands are this line's too: deny and ask rules
        // must see them (`bash -c 'sh -c "$(echo rm) x"'` hid rm when only the first reason
        // came up).
        for open in sub.open {
            self.open_command(open.prefix, open.why);
        }
        if let Some(u) = sub.unchecked {
            self.flag(u);
        }
    }
}

pub(super) fn static_flag(flag: &str) -> &'static str {
    match flag {
        "-exec" => "-exec",
        "-execdir" => "-execdir",
        "-ok" => "-ok",
        "-okdir" => "-okdir",
        "-delete" => "-delete",
        "-fprint" => "-fprint",
        "-fprint0" => "-fprint0",
        "-fprintf" => "-fprintf",
        _ => "-fls",
    }
}

pub(super) fn join_raw(words: &[Word]) -> String {
    words
        .iter()
        .map(|w| w.raw.as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

/// `NAME=value` / `NAME+=value` with an unquoted name: the name.
pub(super) fn assignment_name(raw: &str) -> Option<&str> {
    let eq = raw.find('=')?;
    let name = raw[..eq].strip_suffix('+').unwrap_or(&raw[..eq]);
    let mut chars = name.chars();
    let first = chars.next()?;
    if !(first.is_ascii_alphabetic() || first == '_') {
        return None;
    }
    if chars.all(|c| c.is_ascii_alphanumeric() || c == '_') {
        Some(name)
    } else {
        None
    }
}

/// What a shell invocation runs.
pub(super) enum ShellScript<'a> {
    /// `sh -c SCRIPT`.
    Word(&'a Word),
    /// A script file operand (`sh x.sh`): an interpreter running a file rein does not read.
    File,
    /// Nothing on the command line: commands come from stdin (`| sh`, `bash <<<`, `sh -s`,
    /// `sh -c` without a script).
    Missing,
}

/// What `sh [opts] …` runs.
pub(super) fn shell_script_arg(args: &[Word]) -> ShellScript<'_> {
    let mut has_c = false;
    let mut from_stdin = false;
    let mut i = 0;
    while let Some(w) = args.get(i) {
        let t = w.text.as_str();
        if t == "--" || t == "-" {
            i += 1;
            break;
        }
        if t.starts_with("--") {
            i += if t == "--rcfile" || t == "--init-file" {
                2
            } else {
                1
            };
            continue;
        }
        if let Some(flags) = t.strip_prefix('-').or_else(|| t.strip_prefix('+')) {
            if flags.contains('c') {
                has_c = true;
            }
            if flags.contains('s') || flags.contains('i') {
                from_stdin = true;
            }
            // `-o OPTION` takes a value.
            i += if flags.ends_with('o') { 2 } else { 1 };
            continue;
        }
        break;
    }
    match args.get(i) {
        Some(w) if has_c => ShellScript::Word(w),
        Some(_) if !from_stdin => ShellScript::File,
        _ => ShellScript::Missing,
    }
}

/// `xargs -I R …` whose command is a shell or contains `R`: input lines become commands.
pub(super) fn xargs_replaces_command(args: &[Word], inner: &[Word]) -> bool {
    let mut replace: Option<String> = None;
    for (i, w) in args.iter().enumerate() {
        let t = w.text.as_str();
        if t == "-I" {
            replace = args.get(i + 1).map(|w| w.text.clone());
        } else if let Some(r) = t
            .strip_prefix("-I")
            .or_else(|| t.strip_prefix("--replace="))
        {
            replace = Some(r.to_string());
        } else if t == "-i" || t == "--replace" {
            replace = Some("{}".to_string());
        }
    }
    let Some(replace) = replace else {
        return false;
    };
    let Some(first) = inner.iter().find(|w| assignment_name(&w.raw).is_none()) else {
        return false;
    };
    let base = first.text.rsplit('/').next().unwrap_or(&first.text);
    first.text.contains(&replace)
        || matches!(
            base,
            "sh" | "bash" | "zsh" | "dash" | "ksh" | "mksh" | "ash" | "eval"
        )
}
