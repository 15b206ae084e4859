//! The ToolSearch tool and deferred tools, as Claude Code 2.1.328 offers them in `-p`
//! (fixtures `tests/fixtures/cc-2.1.328/tools_deferred`, `notebook_edit`): some tools
//! (NotebookEdit, WebFetch, WebSearch) are not sent with the request until the model loads them
//! by name (`select:WebFetch,WebSearch`) or by keywords (`web fetch`, `+notebook edit`).
//!
//! Hooks see Claude Code's `tool_response`: `{"matches": [names], "query", "total_deferred_tools"}`.
//! The model is sent the matched tools' definitions as text, one
//! `<function>{"description","name","parameters"}</function>` line each inside `<functions>`
//! — the encoding Claude Code's own tool description names — and from the next request on the
//! tools are offered like the others. (Claude Code answers with `tool_reference` blocks, an
//! Anthropic API feature; the text works with every provider.)
//!
//! A deferred tool the model calls without loading it still runs, through the same hooks and
//! permissions: nothing is gained by refusing a call whose input is checked anyway.

#![deny(missing_docs)]

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use super::input::{self, Field, FieldKind};
use super::{BoxFuture, Tool, ToolContext, ToolOutcome};

pub(crate) const FIELDS: &[Field] = &[
    Field::required("query", FieldKind::String),
    Field::required("max_results", FieldKind::Number),
];

const DESCRIPTION: &str = "Loads the definitions of deferred tools so that you can call them.\n\n\
The deferred tools are listed below; until loaded, only their names are known. \
Query forms:\n\
- \"select:WebFetch,NotebookEdit\": load these tools by name;\n\
- \"notebook jupyter\": keyword search over names and descriptions, best `max_results` matches;\n\
- \"+web fetch\": a `+` word must be in the name; the other words rank.\n\n\
The result lists each loaded tool as a <function>{…}</function> line inside <functions>; \
from then on you call it like any other tool.";

/// Which deferred tools the model has loaded this session (shared with the session, which
/// offers a deferred tool once it is in the set).
pub type Loaded = Arc<Mutex<HashSet<String>>>;

/// One deferred tool as ToolSearch knows it.
#[derive(Debug, Clone)]
pub struct Deferred {
    /// The tool's name.
    pub name: String,
    /// Its description.
    pub description: String,
    /// Its input schema.
    pub schema: Value,
}

/// The ToolSearch tool.
#[derive(Debug, Clone)]
pub struct ToolSearchTool {
    deferred: Vec<Deferred>,
    /// [`DESCRIPTION`] and the names of the deferred tools.
    description: String,
}

impl ToolSearchTool {
    /// The tool over the session's deferred tools (what it loads goes into
    /// [`ToolContext::loaded_tools`], which the session reads).
    pub fn new(deferred: Vec<Deferred>) -> ToolSearchTool {
        let names: Vec<&str> = deferred.iter().map(|d| d.name.as_str()).collect();
        let description = format!(
            "{DESCRIPTION}\n\nThe deferred tools of this session (load one before you call it):\n{}{}",
            names.join("\n"),
            super::refusal_note!()
        );
        ToolSearchTool {
            deferred,
            description,
        }
    }

    /// The names the query matches, best first.
    fn search(&self, query: &str, max: usize) -> Vec<&Deferred> {
        if let Some(names) = query.trim().strip_prefix("select:") {
            let wanted: Vec<&str> = names.split(',').map(str::trim).collect();
            return wanted
                .iter()
                .filter_map(|w| {
                    self.deferred
                        .iter()
                        .find(|d| d.name.eq_ignore_ascii_case(w))
                })
                .collect();
        }
        let words: Vec<String> = query.split_whitespace().map(str::to_lowercase).collect();
        let (required, ranked): (Vec<&String>, Vec<&String>) =
            words.iter().partition(|w| w.starts_with('+'));
        let mut scored: Vec<(usize, usize, &Deferred)> = self
            .deferred
            .iter()
            .enumerate()
            .filter_map(|(i, d)| {
                let name = d.name.to_lowercase();
                let description = d.description.to_lowercase();
                if !required
                    .iter()
                    .all(|w| name.contains(w.trim_start_matches('+')))
                {
                    return None;
                }
                let score: usize = ranked
                    .iter()
                    .map(|w| {
                        if name.contains(w.as_str()) {
                            3
                        } else if description.contains(w.as_str()) {
                            1
                        } else {
                            0
                        }
                    })
                    .sum::<usize>()
                    + 3 * required.len();
                (score > 0).then_some((score, i, d))
            })
            .collect();
        scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        scored.into_iter().take(max).map(|(_, _, d)| d).collect()
    }
}

