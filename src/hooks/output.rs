//! TODO(skeleton): owned by the hook-engine work.
