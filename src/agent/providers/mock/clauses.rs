//! Understanding prompts: the small English and Chinese grammar the mock turns into tool calls
//! (`read X`, `edit X: a -> b`, a command to run in backticks, …).

use super::*;

pub(super) fn regex(pattern: &str) -> Regex {
    // The patterns are constants in this file; a typo is caught by the unit tests.
    Regex::new(pattern).unwrap_or_else(|err| panic!("invalid built-in regex {pattern}: {err}"))
}

pub(super) static SEPARATOR: LazyLock<Regex> =
    LazyLock::new(|| regex(r"(?i)\s*(?:[;；]|,\s*then\s+|\s+then\s+|，\s*然后|然后)\s*"));
pub(super) static FILLER: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?i)^(?:(?:please|and|then|first|next|finally|also|now)\s+|请|先|再|然后|最后|接着|并且|帮我|给我|麻烦)+",
    )
});
pub(super) static EDIT_EN: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?is)^(?:edit|change|modify)\s+(?:the\s+)?(?:file\s+)?(?P<path>\S+?)[,:]?\s+(?:and\s+)?replace\s+(?P<old>.+?)\s+(?:with|by)\s+(?P<new>.+)$",
    )
});
pub(super) static EDIT_ZH: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?s)^(?:编辑|修改)(?:文件)?\s*(?P<path>[^\s,，]+)\s*[,，]?\s*(?:(?:把|将)\s*(?P<old>.+?)\s*(?:替换为|替换成|改为|改成|换成)|替换\s*(?P<old2>.+?)\s*为)\s*(?P<new>.+)$",
    )
});
pub(super) static WRITE_EN: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"(?is)^write\s+(?P<content>.+?)\s+(?:to|into)\s+(?:the\s+)?(?:file\s+)?(?P<path>\S+)$")
});
pub(super) static WRITE_EN_FILE_FIRST: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?is)^(?:create|write)\s+(?:a\s+|the\s+)?file\s+(?P<path>\S+)\s+(?:with|containing)\s+(?P<content>.+)$",
    )
});
pub(super) static WRITE_ZH: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"(?s)^(?:写入|写)\s*(?P<content>.+?)\s*(?:到|至|进)\s*(?:文件)?\s*(?P<path>\S+)$")
});
pub(super) static READ_EN: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"(?i)^(?:read|cat|open|view|show)\s+(?:the\s+)?(?:file\s+)?(?P<path>.+)$")
});
pub(super) static READ_ZH: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"^(?:读取|读|查看|打开|显示)(?:一下)?(?:文件)?\s*[:：]?\s*(?P<path>.+)$")
});
pub(super) static GLOB_EN: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?i)^(?:list\s+files|list|glob|find\s+files)(?:\s+(?P<pattern>\S+))?(?:\s+in\s+(?P<path>\S+))?$",
    )
});
pub(super) static GLOB_ZH: LazyLock<Regex> =
    LazyLock::new(|| regex(r"^(?:列出文件|列出|查找文件)\s*(?P<pattern>\S+)?$"));
pub(super) static GREP_EN: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r#"(?i)^(?:grep|search\s+for|search)\s+(?P<pattern>"[^"]+"|'[^']+'|\S+)(?:\s+in\s+(?P<path>\S+))?$"#,
    )
});
pub(super) static GREP_ZH: LazyLock<Regex> =
    LazyLock::new(|| regex(r"^(?:搜索|查找)\s*(?P<pattern>\S+)$"));
pub(super) static BASH_EN: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?is)^(?:run|execute|exec)\s+(?:the\s+)?(?:(?:shell\s+)?(?:command|cmd)\b)?\s*:?\s*(?P<cmd>.+)$",
    )
});
pub(super) static BASH_ZH: LazyLock<Regex> =
    LazyLock::new(|| regex(r"(?s)^(?:执行|运行)(?:一下)?(?:命令|指令)?\s*[:：]?\s*(?P<cmd>.+)$"));
pub(super) static HOOK_CONTEXT: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"^[A-Za-z]+(?::\S+)? hook (?:blocking error|additional context|success|error)\b")
});
pub(super) static LINE_NUMBER: LazyLock<Regex> = LazyLock::new(|| regex(r"^\s*\d+(?:\t|→)"));

/// How Claude Code prefixes a Stop hook's feedback to the model.
pub(super) const STOP_FEEDBACK: &str = "Stop hook feedback:";