impl Tool for ToolSearchTool {
    fn name(&self) -> &str {
        "ToolSearch"
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn input_schema(&self) -> Value {
        json!({
            "$schema": super::SCHEMA_DIALECT,
            "type": "object",
            "properties": {
                "query": {"description": "\"select:<name>[,<name>…]\" to load tools by name, or keywords to search.", "type": "string"},
                "max_results": {"description": "How many matches a keyword search returns at most (default 5).", "default": 5, "type": "number"}
            },
            "required": ["query", "max_results"],
            "additionalProperties": false
        })
    }

    fn prepare_touches_files(&self) -> bool {
        false
    }

    fn prepare(&self, input: Value, _ctx: &ToolContext) -> Result<Value, String> {
        Ok(Value::Object(input::normalise(self.name(), input, FIELDS)?))
    }

    fn execute<'a>(&'a self, input: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutcome> {
        Box::pin(async move {
            let query = input
                .get("query")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            let max = input
                .get("max_results")
                .and_then(Value::as_f64)
                .filter(|n| n.is_finite() && *n >= 1.0)
                .map_or(5, |n| n.min(100.0) as usize);
            let found = self.search(&query, max);
            if let Ok(mut loaded) = ctx.loaded_tools.lock() {
                loaded.extend(found.iter().map(|d| d.name.clone()));
            }
            let content = if found.is_empty() {
                format!("No deferred tool matches \"{query}\".")
            } else {
                let lines: Vec<String> = found
                    .iter()
                    .map(|d| {
                        format!(
                            "<function>{}</function>",
                            json!({"description": d.description, "name": d.name, "parameters": d.schema})
                        )
                    })
                    .collect();
                format!("<functions>\n{}\n</functions>", lines.join("\n"))
            };
            let response = json!({
                "matches": found.iter().map(|d| d.name.clone()).collect::<Vec<_>>(),
                "query": query,
                "total_deferred_tools": self.deferred.len(),
            });
            ToolOutcome::Success { response, content }
        })
    }

    fn render(&self, response: &Value) -> Option<String> {
        let matches = response.get("matches")?.as_array()?;
        Some(format!(
            "Loaded: {}",
            matches
                .iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(", ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool() -> ToolSearchTool {
        let d = |name: &str, description: &str| Deferred {
            name: name.into(),
            description: description.into(),
            schema: json!({}),
        };
        ToolSearchTool::new(vec![
            d("NotebookEdit", "Changes one cell of a Jupyter notebook"),
            d("WebFetch", "Fetches a web page"),
            d("WebSearch", "Searches the web"),
        ])
    }

    #[test]
    fn select_and_keywords_match_as_claude_codes_did() {
        let t = tool();
        let names = |q: &str, n: usize| -> Vec<String> {
            t.search(q, n).iter().map(|d| d.name.clone()).collect()
        };
        assert_eq!(
            names("select:WebFetch,WebSearch,NotebookEdit", 5),
            ["WebFetch", "WebSearch", "NotebookEdit"]
        );
        // Fixture notebook_edit: "web fetch" with max 2 → WebFetch, WebSearch.
        assert_eq!(names("web fetch", 2), ["WebFetch", "WebSearch"]);
        assert_eq!(names("+notebook jupyter", 5), ["NotebookEdit"]);
        assert!(names("nothing-like-it", 5).is_empty());
    }
}
