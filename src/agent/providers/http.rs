//! What the HTTP providers share: the client (rustls with the `ring` provider), the retry loop
//! with exponential backoff, and the mapping of transport failures and HTTP statuses to
//! [`ModelError`]s whose text names the provider, the URL and the status.

use crate::error_chain::error_chain;
use std::future::Future;
use std::time::Duration;

use reqwest::StatusCode;
use reqwest::header::HeaderMap;
use serde_json::Value;

use super::{ModelConfigError, ProviderConfig};
use crate::model::{ModelError, ModelErrorKind};

/// How many bytes of an unexpected body an error message quotes.
const BODY_PREVIEW_BYTES: usize = 200;

/// Connection settings and the retry policy of one HTTP provider.
#[derive(Clone)]
pub struct HttpSettings {
    /// `openai` or `anthropic`, for error messages.
    pub provider: &'static str,
    pub client: reqwest::Client,
    /// Base URL without a trailing `/`.
    pub base_url: String,
    pub api_key: Option<String>,
    /// The variable holding the key, named in authentication errors.
    pub key_var: &'static str,
    pub request_timeout: Duration,
    pub retry: RetryPolicy,
}

impl std::fmt::Debug for HttpSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpSettings")
            .field("provider", &self.provider)
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("request_timeout", &self.request_timeout)
            .field("retry", &self.retry)
            .finish()
    }
}

impl HttpSettings {
    /// Validates the base URL and key and builds the client.
    pub fn from_config(
        cfg: &ProviderConfig,
        default_base_url: &str,
        key_var: &'static str,
        url_var: &'static str,
    ) -> Result<HttpSettings, ModelConfigError> {
        let base_url = cfg
            .base_url
            .clone()
            .unwrap_or_else(|| default_base_url.to_string())
            .trim()
            .trim_end_matches('/')
            .to_string();
        match reqwest::Url::parse(&base_url) {
            Ok(url) if url.scheme() == "http" || url.scheme() == "https" => {}
            Ok(url) => {
                return Err(ModelConfigError::InvalidBaseUrl {
                    provider: cfg.provider,
                    url: base_url.clone(),
                    reason: format!("scheme '{}' is not http or https", url.scheme()),
                });
            }
            Err(err) => {
                return Err(ModelConfigError::InvalidBaseUrl {
                    provider: cfg.provider,
                    url: base_url.clone(),
                    reason: err.to_string(),
                });
            }
        }
        // Why: a key is mandatory for the public endpoints, but local OpenAI/Anthropic-compatible
        // servers (pointed at by a custom base URL) often need none.
        if cfg.api_key.is_none() && cfg.base_url.is_none() {
            return Err(ModelConfigError::MissingApiKey {
                provider: cfg.provider,
                var: key_var,
                url_var,
            });
        }
        Ok(HttpSettings {
            provider: cfg.provider.as_str(),
            client: build_client(cfg.request_timeout)?,
            base_url,
            api_key: cfg.api_key.clone(),
            key_var,
            request_timeout: cfg.request_timeout,
            retry: RetryPolicy {
                max_retries: cfg.max_retries,
                base: cfg.retry_base,
                max_delay: cfg.retry_max_delay,
            },
        })
    }

    /// The error for a request that got no answer within the timeout.
    pub fn timeout_error(&self, url: &str, waiting_for: &str) -> AttemptError {
        AttemptError::retryable(
            ModelErrorKind::Unknown,
            format!(
                "request to {url} timed out: no {waiting_for} within {} ms (REIN_REQUEST_TIMEOUT_MS)",
                self.request_timeout.as_millis()
            ),
        )
    }
}

/// Builds a client. reqwest is compiled with `rustls-no-provider`, so the `ring` provider must
/// be installed process-wide first; a second install fails harmlessly.
fn build_client(timeout: Duration) -> Result<reqwest::Client, ModelConfigError> {
    let _already_installed = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .connect_timeout(timeout)
        .user_agent(concat!("rein/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|err| ModelConfigError::HttpClient(error_chain(&err)))
}

/// Exponential backoff without jitter, so tests and transcripts are deterministic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries after the first attempt.
    pub max_retries: u32,
    /// The first delay.
    pub base: Duration,
    /// Cap on one delay.
    pub max_delay: Duration,
}

impl RetryPolicy {
    /// The wait before retry number `retry` (0-based): `base * 2^retry`, or the server's
    /// `retry-after` if longer, capped at `max_delay`.
    pub fn delay(&self, retry: u32, retry_after: Option<Duration>) -> Duration {
        let backoff = self.base.saturating_mul(2u32.saturating_pow(retry.min(20)));
        backoff
            .max(retry_after.unwrap_or(Duration::ZERO))
            .min(self.max_delay)
    }
}

/// One failed attempt, before the retry decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttemptError {
    /// The StopFailure kind if this turns out to be the last attempt.
    pub kind: ModelErrorKind,
    /// The user-facing text (without the provider name, which `ModelError` adds).
    pub message: String,
    /// Whether another attempt may succeed (429, 5xx, 529, transport errors, timeouts, cuts).
    pub retryable: bool,
    /// The server's requested wait, if it sent one.
    pub retry_after: Option<Duration>,
}

