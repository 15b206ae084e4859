//! Slash commands and skills, read where Claude Code 2.1.328 reads them:
//!
//! | what | where | name |
//! |---|---|---|
//! | user commands | `~/.claude/commands/**/*.md` | the file's stem; `sub/x.md` is `sub:x` |
//! | project commands | `<project>/.claude/commands/**/*.md` | same; a project command replaces a user one of the same name |
//! | plugin commands | `<plugin>/commands/**/*.md` | `<plugin>:<stem>` |
//! | user skills | `~/.claude/skills/<dir>/SKILL.md` | front matter `name`, else the folder's |
//! | project skills | `<project>/.claude/skills/<dir>/SKILL.md` | same |
//! | plugin skills | `<plugin>/skills/<dir>/SKILL.md` | `<plugin>:<dir>` |
//!
//! A prompt `/name args` runs the command (or skill) of that name; the model can run a skill,
//! and a command with a `description`, through the `Skill` tool (fixture
//! `tests/fixtures/cc-2.1.328/plugin_command`). Expansion ([`expand_arguments`]) is Claude
//! Code's: `$ARGUMENTS` is the whole argument text, `$0`, `$1`, … and `$ARGUMENTS[N]` the
//! whitespace-separated words counted from 0, an index past the last word stays as written, and
//! a body that uses no `$ARGUMENTS` gets `\n\nARGUMENTS: <args>` appended when arguments were
//! given.
//!
//! A file that cannot be read or whose front matter is broken is reported with its line
//! ([`CatalogError`]) and skipped; every other file still loads.

pub mod frontmatter;

use std::path::{Path, PathBuf};

/// Where a command or skill came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    User,
    Project,
    /// A plugin (its name).
    Plugin(String),
}

impl Source {
    /// How listings name the source (`user`, `project`, `plugin guard`).
    pub fn label(&self) -> String {
        match self {
            Source::User => "user".to_string(),
            Source::Project => "project".to_string(),
            Source::Plugin(name) => format!("plugin {name}"),
        }
    }
}

/// Whether an entry is a slash command file or a skill folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Command,
    Skill,
}

/// One command or skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The name after the `/` (`mark`, `guard:pc`).
    pub name: String,
    pub kind: Kind,
    pub description: Option<String>,
    /// `argument-hint`, shown in `/help`.
    pub argument_hint: Option<String>,
    /// `allowed-tools`: permission rules that allow its `!` lines, and the model's calls of
    /// the turn it runs in, without a prompt.
    pub allowed_tools: Vec<String>,
    /// Its `allowed-tools` were dropped (a project entry in a folder not trusted): it still
    /// counts as one that grants tools, so starting it with the Skill tool asks.
    pub allowed_tools_ignored: bool,
    /// `model`, when it names one.
    pub model: Option<String>,
    /// `disable-model-invocation: true`: the Skill tool may not run it.
    pub model_invocable: bool,
    /// The body after the front matter, as written.
    pub body: String,
    /// The file.
    pub path: PathBuf,
    /// A skill's folder (`${CLAUDE_SKILL_DIR}`, "Base directory for this skill").
    pub dir: Option<PathBuf>,
    /// The plugin's root (`${CLAUDE_PLUGIN_ROOT}`), for a plugin's entry.
    pub plugin_root: Option<PathBuf>,
    pub source: Source,
}

impl Entry {
    /// Whether the model is told of it and may run it with the Skill tool: every skill, and
    /// commands with a description, unless `disable-model-invocation` says no.
    pub fn offered_to_model(&self) -> bool {
        self.model_invocable && (self.kind == Kind::Skill || self.description.is_some())
    }

    /// Whether its front matter names `allowed-tools` (applied or not).
    pub fn declares_allowed_tools(&self) -> bool {
        !self.allowed_tools.is_empty() || self.allowed_tools_ignored
    }

