//! `type: "http"` hooks (spec §5.6): the event JSON is POSTed to a URL and the response body is
//! read as hook JSON.
//!
//! What a request is allowed to carry and reach:
//! * the URL must match `allowedHttpHookUrls` when that list is set (`*` is a wildcard, the
//!   whole URL must match; `[]` allows nothing) — checked before anything is sent;
//! * header values may name environment variables (`$NAME` / `${NAME}`, upper-case names only);
//!   a name is substituted only when it is in the hook's `allowedEnvVars` (intersected with
//!   `httpHookAllowedEnvVars` when that list is set) and is not a credential variable
//!   ([`is_credential`]); any other reference becomes the empty string. CR, LF and NUL are
//!   stripped from the final value; `Content-Length` / `Transfer-Encoding` given in `headers`
//!   are ignored;
//! * redirects are never followed (a 3xx is a non-2xx answer).
//!
//! How the answer is judged: 2xx with an empty body is `{}`; a body that does not start with
//! `{` is an error (`HTTP hook must return JSON, but got non-JSON response body: …`); otherwise
//! the body goes through the same validation as a command hook's stdout. A non-2xx status
//! (`HTTP <status> from <url>`), a connection error or a blocked URL is a non-blocking error; a
//! timeout cancels the hook. With `onFailure: "block"` each of these blocks instead — a failure
//! is never an allow.
//!
//! One [`HttpHookClient`] (one connection pool) serves a whole session, so a policy service on
//! the same machine is asked over a kept-alive connection instead of a new one per call.

use crate::error_chain::error_chain;
use std::collections::HashSet;
use std::time::{Duration, Instant};

use crate::hooks::answer::{bare, interpret};
use crate::hooks::command::RawRun;
use crate::hooks::config::{HandlerOrigin, HttpHandler, OnFailure};
use crate::hooks::events::Answer;
use crate::hooks::run::{HandlerRun, OutcomeKind, RunStatus};
use crate::hooks::spec::HookEvent;

/// Largest response body read; the rest is discarded and the answer is an error (the hook
/// JSON of a capped body cannot be trusted). The same cap as a command hook's stdout.
pub const BODY_CAP: usize = crate::hooks::command::STDOUT_CAP;

/// Characters of a non-JSON body quoted in the error text (Claude Code quotes 200).
const QUOTED_BODY_CHARS: usize = 200;

/// The settings lists that restrict every http hook (spec §1.3), merged across files.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HttpHookPolicy {
    /// `allowedHttpHookUrls`: `None` = every URL, `Some([])` = none.
    pub allowed_urls: Option<Vec<String>>,
    /// `httpHookAllowedEnvVars`: intersected with each hook's `allowedEnvVars` when set.
    pub allowed_env_vars: Option<Vec<String>>,
}

impl HttpHookPolicy {
    /// `None` when `url` may be asked; otherwise Claude Code's refusal text.
    pub fn url_refusal(&self, url: &str) -> Option<String> {
        let patterns = self.allowed_urls.as_ref()?;
        if patterns.iter().any(|p| url_matches(url, p)) {
            None
        } else {
            Some(format!(
                "HTTP hook blocked: {url} does not match any pattern in allowedHttpHookUrls"
            ))
        }
    }

    /// The names a hook with `allowed_env_vars` may substitute.
    pub fn effective_env_vars(&self, allowed_env_vars: &[String]) -> HashSet<String> {
        allowed_env_vars
            .iter()
            .filter(|name| {
                self.allowed_env_vars
                    .as_ref()
                    .is_none_or(|global| global.contains(name))
            })
            .cloned()
            .collect()
    }
}

