//! Static checks of configured hook handlers for the mistakes Claude Code never reports: a
//! script that does not exist (an error) or is not executable, a tool matcher that differs from
//! the tool's name only in case (an error: matching is case-sensitive), bash-only syntax in a
//! script that `/bin/sh` runs, a PreToolUse guard whose only failure is `exit 1` (which does not block),
//! a `timeout` written in milliseconds, and what the environment keeps a hook from starting
//! (a command over 128 KiB, a script-path variable that expands to nothing). Used by `rein hooks validate` and `rein hooks list`.
//!
//! Nothing here runs a hook. The command line is split like a POSIX shell would split its first
//! simple command, expanding only what rein knows at load time (`$CLAUDE_PROJECT_DIR`,
//! `${CLAUDE_PROJECT_DIR}`, `$HOME`, a leading `~`); a word that needs any other variable is not
//! checked, so a check never fires on a guess.

use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use regex::Regex;

use crate::hooks::command::{CommandForm, CommandSpec};
use crate::hooks::environment::{HookEnvironment, hook_env, removed_env};
use crate::hooks::preflight::{INTERPRETERS, empty_path_variables, oversized_argument};
use crate::hooks::spec::HookEvent;
pub use crate::hooks::timeout::format_seconds;
use crate::settings::schema::{
    CommandHandler, ConfiguredHandler, Diagnostic, HandlerKind, Location, Severity,
};
use crate::settings::tool_names;

/// A `timeout` at or above this many seconds is most likely milliseconds.
pub const MILLISECONDS_SUSPECT: f64 = 1000.0;
/// Scripts larger than this are not scanned (a hook script is a few KiB).
const MAX_SCAN_BYTES: u64 = 1024 * 1024;

/// The interpreters that read POSIX sh (dash on Debian/Ubuntu), not bash.
const POSIX_SHELLS: &[&str] = &["sh", "dash", "ash", "."];
/// Extensions that make a later argument of a PATH command look like a script file.
const SCRIPT_EXTENSIONS: &[&str] = &[
    ".sh", ".bash", ".py", ".js", ".mjs", ".cjs", ".ts", ".rb", ".pl", ".php",
];

/// What the checks need to resolve paths.
#[derive(Debug, Clone, Copy)]
pub struct LintContext<'a> {
    /// `CLAUDE_PROJECT_DIR`, and the directory relative paths are resolved from (hooks run with
    /// the session's cwd, which starts there).
    pub project_dir: &'a Path,
    /// `~` and `$HOME`.
    pub home: &'a Path,
    /// Settings `env`, which hooks get on top of rein's environment.
    pub settings_env: &'a [(String, String)],
    /// `allowedHttpHookUrls` / `httpHookAllowedEnvVars`.
    pub http_policy: &'a crate::hooks::http::HttpHookPolicy,
    /// Names of the configured MCP servers (every scope, approved or not); `None`: unknown,
    /// so nothing is checked against them.
    pub mcp_servers: Option<&'a [String]>,
}

/// How the script named by a command is started.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Runner {
    /// Executed directly (its `#!` line decides the interpreter; without one `/bin/sh` reads it).
    Direct,
    /// Given to an interpreter found on PATH (`python3 x.py`, `sh x.sh`, `. x.sh`).
    Interpreter(String),
}

/// The script a command runs, as resolved.
#[derive(Debug, Clone)]
struct Script {
    /// The word as written (after quote removal).
    word: String,
    path: PathBuf,
    runner: Runner,
}