    /// The body with `${CLAUDE_PLUGIN_ROOT}`, `${CLAUDE_SKILL_DIR}` and the arguments
    /// replaced (no `!` lines run yet; see [`bang_commands`]).
    pub fn expand(&self, args: &str) -> String {
        let mut body = self.body.clone();
        if let Some(root) = &self.plugin_root {
            body = body.replace("${CLAUDE_PLUGIN_ROOT}", &root.to_string_lossy());
        }
        if let Some(dir) = &self.dir {
            body = body.replace("${CLAUDE_SKILL_DIR}", &dir.to_string_lossy());
        }
        expand_arguments(&body, args)
    }
}

/// A file that was skipped, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}:{line}: {message}; {} skipped", .path.display(), if *.kind == Kind::Skill { "skill" } else { "command" })]
pub struct CatalogError {
    pub path: PathBuf,
    pub line: usize,
    pub message: String,
    pub kind: Kind,
}

/// A plugin's folders, as the catalog needs them.
#[derive(Debug, Clone)]
pub struct PluginFolders {
    pub name: String,
    pub root: PathBuf,
    pub commands: Vec<PathBuf>,
    pub skills: Vec<PathBuf>,
}

/// Every command and skill of a session.
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    pub entries: Vec<Entry>,
    pub errors: Vec<CatalogError>,
}

impl Catalog {
    /// Reads the user's (`claude_dir`), the project's and the plugins' files.
    pub fn discover(claude_dir: &Path, project_dir: &Path, plugins: &[PluginFolders]) -> Catalog {
        let mut catalog = Catalog::default();
        let project_claude = project_dir.join(".claude");
        for (base, source) in [
            (claude_dir.to_path_buf(), Source::User),
            (project_claude, Source::Project),
        ] {
            catalog.read_commands(&base.join("commands"), None, &source, None);
            catalog.read_skills(&base.join("skills"), None, &source, None);
        }
        for plugin in plugins {
            let source = Source::Plugin(plugin.name.clone());
            for dir in &plugin.commands {
                catalog.read_commands(dir, Some(&plugin.name), &source, Some(&plugin.root));
            }
            for dir in &plugin.skills {
                catalog.read_skills(dir, Some(&plugin.name), &source, Some(&plugin.root));
            }
        }
        catalog
    }

