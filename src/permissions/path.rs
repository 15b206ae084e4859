//! File-path patterns of `Read(…)` / `Edit(…)` rules (spec §6.2, §3.4): gitignore-style globs
//! with Claude Code's anchors.
//!
//! | pattern | anchored at |
//! |---|---|
//! | `//abs/path` | the filesystem root |
//! | `~/path` | the home directory |
//! | `/path` | the project root (not the filesystem root) |
//! | `./path`, `path` | the current directory |
//!
//! `*` matches within one path segment, `**` any number of segments. As in gitignore, a
//! relative pattern without a `/` (`.env`, `*.md`) matches at any depth below the current
//! directory, and a pattern that names a directory also covers everything inside it. A
//! single-segment `dir/**` matches only `<cwd>/dir/…` in allow rules and `if` conditions, but
//! at any depth in deny/ask rules (Claude Code 2.1.214). `./path` is always anchored: it names
//! the one file in the current directory. Paths are normalised lexically (`.`/`..`) before
//! matching; the policy also matches the path with its symlinks resolved ([`resolve_links`]).

use std::path::{Component, Path, PathBuf};

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

use crate::permissions::rule::{RuleContext, RulePurpose};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Anchor {
    Root,
    Home,
    Project,
    Cwd,
}

/// When the any-depth variant of a relative pattern applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AnyDepth {
    Always,
    DenyAndAsk,
}

/// A compiled file pattern.
#[derive(Debug, Clone)]
pub struct PathPattern {
    anchor: Anchor,
    /// Leading `../` segments: the anchor's parents to climb.
    up: usize,
    anchored: GlobSet,
    /// `<pattern>/**`: inside the named paths.
    anchored_contents: GlobSet,
    /// Whether contents count for allow rules and conditions too (literal last segment).
    contents_always: bool,
    /// The any-depth variants (`**/<pattern>`, `**/<pattern>/**`) and when they apply.
    any_depth: Option<(GlobSet, GlobSet, AnyDepth)>,
    /// The pattern names the anchor directory itself (`~`, `//`, `/`).
    covers_anchor: bool,
}

impl PathPattern {
    /// Compiles `pattern`; the error text says what is wrong with it.
    pub fn compile(pattern: &str) -> Result<PathPattern, String> {
        let pattern = pattern.trim();
        if pattern.is_empty() {
            return Err("empty path pattern".to_string());
        }
        let (anchor, mut rest, explicit) = if let Some(r) = pattern.strip_prefix("//") {
            (Anchor::Root, r, true)
        } else if pattern == "~" {
            (Anchor::Home, "", true)
        } else if let Some(r) = pattern.strip_prefix("~/") {
            (Anchor::Home, r, true)
        } else if let Some(r) = pattern.strip_prefix('/') {
            (Anchor::Project, r, true)
        } else if let Some(r) = pattern.strip_prefix("./") {
            (Anchor::Cwd, r, true)
        } else if pattern == "." {
            (Anchor::Cwd, "", true)
        } else {
            (Anchor::Cwd, pattern, false)
        };
        if pattern.starts_with('~') && anchor != Anchor::Home {
            return Err("`~user` paths are not supported; use `~/…` or `//abs/path`".to_string());
        }
        let mut up = 0;
        let mut explicit = explicit;
        loop {
            if let Some(r) = rest.strip_prefix("../") {
                up += 1;
                rest = r;
                explicit = true;
            } else if rest == ".." {
                up += 1;
                rest = "";
                explicit = true;
            } else if let Some(r) = rest.strip_prefix("./") {
                rest = r;
            } else {
                break;
            }
        }
        let dir_only = rest.ends_with('/');
        let core = rest.trim_end_matches('/');
        // `exact`: the named paths; `contents`: what is inside them when they are directories.
        let mut variants: Vec<String> = Vec::new();
        let mut contents: Vec<String> = Vec::new();
        let covers_anchor = core.is_empty();
        if covers_anchor {
            variants.push("**".to_string());
        } else {
            // `dir/` names only a directory, but the directory itself is still covered (a Grep
            // over it reads everything inside).
            variants.push(core.to_string());
            if let Some(dir) = core.strip_suffix("/**") {
                variants.push(dir.to_string());
            }
            if !dir_only && !core.ends_with("/**") {
                contents.push(format!("{core}/**"));
            } else if dir_only {
                variants.push(format!("{core}/**"));
            }
        }
        // Why: `Read(secrets)` must cover `secrets/key.pem` (gitignore), but `Edit(src/*)` as an
        // allow rule should not reach into `src/sub/`; deny/ask rules always cover contents.
        let last = core.rsplit('/').next().unwrap_or_default();
        let contents_always = !last.contains(['*', '?', '[', '{']);
        let anchored = build_set(&variants, pattern)?;
        let anchored_contents = build_set(&contents, pattern)?;
        let any_depth = if anchor == Anchor::Cwd && !explicit && !covers_anchor {
            let kind = if !core.contains('/') {
                Some(AnyDepth::Always)
            } else if is_single_segment_dir_glob(core) {
                Some(AnyDepth::DenyAndAsk)
            } else {
                None
            };
            match kind {
                Some(kind) => {
                    let deep: Vec<String> = variants.iter().map(|v| format!("**/{v}")).collect();
                    let deep_contents: Vec<String> =
                        contents.iter().map(|v| format!("**/{v}")).collect();
                    Some((
                        build_set(&deep, pattern)?,
                        build_set(&deep_contents, pattern)?,
                        kind,
                    ))
                }
                None => None,
            }
        } else {
            None
        };
        Ok(PathPattern {
            anchor,
            up,
            anchored,
            anchored_contents,
            contents_always,
            any_depth,
            covers_anchor,
        })
    }

