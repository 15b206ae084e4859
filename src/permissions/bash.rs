//! Decomposition of a Bash command line into the simple commands permission rules are matched
//! against (spec §6.2): operators (`&&`, `||`, `;`, `|`, `&`, newlines), command and process
//! substitutions, subshells, env-var prefixes, wrappers (`sudo`, `timeout`, `env`, …) and
//! `sh -c` scripts.
//!
//! This is not a shell. It reads just enough POSIX/bash syntax to list every command the line
//! would start, and it says so ([`Unchecked`]) whenever it cannot: an unbalanced quote, a
//! variable in command position, `eval`, a here-document it cannot delimit. Callers must never
//! auto-allow a command that comes back unchecked.

/// Why a command could not be fully checked. The reason texts are model-facing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unchecked {
    /// `$VAR`, `${…}` or `$(…)` where a command name (or a write target) should be.
    Variable,
    /// `eval`: the real command is only known when it runs.
    Eval,
    /// A here-document without its closing delimiter, or one that runs commands.
    Heredoc,
    /// A quote, `$(`, backtick or `(` that is never closed.
    Unbalanced,
    /// An env-var prefix that changes what a command runs (`LD_PRELOAD=…`, `PATH=…`).
    DangerousEnv(String),
    /// Shell syntax this parser does not follow (`case`, function definitions, deep nesting).
    Syntax(&'static str),
}

impl Unchecked {
    /// The reason shown when the command is not auto-allowed.
    pub fn reason(&self) -> String {
        match self {
            Unchecked::Variable => {
                "A variable in this command can't be checked before it runs".to_string()
            }
            Unchecked::Eval => {
                "This command uses eval, which can't be checked before it runs".to_string()
            }
            Unchecked::Heredoc => {
                "This command has a here-document that can't be checked before it runs".to_string()
            }
            Unchecked::Unbalanced => {
                "This command has an unclosed quote or bracket and can't be checked".to_string()
            }
            Unchecked::DangerousEnv(name) => {
                format!("The variable {name} set before this command can change what it runs")
            }
            Unchecked::Syntax(what) => format!("This command uses {what}, which rein can't check"),
        }
    }
}

/// One command the line would start.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SimpleCommand {
    /// Texts deny/ask rules and `if` conditions are matched against, outermost first: the
    /// command without env prefix or redirections, then each command inside a wrapper.
    pub deny_views: Vec<String>,
    /// Texts an allow rule may match: the outermost view, plus the views reached through
    /// wrappers that do not change privileges (`timeout`, `nice`, …; not `sudo`).
    pub allow_views: Vec<String>,
    /// An `sh -c SCRIPT` (or `watch`) wrapper whose script was parsed into separate parts: for
    /// allow purposes it is covered when those parts are.
    pub transparent: bool,
    /// Flags that turn a read-only command into a mutating one (`find -exec`, `-delete`): an allow
    /// rule only covers the command if the rule's own text names each of them.
    pub risky_flags: Vec<&'static str>,
    /// Output redirection targets (unquoted, as written), excluding `/dev/null` and fd dups.
    pub writes: Vec<String>,
    /// The innermost command's words after quote removal (`["rm", "-f", "a b"]`).
    pub argv: Vec<String>,
    /// Some word of `argv` contains an expansion (`$X`, `$(…)`), so `argv` is not what runs.
    pub argv_expanded: bool,
}

/// The decomposition of one command line.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ParsedCommand {
    pub parts: Vec<SimpleCommand>,
    /// Set when some part of the line could not be checked (the first reason found).
    pub unchecked: Option<Unchecked>,
}

/// Decomposes `command`. Never fails: problems are reported in [`ParsedCommand::unchecked`].
pub fn parse(command: &str) -> ParsedCommand {
    let mut parser = Parser::new(command, 0, false);
    parser.parse_list(None);
    parser.finish_heredocs_at_eof();
    ParsedCommand {
        parts: parser.parts,
        unchecked: parser.unchecked,
    }
}

/// Nesting limit for `sh -c` inside `sh -c` …; deeper lines are reported unchecked.
const MAX_DEPTH: usize = 8;

/// Nesting limit for `(`, `$(` and backticks: the parser recurses on them, and a hostile line of
/// a million `(` must not overflow the stack.
const MAX_NEST: usize = 64;