    /// The entry `/name` runs.
    pub fn find(&self, name: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| e.name == name)
    }

    /// What the model is told it can run with the Skill tool, one `- name: description` line
    /// each, as Claude Code 2.1.328 words the list; `None` when there is nothing to offer.
    pub fn skill_listing(&self) -> Option<String> {
        let mut lines: Vec<String> = self
            .entries
            .iter()
            .filter(|e| e.offered_to_model())
            .map(|e| match &e.description {
                Some(d) => format!("- {}: {d}", e.name),
                None => format!("- {}", e.name),
            })
            .collect();
        if lines.is_empty() {
            return None;
        }
        lines.sort();
        Some(format!(
            "The following skills are available for use with the Skill tool:\n\n{}",
            lines.join("\n")
        ))
    }

    fn push(&mut self, entry: Entry) {
        // A later source (project over user) replaces an entry of the same name.
        self.entries.retain(|e| e.name != entry.name);
        self.entries.push(entry);
    }

    fn read_commands(
        &mut self,
        dir: &Path,
        plugin: Option<&str>,
        source: &Source,
        root: Option<&Path>,
    ) {
        let mut files = Vec::new();
        collect_md(dir, dir, &mut files, 0);
        files.sort();
        for (path, namespace) in files {
            let Some(stem) = path.file_stem().map(|s| s.to_string_lossy().into_owned()) else {
                continue;
            };
            let mut name = namespace.into_iter().chain([stem]).collect::<Vec<_>>();
            if let Some(plugin) = plugin {
                name.insert(0, plugin.to_string());
            }
            let name = name.join(":");
            if let Some((entry, _)) =
                self.read_entry(&path, name, Kind::Command, None, source, root)
            {
                self.push(entry);
            }
        }
    }

    fn read_skills(
        &mut self,
        dir: &Path,
        plugin: Option<&str>,
        source: &Source,
        root: Option<&Path>,
    ) {
        let Ok(read) = std::fs::read_dir(dir) else {
            return;
        };
        let mut dirs: Vec<PathBuf> = read
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.join("SKILL.md").is_file())
            .collect();
        dirs.sort();
        for skill_dir in dirs {
            let folder = skill_dir
                .file_name()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            let path = skill_dir.join("SKILL.md");
            let name = match plugin {
                Some(plugin) => format!("{plugin}:{folder}"),
                None => folder,
            };
            if let Some((mut entry, given)) =
                self.read_entry(&path, name, Kind::Skill, Some(&skill_dir), source, root)
            {
                // A skill's own `name` names it; a plugin's keeps `<plugin>:<folder>`.
                if plugin.is_none()
                    && let Some(given) = given
                {
                    entry.name = given;
                }
                self.push(entry);
            }
        }
    }

    fn read_entry(
        &mut self,
        path: &Path,
        name: String,
        kind: Kind,
        dir: Option<&Path>,
        source: &Source,
        root: Option<&Path>,
    ) -> Option<(Entry, Option<String>)> {
        let fail = |line: usize, message: String| CatalogError {
            path: path.to_path_buf(),
            line,
            message,
            kind,
        };
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) => {
                self.errors.push(fail(1, format!("cannot read: {e}")));
                return None;
            }
        };
        let doc = match frontmatter::parse(&text) {
            Ok(doc) => doc,
            Err(e) => {
                self.errors.push(fail(e.line, e.message));
                return None;
            }
        };
        let flag = |key: &str| doc.text(key).map(|v| v.eq_ignore_ascii_case("true"));
        let model = doc.text("model").filter(|m| m != "inherit");
        let entry = Entry {
            name,
            kind,
            description: doc.text("description"),
            // `[what]` is a hint as written, not a YAML list.
            argument_hint: doc
                .get("argument-hint")
                .map(|v| match v {
                    frontmatter::Value::List(items) => format!("[{}]", items.join(", ")),
                    frontmatter::Value::Scalar(s) => s.clone(),
                })
                .filter(|h| !h.is_empty()),
            allowed_tools: doc
                .get("allowed-tools")
                .map(frontmatter::Value::items)
                .unwrap_or_default(),
            allowed_tools_ignored: false,
            model,
            model_invocable: !flag("disable-model-invocation").unwrap_or(false),
            body: doc.body.clone(),
            path: path.to_path_buf(),
            dir: dir.map(Path::to_path_buf),
            plugin_root: root.map(Path::to_path_buf),
            source: source.clone(),
        };
        Some((entry, doc.text("name")))
    }
}

/// `*.md` files under `dir` (at most 4 folders deep), each with its sub-folder names.
fn collect_md(base: &Path, dir: &Path, out: &mut Vec<(PathBuf, Vec<String>)>, depth: usize) {
    let Ok(read) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in read.filter_map(Result::ok) {
        let path = entry.path();
        if path.is_dir() {
            if depth < 4 {
                collect_md(base, &path, out, depth + 1);
            }
        } else if path.extension().is_some_and(|x| x == "md") {
            let namespace = path
                .parent()
                .and_then(|p| p.strip_prefix(base).ok())
                .map(|rel| {
                    rel.components()
                        .map(|c| c.as_os_str().to_string_lossy().into_owned())
                        .collect()
                })
                .unwrap_or_default();
            out.push((path, namespace));
        }
    }
}

/// A prompt `/name args…` as (name, args); `None` for anything else (`/` alone, a path such as
/// `/tmp/x`).
pub fn parse_invocation(prompt: &str) -> Option<(&str, &str)> {
    let rest = prompt.strip_prefix('/')?;
    let (name, args) = match rest.find(char::is_whitespace) {
        Some(i) => (&rest[..i], rest[i..].trim()),
        None => (rest, ""),
    };
    let valid = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ':' | '.'));
    valid.then_some((name, args))
}