/// Every problem found in `handler`, located at the handler object.
pub fn lint_handler(handler: &ConfiguredHandler, ctx: LintContext<'_>) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let at = &handler.origin.location;
    if let Some(t) = handler.timeout
        && t >= MILLISECONDS_SUSPECT
    {
        out.push(warning(
            at,
            format!(
                "\"timeout\": {} is in seconds ({}); if you meant milliseconds, write {}",
                format_seconds(t),
                humanize(t),
                format_seconds(t / 1000.0)
            ),
        ));
    }
    out.extend(
        mcp_matcher_warnings(handler, ctx)
            .into_iter()
            .map(|m| warning(at, m)),
    );
    if handler.inactive.is_none() && tool_names::matches_tool_names(handler.event) {
        for slip in tool_names::case_slips(&handler.matcher) {
            out.push(error(at, slip.message()));
        }
    }
    if let (HandlerKind::McpTool(m), Some(servers)) = (&handler.kind, ctx.mcp_servers)
        && !servers.contains(&m.server)
    {
        out.push(Diagnostic {
            severity: Severity::Error,
            location: at.clone(),
            message: format!(
                "mcp_tool hook names MCP server \"{}\", which is not configured ({}); every firing is an error{}",
                m.server,
                if servers.is_empty() {
                    "no MCP server is configured".to_string()
                } else {
                    format!("configured: {}", servers.join(", "))
                },
                if handler.on_failure == crate::settings::schema::OnFailure::Block {
                    " and blocks (onFailure: \"block\")"
                } else {
                    ""
                }
            ),
        });
    }
    if let HandlerKind::Http(http) = &handler.kind {
        let on_failure = handler.on_failure;
        for message in crate::hooks::http::lint(http, ctx.http_policy, on_failure) {
            out.push(warning(at, message));
        }
    }
    let HandlerKind::Command(command) = &handler.kind else {
        return out;
    };
    out.extend(environment_faults(handler, command, ctx));
    let Some(script) = resolve_script(command, ctx) else {
        return out;
    };
    let shown = script.path.display();
    let meta = match std::fs::metadata(&script.path) {
        Ok(m) => m,
        Err(_) => {
            let quoted_var = command.command.contains("'$CLAUDE_PROJECT_DIR")
                || command.command.contains("'${CLAUDE_PROJECT_DIR}");
            let hint = if quoted_var {
                " (single quotes stop the shell from expanding $CLAUDE_PROJECT_DIR; use double quotes)"
            } else {
                ""
            };
            let effect = if command.args.is_some() {
                "the hook cannot be started"
            } else {
                "/bin/sh exits 127 and the hook counts as a non-blocking error"
            };
            out.push(error(
                at,
                format!(
                    "script {shown} does not exist (from {:?}, relative to the project directory){hint}; {effect}",
                    script.word
                ),
            ));
            return out;
        }
    };
    if !meta.is_file() {
        out.push(error(
            at,
            format!("script {shown} is not a regular file; the hook cannot run it"),
        ));
        return out;
    }
    if script.runner == Runner::Direct && meta.permissions().mode() & 0o111 == 0 {
        out.push(warning(
            at,
            format!(
                "script {shown} is not executable (chmod +x it); /bin/sh exits 126 and the action goes ahead as if the hook said nothing"
            ),
        ));
    }
    let Some(text) = read_text(&script.path) else {
        return out;
    };
    let shebang = text.lines().next().filter(|l| l.starts_with("#!"));
    let under_sh = match &script.runner {
        Runner::Interpreter(name) => POSIX_SHELLS.contains(&name.as_str()),
        // Without `#!`, exec fails with ENOEXEC and /bin/sh reads the file itself.
        Runner::Direct => shebang.is_none() && command.args.is_none(),
    };
    if command.args.is_some() && script.runner == Runner::Direct && shebang.is_none() {
        out.push(warning(
            at,
            format!(
                "script {shown} has no #! line; in exec form (\"args\") there is no shell to fall back to, so it cannot be started"
            ),
        ));
    }
    if under_sh && let Some((line, what)) = find_bashism(&text) {
        let how = match &script.runner {
            Runner::Interpreter(name) if name == "." => format!("`. {}` sources it", script.word),
            Runner::Interpreter(name) => format!("`{name} {}` runs it", script.word),
            Runner::Direct => "it has no #! line, so /bin/sh runs it".to_string(),
        };
        out.push(warning(
            at,
            format!(
                "script {shown} line {line} uses {what}, which is bash-only, but {how} with /bin/sh (dash on Debian/Ubuntu); run it as `bash {}` or give it a #!/bin/bash line and run it directly",
                script.word
            ),
        ));
    }
    if handler.event.is_some_and(|e| e.spec().decides_permission)
        && let Some(line) = exit_one_only(&text)
    {
        let event = handler.event.map(HookEvent::as_str).unwrap_or("PreToolUse");
        out.push(warning(
            at,
            format!(
                "script {shown} can never block this {event} call: its only non-zero exit is `exit 1` (line {line}), and only exit 2 blocks (exit 1 lets the tool run); exit 2 with the reason on stderr, or print {{\"hookSpecificOutput\":{{\"hookEventName\":\"{event}\",\"permissionDecision\":\"deny\",…}}}}"
            ),
        ));
    }
    out
}