/// Env vars whose value changes which code a command runs.
const DANGEROUS_ENV: &[&str] = &[
    "LD_PRELOAD",
    "LD_LIBRARY_PATH",
    "LD_AUDIT",
    "PATH",
    "BASH_ENV",
    "ENV",
    "IFS",
    "PROMPT_COMMAND",
    "PS4",
    "SHELLOPTS",
    "BASHOPTS",
    "NODE_OPTIONS",
    "PYTHONPATH",
    "PYTHONSTARTUP",
    "PERL5OPT",
    "PERL5LIB",
    "RUBYOPT",
    "GIT_SSH_COMMAND",
    "GIT_EXTERNAL_DIFF",
    "GIT_PAGER",
    "GIT_EDITOR",
    "PAGER",
    "EDITOR",
    "VISUAL",
];

#[derive(Debug, Clone, Default)]
struct Word {
    /// As written (quotes kept).
    raw: String,
    /// After quote removal (expansions kept literally).
    text: String,
    /// Contains a parameter expansion or substitution outside single quotes.
    expanded: bool,
}

#[derive(Debug)]
enum Token {
    Word(Word),
    /// An output redirection target (`> file`), already filtered.
    Write(Word),
}

struct PendingHeredoc {
    delimiter: String,
    strip_tabs: bool,
    quoted: bool,
}

struct Parser {
    chars: Vec<char>,
    pos: usize,
    depth: usize,
    /// Inside a privilege-changing wrapper (`sudo sh -c …`): no inner view may be allow-matched.
    escalated: bool,
    /// Current `(` / `$(` / backtick nesting.
    nest: usize,
    parts: Vec<SimpleCommand>,
    unchecked: Option<Unchecked>,
    heredocs: Vec<PendingHeredoc>,
}

impl Parser {
    fn new(src: &str, depth: usize, escalated: bool) -> Parser {
        Parser {
            chars: src.chars().collect(),
            pos: 0,
            depth,
            escalated,
            nest: 0,
            parts: Vec::new(),
            unchecked: None,
            heredocs: Vec::new(),
        }
    }

