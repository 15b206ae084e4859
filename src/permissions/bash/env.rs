//! Environment assignments in front of a command (`NAME=value cmd`, `env NAME=value`): which
//! names are harmless, which change what runs (loader and shell hijacks, `BASH_FUNC_*`), which make
//! a script run.

/// Env-var prefixes that may stand before a command an allow rule covers: they change output
/// formatting or build flags, not which code runs. The names are Claude Code 2.1.328's list
/// (read from its binary); any other prefix makes the command not auto-allowable.
pub(super) const SAFE_ENV: &[&str] = &[
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
pub(super) const HIJACK_ENV: &[&str] = &[
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
pub(super) const SCRIPT_ENV: &[&str] = &[
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

pub(super) fn is_hijack_env(name: &str) -> bool {
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
pub(super) fn is_safe_env(name: &str, value: &str) -> bool {
    SAFE_ENV.contains(&name)
        && !(value.starts_with(['/', '.', '~']) || value.contains("//") || value.contains(".."))
}