    /// Whether `path` (absolute, or relative to `ctx.cwd`) is covered.
    pub fn matches(&self, path: &Path, ctx: &RuleContext<'_>, purpose: RulePurpose) -> bool {
        let base = match self.anchor {
            Anchor::Root => PathBuf::from("/"),
            Anchor::Home => normalize(ctx.home, ctx.cwd),
            Anchor::Project => normalize(ctx.project_dir, ctx.cwd),
            Anchor::Cwd => normalize(ctx.cwd, Path::new("/")),
        };
        let mut base = base;
        for _ in 0..self.up {
            base.pop();
        }
        let candidate = normalize(path, ctx.cwd);
        let Ok(rel) = candidate.strip_prefix(&base) else {
            return false;
        };
        if rel.as_os_str().is_empty() {
            return self.covers_anchor;
        }
        let rel = rel.to_string_lossy();
        let rel = rel.as_ref();
        let fail_closed = matches!(purpose, RulePurpose::Deny | RulePurpose::Ask);
        let with_contents = self.contents_always || fail_closed;
        if self.anchored.is_match(rel) || (with_contents && self.anchored_contents.is_match(rel)) {
            return true;
        }
        match &self.any_depth {
            Some((set, contents, kind)) => {
                let applies = match kind {
                    AnyDepth::Always => true,
                    AnyDepth::DenyAndAsk => fail_closed,
                };
                applies && (set.is_match(rel) || (with_contents && contents.is_match(rel)))
            }
            None => false,
        }
    }
}

/// `name/**` where `name` is one literal segment.
fn is_single_segment_dir_glob(core: &str) -> bool {
    match core.strip_suffix("/**") {
        Some(dir) => !dir.is_empty() && !dir.contains(['/', '*', '?', '[', '{']),
        None => false,
    }
}

fn build_set(variants: &[String], pattern: &str) -> Result<GlobSet, String> {
    let mut set = GlobSetBuilder::new();
    for v in variants {
        let glob = GlobBuilder::new(v)
            .literal_separator(true)
            .backslash_escape(true)
            .build()
            .map_err(|e| format!("bad path pattern `{pattern}`: {e}"))?;
        set.add(glob);
    }
    set.build()
        .map_err(|e| format!("bad path pattern `{pattern}`: {e}"))
}

/// Makes `path` absolute (against `cwd`) and removes `.` and `..` lexically.
pub fn normalize(path: &Path, cwd: &Path) -> PathBuf {
    let joined = if path.is_absolute() {
        path.to_path_buf()
    } else {
        cwd.join(path)
    };
    let mut out = PathBuf::from("/");
    for c in joined.components() {
        match c {
            Component::Prefix(_) | Component::RootDir | Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(s) => out.push(s),
        }
    }
    out
}

/// `path` (absolute, normalised) with its symlinks resolved: the longest existing prefix is
/// canonicalised and the rest appended, so a file that does not exist yet under a linked
/// directory still resolves. A dangling final symlink resolves to its target. Never fails: on
/// an error the path comes back as given.
pub fn resolve_links(path: &Path) -> PathBuf {
    let mut existing = path.to_path_buf();
    let mut rest: Vec<std::ffi::OsString> = Vec::new();
    // A dangling symlink: follow it by hand (bounded), so `Write` through it is seen.
    let mut hops = 0;
    while hops < 40 {
        match std::fs::symlink_metadata(&existing) {
            Ok(m) if m.file_type().is_symlink() && std::fs::metadata(&existing).is_err() => {
                let Ok(target) = std::fs::read_link(&existing) else {
                    break;
                };
                let parent = existing.parent().unwrap_or(Path::new("/")).to_path_buf();
                existing = normalize(&target, &parent);
                hops += 1;
            }
            _ => break,
        }
    }
    loop {
        if let Ok(real) = std::fs::canonicalize(&existing) {
            let mut out = real;
            for seg in rest.iter().rev() {
                out.push(seg);
            }
            return out;
        }
        match (existing.file_name(), existing.parent()) {
            (Some(name), Some(parent)) => {
                rest.push(name.to_os_string());
                existing = parent.to_path_buf();
            }
            _ => return path.to_path_buf(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> RuleContext<'static> {
        RuleContext {
            cwd: Path::new("/proj/sub"),
            project_dir: Path::new("/proj"),
            home: Path::new("/home/u"),
        }
    }

    fn m(pat: &str, path: &str, purpose: RulePurpose) -> bool {
        PathPattern::compile(pat)
            .map(|p| p.matches(Path::new(path), &ctx(), purpose))
            .unwrap_or(false)
    }

    #[test]
    fn anchors() {
        use RulePurpose::Deny;
        assert!(m("//etc/passwd", "/etc/passwd", Deny));
        assert!(m("~/.ssh/**", "/home/u/.ssh/id_rsa", Deny));
        assert!(m("/src/*.rs", "/proj/src/a.rs", Deny));
        assert!(!m("/src/*.rs", "/proj/sub/src/a.rs", Deny));
        assert!(m("./.env", "/proj/sub/.env", Deny));
        assert!(!m("./.env", "/proj/sub/x/.env", Deny));
        assert!(m(".env", "/proj/sub/x/y/.env", Deny));
        assert!(m("../other/*", "/proj/other/f", Deny));
        assert!(m("secrets", "/proj/sub/secrets/key", Deny));
    }

    #[test]
    fn normalizes_dot_dot() {
        assert!(m("/src/**", "/proj/sub/../src/x/y", RulePurpose::Allow));
        assert_eq!(
            normalize(Path::new("a/./b/../c"), Path::new("/r")),
            PathBuf::from("/r/a/c")
        );
    }
}