/// Whether `url` matches an `allowedHttpHookUrls` pattern: `*` matches any run of characters
/// (also `/`), everything else literally, the whole URL.
pub fn url_matches(url: &str, pattern: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    let [first, middle @ .., last] = parts.as_slice() else {
        return url == pattern;
    };
    if parts.len() == 1 {
        return url == pattern;
    }
    let Some(mut rest) = url.strip_prefix(first) else {
        return false;
    };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// Variables that are never put into a header, whatever `allowedEnvVars` says: the
/// credentials rein and Claude Code themselves use to reach a model, and well-known secret
/// carriers. Why a fixed list: a policy service needs its own token (`POLICY_TOKEN`), never the
/// key that pays for the model; a typo in `allowedEnvVars` must not leak it.
const CREDENTIAL_VARS: &[&str] = &[
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "CLAUDE_CODE_OAUTH_TOKEN",
    "CLAUDE_CODE_SESSIONS_OAUTH_TOKEN",
    "CLAUDE_CODE_OAUTH_TOKEN_FILE_DESCRIPTOR",
    "CLAUDE_CODE_API_KEY_FILE_DESCRIPTOR",
    "CLAUDE_CODE_GATEWAY_TOKEN_FILE_DESCRIPTOR",
    "CLAUDE_CODE_WEBSOCKET_AUTH_FILE_DESCRIPTOR",
    "CLAUDE_CODE_ARTIFACTS_API_TOKEN",
    "CLAUDE_CODE_MCP_SERVE_AUTH_TOKEN",
    "CLAUDE_BRIDGE_OAUTH_TOKEN",
    "CLAUDE_TRUSTED_DEVICE_TOKEN",
    "AGENT_PROXY_AUTH_TOKEN",
    "OPENAI_API_KEY",
    "REIN_API_KEY",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_BEARER_TOKEN_BEDROCK",
    "GOOGLE_APPLICATION_CREDENTIALS",
];

/// Whether `name` is a credential variable ([`CREDENTIAL_VARS`], also with an `INPUT_`
/// prefix, `GIT_CONFIG_PARAMETERS` / `GIT_CONFIG_KEY_n` / `GIT_CONFIG_VALUE_n`, and
/// `CARGO_REGISTRIES_*_TOKEN`, as Claude Code treats them).
pub fn is_credential(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    let bare = upper.strip_prefix("INPUT_").unwrap_or(&upper);
    if CREDENTIAL_VARS.contains(&bare) {
        return true;
    }
    if bare == "GIT_CONFIG_PARAMETERS" {
        return true;
    }
    let numbered = |prefix: &str| {
        bare.strip_prefix(prefix)
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    };
    if numbered("GIT_CONFIG_KEY_") || numbered("GIT_CONFIG_VALUE_") {
        return true;
    }
    bare.strip_prefix("CARGO_REGISTRIES_")
        .and_then(|rest| rest.strip_suffix("_TOKEN"))
        .is_some_and(|mid| !mid.is_empty())
}

/// One header value with `$NAME` / `${NAME}` references substituted (names `[A-Z_][A-Z0-9_]*`):
/// a name in `allowed` that is not a credential gets `lookup(name)` (unset: empty), every other
/// reference the empty string. CR, LF and NUL are removed from the result.
pub fn interpolate_header(
    value: &str,
    allowed: &HashSet<String>,
    lookup: impl Fn(&str) -> Option<String>,
) -> String {
    let bytes = value.as_bytes();
    let mut out = String::with_capacity(value.len());
    let mut i = 0;
    let name_len = |from: usize| {
        let mut j = from;
        while j < bytes.len()
            && (bytes[j].is_ascii_uppercase()
                || bytes[j] == b'_'
                || (j > from && bytes[j].is_ascii_digit()))
        {
            j += 1;
        }
        j - from
    };
    let mut copied = 0;
    while i < bytes.len() {
        if bytes[i] != b'$' {
            i += 1;
            continue;
        }
        let (name, end) = if bytes.get(i + 1) == Some(&b'{') {
            let n = name_len(i + 2);
            if n > 0 && bytes.get(i + 2 + n) == Some(&b'}') {
                (&value[i + 2..i + 2 + n], i + 3 + n)
            } else {
                i += 1;
                continue;
            }
        } else {
            let n = name_len(i + 1);
            if n == 0 {
                i += 1;
                continue;
            }
            (&value[i + 1..i + 1 + n], i + 1 + n)
        };
        out.push_str(&value[copied..i]);
        if allowed.contains(name) && !is_credential(name) {
            if let Some(v) = lookup(name) {
                out.push_str(&v);
            }
        } else if allowed.contains(name) {
            tracing::warn!(target: "rein::hooks", var = name,
                "is a credential and is not interpolated into an HTTP hook header");
        } else {
            tracing::warn!(target: "rein::hooks", var = name,
                "not in allowedEnvVars, skipping interpolation");
        }
        i = end;
        copied = end;
    }
    out.push_str(&value[copied..]);
    out.retain(|c| !matches!(c, '\r' | '\n' | '\0'));
    out
}

/// What `rein hooks validate` / `list` say about an http hook before it ever runs: a URL the
/// settings refuse, header variables that will be sent empty.
pub fn lint(handler: &HttpHandler, policy: &HttpHookPolicy, on_failure: OnFailure) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(refusal) = policy.url_refusal(&handler.url) {
        let effect = match on_failure {
            OnFailure::Block => "every firing blocks (onFailure: \"block\")",
            OnFailure::Continue => "every firing is a non-blocking error",
        };
        out.push(format!("{refusal}; it is never sent and {effect}"));
    }
    let allowed = policy.effective_env_vars(&handler.allowed_env_vars);
    for (name, value) in &handler.headers {
        for var in header_variables(value) {
            if !handler.allowed_env_vars.iter().any(|a| a == var) {
                out.push(format!(
                    "header {name:?} uses ${var}, which is not in this hook's allowedEnvVars: it is sent empty"
                ));
            } else if !allowed.contains(var) {
                out.push(format!(
                    "header {name:?} uses ${var}, which httpHookAllowedEnvVars does not allow: it is sent empty"
                ));
            } else if is_credential(var) {
                out.push(format!(
                    "header {name:?} uses ${var}, a credential variable: it is never sent (it is sent empty)"
                ));
            }
        }
    }
    out
}