/// Matchers aimed at MCP tools that can never match: `mcp__server` alone (tool names are
/// `mcp__<server>__<tool>`, and a hook matcher without regex characters is an exact name), and
/// a matcher that names a server which is not configured.
fn mcp_matcher_warnings(handler: &ConfiguredHandler, ctx: LintContext<'_>) -> Vec<String> {
    let mut out = Vec::new();
    let Some(text) = handler.matcher_text.as_deref() else {
        return out;
    };
    if !handler.event.is_some_and(HookEvent::is_tool_event) {
        return out;
    }
    for alt in text.split('|') {
        let Some(rest) = alt.trim().strip_prefix("mcp__") else {
            continue;
        };
        let server: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
            .collect();
        let server = match server.find("__") {
            Some(i) => server[..i].to_string(),
            None => server,
        };
        let literal_only = rest
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if literal_only && !rest.contains("__") {
            out.push(format!(
                "matcher {alt:?} matches no tool: MCP tool names are mcp__<server>__<tool>; write \"mcp__{rest}__.*\" for every tool of the server"
            ));
            continue;
        }
        if server.is_empty() {
            continue;
        }
        // Only when some server is configured: then a name that is not one is most likely a
        // typo. Without any, such matchers are common in shared settings and say nothing.
        if let Some(servers) = ctx.mcp_servers
            && !servers.is_empty()
            && !servers.contains(&server)
        {
            out.push(format!(
                "matcher {alt:?} is about MCP server \"{server}\", which is not configured (configured: {}); it matches nothing until one is",
                servers.join(", ")
            ));
        }
    }
    out
}

/// What the environment will keep this hook from doing, seen ahead (see
/// [`crate::hooks::preflight`]): an argument over 128 KiB (an error: it can never start), and a
/// variable of its script path that is unset or empty here and in settings `env` (a warning:
/// the environment rein runs in may differ).
fn environment_faults(
    handler: &ConfiguredHandler,
    command: &CommandHandler,
    ctx: LintContext<'_>,
) -> Vec<Diagnostic> {
    const AT_RUN_TIME: &str = "counts it as a hook that could not start, which blocks the call \
                               only with \"onFailure\": \"block\"";
    let at = &handler.origin.location;
    let form = match &command.args {
        None => CommandForm::Shell(command.command.clone()),
        Some(args) => CommandForm::Exec {
            program: command.command.clone(),
            args: args.clone(),
        },
    };
    if let Some(over) = oversized_argument(&form) {
        return vec![Diagnostic {
            severity: Severity::Error,
            location: at.clone(),
            message: format!("{over}; rein {AT_RUN_TIME}"),
        }];
    }
    let CommandForm::Shell(text) = &form else {
        return Vec::new();
    };
    // The environment the hook would get (values are stand-ins; only emptiness matters).
    let mut env = HookEnvironment::new(ctx.project_dir, "lint", ctx.home);
    env.extra_env = ctx.settings_env.to_vec();
    let env_file = handler
        .event
        .is_some_and(|e| e.spec().env_file != crate::hooks::spec::EnvFile::None)
        .then_some(Path::new("/env-file"));
    let mut spec = CommandSpec::new(
        form.clone(),
        ctx.project_dir.to_path_buf(),
        Default::default(),
    );
    spec.env = hook_env(&env, env_file, None, handler.origin.plugin.as_deref());
    spec.env_remove = removed_env();
    empty_path_variables(text, |name| spec.variable(name))
        .into_iter()
        .map(|var| {
            warning(
                at,
                format!(
                    "{var} (checked against this environment and settings \"env\"); rein does \
                     not start a hook then, and {AT_RUN_TIME}"
                ),
            )
        })
        .collect()
}

