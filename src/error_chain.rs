//! An error with its causes, `outer: inner: …`: reqwest's own `Display` says little of why a
//! request failed. A leaf: the providers and the http hooks both report request errors.

/// `err` and each of its sources not already in the text, joined with `: `.
pub fn error_chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}
