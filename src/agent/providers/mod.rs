//! The concrete models behind [`Model`]: the offline `mock` (default), OpenAI-compatible Chat
//! Completions (`openai`) and the Anthropic Messages API (`anthropic`), plus their configuration
//! ([`ProviderConfig`]) and the factory [`from_config`].
//!
//! Provider selection ([`ProviderConfig::from_env`]), first match wins:
//! 1. the `--provider` flag (`mock`, `openai`, `anthropic`);
//! 2. the `REIN_PROVIDER` environment variable;
//! 3. `mock` if a `--mock-script` was given;
//! 4. `anthropic` if `ANTHROPIC_API_KEY` is set (non-empty);
//! 5. `openai` if `OPENAI_API_KEY` is set (non-empty);
//! 6. `mock`.
//!
//! Anthropic wins over OpenAI when both keys are set because rein mirrors Claude Code.

pub mod anthropic;
mod assembler;
pub mod events;
pub mod http;
pub mod mock;
pub mod openai;

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use crate::model::Model;

/// Default per-request timeout for the real providers.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(120);
/// Default number of retries after the first attempt.
pub const DEFAULT_MAX_RETRIES: u32 = 3;
/// Default first backoff delay; attempt `n` waits `base * 2^n` (no jitter, for determinism).
pub const DEFAULT_RETRY_BASE: Duration = Duration::from_millis(200);
/// Upper bound for any single retry delay, including a server's `retry-after`.
pub const DEFAULT_RETRY_MAX_DELAY: Duration = Duration::from_secs(30);
/// Default model for `openai`.
pub const DEFAULT_OPENAI_MODEL: &str = "gpt-4o-mini";
/// Default model for `anthropic`.
pub const DEFAULT_ANTHROPIC_MODEL: &str = "claude-sonnet-4-5";
/// Default base URL for `openai`.
pub const DEFAULT_OPENAI_BASE_URL: &str = "https://api.openai.com/v1";
/// Default base URL for `anthropic`.
pub const DEFAULT_ANTHROPIC_BASE_URL: &str = "https://api.anthropic.com";
/// Default `max_tokens` sent to Anthropic (which requires it).
pub const DEFAULT_MAX_TOKENS: u32 = 8192;

/// Which provider answers `complete`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProviderKind {
    /// The offline mock ([`mock::MockModel`]).
    Mock,
    /// OpenAI-compatible Chat Completions ([`openai::OpenAiModel`]).
    OpenAi,
    /// The Anthropic Messages API ([`anthropic::AnthropicModel`]).
    Anthropic,
}

impl ProviderKind {
    /// The name used on the command line and in error messages.
    pub fn as_str(self) -> &'static str {
        match self {
            ProviderKind::Mock => "mock",
            ProviderKind::OpenAi => "openai",
            ProviderKind::Anthropic => "anthropic",
        }
    }

    /// Parses `mock`, `openai` or `anthropic` (case-insensitive).
    pub fn parse(name: &str) -> Option<ProviderKind> {
        match name.trim().to_ascii_lowercase().as_str() {
            "mock" => Some(ProviderKind::Mock),
            "openai" => Some(ProviderKind::OpenAi),
            "anthropic" => Some(ProviderKind::Anthropic),
            _ => None,
        }
    }
}

impl fmt::Display for ProviderKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Everything needed to build a [`Model`].
#[derive(Clone, PartialEq, Eq)]
pub struct ProviderConfig {
    /// Which provider to build.
    pub provider: ProviderKind,
    /// Model id; `None` means the provider's default.
    pub model: Option<String>,
    /// Scripted turns for the mock (`--mock-script`).
    pub mock_script: Option<PathBuf>,
    /// API base URL; `None` means the provider's default.
    pub base_url: Option<String>,
    /// API key; may be absent for a custom `base_url` (local servers).
    pub api_key: Option<String>,
    /// System prompt sent when a request carries none ([`crate::model::Model::complete`]);
    /// sessions send their own (`--system-prompt`, rein's prompt and the memory files).
    pub system: Option<String>,
    /// Request timeout: the longest wait to connect, for the response head, for the rest of a
    /// body, and (for streams) between two events.
    pub request_timeout: Duration,
    /// Retries after the first attempt for transient failures.
    pub max_retries: u32,
    /// First backoff delay.
    pub retry_base: Duration,
    /// Cap on one retry delay.
    pub retry_max_delay: Duration,
    /// `max_tokens` for the response (Anthropic only; see [`openai::OpenAiModel::new`]).
    pub max_tokens: u32,
    /// The effort level asked for (`--effort`, `CLAUDE_CODE_EFFORT_LEVEL`, settings
    /// `effortLevel`); `None`: Claude Code's default, `medium`. Sent only to Anthropic models
    /// that take one (see [`effort_for`]).
    pub effort: Option<String>,
}

