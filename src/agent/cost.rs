//! What tokens cost, only where the user said so: `REIN_PRICES` holds JSON (or the path of a
//! JSON file) mapping a model name to its prices in US dollars per million tokens:
//!
//! ```json
//! {"claude-sonnet-4-5": {"input": 3, "output": 15, "cache_write": 3.75, "cache_read": 0.3}}
//! ```
//!
//! rein ships no price list: prices change, and a wrong figure is worse than none. Without a
//! price for a model its cost is unknown (`None`), and reports show tokens only.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use serde::Deserialize;

use crate::model::Usage;

/// One model's prices, USD per million tokens.
#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Prices {
    /// Prompt tokens (not cached).
    pub input: f64,
    /// Reply tokens.
    pub output: f64,
    /// Prompt tokens written to the cache (default: the input price).
    #[serde(default)]
    pub cache_write: Option<f64>,
    /// Prompt tokens read from the cache (default: the input price).
    #[serde(default)]
    pub cache_read: Option<f64>,
}

impl Prices {
    /// The cost of `usage` at these prices.
    pub fn cost(&self, usage: &Usage) -> f64 {
        let per = |tokens: u64, price: f64| tokens as f64 * price / 1_000_000.0;
        per(usage.input_tokens, self.input)
            + per(usage.output_tokens, self.output)
            + per(
                usage.cache_creation_input_tokens,
                self.cache_write.unwrap_or(self.input),
            )
            + per(
                usage.cache_read_input_tokens,
                self.cache_read.unwrap_or(self.input),
            )
    }
}

/// Parses `REIN_PRICES`' value: inline JSON, or the path of a file holding it. The error
/// names the file (or the variable) and what is wrong.
pub fn parse_prices(value: &str) -> Result<BTreeMap<String, Prices>, String> {
    let trimmed = value.trim();
    let (text, source) = if trimmed.starts_with('{') {
        (trimmed.to_string(), "REIN_PRICES".to_string())
    } else {
        let text = std::fs::read_to_string(trimmed)
            .map_err(|e| format!("REIN_PRICES file {trimmed}: {e}"))?;
        (text, format!("REIN_PRICES file {trimmed}"))
    };
    serde_json::from_str(&text).map_err(|e| format!("{source}: {e}"))
}

static PRICES: LazyLock<Result<BTreeMap<String, Prices>, String>> =
    LazyLock::new(|| match std::env::var("REIN_PRICES") {
        Ok(v) if !v.trim().is_empty() => parse_prices(&v),
        Ok(_) | Err(_) => Ok(BTreeMap::new()),
    });

/// Why `REIN_PRICES` could not be used, if it could not (costs are then unknown).
pub fn prices_error() -> Option<&'static str> {
    PRICES.as_ref().err().map(String::as_str)
}

/// What the tokens of several models cost together, in dollars; a model without a price
/// counts as nothing (`0.0`, never `-0.0`).
pub fn total_usd(by_model: &[(String, Usage)]) -> f64 {
    by_model
        .iter()
        .filter_map(|(model, usage)| cost_usd(model, usage))
        .sum::<f64>()
        // An empty sum is -0.0, which prints as `-0.0`.
        + 0.0
}

/// The cost of `usage` on `model`, if the user configured its prices.
pub fn cost_usd(model: &str, usage: &Usage) -> Option<f64> {
    let prices = PRICES.as_ref().ok()?.get(model)?;
    Some(prices.cost(usage))
}

/// What writing `tokens` prompt tokens to `model`'s cache costs, if the user configured its
/// prices (`cache_write`, else `input`).
pub fn cache_write_usd(model: &str, tokens: u64) -> Option<f64> {
    let prices = PRICES.as_ref().ok()?.get(model)?;
    Some(tokens as f64 * prices.cache_write.unwrap_or(prices.input) / 1_000_000.0)
}