/// The variable names a header value refers to (`$NAME`, `${NAME}`).
fn header_variables(value: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = value;
    while let Some(at) = rest.find('$') {
        let after = &rest[at + 1..];
        let (braced, body) = match after.strip_prefix('{') {
            Some(b) => (true, b),
            None => (false, after),
        };
        let len = body
            .char_indices()
            .take_while(|(i, c)| {
                c.is_ascii_uppercase() || *c == '_' || (*i > 0 && c.is_ascii_digit())
            })
            .count();
        if len > 0 && (!braced || body[len..].starts_with('}')) {
            out.push(&body[..len]);
        }
        rest = &after[len.min(after.len())..];
    }
    out
}

/// The session's http client: one connection pool, no redirects, no proxy from the
/// environment for loopback addresses (reqwest's default `NO_PROXY` handling).
#[derive(Debug, Clone)]
pub struct HttpHookClient {
    client: Option<reqwest::Client>,
    build_error: Option<String>,
}

impl Default for HttpHookClient {
    fn default() -> Self {
        HttpHookClient::new()
    }
}

impl HttpHookClient {
    /// Builds the client; a failure is kept and reported by every http hook that runs.
    pub fn new() -> HttpHookClient {
        let _already_installed = rustls::crypto::ring::default_provider().install_default();
        match reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("rein/", env!("CARGO_PKG_VERSION")))
            .build()
        {
            Ok(client) => HttpHookClient {
                client: Some(client),
                build_error: None,
            },
            Err(err) => HttpHookClient {
                client: None,
                build_error: Some(error_chain(&err)),
            },
        }
    }
}

/// How a request ended, before judgement.
enum Exchange {
    Answered {
        status: u16,
        body: Vec<u8>,
        capped: bool,
    },
    Failed(String),
    TimedOut,
}

/// What one http hook run needs besides the handler.
pub(crate) struct HttpRun<'a> {
    pub event: HookEvent,
    pub origin: HandlerOrigin,
    pub handler: &'a HttpHandler,
    pub on_failure: OnFailure,
    pub timeout: Duration,
    pub policy: &'a HttpHookPolicy,
    /// Settings `env` first, then rein's environment.
    pub extra_env: &'a [(String, String)],
}

/// Runs one http hook and judges its answer. Never fails: every fault is the hook's answer.
pub(crate) async fn run(client: &HttpHookClient, req: HttpRun<'_>, body: &[u8]) -> Answer {
    let started = Instant::now();
    let url = req.handler.url.as_str();
    if let Some(refusal) = req.policy.url_refusal(url) {
        tracing::warn!(target: "rein::hooks", "{refusal}");
        return failed(&req, refusal, started.elapsed());
    }
    let Some(http) = &client.client else {
        let err = client
            .build_error
            .clone()
            .unwrap_or_else(|| "no http client".to_string());
        return failed(&req, err, started.elapsed());
    };
    let allowed = req.policy.effective_env_vars(&req.handler.allowed_env_vars);
    let lookup = |name: &str| {
        req.extra_env
            .iter()
            .rev()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
            .or_else(|| std::env::var(name).ok())
    };
    let mut request = http
        .post(url)
        .header(reqwest::header::CONTENT_TYPE, "application/json");
    for (name, value) in &req.handler.headers {
        let trimmed = name.trim();
        if trimmed.eq_ignore_ascii_case("content-length")
            || trimmed.eq_ignore_ascii_case("transfer-encoding")
        {
            tracing::warn!(target: "rein::hooks", header = trimmed,
                "HTTP hook header ignored: the request's length comes from its body");
            continue;
        }
        request = request.header(trimmed, interpolate_header(value, &allowed, lookup));
    }
    let exchange = tokio::time::timeout(req.timeout, async {
        let response = match request.body(body.to_vec()).send().await {
            Ok(r) => r,
            Err(err) => return Exchange::Failed(error_chain(&err)),
        };
        let status = response.status().as_u16();
        read_body(response, status).await
    })
    .await
    .unwrap_or(Exchange::TimedOut);
    judge(&req, exchange, started.elapsed())
}