// Why by hand: the API key must never end up in a log line or a panic message.
impl fmt::Debug for ProviderConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProviderConfig")
            .field("provider", &self.provider)
            .field("model", &self.model)
            .field("mock_script", &self.mock_script)
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("system", &self.system)
            .field("request_timeout", &self.request_timeout)
            .field("max_retries", &self.max_retries)
            .field("retry_base", &self.retry_base)
            .field("retry_max_delay", &self.retry_max_delay)
            .field("max_tokens", &self.max_tokens)
            .field("effort", &self.effort)
            .finish()
    }
}

impl ProviderConfig {
    /// A config for `provider` with every other setting at its default.
    pub fn new(provider: ProviderKind) -> ProviderConfig {
        ProviderConfig {
            provider,
            model: None,
            mock_script: None,
            base_url: None,
            api_key: None,
            system: None,
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            max_retries: DEFAULT_MAX_RETRIES,
            retry_base: DEFAULT_RETRY_BASE,
            retry_max_delay: DEFAULT_RETRY_MAX_DELAY,
            max_tokens: DEFAULT_MAX_TOKENS,
            effort: None,
        }
    }

    /// Builds the config from the command-line flags and the process environment (see the
    /// module doc for the provider precedence).
    ///
    /// Environment: `REIN_PROVIDER`, `OPENAI_API_KEY`, `OPENAI_BASE_URL`, `OPENAI_MODEL`,
    /// `ANTHROPIC_API_KEY`, `ANTHROPIC_BASE_URL`, `ANTHROPIC_MODEL`,
    /// `REIN_REQUEST_TIMEOUT_MS`, `REIN_MAX_RETRIES`, `REIN_RETRY_BASE_MS`,
    /// `REIN_RETRY_MAX_DELAY_MS`, `REIN_MAX_TOKENS`, `REIN_MOCK_SCRIPT` (when `mock_script` is
    /// `None`). `--model` beats `*_MODEL`.
    pub fn from_env(
        provider_flag: Option<&str>,
        model_flag: Option<&str>,
        mock_script: Option<PathBuf>,
    ) -> Result<ProviderConfig, ModelConfigError> {
        ProviderConfig::from_lookup(provider_flag, model_flag, mock_script, |name| {
            std::env::var(name).ok()
        })
    }

    /// [`ProviderConfig::from_env`] with an explicit environment (for tests and embedding).
    pub fn from_lookup(
        provider_flag: Option<&str>,
        model_flag: Option<&str>,
        mock_script: Option<PathBuf>,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<ProviderConfig, ModelConfigError> {
        let var = |name: &str| env(name).filter(|v| !v.trim().is_empty());
        // A program that cannot pass flags (an Agent SDK example) names its script here.
        let mock_script = mock_script.or_else(|| var("REIN_MOCK_SCRIPT").map(PathBuf::from));
        let provider = if let Some(flag) = provider_flag {
            ProviderKind::parse(flag).ok_or_else(|| ModelConfigError::UnknownProvider {
                name: flag.to_string(),
                source_name: "--provider",
            })?
        } else if let Some(value) = var("REIN_PROVIDER") {
            ProviderKind::parse(&value).ok_or(ModelConfigError::UnknownProvider {
                name: value,
                source_name: "REIN_PROVIDER",
            })?
        } else if mock_script.is_some() {
            ProviderKind::Mock
        } else if var("ANTHROPIC_API_KEY").is_some() {
            ProviderKind::Anthropic
        } else if var("OPENAI_API_KEY").is_some() {
            ProviderKind::OpenAi
        } else {
            ProviderKind::Mock
        };

        let mut cfg = ProviderConfig::new(provider);
        cfg.mock_script = mock_script;
        let (key_var, url_var, model_var) = match provider {
            ProviderKind::Mock => (None, None, None),
            ProviderKind::OpenAi => (
                Some("OPENAI_API_KEY"),
                Some("OPENAI_BASE_URL"),
                Some("OPENAI_MODEL"),
            ),
            ProviderKind::Anthropic => (
                Some("ANTHROPIC_API_KEY"),
                Some("ANTHROPIC_BASE_URL"),
                Some("ANTHROPIC_MODEL"),
            ),
        };
        cfg.api_key = key_var.and_then(var);
        cfg.base_url = url_var.and_then(var);
        cfg.model = model_flag
            .map(str::to_string)
            .or_else(|| model_var.and_then(var));
        cfg.effort = var("CLAUDE_CODE_EFFORT_LEVEL").map(|v| v.trim().to_string());
        if let Some(ms) = parse_env_u64(&var, "REIN_REQUEST_TIMEOUT_MS")? {
            cfg.request_timeout = Duration::from_millis(ms.max(1));
        }
        if let Some(n) = parse_env_u64(&var, "REIN_MAX_RETRIES")? {
            cfg.max_retries = u32::try_from(n).unwrap_or(u32::MAX);
        }
        if let Some(ms) = parse_env_u64(&var, "REIN_RETRY_BASE_MS")? {
            cfg.retry_base = Duration::from_millis(ms);
        }
        if let Some(ms) = parse_env_u64(&var, "REIN_RETRY_MAX_DELAY_MS")? {
            cfg.retry_max_delay = Duration::from_millis(ms);
        }
        if let Some(n) = parse_env_u64(&var, "REIN_MAX_TOKENS")? {
            cfg.max_tokens = u32::try_from(n.max(1)).unwrap_or(u32::MAX);
        }
        Ok(cfg)
    }
}

fn parse_env_u64(
    var: &impl Fn(&str) -> Option<String>,
    name: &'static str,
) -> Result<Option<u64>, ModelConfigError> {
    match var(name) {
        None => Ok(None),
        Some(value) => match value.trim().parse::<u64>() {
            Ok(n) => Ok(Some(n)),
            Err(_) => Err(ModelConfigError::InvalidEnv {
                name,
                value,
                expected: "a non-negative integer",
            }),
        },
    }
}

/// Why a model could not be built. `Display` names the offending flag, variable or file.
#[derive(Debug, thiserror::Error)]
pub enum ModelConfigError {
    #[error("unknown provider '{name}' (from {source_name}); expected mock, openai or anthropic")]
    UnknownProvider {
        name: String,
        source_name: &'static str,
    },
    #[error("environment variable {name}={value:?} is invalid: expected {expected}")]
    InvalidEnv {
        name: &'static str,
        value: String,
        expected: &'static str,
    },
    #[error(
        "provider {provider} needs an API key: set {var} (or point {url_var} at a server that needs none)"
    )]
    MissingApiKey {
        provider: ProviderKind,
        var: &'static str,
        url_var: &'static str,
    },
    #[error("--mock-script only works with the mock provider, not {provider}")]
    ScriptWithRealProvider { provider: ProviderKind },
    #[error("invalid base URL '{url}' for {provider}: {reason}")]
    InvalidBaseUrl {
        provider: ProviderKind,
        url: String,
        reason: String,
    },
    #[error(transparent)]
    MockScript(#[from] mock::MockScriptError),
    #[error("cannot build the HTTP client: {0}")]
    HttpClient(String),
}

