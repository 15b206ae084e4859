//! What can keep a command hook from starting although nothing is wrong with the hook itself:
//! the environment it is started in. Checked ahead by `rein hooks validate` and, for the
//! variables, again right before a run.
//!
//! * **Argument size** (`E2BIG`): Linux passes one argument (and one `NAME=value` environment
//!   string) of at most [`MAX_ARG_BYTES`] to a program. A longer shell command cannot be given
//!   to `/bin/sh -c` at all.
//! * **Variables in the script path**: `"$HOOKS_DIR"/deny.sh` with `HOOKS_DIR` unset runs
//!   `/deny.sh` — "not found", exit 127, which Claude Code treats as a non-blocking error, so a
//!   guard silently stops guarding. rein refuses to start such a hook instead and reports it as
//!   a hook that could not start (which blocks under `onFailure: "block"`).
//!
//! A script path that is simply wrong (a typo, a missing file) is the hook's own content, not
//! the environment's: it still runs and fails as in Claude Code.

use crate::hooks::command::{CommandForm, CommandSpec};

/// Linux's `MAX_ARG_STRLEN`: the most bytes one argument or environment string may have,
/// its terminating NUL included (32 pages of 4 KiB).
pub const MAX_ARG_BYTES: usize = 128 * 1024;

/// Programs whose first non-option argument is the script they run.
pub const INTERPRETERS: &[&str] = &[
    "sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "python", "python3", "python2", "node",
    "deno", "bun", "ruby", "perl", "php", "uv", "pwsh",
];

/// Why `spec` cannot be started as configured when the reason is its environment, not its
/// content: an argument over [`MAX_ARG_BYTES`], or a script-path variable that is unset or
/// empty in the environment the process would get.
pub fn environment_fault(spec: &CommandSpec) -> Option<String> {
    let program = match &spec.form {
        CommandForm::Shell(_) => "/bin/sh",
        CommandForm::Exec { program, .. } => program.as_str(),
    };
    if let Some(over) = oversized_argument(&spec.form) {
        return Some(format!("cannot start {program}: {over}"));
    }
    let CommandForm::Shell(command) = &spec.form else {
        return None;
    };
    let empty = empty_path_variables(command, |name| spec.variable(name));
    empty.first().map(|var| {
        format!("not started: {var}; set it in rein's environment or in settings \"env\"")
    })
}

/// An argument too long to start the command with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OversizedArgument {
    /// `the command`, `the program`, or `argument <n>`.
    pub what: String,
    /// Its length in bytes (without the NUL).
    pub bytes: usize,
}

impl std::fmt::Display for OversizedArgument {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} is {} bytes, over Linux's limit of {} bytes (128 KiB) for one argument, so it \
             cannot be started (E2BIG); put it in a script file and run that",
            self.what,
            self.bytes,
            MAX_ARG_BYTES - 1
        )
    }
}

/// The first argument of `form` that `execve` would refuse as too long (for a shell command,
/// the command string given to `sh -c`).
pub fn oversized_argument(form: &CommandForm) -> Option<OversizedArgument> {
    let too_long = |text: &str| text.len() >= MAX_ARG_BYTES;
    match form {
        CommandForm::Shell(command) => too_long(command).then(|| OversizedArgument {
            what: "the command".to_string(),
            bytes: command.len(),
        }),
        CommandForm::Exec { program, args } => {
            if too_long(program) {
                return Some(OversizedArgument {
                    what: "the program".to_string(),
                    bytes: program.len(),
                });
            }
            args.iter()
                .enumerate()
                .find(|(_, a)| too_long(a))
                .map(|(i, a)| OversizedArgument {
                    what: format!("argument {}", i + 1),
                    bytes: a.len(),
                })
        }
    }
}

/// A variable of a script path that expands to nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmptyPathVariable {
    /// The variable's name.
    pub name: String,
    /// The word it is in, as written (`"$HOOKS_DIR"/deny.sh`).
    pub word: String,
    /// Set but empty, rather than unset.
    pub empty: bool,
}

