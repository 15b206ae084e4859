#!/usr/bin/env python3
# normalize-paths: rewrite file paths in tool input to their normal form before the tool runs.
#
# Event:    PreToolUse
# Matcher:  Read|Write|Edit   (also useful on MultiEdit, NotebookEdit, Glob, Grep)
# Wire:     {"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/hooks/normalize-paths.py"}
#
# Normalises tool_input.file_path (and, when present, notebook_path and path) lexically:
# `./` segments and repeated slashes are removed and `dir/../` is collapsed, e.g.
#   <project>/./src//lib/../Cargo.toml  ->  <project>/src/Cargo.toml
#   ./notes.txt                         ->  notes.txt
#   a/../../b                           ->  ../b          (relative paths stay relative)
# This is purely textual (like Python's os.path.normpath): a symlinked directory followed by `..`
# resolves differently on disk, which is why the hook never makes a path absolute or resolves links.
#
# Output: when something changed, stdout {"hookSpecificOutput": {"hookEventName": "PreToolUse",
#   "updatedInput": {<the whole tool_input, every other key kept, paths rewritten>}}}.
#   No permissionDecision is given on purpose: Claude Code (and rein) apply updatedInput with no
#   decision and leave permission to the rules and other hooks. Nothing is printed when the paths
#   are already normal, so the call proceeds unchanged.
# Config:   NORMALIZE_PATHS_KEYS  comma-separated tool_input keys to normalise
#                                 (default "file_path,notebook_path,path").
# Exit codes: 0 always (bad input is left alone; a diagnostic goes to stderr).

import json
import os
import posixpath
import sys


def normalize(path):
    """Lexically normal form of `path`; '' and '.' stay as they are."""
    if path in ("", "."):
        return path
    out = posixpath.normpath(path)
    # POSIX lets normpath keep a leading "//"; we want every run of slashes collapsed.
    if out.startswith("//"):
        out = "/" + out.lstrip("/")
    return out


def main():
    try:
        data = json.loads(sys.stdin.read())
    except ValueError as err:
        sys.stderr.write(f"normalize-paths: input is not JSON ({err}); leaving the call alone\n")
        return 0
    tool_input = data.get("tool_input")
    if not isinstance(tool_input, dict):
        return 0
    keys = os.environ.get("NORMALIZE_PATHS_KEYS", "file_path,notebook_path,path").split(",")
    changed = False
    updated = dict(tool_input)
    for key in (k.strip() for k in keys):
        value = updated.get(key)
        if isinstance(value, str):
            normal = normalize(value)
            if normal != value:
                updated[key] = normal
                changed = True
    if changed:
        out = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "updatedInput": updated}}
        sys.stdout.write(json.dumps(out, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