/// Builds the model `cfg` describes. Loads and validates a mock script up front so a broken
/// script is reported before the session starts.
pub fn from_config(cfg: &ProviderConfig) -> Result<Box<dyn Model>, ModelConfigError> {
    match cfg.provider {
        ProviderKind::Mock => {
            let model = match &cfg.mock_script {
                Some(path) => mock::MockModel::from_script_file(path)?,
                None => mock::MockModel::new(),
            };
            Ok(Box::new(model))
        }
        ProviderKind::OpenAi => {
            reject_script(cfg)?;
            let http = http::HttpSettings::from_config(
                cfg,
                DEFAULT_OPENAI_BASE_URL,
                "OPENAI_API_KEY",
                "OPENAI_BASE_URL",
            )?;
            Ok(Box::new(openai::OpenAiModel::new(
                http,
                cfg.model
                    .clone()
                    .unwrap_or_else(|| DEFAULT_OPENAI_MODEL.to_string()),
                cfg.system.clone(),
            )))
        }
        ProviderKind::Anthropic => {
            reject_script(cfg)?;
            let http = http::HttpSettings::from_config(
                cfg,
                DEFAULT_ANTHROPIC_BASE_URL,
                "ANTHROPIC_API_KEY",
                "ANTHROPIC_BASE_URL",
            )?;
            let model = cfg
                .model
                .clone()
                .unwrap_or_else(|| DEFAULT_ANTHROPIC_MODEL.to_string());
            let effort = effort_for(&model, cfg.effort.as_deref());
            Ok(Box::new(
                anthropic::AnthropicModel::new(http, model, cfg.system.clone(), cfg.max_tokens)
                    .with_effort(effort),
            ))
        }
    }
}

/// The effort levels `--effort` takes (Claude Code 2.1.328's list).
pub const EFFORT_LEVELS: &[&str] = &["low", "medium", "high", "xhigh", "max"];

/// The effort level sent to the Anthropic model `model`: `asked`, else Claude Code's default
/// `medium`; `None` for the models Claude Code 2.1.328 sends no effort to (the Claude 3 family,
/// Opus 4.0/4.1, Sonnet 4.0/4.5, Haiku 4.5, dated or not).
pub fn effort_for(model: &str, asked: Option<&str>) -> Option<String> {
    let id = model.trim().to_ascii_lowercase();
    let no_effort = id.contains("claude-3-")
        || [
            "claude-opus-4-0",
            "claude-opus-4-1",
            "claude-sonnet-4-0",
            "claude-sonnet-4-5",
            "claude-haiku-4-5",
        ]
        .iter()
        .any(|name| {
            id == *name
                || id
                    .strip_prefix(name)
                    .is_some_and(|rest| rest.starts_with('-') || rest.starts_with('['))
        });
    if no_effort {
        return None;
    }
    Some(asked.unwrap_or("medium").to_string())
}

fn reject_script(cfg: &ProviderConfig) -> Result<(), ModelConfigError> {
    match cfg.mock_script {
        Some(_) => Err(ModelConfigError::ScriptWithRealProvider {
            provider: cfg.provider,
        }),
        None => Ok(()),
    }
}
