//! Integration tests of the built-in tools: real files in temp dirs, real bash.

mod bash;
mod files;
mod golden;
mod schemas;
mod search;

use std::path::PathBuf;

use crate::tools::{Tool, ToolContext, ToolOutcome};
use serde_json::Value;

/// A fresh project dir (canonical, so `pwd -P` agrees with it) and a context rooted there.
pub fn project() -> (tempfile::TempDir, PathBuf, ToolContext) {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().canonicalize().expect("canonicalize");
    let ctx = ToolContext::new(root.clone());
    (dir, root, ctx)
}

/// `prepare` then `execute`, as the pipeline does.
pub async fn call(tool: &dyn Tool, input: Value, ctx: &ToolContext) -> Result<ToolOutcome, String> {
    let prepared = tool.prepare(input, ctx)?;
    Ok(tool.execute(prepared, ctx).await)
}

/// The `(response, content)` of a successful call; panics with the error otherwise.
pub async fn success(tool: &dyn Tool, input: Value, ctx: &ToolContext) -> (Value, String) {
    match call(tool, input, ctx).await {
        Ok(ToolOutcome::Success { response, content }) => (response, content),
        Ok(ToolOutcome::Failure { error, .. }) => panic!("tool failed: {error}"),
        Err(error) => panic!("prepare refused: {error}"),
    }
}

/// The error text of a failed call (prepare refusal or execute failure).
pub async fn failure(tool: &dyn Tool, input: Value, ctx: &ToolContext) -> String {
    match call(tool, input, ctx).await {
        Ok(ToolOutcome::Success { content, .. }) => panic!("tool succeeded: {content}"),
        Ok(ToolOutcome::Failure { error, .. }) => error,
        Err(error) => error,
    }
}
