//! WebFetch and WebSearch, with Claude Code 2.1.328's names and input schemas (fixture
//! `tests/fixtures/cc-2.1.328/tools_deferred/schemas.json`); both are deferred behind
//! ToolSearch as in Claude Code.
//!
//! **WebFetch** `{url, prompt, offset?}` fetches the page itself: `http` and `https` only,
//! redirects followed on the same host (at most 10) and a redirect to another host returned to
//! the model instead (as Claude Code does), the body capped at [`MAX_BODY_BYTES`], HTML turned
//! into plain text, at most [`MAX_TEXT_CHARS`] characters per call from `offset`. The
//! `tool_response` hooks see is `{bytes, code, codeText, result, durationMs, url}`. Unlike
//! Claude Code, rein asks no second model to answer `prompt` over the page and asks no
//! service whether the domain is safe: the model gets the text with its question, and the
//! permission rules (`WebFetch(domain:example.com)`) and hooks decide what may be fetched.
//!
//! **WebSearch** `{query, allowed_domains?, blocked_domains?}` searches through a
//! [`SearchProvider`]. The command line configures none, so the call fails with a text that
//! says so; a program embedding rein gives one.

#![deny(missing_docs)]

use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::input::{self, Field, FieldKind};
use super::{BoxFuture, Tool, ToolContext, ToolOutcome};

/// Largest body WebFetch reads (Claude Code's 10 MB); the rest is not downloaded.
pub const MAX_BODY_BYTES: usize = 10 * 1024 * 1024;
/// Characters of page text per call; `offset` reads on.
pub const MAX_TEXT_CHARS: usize = 100_000;
/// Redirects followed on the same host.
const MAX_REDIRECTS: usize = 10;
/// Longest URL accepted.
const MAX_URL_CHARS: usize = 2000;
/// A whole fetch's deadline.
const FETCH_TIMEOUT: Duration = Duration::from_secs(60);

pub(crate) const FETCH_FIELDS: &[Field] = &[
    Field::required("url", FieldKind::String),
    Field::required("prompt", FieldKind::String),
    Field::optional("offset", FieldKind::Integer),
];

const FETCH_DESCRIPTION: &str = concat!(
    "Fetches a web page and returns it as plain text, with your `prompt` repeated above it so \
you can answer it from the page.\n\n\
- `url` must be a full http or https URL.\n\
- A redirect to another host is not followed: the result names the new URL; call again with \
it if you still want the page.\n\
- Long pages come in parts of 100000 characters; the result says which `offset` reads on.\n\
- For pages behind a login, or for a local server, use an MCP tool or curl through Bash \
instead.",
    super::refusal_note!()
);

