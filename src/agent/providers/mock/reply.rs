//! The mock's answer to a prompt: the hook texts and earlier steps it finds in the history, the
//! tool calls it plans, and the short report it writes when the calls have run.

use super::*;

/// Hook context: a `<system-reminder>` wrapper, or a bare hook text (`PostToolUse:Bash hook
/// additional context: …`) in case a caller sends it unwrapped.
pub(super) fn is_reminder(text: &str) -> bool {
    let text = text.trim_start();
    text.starts_with("<system-reminder>") || HOOK_CONTEXT.is_match(text)
}

/// The text inside a `<system-reminder>` wrapper (or the bare text).
pub(super) fn strip_reminder(text: &str) -> &str {
    let text = text.trim();
    let text = text.strip_prefix("<system-reminder>").unwrap_or(text);
    text.strip_suffix("</system-reminder>")
        .unwrap_or(text)
        .trim()
}

/// Index and text of the prompt (see the module doc).
pub(super) fn find_prompt(messages: &[Message]) -> Option<(usize, String)> {
    messages.iter().enumerate().rev().find_map(|(i, m)| {
        if m.role != Role::User
            || m.content
                .iter()
                .any(|b| matches!(b, ContentBlock::ToolResult { .. }))
        {
            return None;
        }
        let texts: Vec<&str> = m
            .content
            .iter()
            .filter_map(|b| match b {
                ContentBlock::Text { text } if !is_reminder(text) && !text.trim().is_empty() => {
                    Some(text.as_str())
                }
                ContentBlock::Text { .. }
                | ContentBlock::SystemNote { .. }
                | ContentBlock::ToolUse { .. }
                | ContentBlock::ToolResult { .. } => None,
            })
            .collect();
        (!texts.is_empty()).then(|| (i, texts.join("\n")))
    })
}

/// A call issued after the prompt and its result, if it came back.
pub(super) struct Step<'a> {
    pub(super) name: &'a str,
    pub(super) input: &'a Value,
    pub(super) result: Option<(&'a str, bool)>,
}

pub(super) fn steps_after(messages: &[Message]) -> Vec<Step<'_>> {
    let mut steps: Vec<(&str, Step<'_>)> = Vec::new();
    for message in messages {
        for block in &message.content {
            match block {
                ContentBlock::ToolUse { id, name, input } => steps.push((
                    id.as_str(),
                    Step {
                        name,
                        input,
                        result: None,
                    },
                )),
                ContentBlock::ToolResult {
                    tool_use_id,
                    content,
                    is_error,
                } => {
                    if let Some((_, step)) = steps.iter_mut().find(|(id, _)| id == tool_use_id) {
                        step.result = Some((content.as_str(), *is_error));
                    }
                }
                ContentBlock::Text { .. } | ContentBlock::SystemNote { .. } => {}
            }
        }
    }
    steps.into_iter().map(|(_, step)| step).collect()
}

/// Hook context (system notes and `<system-reminder>` texts) that arrived since the last
/// assistant message.
pub(super) fn fresh_hook_notes(messages: &[Message]) -> Vec<String> {
    let start = messages
        .iter()
        .rposition(|m| m.role == Role::Assistant)
        .map_or(0, |i| i + 1);
    messages[start..]
        .iter()
        .filter(|m| m.role == Role::User)
        .flat_map(|m| m.content.iter())
        .filter_map(|b| match b {
            ContentBlock::Text { text } if is_reminder(text) => {
                Some(first_lines(strip_reminder(text), 3, 300))
            }
            ContentBlock::SystemNote { text } => Some(first_lines(text, 3, 300)),
            ContentBlock::Text { .. }
            | ContentBlock::ToolUse { .. }
            | ContentBlock::ToolResult { .. } => None,
        })
        .collect()
}