/// A tool call the mock decided on.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedCall {
    /// The tool name (`Read`, `Bash`, …).
    pub name: String,
    /// The tool input in Claude Code's shape, paths as the user wrote them.
    pub input: Value,
}

/// Splits a prompt into clauses (see the module doc for the separators).
pub fn split_clauses(prompt: &str) -> Vec<String> {
    SEPARATOR
        .split(prompt.trim())
        .map(|clause| FILLER.replace(clause.trim(), "").trim().to_string())
        .filter(|clause| !clause.is_empty())
        .collect()
}

/// The tool call one clause asks for, if the mock understands it.
pub fn parse_clause(clause: &str) -> Option<PlannedCall> {
    let call = |name: &str, input: Value| {
        Some(PlannedCall {
            name: name.to_string(),
            input,
        })
    };
    for re in [&*EDIT_EN, &*EDIT_ZH] {
        if let Some(c) = re.captures(clause) {
            let old = c.name("old").or_else(|| c.name("old2"))?.as_str();
            return call(
                "Edit",
                json!({
                    "file_path": path_arg(&c["path"]),
                    "old_string": unescape(&unquote(old)),
                    "new_string": unescape(&unquote(&c["new"])),
                }),
            );
        }
    }
    for re in [&*WRITE_EN_FILE_FIRST, &*WRITE_EN, &*WRITE_ZH] {
        if let Some(c) = re.captures(clause) {
            return call(
                "Write",
                json!({
                    "file_path": path_arg(&c["path"]),
                    "content": unescape(&unquote(&c["content"])),
                }),
            );
        }
    }
    for re in [&*GLOB_EN, &*GLOB_ZH] {
        if let Some(c) = re.captures(clause) {
            let pattern = c
                .name("pattern")
                .map_or("*".to_string(), |p| unquote(p.as_str()));
            let mut input = json!({ "pattern": pattern });
            if let (Some(path), Some(map)) = (c.name("path"), input.as_object_mut()) {
                map.insert("path".into(), json!(path_arg(path.as_str())));
            }
            return call("Glob", input);
        }
    }
    for re in [&*GREP_EN, &*GREP_ZH] {
        if let Some(c) = re.captures(clause) {
            let mut input = json!({ "pattern": unquote(&c["pattern"]) });
            if let (Some(path), Some(map)) = (c.name("path"), input.as_object_mut()) {
                map.insert("path".into(), json!(path_arg(path.as_str())));
            }
            return call("Grep", input);
        }
    }
    for re in [&*READ_EN, &*READ_ZH] {
        if let Some(c) = re.captures(clause) {
            return call("Read", json!({ "file_path": path_arg(&c["path"]) }));
        }
    }
    for re in [&*BASH_EN, &*BASH_ZH] {
        if let Some(c) = re.captures(clause) {
            let command = c["cmd"].trim().trim_end_matches('。').trim();
            let command = strip_pair(command, '`', '`').unwrap_or(command);
            if command.is_empty() {
                return None;
            }
            return call("Bash", json!({ "command": command }));
        }
    }
    None
}

pub(super) fn strip_pair(text: &str, open: char, close: char) -> Option<&str> {
    text.strip_prefix(open)?.strip_suffix(close)
}

/// Removes one pair of surrounding quotes or backticks.
pub(super) fn unquote(text: &str) -> String {
    let text = text.trim();
    for (open, close) in [
        ('"', '"'),
        ('\'', '\''),
        ('`', '`'),
        ('“', '”'),
        ('「', '」'),
    ] {
        if text.chars().count() >= 2
            && let Some(inner) = strip_pair(text, open, close)
        {
            return inner.to_string();
        }
    }
    text.to_string()
}

/// A path as given, minus quotes and a trailing sentence mark.
pub(super) fn path_arg(text: &str) -> String {
    let path = unquote(text);
    let trimmed = path.trim_end_matches(['。', '，', ',', '!', '！', '?', '？']);
    let trimmed = if trimmed.len() > 1 && trimmed.ends_with('.') && !trimmed.ends_with("..") {
        &trimmed[..trimmed.len() - 1]
    } else {
        trimmed
    };
    if trimmed.is_empty() {
        path
    } else {
        trimmed.to_string()
    }
}

/// `\n` and `\t` in written text become a newline and a tab, so a one-line prompt can write
/// several lines.
pub(super) fn unescape(text: &str) -> String {
    text.replace("\\n", "\n").replace("\\t", "\t")
}

pub(super) fn is_chinese(text: &str) -> bool {
    text.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c))
}