impl std::fmt::Display for EmptyPathVariable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = if self.empty { "empty" } else { "not set" };
        write!(
            f,
            "${} in the script path {} is {state}, so the path would lose that part",
            self.name, self.word
        )
    }
}

/// The variables of the words that name what a shell command runs which expand to nothing
/// under `lookup` (`None`: unset). Those words are the first word after leading
/// `NAME=value` assignments and `exec`, and, when that word is an interpreter
/// ([`INTERPRETERS`], `.`, `source`), its first non-option argument. Only plain `$NAME` and
/// `${NAME}` outside single quotes count: `${NAME:-default}` and the like expand to something
/// by design, and special parameters (`$1`, `$@`) are not settings.
pub fn empty_path_variables(
    command: &str,
    lookup: impl Fn(&str) -> Option<String>,
) -> Vec<EmptyPathVariable> {
    let mut out = Vec::new();
    for word in path_words(command) {
        for name in &word.vars {
            let value = lookup(name);
            if value.as_deref().is_none_or(str::is_empty) {
                out.push(EmptyPathVariable {
                    name: name.clone(),
                    word: word.raw.clone(),
                    empty: value.is_some(),
                });
            }
        }
    }
    out
}

/// One word of a shell command: its text as written, and the plain variables in it.
#[derive(Debug, Default)]
struct Word {
    raw: String,
    /// Text after quote removal, with every expansion left out (enough to tell an assignment,
    /// an option or an interpreter's name).
    literal: String,
    vars: Vec<String>,
}

/// The words naming what `command` runs (see [`empty_path_variables`]).
fn path_words(command: &str) -> Vec<Word> {
    let mut words = first_command_words(command).into_iter();
    let mut out = Vec::new();
    let Some(program) = words
        .by_ref()
        .find(|w| !is_assignment(&w.literal) && w.literal != "exec")
    else {
        return out;
    };
    let name = program
        .literal
        .rsplit('/')
        .next()
        .unwrap_or_default()
        .to_string();
    out.push(program);
    if name == "." || name == "source" || INTERPRETERS.contains(&name.as_str()) {
        for w in words {
            if matches!(w.literal.as_str(), "-c" | "-m" | "-e" | "--eval" | "run") {
                break;
            }
            if !w.literal.starts_with('-') {
                out.push(w);
                break;
            }
        }
    }
    out
}

fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty()
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !name.starts_with(|c: char| c.is_ascii_digit())
    })
}

/// Splits the first simple command (up to `;`, `&`, `|`, `<`, `>`, `(`, `)` or a newline
/// outside quotes) into words. Unbalanced quotes end the scan.
fn first_command_words(command: &str) -> Vec<Word> {
    let chars: Vec<char> = command.chars().collect();
    let mut words = Vec::new();
    let mut cur: Option<Word> = None;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if matches!(c, ' ' | '\t') {
            words.extend(cur.take());
            i += 1;
            continue;
        }
        if matches!(c, ';' | '&' | '|' | '<' | '>' | '(' | ')' | '\n') {
            break;
        }
        let word = cur.get_or_insert_with(Word::default);
        let start = i;
        match c {
            '\'' => match chars[i + 1..].iter().position(|&x| x == '\'') {
                Some(p) => {
                    word.literal.extend(&chars[i + 1..i + 1 + p]);
                    i += p + 2;
                }
                None => break,
            },
            '"' => {
                i += 1;
                loop {
                    match chars.get(i) {
                        None => {
                            words.extend(cur.take());
                            return words;
                        }
                        Some('"') => {
                            i += 1;
                            break;
                        }
                        Some('\\') => {
                            if let Some(&n) = chars.get(i + 1) {
                                word.literal.push(n);
                            }
                            i += 2;
                        }
                        Some('$') => i = variable(&chars, i, word),
                        Some(&other) => {
                            word.literal.push(other);
                            i += 1;
                        }
                    }
                }
            }
            '\\' => {
                if let Some(&n) = chars.get(i + 1) {
                    word.literal.push(n);
                }
                i += 2;
            }
            '$' => i = variable(&chars, i, word),
            _ => {
                word.literal.push(c);
                i += 1;
            }
        }
        let end = i.min(chars.len());
        word.raw.extend(&chars[start..end]);
    }
    words.extend(cur.take());
    words
}

