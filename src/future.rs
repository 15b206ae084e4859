//! The boxed future object-safe async traits return; a leaf, so every layer can name it
//! without reaching up to the crate root.

/// A boxed, sendable future: what object-safe async traits in rein return ([`crate::Model::complete`]).
pub type BoxFuture<'a, T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send + 'a>>;
