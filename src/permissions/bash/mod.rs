//! Decomposition of a Bash command line into the simple commands permission rules are matched
//! against (spec §6.2): operators (`&&`, `||`, `;`, `|`, `&`, newlines), command and process
//! substitutions, subshells, env-var prefixes, wrappers (`sudo`, `timeout`, `env`, …) and
//! `sh -c` scripts.
//!
//! This is not a shell. It reads just enough POSIX/bash syntax to list every command the line
//! would start, and it says so ([`Unchecked`]) whenever it cannot: an unbalanced quote, a
//! variable in command position, `eval`, a here-document it cannot delimit. Callers must never
//! auto-allow a command that comes back unchecked.

mod env;
mod lexer;
mod walk;
mod wrappers;

pub use env::env_changes_what_runs;
use env::*;
use walk::*;
use wrappers::*;

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