pub(super) fn respond_to_prompt(
    messages: &[Message],
    tools: &[ToolSpec],
    turn: usize,
) -> ModelResponse {
    let Some((prompt_index, prompt)) = find_prompt(messages) else {
        return response(
            turn,
            vec![ContentBlock::Text {
                text: help_text(false),
            }],
            StopReason::EndTurn,
        );
    };
    let zh = is_chinese(&prompt);
    let offered = |name: &str| tools.is_empty() || tools.iter().any(|t| t.name == name);
    // A Stop hook's feedback arrives as a user message; its request may follow a `REASON: `
    // label, so each line is tried whole and after its last `: `.
    let stop_feedback = prompt
        .trim_start()
        .strip_prefix(STOP_FEEDBACK)
        .map(|rest| rest.trim().to_string());
    let clauses: Vec<String> = match &stop_feedback {
        None => split_clauses(&prompt),
        Some(feedback) => feedback
            .lines()
            .flat_map(split_clauses)
            .map(|clause| {
                if parse_clause(&clause).is_some() {
                    return clause;
                }
                match clause.rsplit_once(": ") {
                    Some((_, tail)) => FILLER.replace(tail.trim(), "").trim().to_string(),
                    None => clause,
                }
            })
            .collect(),
    };
    let mut plan = Vec::new();
    let mut unavailable = Vec::new();
    for clause in clauses {
        match parse_clause(&clause) {
            Some(call) if offered(&call.name) => plan.push(call),
            Some(call) => unavailable.push(call.name),
            None => {}
        }
    }
    let later = &messages[prompt_index + 1..];
    let step = later.iter().filter(|m| m.role == Role::Assistant).count();
    let history = steps_after(later);
    let notes: Vec<String> = fresh_hook_notes(messages)
        .into_iter()
        .map(|note| {
            if zh {
                format!("收到钩子反馈：{note}")
            } else {
                format!("Hook feedback noted: {note}")
            }
        })
        .collect();

    if let Some(next) = plan.get(step) {
        let mut content = Vec::new();
        let mut text = Vec::new();
        if let Some(last) = history.last()
            && let Some((error, true)) = last.result
        {
            text.push(error_line(last, error, zh));
            text.push(if zh {
                "继续下一步。".to_string()
            } else {
                "Moving on to the next step.".to_string()
            });
        }
        text.extend(notes);
        if !text.is_empty() {
            content.push(ContentBlock::Text {
                text: text.join("\n"),
            });
        }
        content.push(ContentBlock::ToolUse {
            id: tool_id(turn, 0),
            name: next.name.clone(),
            input: next.input.clone(),
        });
        return response(turn, content, StopReason::ToolUse);
    }

    let mut lines: Vec<String> = history.iter().map(|s| step_line(s, zh)).collect();
    lines.extend(notes);
    for name in &unavailable {
        lines.push(if zh {
            format!("{name} 工具不可用，已跳过。")
        } else {
            format!("The {name} tool is not available, so I skipped that step.")
        });
    }
    if history.is_empty() && unavailable.is_empty() {
        lines.push(match &stop_feedback {
            Some(feedback) if zh => format!(
                "收到 Stop 钩子反馈：{}。我在离线模式下无法继续处理。",
                first_lines(feedback, 1, 300)
            ),
            Some(feedback) => format!(
                "Stop hook feedback received: {}. There is nothing more I can do offline.",
                first_lines(feedback, 1, 300)
            ),
            None => help_text(zh),
        });
    }
    response(
        turn,
        vec![ContentBlock::Text {
            text: lines.join("\n"),
        }],
        StopReason::EndTurn,
    )
}

