//! Output styles: how the agent words its replies, chosen with the `outputStyle` setting, read
//! where Claude Code 2.1.328 reads them (fixtures `tests/fixtures/cc-2.1.328/output_style*`):
//!
//! | where | name |
//! |---|---|
//! | built in | `default` (rein's own prompt), `Proactive`, `Concise`, `Explanatory`, `Learning` |
//! | `<plugin>/output-styles/*.md` (and the manifest's `outputStyles`) | `<plugin>:<name>` |
//! | `~/.claude/output-styles/*.md` | front matter `name`, else the file's stem |
//! | `<project>/.claude/output-styles/*.md` | same; replaces a user style of the same name |
//!
//! The setting names a style exactly as listed (a plugin's `Loud` is `guard:Loud`; measured:
//! Claude Code does not find it as `Loud`). A name no style has leaves the default style on —
//! Claude Code does so in silence; rein says so at the setting's file and line. The active
//! style's text goes into the system prompt under `# Output style: <name>`; a style from a file
//! replaces rein's "How to work" guidance unless its front matter says
//! `keep-coding-instructions: true` (the built-in styles keep it).
//!
//! A file that cannot be read or whose front matter is broken is reported with its line
//! ([`StyleError`]) and skipped; every other style still loads.

use std::path::{Path, PathBuf};

use crate::commands::frontmatter;

/// The name of the style that is rein's own prompt alone.
pub const DEFAULT: &str = "default";

/// One output style.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputStyle {
    /// What `outputStyle` names it by.
    pub name: String,
    pub description: Option<String>,
    /// The instructions the model follows.
    pub body: String,
    /// Whether rein's "How to work" guidance stays in the prompt.
    pub keep_coding_instructions: bool,
    /// The file it was read from (`None` for a built-in one).
    pub path: Option<PathBuf>,
}

/// A style file that was skipped, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}:{line}: {message}; output style skipped", .path.display())]
pub struct StyleError {
    pub path: PathBuf,
    pub line: usize,
    pub message: String,
}

/// Every output style a session can choose from, built-in ones first.
#[derive(Debug, Clone)]
pub struct Styles {
    pub styles: Vec<OutputStyle>,
    pub errors: Vec<StyleError>,
}

impl Default for Styles {
    fn default() -> Styles {
        Styles {
            styles: builtin(),
            errors: Vec::new(),
        }
    }
}

impl Styles {
    /// The built-in styles, then each plugin's (`(plugin name, folders)`), the user's
    /// (`claude_dir/output-styles`) and the project's (`project_dir/.claude/output-styles`); a
    /// later style replaces an earlier one of the same name.
    pub fn discover(
        claude_dir: &Path,
        project_dir: &Path,
        plugins: &[(String, Vec<PathBuf>)],
    ) -> Styles {
        let mut out = Styles::default();
        for (plugin, dirs) in plugins {
            for dir in dirs {
                out.read_dir(dir, Some(plugin));
            }
        }
        out.read_dir(&claude_dir.join("output-styles"), None);
        out.read_dir(&project_dir.join(".claude/output-styles"), None);
        out
    }

    /// The style `outputStyle` names; `None` for `default` and for a name no style has.
    pub fn find(&self, name: &str) -> Option<&OutputStyle> {
        self.styles.iter().find(|s| s.name == name)
    }

    /// Every name `outputStyle` can take, `default` first.
    pub fn names(&self) -> Vec<String> {
        std::iter::once(DEFAULT.to_string())
            .chain(self.styles.iter().map(|s| s.name.clone()))
            .collect()
    }

    fn read_dir(&mut self, dir: &Path, plugin: Option<&str>) {
        let Ok(read) = std::fs::read_dir(dir) else {
            return;
        };
        let mut files: Vec<PathBuf> = read
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "md") && p.is_file())
            .collect();
        files.sort();
        for path in files {
            if let Some(style) = self.read_file(&path, plugin) {
                self.styles.retain(|s| s.name != style.name);
                self.styles.push(style);
            }
        }
    }

    fn read_file(&mut self, path: &Path, plugin: Option<&str>) -> Option<OutputStyle> {
        let fail = |line: usize, message: String| StyleError {
            path: path.to_path_buf(),
            line,
            message,
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
        let stem = path.file_stem()?.to_string_lossy().into_owned();
        let own = doc.text("name").filter(|n| !n.is_empty()).unwrap_or(stem);
        let name = match plugin {
            Some(plugin) => format!("{plugin}:{own}"),
            None => own,
        };
        if name == DEFAULT {
            self.errors.push(fail(
                1,
                "\"default\" is rein's own style and cannot be replaced; name the style otherwise"
                    .to_string(),
            ));
            return None;
        }
        Some(OutputStyle {
            name,
            description: doc.text("description"),
            body: doc.body.trim().to_string(),
            keep_coding_instructions: doc
                .text("keep-coding-instructions")
                .is_some_and(|v| v.eq_ignore_ascii_case("true")),
            path: Some(path.to_path_buf()),
        })
    }
}

