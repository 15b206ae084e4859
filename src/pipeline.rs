//! The tool-call pipeline: PreToolUse → permissions → execute → PostToolUse/PostToolUseFailure.