pub(super) fn help_text(zh: bool) -> String {
    if zh {
        "我是 rein 的离线模拟模型。我可以：读文件 Cargo.toml；执行命令 ls -la；写入 hello 到 a.txt；\
         编辑 a.txt 把 X 替换为 Y；列出文件 *.rs；搜索 PATTERN。用“；”或“然后”连接多个步骤。"
            .to_string()
    } else {
        "I'm rein's offline mock model. I can read files (\"read file Cargo.toml\"), run commands \
         (\"run command ls -la\"), write files (\"write hello to a.txt\"), edit files (\"edit a.txt \
         replace X with Y\"), list files (\"list files *.rs\") and search (\"grep PATTERN\"). \
         Chain steps with \";\" or \", then\"."
            .to_string()
    }
}

/// What a call was about: the command, the file or the pattern.
pub(super) fn label(step: &Step<'_>) -> String {
    let field = match step.name {
        "Bash" => "command",
        "Read" | "Write" | "Edit" => "file_path",
        _ => "pattern",
    };
    step.input
        .get(field)
        .and_then(Value::as_str)
        .map_or_else(|| step.name.to_string(), str::to_string)
}

/// Whether an error text reads like a refusal (hook or permission) rather than a failure.
/// Only the first line counts: a command's own output ("Permission denied") comes later.
pub(super) fn is_refusal(error: &str) -> bool {
    let lower = error
        .trim()
        .lines()
        .next()
        .unwrap_or_default()
        .to_lowercase();
    [
        "hook",
        "denied",
        "permission",
        "blocked",
        "refused",
        "not allowed",
    ]
    .iter()
    .any(|w| lower.contains(w))
}

pub(super) fn error_line(step: &Step<'_>, error: &str, zh: bool) -> String {
    let error = first_lines(error, 5, 500);
    let what = label(step);
    match (is_refusal(&error), zh) {
        (true, false) => format!(
            "The tool call was refused: {} `{what}` was blocked: {error}",
            step.name
        ),
        (false, false) => format!("The {} call `{what}` failed: {error}", step.name),
        (true, true) => format!("工具调用被拒绝：{} `{what}` 被阻止：{error}", step.name),
        (false, true) => format!("{} `{what}` 执行失败：{error}", step.name),
    }
}

pub(super) fn step_line(step: &Step<'_>, zh: bool) -> String {
    let what = label(step);
    let Some((content, is_error)) = step.result else {
        return if zh {
            format!("{} `{what}` 没有返回结果。", step.name)
        } else {
            format!("{} `{what}` returned no result.", step.name)
        };
    };
    if is_error {
        return error_line(step, content, zh);
    }
    match step.name {
        "Read" => {
            let lines: Vec<&str> = content
                .lines()
                .map(|l| LINE_NUMBER.find(l).map_or(l, |m| &l[m.end()..]))
                .collect();
            let first = lines.first().copied().unwrap_or_default().trim_end();
            match zh {
                false => format!(
                    "{what}: {} line{}; first line: {first}",
                    lines.len(),
                    if lines.len() == 1 { "" } else { "s" }
                ),
                true => format!("{what}：共 {} 行；第一行：{first}", lines.len()),
            }
        }
        "Bash" => {
            let output = first_lines(content, 20, 2000);
            match (output.is_empty(), zh) {
                (true, false) => format!("`{what}` finished with no output."),
                (false, false) => format!("`{what}` printed:\n{output}"),
                (true, true) => format!("`{what}` 执行完毕，没有输出。"),
                (false, true) => format!("`{what}` 的输出：\n{output}"),
            }
        }
        _ => {
            let output = first_lines(content, 5, 500);
            format!("{} `{what}`: {output}", step.name)
        }
    }
}

/// At most `max_lines` lines and `max_chars` characters of `text`, trimmed.
pub(super) fn first_lines(text: &str, max_lines: usize, max_chars: usize) -> String {
    let text = text.trim();
    let mut out: String = text.lines().take(max_lines).collect::<Vec<_>>().join("\n");
    let mut cut = out.chars().count() > max_chars;
    if cut {
        out = out.chars().take(max_chars).collect();
    }
    cut |= text.lines().count() > max_lines;
    if cut {
        out.push('…');
    }
    out
}