impl AttemptError {
    /// A failure worth retrying.
    pub fn retryable(kind: ModelErrorKind, message: String) -> AttemptError {
        AttemptError {
            kind,
            message,
            retryable: true,
            retry_after: None,
        }
    }

    /// A failure another attempt would repeat.
    pub fn fatal(kind: ModelErrorKind, message: String) -> AttemptError {
        AttemptError {
            kind,
            message,
            retryable: false,
            retry_after: None,
        }
    }
}

/// Runs `attempt` until it succeeds, fails with a non-retryable error, or the retries are used
/// up. The final error says how many attempts were made.
pub async fn with_retries<T, F, Fut>(
    settings: &HttpSettings,
    mut attempt: F,
) -> Result<T, ModelError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, AttemptError>>,
{
    let mut retry = 0u32;
    loop {
        match attempt().await {
            Ok(value) => return Ok(value),
            Err(err) if err.retryable && retry < settings.retry.max_retries => {
                let delay = settings.retry.delay(retry, err.retry_after);
                tracing::warn!(
                    provider = settings.provider,
                    attempt = retry + 1,
                    delay_ms = delay.as_millis() as u64,
                    error = %err.message,
                    "model request failed; retrying"
                );
                tokio::time::sleep(delay).await;
                retry += 1;
            }
            Err(err) => {
                let attempts = retry + 1;
                let message = if attempts > 1 {
                    format!("{} (gave up after {attempts} attempts)", err.message)
                } else {
                    err.message
                };
                return Err(ModelError {
                    provider: settings.provider.to_string(),
                    kind: err.kind,
                    message,
                });
            }
        }
    }
}

/// How a connection that broke mid-response is described (before the URL).
const BROKE_WHILE_READING: &str = "connection broke while reading the response from";

/// Maps a transport error from sending a request or reading its body.
pub fn transport_error(settings: &HttpSettings, url: &str, err: &reqwest::Error) -> AttemptError {
    if err.is_timeout() {
        return settings.timeout_error(url, "response");
    }
    let what = if err.is_connect() {
        "cannot connect to"
    } else if err.is_body() || err.is_decode() {
        BROKE_WHILE_READING
    } else {
        "request failed:"
    };
    AttemptError::retryable(
        ModelErrorKind::Unknown,
        format!("{what} {url}: {}", error_chain(err)),
    )
}

/// Maps a non-success HTTP status (with its body) to an attempt error.
pub fn status_error(
    settings: &HttpSettings,
    url: &str,
    status: StatusCode,
    headers: &HeaderMap,
    body: &[u8],
) -> AttemptError {
    let (api_type, api_message) = api_error_fields(body);
    let detail = match (&api_message, &api_type) {
        (Some(message), Some(kind)) => format!("{message} ({kind})"),
        (Some(message), None) => message.clone(),
        (None, _) => body_preview(body),
    };
    let code = status.as_u16();
    let (kind, retryable, hint) = match code {
        401 | 403 => (
            ModelErrorKind::AuthenticationFailed,
            false,
            format!("; check {}", settings.key_var),
        ),
        404 => (
            ModelErrorKind::ModelNotFound,
            false,
            "; unknown model or wrong base URL".to_string(),
        ),
        429 => (ModelErrorKind::RateLimit, true, String::new()),
        529 => (ModelErrorKind::Overloaded, true, String::new()),
        408 | 409 => (ModelErrorKind::ServerError, true, String::new()),
        500..=599 => {
            let kind = if api_type.as_deref() == Some("overloaded_error") {
                ModelErrorKind::Overloaded
            } else {
                ModelErrorKind::ServerError
            };
            (kind, true, String::new())
        }
        _ => (ModelErrorKind::InvalidRequest, false, String::new()),
    };
    let detail = if detail.is_empty() {
        "(empty body)".to_string()
    } else {
        detail
    };
    AttemptError {
        kind,
        message: format!("HTTP {status} from {url}: {detail}{hint}"),
        retryable,
        retry_after: retry_after(headers),
    }
}

