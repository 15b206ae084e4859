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
    /// An env-var prefix not on the list of harmless variables: allow rules do not cover it.
    EnvPrefix(String),
    /// A command word the parser cannot read (`/bin/r?`, `{rm,x}`, a function defined on the
    /// line, a shell reading its commands from stdin, `alias`, `coproc`, `mapfile -C`).
    HiddenCommand(&'static str),
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
            Unchecked::EnvPrefix(name) => format!(
                "The variable {name} set before this command is not on rein's list of harmless \
                 variables, so allow rules do not cover it"
            ),
            Unchecked::HiddenCommand(what) => {
                format!("This command uses {what}, so rein can't see which command runs")
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
    /// Input redirection targets (`< file`, `<> file`), unquoted.
    pub reads: Vec<String>,
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
    /// Commands whose text is only partly known: each holds the known beginning of a command
    /// the line may run (`"git "` for `git $SUB`, `""` when nothing is known, e.g. `$c x` or a
    /// shell reading stdin) and why the rest is hidden. Deny and ask rules treat a command as
    /// matching when its known beginning could continue into what they name (fail closed).
    pub open: Vec<OpenCommand>,
}

/// A command the parser sees only the beginning of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenCommand {
    /// The known text, words joined by one space (`""`: nothing is known).
    pub prefix: String,
    /// Why the rest cannot be read.
    pub why: Unchecked,
}

/// Decomposes `command`. Never fails: problems are reported in [`ParsedCommand::unchecked`].
pub fn parse(command: &str) -> ParsedCommand {
    let mut parser = Parser::new(command, 0, false);
    parser.parse_list(None);
    parser.finish_heredocs_at_eof();
    ParsedCommand {
        parts: parser.parts,
        unchecked: parser.unchecked,
        open: parser.open,
    }
}

/// Nesting limit for `sh -c` inside `sh -c` …; deeper lines are reported unchecked.
const MAX_DEPTH: usize = 8;

/// Nesting limit for `(`, `$(` and backticks: the parser recurses on them, and a hostile line of
/// a million `(` must not overflow the stack.
const MAX_NEST: usize = 64;

/// Env-var prefixes that may stand before a command an allow rule covers: they change output
/// formatting or build flags, not which code runs. The names are Claude Code 2.1.328's list
/// (read from its binary); any other prefix makes the command not auto-allowable.
const SAFE_ENV: &[&str] = &[
    "GOEXPERIMENT",
    "GOOS",
    "GOARCH",
    "CGO_ENABLED",
    "GO111MODULE",
    "RUST_BACKTRACE",
    "RUST_LOG",
    "NODE_ENV",
    "PYTHONUNBUFFERED",
    "PYTHONDONTWRITEBYTECODE",
    "PYTEST_DISABLE_PLUGIN_AUTOLOAD",
    "PYTEST_DEBUG",
    "ANTHROPIC_API_KEY",
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_CTYPE",
    "LC_TIME",
    "CHARSET",
    "TERM",
    "COLORTERM",
    "NO_COLOR",
    "FORCE_COLOR",
    "TZ",
    "LS_COLORS",
    "LSCOLORS",
    "GREP_COLOR",
    "GREP_COLORS",
    "GCC_COLORS",
    "TIME_STYLE",
    "BLOCK_SIZE",
    "BLOCKSIZE",
    "COLUMNS",
    "LINES",
    "CLICOLOR",
    "CLICOLOR_FORCE",
    "CI",
    "DEBIAN_FRONTEND",
    "GIT_TERMINAL_PROMPT",
];

/// Env vars whose value changes which program, library or configuration a command loads: with
/// one of them set, the command word no longer says what runs, so every deny/ask rule may match.
const HIJACK_ENV: &[&str] = &[
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
    "HOME",
    "XDG_CONFIG_HOME",
    "ZDOTDIR",
    "NODE_OPTIONS",
    "NODE_PATH",
    "PYTHONPATH",
    "PYTHONSTARTUP",
    "PYTHONHOME",
    "PERL5OPT",
    "PERL5LIB",
    "RUBYOPT",
    "RUBYLIB",
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_EXEC_PATH",
    "GIT_TEMPLATE_DIR",
    "GIT_ASKPASS",
    "SSH_ASKPASS",
    "SUDO_ASKPASS",
    "GIT_CONFIG",
    "GIT_CONFIG_GLOBAL",
    "GIT_CONFIG_SYSTEM",
    "GIT_CONFIG_COUNT",
];

