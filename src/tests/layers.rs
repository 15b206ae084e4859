//! The layer rules of `DESIGN.md` ("Dependencies point one way"), checked against the code:
//! every `crate::<module>` path and every `super::` chain that climbs to the crate root in a
//! non-test source file must name a module its layer line allows.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The `layers` block of DESIGN.md: module → the modules it may import.
fn rules(design: &str) -> BTreeMap<String, BTreeSet<String>> {
    let start = design
        .find("```layers\n")
        .expect("DESIGN.md has a ```layers block");
    let body = &design[start + "```layers\n".len()..];
    let body = &body[..body.find("```").expect("the layers block is closed")];
    let mut rules = BTreeMap::new();
    for (n, line) in body.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let (module, rest) = line
            .split_once('→')
            .unwrap_or_else(|| panic!("layers line {}: no '→': {line}", n + 1));
        // A comment in parentheses may follow the list.
        let list = rest.split('(').next().unwrap_or_default().trim();
        let allowed: BTreeSet<String> = if list == "—" {
            BTreeSet::new()
        } else {
            list.split(',').map(|m| m.trim().to_string()).collect()
        };
        let module = module.trim().to_string();
        assert!(
            rules.insert(module.clone(), allowed).is_none(),
            "layers: {module} is listed twice"
        );
    }
    rules
}

fn source_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            source_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The module path of a source file below `src/` (`hooks/events/stop.rs` → `[hooks, events,
/// stop]`; a `mod.rs` is its directory).
fn module_path(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string())
        .collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    parts
}

/// The top-level modules a file's code names, with the line each is named on. Comment lines
/// and the file's inline `#[cfg(test)] mod tests` are skipped.
fn imports(text: &str, depth: usize) -> Vec<(String, usize)> {
    let code = match text.find("#[cfg(test)]\nmod tests") {
        Some(i) => &text[..i],
        None => text,
    };
    let mut found = Vec::new();
    for (n, line) in code.lines().enumerate() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("//") {
            continue;
        }
        let mut rest = line;
        while let Some(i) = rest.find("crate::") {
            let before = rest[..i].chars().last();
            let after = &rest[i + "crate::".len()..];
            rest = after;
            // `$crate::` in a macro, or a longer identifier ending in "crate".
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$') {
                continue;
            }
            let name: String = after
                .chars()
                .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_')
                .collect();
            if !name.is_empty() {
                found.push((name, n + 1));
            }
        }
        // `super::super::…::x` that reaches the crate root names `x` as a top-level module.
        let mut rest = line;
        while let Some(i) = rest.find("super::") {
            let before = rest[..i].chars().last();
            let mut tail = &rest[i..];
            let mut climbs = 0;
            while let Some(next) = tail.strip_prefix("super::") {
                climbs += 1;
                tail = next;
            }
            rest = tail;
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_') || climbs < depth {
                continue;
            }
            let name: String = tail
                .chars()
                .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_')
                .collect();
            if !name.is_empty() {
                found.push((name, n + 1));
            }
        }
    }
    found
}

#[test]
fn every_import_follows_the_layer_rules_of_design_md() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let design = std::fs::read_to_string(root.join("DESIGN.md")).unwrap();
    let rules = rules(&design);

    // The block itself has no cycle: repeatedly remove modules whose allowed imports are all
    // removed already.
    let mut left = rules.clone();
    while !left.is_empty() {
        let ready: Vec<String> = left
            .iter()
            .filter(|(_, deps)| deps.iter().all(|d| !left.contains_key(d)))
            .map(|(m, _)| m.clone())
            .collect();
        assert!(
            !ready.is_empty(),
            "the layers block has a cycle among {:?}",
            left.keys()
        );
        for m in ready {
            left.remove(&m);
        }
    }
    for (module, deps) in &rules {
        for dep in deps {
            assert!(
                rules.contains_key(dep),
                "layers: {module} → {dep}, which is not listed"
            );
        }
    }

    let src = root.join("src");
    let mut files = Vec::new();
    source_files(&src, &mut files);
    files.sort();
    let mut problems = Vec::new();
    let mut seen_modules = BTreeSet::new();
    for file in &files {
        let rel = file.strip_prefix(&src).unwrap();
        let path = module_path(rel);
        let top = path[0].as_str();
        if top == "tests" || top == "lib" || top == "main" {
            continue;
        }
        seen_modules.insert(top.to_string());
        let Some(allowed) = rules.get(top) else {
            problems.push(format!(
                "{}: module `{top}` is not in DESIGN.md's layers",
                rel.display()
            ));
            continue;
        };
        let text = std::fs::read_to_string(file).unwrap();
        for (target, line) in imports(&text, path.len()) {
            if target != top && !allowed.contains(&target) {
                problems.push(format!(
                    "{}:{line}: `{top}` imports `{target}`, which its layer does not allow",
                    rel.display()
                ));
            }
        }
    }
    for module in rules.keys() {
        assert!(
            seen_modules.contains(module),
            "DESIGN.md lists `{module}`, which src/ does not have"
        );
    }
    assert!(
        problems.is_empty(),
        "layer rules broken:\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_import_reader_sees_crate_paths_and_super_chains_to_the_root() {
    let text = "use crate::hooks::spec::HookEvent;\n\
                // use crate::cli::x;\n\
                let x = crate::tools::bash::run();\n\
                use super::super::agent::Session;\n\
                use super::sibling;\n\
                #[cfg(test)]\nmod tests { use crate::engine::Engine; }\n";
    let found: Vec<String> = imports(text, 2).into_iter().map(|(m, _)| m).collect();
    assert_eq!(found, ["hooks", "tools", "agent"]);
}
