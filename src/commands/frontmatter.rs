//! The front matter of a command, skill or agent file: a `---` block of `key: value` lines
//! (a value may be a `[a, b]` list or continue as `- item` lines) before the body.
//!
//! Only the subset of YAML these files use is read; anything else is an error that names the
//! line, so a typo never turns into a silently ignored setting.

/// One value of a front-matter key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    Scalar(String),
    List(Vec<String>),
}

impl Value {
    /// The value as one text (a list joined by `, `).
    pub fn text(&self) -> String {
        match self {
            Value::Scalar(s) => s.clone(),
            Value::List(items) => items.join(", "),
        }
    }

    /// The value as a list: a scalar is split at commas (`allowed-tools: Bash(git:*), Read`),
    /// keeping commas inside parentheses.
    pub fn items(&self) -> Vec<String> {
        match self {
            Value::List(items) => items.clone(),
            Value::Scalar(s) => split_top_level(s),
        }
    }
}

/// A parsed file: its keys in order (with their 1-based lines) and its body.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Document {
    pub fields: Vec<(usize, String, Value)>,
    /// The text after the closing `---` line, as written (not trimmed).
    pub body: String,
    /// Whether the file had a front matter block at all.
    pub has_front_matter: bool,
}

impl Document {
    /// The value of `key`, if given.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.fields
            .iter()
            .find(|(_, k, _)| k == key)
            .map(|(_, _, v)| v)
    }

    /// The value of `key` as text, if given and not empty.
    pub fn text(&self, key: &str) -> Option<String> {
        self.get(key).map(Value::text).filter(|s| !s.is_empty())
    }
}

/// What is wrong, and on which line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pub line: usize,
    pub message: String,
}

/// Parses `text`. A file that does not start with `---` has no front matter: all of it is the
/// body (Claude Code accepts such command files).
pub fn parse(text: &str) -> Result<Document, Error> {
    let err = |line: usize, message: String| Error { line, message };
    let mut rest = text;
    let first = next_line(&mut rest);
    if first.map(str::trim_end) != Some("---") {
        return Ok(Document {
            fields: Vec::new(),
            body: text.to_string(),
            has_front_matter: false,
        });
    }
    let mut fields: Vec<(usize, String, Value)> = Vec::new();
    let mut line_no = 1;
    loop {
        let Some(raw) = next_line(&mut rest) else {
            return Err(err(
                line_no.max(1),
                "front matter is not closed by a `---` line".to_string(),
            ));
        };
        line_no += 1;
        let line = raw.trim_end();
        if line == "---" {
            break;
        }
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        if let Some(item) = line.trim_start().strip_prefix("- ") {
            match fields.last_mut() {
                Some((_, _, Value::List(items))) => items.push(unquote(item)),
                Some((_, _, value @ Value::Scalar(_))) if value.text().is_empty() => {
                    *value = Value::List(vec![unquote(item)]);
                }
                _ => {
                    return Err(err(
                        line_no,
                        "a list item `- …` outside a list field".to_string(),
                    ));
                }
            }
            continue;
        }
        if line.starts_with([' ', '\t']) {
            // A continuation of the previous scalar (a folded description).
            match fields.last_mut() {
                Some((_, _, Value::Scalar(s))) => {
                    if !s.is_empty() {
                        s.push(' ');
                    }
                    s.push_str(line.trim());
                    continue;
                }
                _ => return Err(err(line_no, format!("unexpected indented line `{line}`"))),
            }
        }
        let Some((key, value)) = line.split_once(':') else {
            return Err(err(
                line_no,
                format!("expected `key: value`, found `{line}`"),
            ));
        };
        let key = key.trim();
        if key.is_empty() || key.contains(char::is_whitespace) {
            return Err(err(line_no, format!("invalid key in `{line}`")));
        }
        let value = value.trim();
        let value = match value.strip_prefix('[').and_then(|v| v.strip_suffix(']')) {
            Some(inner) => Value::List(
                split_top_level(inner)
                    .into_iter()
                    .filter(|s| !s.is_empty())
                    .collect(),
            ),
            // `>` and `|` start a block scalar: its indented lines follow.
            None if value == ">" || value == "|" || value == ">-" || value == "|-" => {
                Value::Scalar(String::new())
            }
            None => Value::Scalar(unquote(value)),
        };
        fields.push((line_no, key.to_string(), value));
    }
    Ok(Document {
        fields,
        body: rest.to_string(),
        has_front_matter: true,
    })
}

fn next_line<'a>(rest: &mut &'a str) -> Option<&'a str> {
    if rest.is_empty() {
        return None;
    }
    match rest.find('\n') {
        Some(i) => {
            let line = &rest[..i];
            *rest = &rest[i + 1..];
            Some(line)
        }
        None => {
            let line = *rest;
            *rest = "";
            Some(line)
        }
    }
}

fn unquote(text: &str) -> String {
    let t = text.trim();
    for q in ['"', '\''] {
        if let Some(inner) = t.strip_prefix(q).and_then(|s| s.strip_suffix(q)) {
            return inner.to_string();
        }
    }
    t.to_string()
}

/// Splits at commas outside parentheses: `Bash(git add:*), Read` → two items.
fn split_top_level(text: &str) -> Vec<String> {
    let mut items = Vec::new();
    let mut depth = 0usize;
    let mut current = String::new();
    for c in text.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                items.push(unquote(&current));
                current.clear();
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    if !current.trim().is_empty() {
        items.push(unquote(&current));
    }
    items
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_lists_and_body_as_written() {
        let doc = parse(
            "---\ndescription: Mark a thing\nallowed-tools: Bash(git add:*), Read\nargument-hint: [what]\ntools:\n  - Read\n  - Grep\n---\nBody $1\n\n",
        )
        .unwrap();
        assert_eq!(doc.text("description").as_deref(), Some("Mark a thing"));
        assert_eq!(
            doc.get("allowed-tools").unwrap().items(),
            vec!["Bash(git add:*)", "Read"]
        );
        assert_eq!(
            doc.get("argument-hint"),
            Some(&Value::List(vec!["what".into()]))
        );
        assert_eq!(
            doc.get("tools"),
            Some(&Value::List(vec!["Read".into(), "Grep".into()]))
        );
        assert_eq!(doc.body, "Body $1\n\n");
    }

    #[test]
    fn no_front_matter_is_all_body_and_errors_name_the_line() {
        let doc = parse("Just text\n").unwrap();
        assert!(!doc.has_front_matter);
        assert_eq!(doc.body, "Just text\n");
        let e = parse("---\ndescription: x\nthis is wrong\n---\n").unwrap_err();
        assert_eq!(e.line, 3);
        assert!(e.message.contains("this is wrong"), "{}", e.message);
        let e = parse("---\ndescription: x\n").unwrap_err();
        assert!(e.message.contains("not closed"), "{}", e.message);
    }

    #[test]
    fn folded_description_joins_its_lines() {
        let doc = parse("---\ndescription: >\n  one\n  two\n---\n").unwrap();
        assert_eq!(doc.text("description").as_deref(), Some("one two"));
    }
}