    fn flag(&mut self, why: Unchecked) {
        if self.unchecked.is_none() {
            self.unchecked = Some(why);
        }
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn peek_at(&self, off: usize) -> Option<char> {
        self.chars.get(self.pos + off).copied()
    }

    /// Parses commands until `term` (consumed) or the end of input.
    fn parse_list(&mut self, term: Option<char>) {
        if self.nest >= MAX_NEST {
            self.flag(Unchecked::Syntax("brackets nested too deeply"));
            self.pos = self.chars.len();
            return;
        }
        self.nest += 1;
        self.parse_list_inner(term);
        self.nest -= 1;
    }

    fn parse_list_inner(&mut self, term: Option<char>) {
        let mut tokens: Vec<Token> = Vec::new();
        loop {
            while matches!(self.peek(), Some(' ' | '\t' | '\r')) {
                self.pos += 1;
            }
            let Some(c) = self.peek() else {
                self.finish(&mut tokens);
                if term.is_some() {
                    self.flag(Unchecked::Unbalanced);
                }
                return;
            };
            if Some(c) == term {
                self.pos += 1;
                self.finish(&mut tokens);
                return;
            }
            match c {
                '\n' => {
                    self.pos += 1;
                    self.finish(&mut tokens);
                    self.read_heredoc_bodies();
                }
                ';' | '|' => {
                    self.pos += 1;
                    self.finish(&mut tokens);
                }
                '&' => {
                    if self.peek_at(1) == Some('>') {
                        self.read_redirect(&mut tokens, term);
                    } else {
                        self.pos += 1;
                        self.finish(&mut tokens);
                    }
                }
                '#' => {
                    while !matches!(self.peek(), None | Some('\n')) {
                        self.pos += 1;
                    }
                }
                '(' => {
                    if !tokens.is_empty() {
                        self.flag(Unchecked::Syntax("a function definition or array"));
                    }
                    self.pos += 1;
                    self.finish(&mut tokens);
                    self.parse_list(Some(')'));
                }
                ')' => {
                    self.flag(Unchecked::Syntax("an unmatched `)`"));
                    self.pos += 1;
                    self.finish(&mut tokens);
                }
                '<' | '>' => self.read_redirect(&mut tokens, term),
                _ => {
                    let before = self.pos;
                    let word = self.read_word(term);
                    let fd_prefix = !word.raw.is_empty()
                        && word.raw.chars().all(|c| c.is_ascii_digit())
                        && matches!(self.peek(), Some('<' | '>'));
                    if fd_prefix {
                        self.read_redirect(&mut tokens, term);
                    } else if !word.raw.is_empty() {
                        tokens.push(Token::Word(word));
                    } else if self.pos == before {
                        // A character read_word refuses: skip it so the loop always advances.
                        self.pos += 1;
                    }
                }
            }
        }
    }

    /// Reads one redirection starting at `<`, `>` or `&>`.
    fn read_redirect(&mut self, tokens: &mut Vec<Token>, term: Option<char>) {
        let mut op = String::new();
        while let Some(c @ ('<' | '>' | '&' | '|' | '-')) = self.peek() {
            // `-` only belongs to `<<-`; `|` only to `>|`; `&` to `>&`, `&>`.
            if (c == '-' && op != "<<") || (c == '|' && op != ">") {
                break;
            }
            if c == '&' && !(op.is_empty() || op.ends_with('>') || op.ends_with('<')) {
                break;
            }
            op.push(c);
            self.pos += 1;
            if op.len() >= 3 {
                break;
            }
        }
        if (op == "<" || op == ">") && self.peek() == Some('(') {
            // Process substitution: a command whose output is a file name.
            self.pos += 1;
            self.parse_list(Some(')'));
            return;
        }
        while matches!(self.peek(), Some(' ' | '\t')) {
            self.pos += 1;
        }
        let target = self.read_word(term);
        if target.raw.is_empty() {
            self.flag(Unchecked::Syntax("a redirection without a target"));
            return;
        }
        match op.as_str() {
            "<<" | "<<-" => self.heredocs.push(PendingHeredoc {
                delimiter: target.text.clone(),
                strip_tabs: op == "<<-",
                quoted: target.raw != target.text,
            }),
            ">" | ">>" | ">|" | "&>" | "&>>" | "<>" | ">&" => {
                let dup = op == ">&"
                    && (target.text == "-" || target.text.chars().all(|c| c.is_ascii_digit()));
                let harmless = matches!(
                    target.text.as_str(),
                    "/dev/null" | "/dev/stdout" | "/dev/stderr" | "/dev/tty"
                );
                if target.expanded {
                    self.flag(Unchecked::Variable);
                } else if !dup && !harmless {
                    tokens.push(Token::Write(target));
                }
            }
            _ => {}
        }
    }

    /// Reads one word; stops at whitespace, an operator or `term`.
    fn read_word(&mut self, term: Option<char>) -> Word {
        let mut w = Word::default();
        while let Some(c) = self.peek() {
            if Some(c) == term {
                break;
            }
            match c {
                ' ' | '\t' | '\r' | '\n' | ';' | '&' | '|' | '<' | '>' | '(' | ')' => break,
                '\\' => match self.peek_at(1) {
                    Some('\n') => self.pos += 2,
                    Some(n) => {
                        w.raw.push('\\');
                        w.raw.push(n);
                        w.text.push(n);
                        self.pos += 2;
                    }
                    None => {
                        w.raw.push('\\');
                        w.text.push('\\');
                        self.pos += 1;
                    }
                },
                '\'' => {
                    let start = self.pos;
                    self.pos += 1;
                    while !matches!(self.peek(), None | Some('\'')) {
                        self.pos += 1;
                    }
                    if self.peek().is_none() {
                        self.flag(Unchecked::Unbalanced);
                        w.raw.extend(&self.chars[start..self.pos]);
                        w.text.extend(&self.chars[start + 1..self.pos]);
                        break;
                    }
                    self.pos += 1;
                    w.raw.extend(&self.chars[start..self.pos]);
                    w.text.extend(&self.chars[start + 1..self.pos - 1]);
                }
                '"' => self.read_double_quoted(&mut w),
                '`' => self.read_backticks(&mut w),
                '$' => self.read_dollar(&mut w),
                _ => {
                    w.raw.push(c);
                    w.text.push(c);
                    self.pos += 1;
                }
            }
        }
        w
    }

    fn read_double_quoted(&mut self, w: &mut Word) {
        w.raw.push('"');
        self.pos += 1;
        loop {
            match self.peek() {
                None => {
                    self.flag(Unchecked::Unbalanced);
                    return;
                }
                Some('"') => {
                    w.raw.push('"');
                    self.pos += 1;
                    return;
                }
                Some('\\') => {
                    let next = self.peek_at(1);
                    w.raw.push('\\');
                    match next {
                        Some(n @ ('$' | '`' | '"' | '\\')) => {
                            w.raw.push(n);
                            w.text.push(n);
                            self.pos += 2;
                        }
                        Some('\n') => self.pos += 2,
                        _ => {
                            w.text.push('\\');
                            self.pos += 1;
                        }
                    }
                }
                Some('`') => self.read_backticks(w),
                Some('$') => self.read_dollar(w),
                Some(c) => {
                    w.raw.push(c);
                    w.text.push(c);
                    self.pos += 1;
                }
            }
        }
    }

    fn read_backticks(&mut self, w: &mut Word) {
        let start = self.pos;
        self.pos += 1;
        self.parse_list(Some('`'));
        let seg: String = self.chars[start..self.pos].iter().collect();
        w.raw.push_str(&seg);
        w.text.push_str(&seg);
        w.expanded = true;
    }

    /// `$…` at `self.pos`: substitution, arithmetic, parameter, ANSI-C quote or a plain `$`.
    fn read_dollar(&mut self, w: &mut Word) {
        let start = self.pos;
        match self.peek_at(1) {
            Some('(') if self.peek_at(2) == Some('(') => {
                // Arithmetic: no command runs unless it nests a substitution.
                self.pos += 3;
                let mut depth = 2usize;
                while let Some(c) = self.peek() {
                    self.pos += 1;
                    match c {
                        '(' => depth += 1,
                        ')' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        '$' | '`' => {
                            self.flag(Unchecked::Syntax("a substitution inside arithmetic"))
                        }
                        _ => {}
                    }
                }
                if depth != 0 {
                    self.flag(Unchecked::Unbalanced);
                }
                w.expanded = true;
            }
            Some('(') => {
                self.pos += 2;
                self.parse_list(Some(')'));
                w.expanded = true;
            }
            Some('{') => {
                self.pos += 2;
                let mut depth = 1usize;
                while let Some(c) = self.peek() {
                    self.pos += 1;
                    match c {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        '$' | '`' => self.flag(Unchecked::Variable),
                        _ => {}
                    }
                }
                if depth != 0 {
                    self.flag(Unchecked::Unbalanced);
                }
                w.expanded = true;
            }
            Some(c) if c.is_ascii_alphabetic() || c == '_' => {
                self.pos += 1;
                while matches!(self.peek(), Some(c) if c.is_ascii_alphanumeric() || c == '_') {
                    self.pos += 1;
                }
                w.expanded = true;
            }
            Some(c) if c.is_ascii_digit() || "@*#?$!-".contains(c) => {
                self.pos += 2;
                w.expanded = true;
            }
            Some('\'') => {
                // ANSI-C quoting `$'…'`: literal text for our purposes.
                self.pos += 2;
                let body_start = self.pos;
                while let Some(c) = self.peek() {
                    if c == '\\' {
                        self.pos += 2;
                        continue;
                    }
                    if c == '\'' {
                        break;
                    }
                    self.pos += 1;
                }
                let end = self.pos.min(self.chars.len());
                if self.peek().is_none() {
                    self.flag(Unchecked::Unbalanced);
                }
                w.text.extend(&self.chars[body_start..end]);
                self.pos = (self.pos + 1).min(self.chars.len());
                let seg: String = self.chars[start..self.pos].iter().collect();
                w.raw.push_str(&seg);
                return;
            }
            _ => {
                self.pos += 1;
            }
        }
        let end = self.pos.min(self.chars.len());
        let seg: String = self.chars[start..end].iter().collect();
        w.raw.push_str(&seg);
        w.text.push_str(&seg);
    }

    /// After a newline: the bodies of the here-documents opened on the line just ended.
    fn read_heredoc_bodies(&mut self) {
        for doc in std::mem::take(&mut self.heredocs) {
            let mut closed = false;
            while self.pos < self.chars.len() {
                let line_start = self.pos;
                while !matches!(self.peek(), None | Some('\n')) {
                    self.pos += 1;
                }
                let line: String = self.chars[line_start..self.pos].iter().collect();
                if self.peek() == Some('\n') {
                    self.pos += 1;
                }
                let line = if doc.strip_tabs {
                    line.trim_start_matches('\t')
                } else {
                    line.as_str()
                };
                if line == doc.delimiter {
                    closed = true;
                    break;
                }
                if !doc.quoted && (line.contains("$(") || line.contains('`')) {
                    self.flag(Unchecked::Heredoc);
                }
            }
            if !closed {
                self.flag(Unchecked::Heredoc);
            }
        }
    }

    fn finish_heredocs_at_eof(&mut self) {
        if !self.heredocs.is_empty() {
            self.heredocs.clear();
            self.flag(Unchecked::Heredoc);
        }
    }

    /// Turns the tokens of one simple command into a [`SimpleCommand`].
    fn finish(&mut self, tokens: &mut Vec<Token>) {
        let tokens = std::mem::take(tokens);
        let mut words = Vec::new();
        let mut writes = Vec::new();
        for t in tokens {
            match t {
                Token::Word(w) => words.push(w),
                Token::Write(w) => writes.push(w.text),
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
                    self.flag(Unchecked::Syntax("a function definition"));
                    return;
                }
                _ => {}
            }
        }
        // Env-var prefixes (`FOO=1 cmd`) are skipped; a few are too powerful to ignore.
        while let Some(w) = words.get(start) {
            let Some(name) = assignment_name(&w.raw) else {
                break;
            };
            if DANGEROUS_ENV.contains(&name) || name.starts_with("DYLD_") {
                self.flag(Unchecked::DangerousEnv(name.to_string()));
            }
            start += 1;
        }
        let words = &words[start..];
        if words.is_empty() {
            if !writes.is_empty() {
                self.parts.push(SimpleCommand {
                    writes,
                    ..SimpleCommand::default()
                });
            }
            return;
        }
        let mut part = SimpleCommand {
            writes,
            ..SimpleCommand::default()
        };
        self.unwrap_into(words, &mut part, !self.escalated);
        self.parts.push(part);
    }