fn error(at: &Location, message: String) -> Diagnostic {
    Diagnostic {
        severity: Severity::Error,
        location: at.clone(),
        message,
    }
}

fn warning(at: &Location, message: String) -> Diagnostic {
    Diagnostic {
        severity: Severity::Warning,
        location: at.clone(),
        message,
    }
}

fn humanize(t: f64) -> String {
    if t >= 3600.0 {
        format!("{} h", format_seconds((t / 360.0).round() / 10.0))
    } else {
        format!("{} min", format_seconds((t / 6.0).round() / 10.0))
    }
}

fn read_text(path: &Path) -> Option<String> {
    let file = std::fs::File::open(path).ok()?;
    let mut bytes = Vec::new();
    file.take(MAX_SCAN_BYTES).read_to_end(&mut bytes).ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// One word of the first simple command, after quote removal.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Word {
    text: String,
    /// It needed a variable rein cannot know, or a glob/substitution: do not check it.
    unresolved: bool,
}

/// Splits the first simple command of a `sh -c` string. Stops at the first operator
/// (`;`, `&`, `|`, `<`, `>`, `(`, `)`, newline) outside quotes; `None` on unbalanced quotes.
fn split_first_command(line: &str, ctx: LintContext<'_>) -> Option<Vec<Word>> {
    let chars: Vec<char> = line.chars().collect();
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut unresolved = false;
    let mut i = 0;
    let flush = |words: &mut Vec<Word>, cur: &mut String, in_word: &mut bool, un: &mut bool| {
        if *in_word {
            words.push(Word {
                text: std::mem::take(cur),
                unresolved: *un,
            });
        }
        *in_word = false;
        *un = false;
    };
    while i < chars.len() {
        let c = chars[i];
        match c {
            ' ' | '\t' => {
                flush(&mut words, &mut cur, &mut in_word, &mut unresolved);
                i += 1;
            }
            ';' | '&' | '|' | '<' | '>' | '(' | ')' | '\n' => break,
            '\'' => {
                in_word = true;
                let end = chars[i + 1..].iter().position(|&x| x == '\'')? + i + 1;
                cur.extend(&chars[i + 1..end]);
                i = end + 1;
            }
            '"' => {
                in_word = true;
                i += 1;
                loop {
                    let c = *chars.get(i)?;
                    match c {
                        '"' => {
                            i += 1;
                            break;
                        }
                        '\\' if matches!(chars.get(i + 1), Some('"' | '\\' | '$' | '`')) => {
                            cur.push(chars[i + 1]);
                            i += 2;
                        }
                        '$' => {
                            i = expand(&chars, i, &mut cur, &mut unresolved, ctx);
                        }
                        '`' => {
                            unresolved = true;
                            cur.push(c);
                            i += 1;
                        }
                        _ => {
                            cur.push(c);
                            i += 1;
                        }
                    }
                }
            }
            '\\' => {
                in_word = true;
                if let Some(&n) = chars.get(i + 1) {
                    cur.push(n);
                }
                i += 2;
            }
            '$' => {
                in_word = true;
                i = expand(&chars, i, &mut cur, &mut unresolved, ctx);
            }
            '~' if !in_word && matches!(chars.get(i + 1), None | Some('/' | ' ' | '\t')) => {
                in_word = true;
                cur.push_str(&ctx.home.to_string_lossy());
                i += 1;
            }
            '*' | '?' | '[' | '`' => {
                in_word = true;
                unresolved = true;
                cur.push(c);
                i += 1;
            }
            _ => {
                in_word = true;
                cur.push(c);
                i += 1;
            }
        }
    }
    flush(&mut words, &mut cur, &mut in_word, &mut unresolved);
    Some(words)
}