/// The words of an argument text: split at whitespace, `"…"` and `'…'` keep spaces.
pub fn split_arguments(args: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut quote: Option<char> = None;
    let mut any = false;
    for c in args.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => current.push(c),
            None if c == '"' || c == '\'' => {
                quote = Some(c);
                any = true;
            }
            None if c.is_whitespace() => {
                if any || !current.is_empty() {
                    words.push(std::mem::take(&mut current));
                    any = false;
                }
            }
            None => current.push(c),
        }
    }
    if any || !current.is_empty() {
        words.push(current);
    }
    words
}

/// Replaces `$ARGUMENTS`, `$ARGUMENTS[N]` and `$N` in `body` (see the module's text); a body
/// that uses any of them gets nothing appended.
pub fn expand_arguments(body: &str, args: &str) -> String {
    let words = split_arguments(args);
    let mut out = String::with_capacity(body.len() + args.len());
    let mut used_arguments = false;
    let bytes = body.as_bytes();
    let mut i = 0;
    while i < body.len() {
        if bytes[i] == b'$' {
            let rest = &body[i + 1..];
            if let Some(after) = rest.strip_prefix("ARGUMENTS") {
                used_arguments = true;
                if let Some((n, len)) = bracket_index(after) {
                    match words.get(n) {
                        Some(w) => out.push_str(w),
                        None => out.push_str(&body[i..i + 1 + "ARGUMENTS".len() + len]),
                    }
                    i += 1 + "ARGUMENTS".len() + len;
                } else {
                    out.push_str(args);
                    i += 1 + "ARGUMENTS".len();
                }
                continue;
            }
            let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
            if digits > 0 {
                used_arguments = true;
                let n: Option<usize> = rest[..digits].parse().ok();
                match n.and_then(|n| words.get(n)) {
                    Some(w) => out.push_str(w),
                    None => out.push_str(&body[i..i + 1 + digits]),
                }
                i += 1 + digits;
                continue;
            }
        }
        let ch_len = body[i..].chars().next().map_or(1, char::len_utf8);
        out.push_str(&body[i..i + ch_len]);
        i += ch_len;
    }
    if !used_arguments && !args.is_empty() {
        out.push_str("\n\nARGUMENTS: ");
        out.push_str(args);
    }
    out
}

/// `[N]` at the start of `text`: (N, bytes taken).
fn bracket_index(text: &str) -> Option<(usize, usize)> {
    let inner = text.strip_prefix('[')?;
    let end = inner.find(']')?;
    let n = inner[..end].parse().ok()?;
    Some((n, end + 2))
}

/// The `` !`command` `` spans of an expanded body, in order: (byte range, command).
pub fn bang_commands(body: &str) -> Vec<(std::ops::Range<usize>, String)> {
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(at) = body[from..].find("!`") {
        let start = from + at;
        let open = start + 2;
        let Some(len) = body[open..].find('`') else {
            break;
        };
        let command = &body[open..open + len];
        let preceded_ok = start == 0
            || body[..start]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_whitespace() || matches!(c, '(' | '[' | ':' | '>'));
        if preceded_ok && !command.trim().is_empty() && !command.contains('\n') {
            found.push((start..open + len + 1, command.to_string()));
        }
        from = open + len + 1;
    }
    found
}