/// Reads the expansion at `chars[i] == '$'` into `word`; returns the index after it.
fn variable(chars: &[char], i: usize, word: &mut Word) -> usize {
    let is_name_char = |c: &char| c.is_ascii_alphanumeric() || *c == '_';
    if chars.get(i + 1) == Some(&'{') {
        let Some(p) = chars[i + 2..].iter().position(|&c| c == '}') else {
            return chars.len();
        };
        let inner: String = chars[i + 2..i + 2 + p].iter().collect();
        if !inner.is_empty()
            && inner.chars().all(|c| is_name_char(&c))
            && !inner.starts_with(|c: char| c.is_ascii_digit())
        {
            word.vars.push(inner);
        }
        return i + 3 + p;
    }
    let len = chars[i + 1..]
        .iter()
        .take_while(|c| is_name_char(c))
        .count();
    let name: String = chars[i + 1..i + 1 + len].iter().collect();
    if len == 0 {
        // `$(…)`, `$1`, `$@`, a lone `$`: not a variable a setting names.
        word.literal.push('$');
        return i + 1;
    }
    if !name.starts_with(|c: char| c.is_ascii_digit()) {
        word.vars.push(name);
    }
    i + 1 + len
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(command: &str, set: &[(&str, &str)]) -> Vec<String> {
        empty_path_variables(command, |n| {
            set.iter()
                .find(|(k, _)| *k == n)
                .map(|(_, v)| v.to_string())
        })
        .into_iter()
        .map(|v| v.name)
        .collect()
    }

    #[test]
    fn variables_of_the_script_path_that_expand_to_nothing() {
        assert_eq!(names("\"$HOOKS\"/deny.sh", &[]), ["HOOKS"]);
        assert_eq!(names("${HOOKS}/deny.sh --x $OTHER", &[]), ["HOOKS"]);
        assert_eq!(names("$HOOKS/deny.sh", &[("HOOKS", "")]), ["HOOKS"]);
        assert!(names("$HOOKS/deny.sh", &[("HOOKS", "/h")]).is_empty());
        // Assignments and `exec` come before the program.
        assert_eq!(names("A=1 exec \"$D/x.sh\"", &[]), ["D"]);
        // An interpreter's script argument is a script path too; its options are not.
        assert_eq!(names("python3 -u \"$D/x.py\" $ARG", &[]), ["D"]);
        assert!(names("bash -c \"$CMD\"", &[]).is_empty());
        // Single quotes, defaults, special parameters, substitutions: nothing to report.
        assert!(names("'$HOOKS/deny.sh'", &[]).is_empty());
        assert!(names("${HOOKS:-/opt/h}/deny.sh", &[]).is_empty());
        assert!(names("$1/x.sh; $(pwd)/y.sh", &[]).is_empty());
        // Only the first simple command.
        assert!(names("true && $LATER/x.sh", &[]).is_empty());
    }

    #[test]
    fn the_word_is_reported_as_written() {
        let found = empty_path_variables("\"$HOOKS\"/deny.sh arg", |_| None);
        assert_eq!(found[0].word, "\"$HOOKS\"/deny.sh");
        assert!(!found[0].empty);
    }

    #[test]
    fn arguments_over_128_kib_cannot_be_started() {
        let fits = "x".repeat(MAX_ARG_BYTES - 1);
        let over = "x".repeat(MAX_ARG_BYTES);
        assert_eq!(oversized_argument(&CommandForm::Shell(fits.clone())), None);
        assert_eq!(
            oversized_argument(&CommandForm::Shell(over.clone())),
            Some(OversizedArgument {
                what: "the command".into(),
                bytes: MAX_ARG_BYTES
            })
        );
        let exec = CommandForm::Exec {
            program: "/bin/echo".into(),
            args: vec![fits, over],
        };
        assert_eq!(
            oversized_argument(&exec).map(|o| o.what),
            Some("argument 2".to_string())
        );
    }
}