/// Expands `$NAME` / `${NAME}` at `chars[i] == '$'`; returns the index after it.
fn expand(
    chars: &[char],
    i: usize,
    cur: &mut String,
    unresolved: &mut bool,
    ctx: LintContext<'_>,
) -> usize {
    let (name, next) = if chars.get(i + 1) == Some(&'{') {
        match chars[i + 2..].iter().position(|&c| c == '}') {
            Some(p) => (
                chars[i + 2..i + 2 + p].iter().collect::<String>(),
                i + 3 + p,
            ),
            None => {
                *unresolved = true;
                return chars.len();
            }
        }
    } else {
        let len = chars[i + 1..]
            .iter()
            .take_while(|c| c.is_ascii_alphanumeric() || **c == '_')
            .count();
        if len == 0 {
            cur.push('$');
            *unresolved = true;
            return i + 1;
        }
        (chars[i + 1..i + 1 + len].iter().collect(), i + 1 + len)
    };
    match name.as_str() {
        "CLAUDE_PROJECT_DIR" => cur.push_str(&ctx.project_dir.to_string_lossy()),
        "HOME" => cur.push_str(&ctx.home.to_string_lossy()),
        _ => *unresolved = true,
    }
    next
}

fn is_assignment(word: &str) -> bool {
    match word.split_once('=') {
        Some((name, _)) => {
            !name.is_empty()
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !name.starts_with(|c: char| c.is_ascii_digit())
        }
        None => false,
    }
}

/// The path a word names, relative to the project directory, without `.` components.
fn resolve_path(word: &str, ctx: LintContext<'_>) -> PathBuf {
    let p = Path::new(word);
    let joined = if p.is_absolute() {
        p.to_path_buf()
    } else {
        ctx.project_dir.join(p)
    };
    joined
        .components()
        .filter(|c| !matches!(c, std::path::Component::CurDir))
        .collect()
}