    /// Records `words` as a view of `part`, then unwraps wrappers / `sh -c` into further views
    /// or parts. `allowable`: whether these views may be matched by allow rules.
    fn unwrap_into(&mut self, words: &[Word], part: &mut SimpleCommand, allowable: bool) {
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
        if first.expanded {
            self.flag(Unchecked::Variable);
            return;
        }
        let name = first.text.rsplit('/').next().unwrap_or(first.text.as_str());
        let args = &words[1..];
        match name {
            "eval" => {
                self.flag(Unchecked::Eval);
                let script = args
                    .iter()
                    .map(|w| w.text.as_str())
                    .collect::<Vec<_>>()
                    .join(" ");
                self.parse_script(&script, !allowable);
            }
            "sh" | "bash" | "zsh" | "dash" | "ksh" | "mksh" | "ash" => {
                if let Some(script) = shell_script_arg(args) {
                    self.run_script_word(script, part, !allowable);
                }
            }
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
                    for w in inner
                        .iter()
                        .take_while(|w| assignment_name(&w.raw).is_some())
                    {
                        if let Some(n) = assignment_name(&w.raw)
                            && (DANGEROUS_ENV.contains(&n) || n.starts_with("DYLD_"))
                        {
                            self.flag(Unchecked::DangerousEnv(n.to_string()));
                        }
                    }
                    let inner: &[Word] = {
                        let skip = inner
                            .iter()
                            .take_while(|w| assignment_name(&w.raw).is_some())
                            .count();
                        &inner[skip..]
                    };
                    if !inner.is_empty() {
                        self.unwrap_into(inner, part, allowable && safe);
                    }
                }
            }
        }
    }

    /// A script word of `sh -c` / `su -c`: parsed into separate parts.
    fn run_script_word(&mut self, script: &Word, part: &mut SimpleCommand, escalated: bool) {
        if script.expanded {
            self.flag(Unchecked::Variable);
            return;
        }
        part.transparent = !escalated;
        self.parse_script(&script.text, escalated);
    }

    fn parse_script(&mut self, script: &str, escalated: bool) {
        if self.depth + 1 > MAX_DEPTH {
            self.flag(Unchecked::Syntax("shells nested too deeply"));
            return;
        }
        let mut sub = Parser::new(script, self.depth + 1, escalated || self.escalated);
        sub.parse_list(None);
        sub.finish_heredocs_at_eof();
        self.parts.append(&mut sub.parts);
        if let Some(u) = sub.unchecked {
            self.flag(u);
        }
    }
}