/// Env vars whose value is itself run as a shell command: parsed like `sh -c VALUE`.
const SCRIPT_ENV: &[&str] = &[
    "GIT_SSH_COMMAND",
    "GIT_PROXY_COMMAND",
    "SRT_SSH_PROXY_COMMAND",
    "GIT_EXTERNAL_DIFF",
    "GIT_PAGER",
    "GIT_EDITOR",
    "GIT_SEQUENCE_EDITOR",
    "PAGER",
    "MANPAGER",
    "SYSTEMD_PAGER",
    "LESSOPEN",
    "LESSCLOSE",
    "EDITOR",
    "VISUAL",
];

fn is_hijack_env(name: &str) -> bool {
    HIJACK_ENV.contains(&name)
        || name.starts_with("DYLD_")
        // `BASH_FUNC_name%%`: every bash started with it runs the function for `name`.
        || name.starts_with("BASH_FUNC_")
        || name.starts_with("GIT_CONFIG_KEY_")
        || name.starts_with("GIT_CONFIG_VALUE_")
        || name.starts_with("GIT_CONFIG_PARAMETERS")
        || name.to_ascii_lowercase().starts_with("npm_config_")
}

/// Whether setting `name` changes which program, library or configuration a command loads, or
/// is itself run as a command (repository settings may not set these in an untrusted folder).
pub fn env_changes_what_runs(name: &str) -> bool {
    is_hijack_env(name) || SCRIPT_ENV.contains(&name)
}

/// A value on the safe list that still looks like a path (`LANG=../x`) is not harmless.
fn is_safe_env(name: &str, value: &str) -> bool {
    SAFE_ENV.contains(&name)
        && !(value.starts_with(['/', '.', '~']) || value.contains("//") || value.contains(".."))
}