fn basename(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

/// The script a command runs, if it names one rein can resolve.
fn resolve_script(command: &CommandHandler, ctx: LintContext<'_>) -> Option<Script> {
    let words: Vec<Word> = match &command.args {
        // Exec form: only `${CLAUDE_PROJECT_DIR}` is substituted, nothing else is expanded.
        Some(args) => {
            let project = ctx.project_dir.to_string_lossy();
            std::iter::once(&command.command)
                .chain(args.iter())
                .map(|a| Word {
                    text: a.replace("${CLAUDE_PROJECT_DIR}", &project),
                    unresolved: false,
                })
                .collect()
        }
        None => split_first_command(&command.command, ctx)?,
    };
    let mut rest = words
        .iter()
        .skip_while(|w| command.args.is_none() && (is_assignment(&w.text) || w.text == "exec"));
    let program = rest.next()?;
    if program.unresolved {
        return None;
    }
    let mut name = basename(&program.text).to_string();
    let mut rest: Vec<&Word> = rest.collect();
    if name == "env" {
        // `env [NAME=value…] python3 x.py`
        let skip = rest
            .iter()
            .take_while(|w| is_assignment(&w.text) || w.text.starts_with('-'))
            .count();
        let real = rest.get(skip)?;
        name = basename(&real.text).to_string();
        rest = rest[skip + 1..].to_vec();
    } else if program.text.contains('/') {
        return Some(Script {
            word: program.text.clone(),
            path: resolve_path(&program.text, ctx),
            runner: Runner::Direct,
        });
    }
    let script_word = if name == "." || name == "source" || INTERPRETERS.contains(&name.as_str()) {
        // The first non-option argument; `-c CODE` / `-m module` run no file.
        let mut found = None;
        for w in &rest {
            if matches!(w.text.as_str(), "-c" | "-m" | "-e" | "--eval" | "run") {
                return None;
            }
            if !w.text.starts_with('-') {
                found = Some(*w);
                break;
            }
        }
        found?
    } else {
        *rest
            .iter()
            .find(|w| SCRIPT_EXTENSIONS.iter().any(|ext| w.text.ends_with(ext)))?
    };
    if script_word.unresolved {
        return None;
    }
    let runner = if name == "source" {
        Runner::Interpreter(".".to_string())
    } else {
        Runner::Interpreter(name)
    };
    Some(Script {
        word: script_word.text.clone(),
        path: resolve_path(&script_word.text, ctx),
        runner,
    })
}

/// The first bash-only construct in a shell script: `(line, description)`. Comment lines
/// are skipped.
fn find_bashism(text: &str) -> Option<(usize, &'static str)> {
    static CHECKS: std::sync::OnceLock<Vec<(Regex, &'static str)>> = std::sync::OnceLock::new();
    let checks = CHECKS.get_or_init(|| {
        [
            (r"\[\[", "`[[ … ]]`"),
            (r"(^|[\s;&|])source\s", "`source` (POSIX sh has `.`)"),
            (
                r"(^|[\s;&|])function\s+[A-Za-z_]",
                "`function name` definitions",
            ),
            (
                r"^\s*(local\s+|declare\s+|readonly\s+)?[A-Za-z_][A-Za-z0-9_]*=\(",
                "arrays (`name=(…)`)",
            ),
            (r"\$\{[A-Za-z_][A-Za-z0-9_]*\[", "arrays (`${name[…]}`)"),
            (r"(^|[\s;&|])declare\s+-[aA]", "arrays (`declare -a`)"),
            (r"<<<", "here-strings (`<<<`)"),
            (r"\$'", "`$'…'` quoting"),
            (
                r"(^|[\s;&|!])(\[|test)\s[^\]]*\s==\s",
                "`==` in `[ … ]` (POSIX sh has `=`)",
            ),
        ]
        .into_iter()
        .filter_map(|(re, what)| Regex::new(re).ok().map(|r| (r, what)))
        .collect()
    });
    for (n, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        if trimmed.starts_with('#') {
            continue;
        }
        for (re, what) in checks {
            if re.is_match(line) {
                return Some((n + 1, what));
            }
        }
    }
    None
}

/// `Some(line of the first `exit 1`)` when every non-zero exit the script names is 1 and it
/// prints no permission decision; `None` otherwise (including when it never exits non-zero).
fn exit_one_only(text: &str) -> Option<usize> {
    static EXIT: std::sync::OnceLock<Option<Regex>> = std::sync::OnceLock::new();
    let exit = EXIT
        .get_or_init(|| {
            Regex::new(
                r"(?:^|[^A-Za-z0-9_.])(?:sys\.exit|process\.exit|os\._exit|exit)\s*\(?\s*(\d+)",
            )
            .ok()
        })
        .as_ref()?;
    if text.contains("permissionDecision") || text.contains("\"decision\"") {
        return None;
    }
    let mut first_one = None;
    for (n, line) in text.lines().enumerate() {
        if line.trim_start().starts_with('#') {
            continue;
        }
        for caps in exit.captures_iter(line) {
            let code: u64 = caps.get(1)?.as_str().parse().ok()?;
            match code {
                0 => {}
                1 => {
                    first_one.get_or_insert(n + 1);
                }
                _ => return None,
            }
        }
    }
    first_one
}

// The tests live with the other unit tests; as a child module they see lint's private items.
#[cfg(test)]
#[path = "../tests/lint.rs"]
mod tests;