/// `error.type`/`error.code` and `error.message` of an OpenAI- or Anthropic-shaped error body.
fn api_error_fields(body: &[u8]) -> (Option<String>, Option<String>) {
    let Ok(value) = serde_json::from_slice::<Value>(body) else {
        return (None, None);
    };
    let error = value.get("error").unwrap_or(&value);
    let kind = ["type", "code"]
        .iter()
        .find_map(|key| error.get(*key).and_then(Value::as_str))
        .map(str::to_string);
    let message = error
        .get("message")
        .and_then(Value::as_str)
        .map(str::to_string);
    (kind, message)
}

/// `retry-after-ms` (milliseconds) or `retry-after` (seconds); HTTP dates are ignored.
pub fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let number = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<f64>().ok())
            .filter(|v| v.is_finite() && *v >= 0.0)
    };
    number("retry-after-ms")
        .map(|ms| Duration::from_secs_f64(ms / 1000.0))
        .or_else(|| number("retry-after").map(Duration::from_secs_f64))
}

/// The first 200 bytes of a body, lossily decoded, for error messages.
pub fn body_preview(body: &[u8]) -> String {
    let cut = &body[..body.len().min(BODY_PREVIEW_BYTES)];
    let mut text = String::from_utf8_lossy(cut).trim().to_string();
    if body.len() > BODY_PREVIEW_BYTES {
        text.push('…');
    }
    text
}

/// The error for a 2xx body that is not what the API promises.
pub fn malformed_body(url: &str, what: &str, body: &[u8]) -> AttemptError {
    let preview = body_preview(body);
    let preview = if preview.is_empty() {
        "(empty body)".to_string()
    } else {
        preview
    };
    AttemptError::fatal(
        ModelErrorKind::Unknown,
        format!("malformed response from {url} ({what}): {preview}"),
    )
}

/// A 2xx body as JSON, decoded lossily (one invalid byte should cost one character, not the
/// turn). JSON that stops early is a cut connection and retryable: a body without
/// `content-length` ends wherever the connection closed. Anything else (an empty body
/// included) is [`malformed_body`].
pub fn json_body(url: &str, body: &[u8]) -> Result<Value, AttemptError> {
    match serde_json::from_str(&String::from_utf8_lossy(body)) {
        Ok(value) => Ok(value),
        Err(err) if err.is_eof() && !body.trim_ascii().is_empty() => Err(AttemptError::retryable(
            ModelErrorKind::Unknown,
            format!(
                "{BROKE_WHILE_READING} {url}: the body stopped after {} bytes, in the middle of \
                 its JSON ({err})",
                body.len()
            ),
        )),
        Err(err) => Err(malformed_body(url, &format!("invalid JSON: {err}"), body)),
    }
}

/// Reads a whole body within the request timeout.
pub async fn read_body(
    settings: &HttpSettings,
    url: &str,
    response: reqwest::Response,
) -> Result<Vec<u8>, AttemptError> {
    match tokio::time::timeout(settings.request_timeout, response.bytes()).await {
        Ok(Ok(bytes)) => Ok(bytes.to_vec()),
        Ok(Err(err)) => Err(transport_error(settings, url, &err)),
        Err(_elapsed) => Err(settings.timeout_error(url, "complete response body")),
    }
}

/// Sends a request and waits for the response head within the request timeout; a non-success
/// status is turned into an error (after reading its body).
pub async fn send(
    settings: &HttpSettings,
    url: &str,
    request: reqwest::RequestBuilder,
) -> Result<reqwest::Response, AttemptError> {
    let response = match tokio::time::timeout(settings.request_timeout, request.send()).await {
        Ok(Ok(response)) => response,
        Ok(Err(err)) => return Err(transport_error(settings, url, &err)),
        Err(_elapsed) => return Err(settings.timeout_error(url, "response")),
    };
    let status = response.status();
    if status.is_success() {
        return Ok(response);
    }
    let headers = response.headers().clone();
    // A failure to read an error body must not hide the status.
    let body = read_body(settings, url, response).await.unwrap_or_default();
    Err(status_error(settings, url, status, &headers, &body))
}