/// Commands that run their arguments as another command, with options rein does not model:
/// every suffix of their arguments is also a view deny/ask rules are matched against.
const RUNS_ARGS: &[&str] = &[
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

/// Most views one command may collect before the parser gives up reading it.
const MAX_VIEWS: usize = 256;

#[derive(Debug, Clone, Default)]
struct Word {
    /// As written (quotes kept).
    raw: String,
    /// After quote removal (expansions kept literally).
    text: String,
    /// Contains a parameter expansion or substitution outside single quotes.
    expanded: bool,
    /// Byte offset in `text` of the first expansion or substitution.
    expand_at: Option<usize>,
    /// Byte offset in `text` of the first unquoted glob or brace character (`*?[{`).
    glob_at: Option<usize>,
}

impl Word {
    fn mark_expansion(&mut self) {
        self.expanded = true;
        if self.expand_at.is_none() {
            self.expand_at = Some(self.text.len());
        }
    }
}

#[derive(Debug)]
enum Token {
    Word(Word),
    /// An output redirection target (`> file`), already filtered.
    Write(Word),
    /// An input redirection source (`< file`).
    Read(Word),
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
    /// Current wrapper nesting inside one simple command (`nice nice … rm`).
    wrap_depth: usize,
    parts: Vec<SimpleCommand>,
    unchecked: Option<Unchecked>,
    open: Vec<OpenCommand>,
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
            wrap_depth: 0,
            parts: Vec::new(),
            unchecked: None,
            open: Vec::new(),
            heredocs: Vec::new(),
        }
    }

    /// Records that the line could not be fully checked. Reasons that hide which command runs
    /// (syntax the parser does not follow, an unclosed quote, an unreadable here-document, a
    /// hidden command word) also open a command of unknown text.
    fn flag(&mut self, why: Unchecked) {
        let hides_command = match &why {
            Unchecked::Heredoc
            | Unchecked::Unbalanced
            | Unchecked::Syntax(_)
            | Unchecked::HiddenCommand(_)
            | Unchecked::DangerousEnv(_) => true,
            Unchecked::Variable | Unchecked::Eval | Unchecked::EnvPrefix(_) => false,
        };
        if hides_command && !self.open.iter().any(|o| o.prefix.is_empty()) {
            self.open.push(OpenCommand {
                prefix: String::new(),
                why: why.clone(),
            });
        }
        if self.unchecked.is_none() {
            self.unchecked = Some(why);
        }
    }

    /// A command of which only `prefix` is known (for deny/ask rules; whether allow rules may
    /// still vouch for the line is the caller's `flag`).
    fn open_command(&mut self, prefix: String, why: Unchecked) {
        if self.open.len() < MAX_VIEWS && !self.open.iter().any(|o| o.prefix == prefix) {
            self.open.push(OpenCommand { prefix, why });
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
                    let array =
                        matches!(tokens.last(), Some(Token::Word(w)) if w.raw.ends_with('='));
                    if array {
                        // `a=(x y)`: the elements run nothing unless they hold substitutions,
                        // which the list below reads; allow rules still do not vouch for it.
                        self.flag(Unchecked::Variable);
                    } else if !tokens.is_empty() {
                        self.flag(Unchecked::HiddenCommand("a function defined on the line"));
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
            "<" | "<&" if !target.expanded && !target.text.chars().all(|c| c.is_ascii_digit()) => {
                tokens.push(Token::Read(target));
            }
            ">" | ">>" | ">|" | "&>" | "&>>" | "<>" | ">&" => {
                if op == "<>" && !target.expanded {
                    tokens.push(Token::Read(target.clone()));
                }
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
        // Unquoted `*?[{` (offsets in `w.text`): whether they glob is decided at the end.
        let mut specials: Vec<(usize, char)> = Vec::new();
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
                    if matches!(c, '*' | '?' | '[' | '{') {
                        specials.push((w.text.len(), c));
                    }
                    w.raw.push(c);
                    w.text.push(c);
                    self.pos += 1;
                }
            }
        }
        w.glob_at = specials.into_iter().find_map(|(at, c)| {
            let rest = &w.text[at..];
            let globs = match c {
                '[' => rest[1..].contains(']'),
                '{' => rest.contains('}') && (rest.contains(',') || rest.contains("..")),
                _ => true,
            };
            globs.then_some(at)
        });
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
        w.mark_expansion();
        w.raw.push_str(&seg);
        w.text.push_str(&seg);
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
                w.mark_expansion();
            }
            Some('(') => {
                self.pos += 2;
                self.parse_list(Some(')'));
                w.mark_expansion();
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
                w.mark_expansion();
            }
            Some(c) if c.is_ascii_alphabetic() || c == '_' => {
                self.pos += 1;
                while matches!(self.peek(), Some(c) if c.is_ascii_alphanumeric() || c == '_') {
                    self.pos += 1;
                }
                w.mark_expansion();
            }
            Some(c) if c.is_ascii_digit() || "@*#?$!-".contains(c) => {
                self.pos += 2;
                w.mark_expansion();
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
                let body: String = self.chars[body_start..end].iter().collect();
                w.text.push_str(&decode_ansi_c(&body));
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
    fn env_prefix(&mut self, w: &Word, command_follows: bool) {
        if let Some(name) = assignment_name(&w.raw) {
            self.env_assignment(name, w, command_follows);
        }
    }

    /// [`Parser::env_prefix`] for an assignment to `name`.
    fn env_assignment(&mut self, name: &str, w: &Word, command_follows: bool) {
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
    fn open_hidden_words(&mut self, words: &[Word]) {
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
    fn unwrap_named(&mut self, words: &[Word], part: &mut SimpleCommand, allowable: bool) {
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
    fn unwrap_generic(&mut self, args: &[Word], part: &mut SimpleCommand) {
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

/// The value of an ANSI-C quoted string `$'…'` (bash's escapes), so `$'\x72m'` reads as `rm`.
fn decode_ansi_c(body: &str) -> String {
    let mut out = String::new();
    let mut chars = body.chars().peekable();
    let take_digits =
        |chars: &mut std::iter::Peekable<std::str::Chars<'_>>, radix: u32, max: usize| {
            let mut v = 0u32;
            let mut n = 0;
            while n < max {
                match chars.peek().and_then(|c| c.to_digit(radix)) {
                    Some(d) => {
                        v = v.saturating_mul(radix).saturating_add(d);
                        chars.next();
                        n += 1;
                    }
                    None => break,
                }
            }
            (v, n)
        };
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(e) = chars.next() else {
            out.push('\\');
            break;
        };
        match e {
            'n' => out.push('\n'),
            't' => out.push('\t'),
            'r' => out.push('\r'),
            'a' => out.push('\u{7}'),
            'b' => out.push('\u{8}'),
            'e' | 'E' => out.push('\u{1b}'),
            'f' => out.push('\u{c}'),
            'v' => out.push('\u{b}'),
            '\\' | '\'' | '"' | '?' => out.push(e),
            'x' => {
                let (v, n) = take_digits(&mut chars, 16, 2);
                if n == 0 {
                    out.push_str("\\x");
                } else if let Some(ch) = char::from_u32(v) {
                    out.push(ch);
                }
            }
            'u' | 'U' => {
                let (v, n) = take_digits(&mut chars, 16, if e == 'u' { 4 } else { 8 });
                match char::from_u32(v).filter(|_| n > 0) {
                    Some(ch) => out.push(ch),
                    None => {
                        out.push('\\');
                        out.push(e);
                    }
                }
            }
            'c' => {
                if let Some(ch) = chars.next() {
                    out.push(char::from_u32(ch as u32 & 0x1f).unwrap_or(ch));
                }
            }
            '0'..='7' => {
                let mut v = e.to_digit(8).unwrap_or(0);
                let (rest, n) = take_digits(&mut chars, 8, 2);
                if n > 0 {
                    v = v * 8u32.pow(n as u32) + rest;
                }
                if let Some(ch) = char::from_u32(v) {
                    out.push(ch);
                }
            }
            other => {
                out.push('\\');
                out.push(other);
            }
        }
    }
    out
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

/// The variable a wrapper's argument assigns before the command, if it is one. `env` takes
/// every word with a `=` as an assignment, whatever its name (`BASH_FUNC_ls%%=…`, which every
/// bash started under it runs as the function `ls`); the shell only takes identifiers.
fn wrapper_assignment<'w>(wrapper: &str, w: &'w Word) -> Option<&'w str> {
    if wrapper == "env" {
        w.text
            .split_once('=')
            .map(|(name, _)| name)
            .filter(|n| !n.is_empty())
    } else {
        assignment_name(&w.raw)
    }
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

/// What a shell invocation runs.
enum ShellScript<'a> {
    /// `sh -c SCRIPT`.
    Word(&'a Word),
    /// A script file operand (`sh x.sh`): an interpreter running a file rein does not read.
    File,
    /// Nothing on the command line: commands come from stdin (`| sh`, `bash <<<`, `sh -s`,
    /// `sh -c` without a script).
    Missing,
}

/// What `sh [opts] …` runs.
fn shell_script_arg(args: &[Word]) -> ShellScript<'_> {
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
fn xargs_replaces_command(args: &[Word], inner: &[Word]) -> bool {
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

/// Commands in [`RUNS_ARGS`] that [`strip_wrapper`] and the named cases do not model.
fn is_generic_wrapper(name: &str) -> bool {
    RUNS_ARGS.contains(&name)
        && strip_wrapper_options(name).is_none()
        && !matches!(name, "watch" | "su")
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
    let (with_value, safe) = strip_wrapper_options(name)?;
    strip_wrapper_args(name, args, with_value, safe)
}

/// For a wrapper [`strip_wrapper`] models: its options taking a separate value, and whether it
/// keeps the caller's privileges.
fn strip_wrapper_options(name: &str) -> Option<(&'static [&'static str], bool)> {
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

fn strip_wrapper_args<'a>(
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
