//! Settings discovery, merge order, schema and validation with file:line:col diagnostics.

pub mod schema;