async fn read_body(mut response: reqwest::Response, status: u16) -> Exchange {
    let mut body = Vec::new();
    loop {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                let room = BODY_CAP.saturating_sub(body.len());
                if chunk.len() > room {
                    body.extend_from_slice(&chunk[..room]);
                    return Exchange::Answered {
                        status,
                        body,
                        capped: true,
                    };
                }
                body.extend_from_slice(&chunk);
            }
            Ok(None) => {
                return Exchange::Answered {
                    status,
                    body,
                    capped: false,
                };
            }
            Err(err) => return Exchange::Failed(error_chain(&err)),
        }
    }
}

fn judge(req: &HttpRun<'_>, exchange: Exchange, duration: Duration) -> Answer {
    let url = req.handler.url.as_str();
    match exchange {
        Exchange::TimedOut => {
            let outcome = if blocks_on_failure(req) {
                OutcomeKind::Blocking(format!(
                    "[{url}]: timed out; blocking because onFailure is \"block\""
                ))
            } else {
                OutcomeKind::Cancelled
            };
            bare(run_record(req, RunStatus::TimedOut, outcome, duration, ""))
        }
        Exchange::Failed(err) => failed(req, err, duration),
        Exchange::Answered { status, .. } if !(200..300).contains(&status) => {
            failed(req, format!("HTTP {status} from {url}"), duration)
        }
        Exchange::Answered {
            status: _,
            body,
            capped: true,
        } => failed(
            req,
            format!(
                "HTTP hook response body is over {} bytes; not read as an answer",
                body.len()
            ),
            duration,
        ),
        Exchange::Answered {
            status: _,
            body,
            capped: false,
        } => {
            let text = match String::from_utf8(body) {
                Ok(t) => t,
                Err(_) => {
                    return failed(
                        req,
                        "HTTP hook must return JSON, but got a response body that is not UTF-8"
                            .to_string(),
                        duration,
                    );
                }
            };
            let trimmed = text.trim();
            let json_text = if trimmed.is_empty() {
                "{}".to_string()
            } else if !trimmed.starts_with('{') {
                let quoted: String = trimmed.chars().take(QUOTED_BODY_CHARS).collect();
                let ellipsis = if trimmed.chars().count() > QUOTED_BODY_CHARS {
                    "…"
                } else {
                    ""
                };
                return failed(
                    req,
                    format!(
                        "HTTP hook must return JSON, but got non-JSON response body: \
                         {quoted}{ellipsis}"
                    ),
                    duration,
                );
            } else if let Err(err) = serde_json::from_str::<serde_json::Value>(trimmed) {
                return failed(
                    req,
                    format!("HTTP hook must return valid JSON, but parsing failed: {err}"),
                    duration,
                );
            } else {
                trimmed.to_string()
            };
            let raw = RawRun::answered(json_text.into_bytes(), duration);
            let mut answer = interpret(req.event, req.origin.clone(), url, &raw, req.on_failure);
            // An http hook has no plain-text channel: only its JSON counts.
            answer.success_text = None;
            if let OutcomeKind::NonBlocking(message) = &answer.run.outcome
                && blocks_on_failure(req)
            {
                answer.run.outcome = OutcomeKind::Blocking(format!(
                    "[{url}]: failed; blocking because onFailure is \"block\"\n{message}"
                ));
            }
            answer
        }
    }
}

fn blocks_on_failure(req: &HttpRun<'_>) -> bool {
    req.on_failure == OnFailure::Block && req.event.spec().on_failure
}

/// A request that got no usable answer: non-blocking, or blocking under `onFailure: "block"`.
fn failed(req: &HttpRun<'_>, text: String, duration: Duration) -> Answer {
    let url = req.handler.url.as_str();
    let outcome = if blocks_on_failure(req) {
        OutcomeKind::Blocking(format!(
            "[{url}]: failed; blocking because onFailure is \"block\"\n{text}"
        ))
    } else {
        OutcomeKind::NonBlocking(text.clone())
    };
    bare(run_record(
        req,
        RunStatus::RequestFailed(text.clone()),
        outcome,
        duration,
        &text,
    ))
}

fn run_record(
    req: &HttpRun<'_>,
    status: RunStatus,
    outcome: OutcomeKind,
    duration: Duration,
    stderr: &str,
) -> HandlerRun {
    let mut run = HandlerRun::without_output(
        req.origin.clone(),
        req.handler.url.clone(),
        status,
        outcome,
        duration,
    );
    run.stderr = stderr.to_string();
    run.stderr_bytes = stderr.len() as u64;
    run
}