fn static_flag(flag: &str) -> &'static str {
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

fn join_raw(words: &[Word]) -> String {
    words
        .iter()
        .map(|w| w.raw.as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

/// `NAME=value` / `NAME+=value` with an unquoted name: the name.
fn assignment_name(raw: &str) -> Option<&str> {
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

/// The script of `sh [opts] -c SCRIPT`, if the options include `c`.
fn shell_script_arg(args: &[Word]) -> Option<&Word> {
    let mut has_c = false;
    let mut i = 0;
    while let Some(w) = args.get(i) {
        let t = w.text.as_str();
        if t == "--" {
            return if has_c { args.get(i + 1) } else { None };
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
            // `-o OPTION` takes a value.
            i += if flags.ends_with('o') { 2 } else { 1 };
            continue;
        }
        return if has_c { Some(w) } else { None };
    }
    None
}

/// `watch` options; returns the command words and whether `-x` (exec form) was given.
fn skip_watch_options(args: &[Word]) -> (&[Word], bool) {
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
fn strip_wrapper<'a>(name: &str, args: &'a [Word]) -> Option<(&'a [Word], bool)> {
    // Options taking a separate value, per wrapper.
    let (with_value, safe): (&[&str], bool) = match name {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn views(cmd: &str) -> Vec<Vec<String>> {
        parse(cmd).parts.into_iter().map(|p| p.deny_views).collect()
    }

    #[test]
    fn splits_operators_and_respects_quotes() {
        let p = parse("ls && git push; echo 'a;b' | wc -l");
        let allow: Vec<_> = p.parts.iter().map(|p| p.allow_views.clone()).collect();
        assert_eq!(
            allow,
            vec![
                vec!["ls"],
                vec!["git push"],
                vec!["echo 'a;b'"],
                vec!["wc -l"]
            ]
        );
        assert_eq!(p.parts[2].deny_views, vec!["echo 'a;b'", "echo a;b"]);
    }

    #[test]
    fn substitutions_are_parts() {
        let p = parse("echo $(rm -rf /) `id`");
        let all: Vec<_> = p.parts.iter().map(|p| p.deny_views[0].clone()).collect();
        assert_eq!(all, vec!["rm -rf /", "id", "echo $(rm -rf /) `id`"]);
        assert_eq!(p.unchecked, None);
    }

    #[test]
    fn wrappers_and_env() {
        let p = parse("FOO=1 sudo -u root timeout 5 rm -rf x");
        assert_eq!(
            p.parts[0].deny_views,
            vec![
                "sudo -u root timeout 5 rm -rf x",
                "timeout 5 rm -rf x",
                "rm -rf x"
            ]
        );
        assert_eq!(
            p.parts[0].allow_views,
            vec!["sudo -u root timeout 5 rm -rf x"]
        );
    }

    #[test]
    fn unchecked_cases() {
        assert_eq!(parse("$CMD x").unchecked, Some(Unchecked::Variable));
        assert_eq!(parse("eval ls").unchecked, Some(Unchecked::Eval));
        assert_eq!(parse("echo 'oops").unchecked, Some(Unchecked::Unbalanced));
        assert_eq!(parse("cat <<EOF\nhi\n").unchecked, Some(Unchecked::Heredoc));
        assert_eq!(parse("cat <<EOF\nhi\nEOF\nls").unchecked, None);
        assert_eq!(
            views("cat <<'EOF'\n$(x)\nEOF\nls"),
            vec![vec!["cat"], vec!["ls"]]
        );
    }

    #[test]
    fn deep_nesting_is_unchecked_not_a_stack_overflow() {
        let deep = "(".repeat(200_000) + "ls";
        assert_eq!(
            parse(&deep).unchecked,
            Some(Unchecked::Syntax("brackets nested too deeply"))
        );
        let deep = "echo $(".repeat(10_000);
        assert!(parse(&deep).unchecked.is_some());
    }

    proptest::proptest! {
        #[test]
        /// Fail-closed property: a command on its own line after arbitrary text is always seen,
        /// unless the text itself was reported unchecked.
        #[test]
        fn appended_command_is_never_hidden(s in r#"[a-z $(){}`'"\\;&|<>\n#=*-]{0,60}"#) {
            // A trailing backslash really does join the next line (shell semantics).
            let s = s.trim_end_matches('\\');
            let hidden = !parse(&format!("{s}\nrm -rf x"))
                .parts
                .iter()
                .any(|p| p.deny_views.iter().any(|v| v == "rm -rf x"));
            proptest::prop_assert!(!hidden || parse(s).unchecked.is_some(), "hidden after {:?}", s);
        }
    }
}