fn client() -> Result<&'static reqwest::Client, String> {
    static CLIENT: OnceLock<Result<reqwest::Client, String>> = OnceLock::new();
    CLIENT
        .get_or_init(|| {
            let _already_installed = rustls::crypto::ring::default_provider().install_default();
            reqwest::Client::builder()
                .timeout(FETCH_TIMEOUT)
                .connect_timeout(Duration::from_secs(15))
                .user_agent(concat!("rein/", env!("CARGO_PKG_VERSION"), " (WebFetch)"))
                .redirect(reqwest::redirect::Policy::custom(|attempt| {
                    let same_host = attempt
                        .previous()
                        .first()
                        .is_some_and(|first| first.host_str() == attempt.url().host_str());
                    if same_host && attempt.previous().len() <= MAX_REDIRECTS {
                        attempt.follow()
                    } else {
                        attempt.stop()
                    }
                }))
                .build()
                .map_err(|e| format!("cannot start the HTTP client: {e}"))
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// The WebFetch tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct WebFetchTool;

impl Tool for WebFetchTool {
    fn name(&self) -> &str {
        "WebFetch"
    }

    fn deferred(&self) -> bool {
        true
    }

    fn description(&self) -> &str {
        FETCH_DESCRIPTION
    }

    fn input_schema(&self) -> Value {
        json!({
            "$schema": super::SCHEMA_DIALECT,
            "type": "object",
            "properties": {
                "url": {"description": "The page's full URL (http or https).", "type": "string", "format": "uri"},
                "prompt": {"description": "What you want to know from the page.", "type": "string"},
                "offset": {"description": "Character position in the page text to read from, as a previous result gave it.", "type": "integer", "minimum": 0, "maximum": 9007199254740991_u64}
            },
            "required": ["url", "prompt"],
            "additionalProperties": false
        })
    }

    fn prepare_touches_files(&self) -> bool {
        false
    }

    fn prepare(&self, input: Value, _ctx: &ToolContext) -> Result<Value, String> {
        let map = input::normalise(self.name(), input, FETCH_FIELDS)?;
        let url = map.get("url").and_then(Value::as_str).unwrap_or_default();
        if url.chars().count() > MAX_URL_CHARS {
            return Err(format!("URL is longer than {MAX_URL_CHARS} characters"));
        }
        match reqwest::Url::parse(url) {
            Ok(u) if matches!(u.scheme(), "http" | "https") && u.host_str().is_some() => {}
            Ok(u) => {
                return Err(format!(
                    "Invalid URL: {url}: the scheme {} is not http or https",
                    u.scheme()
                ));
            }
            Err(e) => return Err(format!("Invalid URL: {url}: {e}")),
        }
        Ok(Value::Object(map))
    }

    fn execute<'a>(&'a self, input: Value, _ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutcome> {
        Box::pin(async move {
            let url = input
                .get("url")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            let prompt = input
                .get("prompt")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let offset = input
                .get("offset")
                .and_then(Value::as_f64)
                .filter(|n| n.is_finite() && *n >= 0.0)
                .map_or(0, |n| n as usize);
            let started = Instant::now();
            match fetch(&url).await {
                Ok(page) => {
                    let (window, note) = text_window(&page.text, offset);
                    let result = match &page.redirect {
                        Some(to) => format!(
                            "The page redirects to another host: {to} (HTTP {}). It was not followed; call WebFetch with that URL to fetch it.",
                            page.code
                        ),
                        None => window,
                    };
                    let content = match &page.redirect {
                        Some(_) => result.clone(),
                        None => format!(
                            "Page {url} (HTTP {} {}), as text{note}. Answer from it: {prompt}\n\n{result}",
                            page.code, page.code_text
                        ),
                    };
                    let response = json!({
                        "bytes": page.bytes,
                        "code": page.code,
                        "codeText": page.code_text,
                        "result": result,
                        "durationMs": started.elapsed().as_millis() as u64,
                        "url": url,
                    });
                    ToolOutcome::Success { response, content }
                }
                Err(error) => ToolOutcome::Failure {
                    error,
                    is_interrupt: false,
                },
            }
        })
    }

    fn render(&self, response: &Value) -> Option<String> {
        Some(response.get("result")?.as_str()?.to_string())
    }
}

struct Page {
    code: u16,
    code_text: String,
    bytes: usize,
    text: String,
    redirect: Option<String>,
}

async fn fetch(url: &str) -> Result<Page, String> {
    let client = client()?;
    let mut response = client
        .get(url)
        .send()
        .await
        .map_err(|e| format!("Failed to fetch {url}: {}", chain(&e)))?;
    let status = response.status();
    let code_text = status.canonical_reason().unwrap_or("").to_string();
    if status.is_redirection() {
        let to = response
            .headers()
            .get(reqwest::header::LOCATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|l| response.url().join(l).ok())
            .map(|u| u.to_string());
        if let Some(to) = to {
            return Ok(Page {
                code: status.as_u16(),
                code_text,
                bytes: 0,
                text: String::new(),
                redirect: Some(to),
            });
        }
    }
    let content_type = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase();
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| format!("Failed to read {url}: {}", chain(&e)))?
    {
        let room = MAX_BODY_BYTES - body.len();
        body.extend_from_slice(&chunk[..chunk.len().min(room)]);
        if body.len() >= MAX_BODY_BYTES {
            break;
        }
    }
    let is_text = content_type.is_empty()
        || content_type.starts_with("text/")
        || content_type.contains("json")
        || content_type.contains("xml")
        || content_type.contains("javascript");
    if !is_text {
        return Err(format!(
            "{url} is {content_type} ({} bytes), not a text page; WebFetch shows only text",
            body.len()
        ));
    }
    let raw = String::from_utf8_lossy(&body);
    let text = if content_type.contains("html") || looks_like_html(&raw) {
        html_to_text(&raw)
    } else {
        raw.into_owned()
    };
    if !status.is_success() {
        return Err(format!(
            "Request failed with status code {}{}",
            status.as_u16(),
            if text.trim().is_empty() {
                String::new()
            } else {
                format!(": {}", first_chars(&text, 500))
            }
        ));
    }
    Ok(Page {
        code: status.as_u16(),
        code_text,
        bytes: body.len(),
        text,
        redirect: None,
    })
}

/// An error with its causes (reqwest hides the reason in its sources).
fn chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

fn first_chars(text: &str, n: usize) -> String {
    text.chars().take(n).collect()
}

/// The text from `offset` (in characters), at most [`MAX_TEXT_CHARS`], and a note on what is
/// left.
fn text_window(text: &str, offset: usize) -> (String, String) {
    let total = text.chars().count();
    let window: String = text.chars().skip(offset).take(MAX_TEXT_CHARS).collect();
    let end = offset + window.chars().count();
    let note = if offset > 0 || end < total {
        let more = if end < total {
            format!(
                "; {} more characters: call again with offset {end}",
                total - end
            )
        } else {
            String::new()
        };
        format!(" (characters {offset} to {end} of {total}{more})")
    } else {
        String::new()
    };
    (window, note)
}

fn looks_like_html(text: &str) -> bool {
    let head: String = text
        .chars()
        .take(512)
        .collect::<String>()
        .to_ascii_lowercase();
    head.contains("<html") || head.contains("<!doctype html")
}

/// Plain text of an HTML page: scripts, styles and comments dropped, block elements on their
/// own lines, headings as `#`, list items as `- `, entities decoded, blank runs collapsed.
pub fn html_to_text(html: &str) -> String {
    let mut out = String::with_capacity(html.len() / 2);
    let mut rest = html;
    while !rest.is_empty() {
        let Some(lt) = rest.find('<') else {
            out.push_str(&decode_entities(rest));
            break;
        };
        out.push_str(&decode_entities(&rest[..lt]));
        rest = &rest[lt..];
        if let Some(after) = rest.strip_prefix("<!--") {
            rest = after.find("-->").map_or("", |i| &after[i + 3..]);
            continue;
        }
        let Some(gt) = rest.find('>') else {
            break;
        };
        let tag = &rest[1..gt];
        rest = &rest[gt + 1..];
        let closing = tag.starts_with('/');
        let name: String = tag
            .trim_start_matches('/')
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect::<String>()
            .to_ascii_lowercase();
        if !closing
            && matches!(
                name.as_str(),
                "script" | "style" | "noscript" | "template" | "svg"
            )
        {
            let end = format!("</{name}");
            let lower = rest.to_ascii_lowercase();
            rest = match lower.find(&end) {
                Some(i) => rest[i..].find('>').map_or("", |j| &rest[i + j + 1..]),
                None => "",
            };
            continue;
        }
        match name.as_str() {
            "h1" | "h2" | "h3" | "h4" | "h5" | "h6" if !closing => {
                let level = name[1..].parse::<usize>().unwrap_or(1);
                out.push_str("\n\n");
                out.push_str(&"#".repeat(level));
                out.push(' ');
            }
            "li" if !closing => out.push_str("\n- "),
            "br" => out.push('\n'),
            "p" | "div" | "section" | "article" | "header" | "footer" | "nav" | "main" | "ul"
            | "ol" | "table" | "tr" | "pre" | "blockquote" | "h1" | "h2" | "h3" | "h4" | "h5"
            | "h6" | "title" | "aside" | "form" | "dl" | "dt" | "dd" => out.push_str("\n\n"),
            "td" | "th" if closing => out.push('\t'),
            _ => {}
        }
    }
    let mut lines: Vec<String> = Vec::new();
    for line in out.lines() {
        let line = line.split_whitespace().collect::<Vec<_>>().join(" ");
        if line.is_empty() && lines.last().is_none_or(String::is_empty) {
            continue;
        }
        lines.push(line);
    }
    while lines.last().is_some_and(String::is_empty) {
        lines.pop();
    }
    lines.join("\n")
}

fn decode_entities(text: &str) -> String {
    if !text.contains('&') {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        rest = &rest[amp..];
        let end = rest[1..].find(';').map(|i| i + 1).filter(|i| *i <= 10);
        let decoded = end.and_then(|end| {
            let entity = &rest[1..end];
            let c = match entity {
                "amp" => Some('&'),
                "lt" => Some('<'),
                "gt" => Some('>'),
                "quot" => Some('"'),
                "apos" | "#39" => Some('\''),
                "nbsp" => Some(' '),
                _ => entity
                    .strip_prefix("#x")
                    .or_else(|| entity.strip_prefix("#X"))
                    .and_then(|h| u32::from_str_radix(h, 16).ok())
                    .or_else(|| entity.strip_prefix('#').and_then(|d| d.parse().ok()))
                    .and_then(char::from_u32),
            }?;
            Some((c, end))
        });
        match decoded {
            Some((c, end)) => {
                out.push(c);
                rest = &rest[end + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// One search result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchHit {
    /// The page's title.
    pub title: String,
    /// Its URL.
    pub url: String,
}

/// Where WebSearch gets results: given by a program that embeds rein.
pub trait SearchProvider: Send + Sync {
    /// Results for `query`, filtered by the domains when given.
    fn search<'a>(
        &'a self,
        query: &'a str,
        allowed_domains: &'a [String],
        blocked_domains: &'a [String],
    ) -> BoxFuture<'a, Result<Vec<SearchHit>, String>>;
}

pub(crate) const SEARCH_FIELDS: &[Field] = &[
    Field::required("query", FieldKind::String),
    Field::optional("allowed_domains", FieldKind::Strings),
    Field::optional("blocked_domains", FieldKind::Strings),
];

const SEARCH_DESCRIPTION: &str = concat!(
    "Searches the web and returns result titles and URLs.\n\n\
- `allowed_domains` keeps only results from those domains; `blocked_domains` drops them.\n\
- Name the pages you used, as markdown links, when you answer from the results.\n\
- rein needs a search provider for this tool; without one the call fails and says so.",
    super::refusal_note!()
);

/// The text of a WebSearch call when no provider is configured.
pub const NO_SEARCH_PROVIDER: &str = "WebSearch is not available: rein has no web search provider \
configured for this session (the rein command line has none; a program embedding rein can give \
one). Use WebFetch on a page you know, or tell the user that you cannot search.";

/// The WebSearch tool.
#[derive(Clone, Default)]
pub struct WebSearchTool {
    provider: Option<Arc<dyn SearchProvider>>,
}

impl std::fmt::Debug for WebSearchTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebSearchTool")
            .field("provider", &self.provider.is_some())
            .finish()
    }
}

impl WebSearchTool {
    /// The tool over `provider` (`None`: every call fails with [`NO_SEARCH_PROVIDER`]).
    pub fn new(provider: Option<Arc<dyn SearchProvider>>) -> WebSearchTool {
        WebSearchTool { provider }
    }
}

fn strings(input: &Value, key: &str) -> Vec<String> {
    input
        .get(key)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

impl Tool for WebSearchTool {
    fn name(&self) -> &str {
        "WebSearch"
    }

    fn deferred(&self) -> bool {
        true
    }

    fn description(&self) -> &str {
        SEARCH_DESCRIPTION
    }

    fn input_schema(&self) -> Value {
        json!({
            "$schema": super::SCHEMA_DIALECT,
            "type": "object",
            "properties": {
                "query": {"description": "What to search for.", "type": "string", "minLength": 2},
                "allowed_domains": {"description": "Only results from these domains.", "type": "array", "items": {"type": "string"}},
                "blocked_domains": {"description": "No results from these domains.", "type": "array", "items": {"type": "string"}}
            },
            "required": ["query"],
            "additionalProperties": false
        })
    }

    fn prepare_touches_files(&self) -> bool {
        false
    }

    fn prepare(&self, input: Value, _ctx: &ToolContext) -> Result<Value, String> {
        let map = input::normalise(self.name(), input, SEARCH_FIELDS)?;
        if map
            .get("query")
            .and_then(Value::as_str)
            .is_none_or(|q| q.chars().count() < 2)
        {
            return Err("query must be at least 2 characters".to_string());
        }
        Ok(Value::Object(map))
    }

    fn execute<'a>(&'a self, input: Value, _ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutcome> {
        Box::pin(async move {
            let Some(provider) = &self.provider else {
                return ToolOutcome::Failure {
                    error: NO_SEARCH_PROVIDER.to_string(),
                    is_interrupt: false,
                };
            };
            let query = input
                .get("query")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let allowed = strings(&input, "allowed_domains");
            let blocked = strings(&input, "blocked_domains");
            let started = Instant::now();
            match provider.search(query, &allowed, &blocked).await {
                Ok(hits) => {
                    let listed: Vec<String> = hits
                        .iter()
                        .map(|h| format!("- [{}]({})", h.title, h.url))
                        .collect();
                    let content = format!(
                        "Web search results for query: \"{query}\"\n\n{}\n\nCite the pages you use as markdown links.",
                        if listed.is_empty() {
                            "(no results)".to_string()
                        } else {
                            listed.join("\n")
                        }
                    );
                    let response = json!({
                        "query": query,
                        "results": [{"content": hits.iter().map(|h| json!({"title": h.title, "url": h.url})).collect::<Vec<_>>()}],
                        "durationSeconds": started.elapsed().as_secs_f64(),
                        "searchCount": 1,
                    });
                    ToolOutcome::Success { response, content }
                }
                Err(error) => ToolOutcome::Failure {
                    error: format!("Web search failed: {error}"),
                    is_interrupt: false,
                },
            }
        })
    }

    fn render(&self, response: &Value) -> Option<String> {
        let query = response.get("query")?.as_str()?;
        Some(format!("Web search results for query: \"{query}\""))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn html_becomes_readable_text() {
        let html = "<html><head><title>T</title><style>x{}</style><script>var a='<p>';</script></head>\
<body><h1>Hello &amp; welcome</h1><p>PAGE-TEXT&nbsp;here.</p><!-- hidden --><ul><li>one</li><li>two &#x41;</li></ul></body></html>";
        assert_eq!(
            html_to_text(html),
            "T\n\n# Hello & welcome\n\nPAGE-TEXT here.\n\n- one\n- two A"
        );
    }

    #[test]
    fn long_text_comes_in_windows() {
        let text = "a".repeat(MAX_TEXT_CHARS + 5);
        let (w, note) = text_window(&text, 0);
        assert_eq!(w.len(), MAX_TEXT_CHARS);
        assert!(note.contains(&format!("offset {MAX_TEXT_CHARS}")), "{note}");
        let (w, _) = text_window(&text, MAX_TEXT_CHARS);
        assert_eq!(w.len(), 5);
    }
}