/// The `@path` mentions of an expanded body that name files under `cwd` (or absolute ones):
/// each file once, in order of first mention.
pub fn file_mentions(body: &str, cwd: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = Vec::new();
    let mut prev_ws = true;
    for (i, c) in body.char_indices() {
        if c == '@' && prev_ws {
            let rest = &body[i + 1..];
            let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
            let token = rest[..end].trim_end_matches([',', '.', ';', ':', ')', '!', '?']);
            if !token.is_empty() {
                let path = cwd.join(token);
                if path.is_file() && !files.contains(&path) {
                    files.push(path);
                }
            }
        }
        prev_ws = c.is_whitespace();
    }
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_expand_as_claude_code_does() {
        // Fixture slash_command: `$1` is the second word, `$2` past the end stays.
        assert_eq!(
            expand_arguments(
                "Mark $ARGUMENTS now. First: $1. Second: $2.\n",
                "alpha beta"
            ),
            "Mark alpha beta now. First: beta. Second: $2.\n"
        );
        assert_eq!(expand_arguments("a $ARGUMENTS[0] b", "x y"), "a x b");
        assert_eq!(
            expand_arguments("a $0 $1", "\"two words\" z"),
            "a two words z"
        );
        // Fixture plugin_command: a body without $ARGUMENTS gets them appended.
        assert_eq!(
            expand_arguments("Say hello.\n", "bob"),
            "Say hello.\n\n\nARGUMENTS: bob"
        );
        assert_eq!(expand_arguments("Say hello.\n", ""), "Say hello.\n");
        assert_eq!(expand_arguments("cost $5 é", ""), "cost $5 é");
    }

    #[test]
    fn invocations_and_bang_lines() {
        assert_eq!(
            parse_invocation("/mark alpha beta"),
            Some(("mark", "alpha beta"))
        );
        assert_eq!(
            parse_invocation("/guard:pc zeta"),
            Some(("guard:pc", "zeta"))
        );
        assert_eq!(parse_invocation("/tmp/x is a path"), None);
        assert_eq!(parse_invocation("hello"), None);
        let body = "Context: !`echo bang-output`\nnot!`this` and `!nor this`";
        let found = bang_commands(body);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].1, "echo bang-output");
        assert_eq!(&body[found[0].0.clone()], "!`echo bang-output`");
    }

    #[test]
    fn catalog_names_sources_and_errors() {
        let tmp = tempfile::tempdir().unwrap();
        let user = tmp.path().join("home/.claude");
        let project = tmp.path().join("project");
        let plug = tmp.path().join("plug");
        let write = |p: PathBuf, text: &str| {
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        };
        write(user.join("commands/mark.md"), "user mark");
        write(
            project.join(".claude/commands/mark.md"),
            "---\ndescription: Mark\n---\nproject mark",
        );
        write(
            project.join(".claude/commands/git/commit.md"),
            "commit $ARGUMENTS",
        );
        write(
            project.join(".claude/commands/bad.md"),
            "---\ndescription: x\noops\n---\n",
        );
        write(
            project.join(".claude/skills/greet/SKILL.md"),
            "---\nname: hello\ndescription: Greets\n---\nHi from ${CLAUDE_SKILL_DIR}\n",
        );
        write(
            plug.join("skills/tidy/SKILL.md"),
            "---\nname: other\ndescription: Tidy\n---\nTidy\n",
        );
        write(
            plug.join("commands/pc.md"),
            "root=${CLAUDE_PLUGIN_ROOT} $ARGUMENTS",
        );
        let catalog = Catalog::discover(
            &user,
            &project,
            &[PluginFolders {
                name: "guard".into(),
                root: plug.clone(),
                commands: vec![plug.join("commands")],
                skills: vec![plug.join("skills")],
            }],
        );
        let names: Vec<&str> = catalog.entries.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(
            names,
            ["git:commit", "mark", "hello", "guard:pc", "guard:tidy"]
        );
        assert_eq!(catalog.find("mark").unwrap().source, Source::Project);
        assert_eq!(catalog.errors.len(), 1);
        assert_eq!(catalog.errors[0].line, 3);
        assert!(catalog.errors[0].to_string().contains("bad.md:3"));
        let skill = catalog.find("hello").unwrap();
        assert_eq!(
            skill.expand(""),
            format!(
                "Hi from {}\n",
                project.join(".claude/skills/greet").display()
            )
        );
        assert_eq!(
            catalog.find("guard:pc").unwrap().expand("z"),
            format!("root={} z", plug.display())
        );
        assert_eq!(
            catalog.skill_listing().unwrap(),
            "The following skills are available for use with the Skill tool:\n\n- guard:tidy: Tidy\n- hello: Greets\n- mark: Mark"
        );
    }

    #[test]
    fn mentions_name_existing_files_once() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("notes.txt"), "n").unwrap();
        let found = file_mentions("File: @notes.txt and @notes.txt, @missing a@b", tmp.path());
        assert_eq!(found, vec![tmp.path().join("notes.txt")]);
    }
}