/// rein's built-in styles besides `default`, the names and order Claude Code 2.1.328 offers
/// (its `initialize` answer, fixture `tests/fixtures/cc-2.1.328/agent_sdk/measure/stdout`),
/// each in rein's own words.
fn builtin() -> Vec<OutputStyle> {
    let style = |name: &str, description: &str, body: &str| OutputStyle {
        name: name.to_string(),
        description: Some(description.to_string()),
        body: body.to_string(),
        keep_coding_instructions: true,
        path: None,
    };
    vec![
        style(
            "Proactive",
            "Takes the obvious next steps without asking",
            "Act on what the task plainly implies. When a change needs a follow-up that the user \
             would certainly want (a test for the fixed case, a caller updated for a changed \
             signature, the build run after an edit), do it and say so, rather than asking \
             first. Ask only before something destructive, costly or outside the task.",
        ),
        style(
            "Concise",
            "Short answers, no preamble",
            "Answer in as few words as the answer needs: no preamble, no restating the question, \
             no closing summary of what you just did. Prefer one line; use a short list only \
             when there are several separate points. Code and commands stay complete.",
        ),
        style(
            "Explanatory",
            "Does the work and explains the choices behind it",
            "Besides doing the task, teach the user about the code you touch. Before and after \
             a change that involves a choice, add a short note, headed `Why:`, that explains \
             the reason: how this codebase does things, the trade-off you picked, what would \
             break otherwise. Keep each note to a few sentences about this code, not general \
             programming lessons, and never let the notes replace the work itself.",
        ),
        style(
            "Learning",
            "Works with the user, leaving small parts for them to write",
            "Work with the user so that they learn by doing. Do the surrounding work yourself, \
             but where a change holds a real decision (a small function of 2 to 10 lines, a \
             condition, an error-handling choice), leave it for the user: put a `TODO(human)` \
             marker in the code where it goes, then stop and ask them to write it, saying what \
             it must do, what it receives, and which trade-offs to weigh. Leave one such part \
             at a time, and look at what they wrote before you go on. Explain your own choices \
             briefly, under a `Why:` heading, where they are not obvious.",
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn project_replaces_user_plugin_styles_are_namespaced_and_broken_files_are_reported() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home/.claude");
        let project = dir.path().join("project");
        let plugin = dir.path().join("plug/output-styles");
        write(
            &home.join("output-styles/terse.md"),
            "---\nname: Terse\n---\nUSER\n",
        );
        write(
            &project.join(".claude/output-styles/t.md"),
            "---\nname: Terse\nkeep-coding-instructions: true\n---\nPROJECT\n",
        );
        write(
            &project.join(".claude/output-styles/plain.md"),
            "PLAIN body\n",
        );
        write(
            &project.join(".claude/output-styles/bad.md"),
            "---\nname: [unclosed\n",
        );
        write(&plugin.join("loud.md"), "---\nname: Loud\n---\nLOUD\n");
        let styles = Styles::discover(&home, &project, &[("guard".into(), vec![plugin])]);
        let terse = styles.find("Terse").unwrap();
        assert_eq!(terse.body, "PROJECT");
        assert!(terse.keep_coding_instructions);
        assert!(!styles.find("plain").unwrap().keep_coding_instructions);
        assert_eq!(styles.find("guard:Loud").unwrap().body, "LOUD");
        assert!(styles.find("Loud").is_none());
        assert!(styles.find("Explanatory").is_some());
        assert_eq!(styles.errors.len(), 1, "{:?}", styles.errors);
        assert!(styles.errors[0].path.ends_with("bad.md"));
        assert_eq!(styles.names()[0], "default");
    }

    #[test]
    fn the_built_in_names_are_claude_codes_in_its_order() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/cc-2.1.328/agent_sdk/measure/stdout");
        let text = std::fs::read_to_string(path).unwrap();
        let theirs: Vec<String> = text
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .find_map(|v| {
                v.pointer("/response/response/available_output_styles")
                    .and_then(|a| serde_json::from_value(a.clone()).ok())
            })
            .expect("Claude Code's initialize answer lists its styles");
        assert_eq!(Styles::default().names(), theirs);
    }
}
