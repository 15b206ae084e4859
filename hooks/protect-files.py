#!/usr/bin/env python3
# protect-files: refuse edits of secrets and of git's internals.
#
# Event:    PreToolUse
# Matcher:  Edit|Write   (MultiEdit and NotebookEdit are handled too if you add them)
# Wire:     {"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/hooks/protect-files.py"}
#
# The target path (tool_input.file_path, or notebook_path) is made absolute against the input's
# cwd and normalised (`./`, `//`, `a/../` collapsed); then both that path and its symlink-resolved
# form are checked, component by component, against:
#   .env and .env.*           environment secrets (.env.example too: exempt it with PROTECT_FILES_ALLOW)
#   *.pem, *.key              keys and certificates
#   any component named .git  git internals (.git/config, .git/hooks/…)
#   PROTECT_FILES_EXTRA       extra globs
# A glob without "/" is matched against every path component (so "secrets" protects a directory
# of that name and "*.p12" any such file); a glob with "/" is matched against the path relative to
# $CLAUDE_PROJECT_DIR and against the absolute path. `*` also matches "/" (fnmatch semantics).
#
# Config (environment; lists separated by commas or newlines):
#   PROTECT_FILES_EXTRA  extra protected globs, e.g. "secrets, *.p12, config/prod/*"
#   PROTECT_FILES_ALLOW  globs exempted from every rule, e.g. ".env.example"
# Output: on a match, stdout {"hookSpecificOutput": {"hookEventName": "PreToolUse",
#   "permissionDecision": "deny", "permissionDecisionReason": "Protected file: … (rule)"}};
#   otherwise nothing (no decision: permissions are left to the rules).
# Exit codes: always 0. Input that is not JSON is denied (fail closed).

import fnmatch
import json
import os
import posixpath
import re
import sys


def globs(var):
    return [g.strip() for g in re.split(r"[,\n]", os.environ.get(var, "")) if g.strip()]


def components(path, project):
    """Path components below the project root (all of them for a path outside the project), so
    that directories above the project never trigger a rule."""
    rel = posixpath.relpath(path, project)
    if rel == ".." or rel.startswith("../"):
        rel = path
    return [p for p in rel.split("/") if p and p != "."]


def glob_hits(path, project, patterns):
    """First pattern of `patterns` that matches `path` (absolute, normalised), or None."""
    parts = components(path, project)
    rel = posixpath.relpath(path, project)
    for pattern in patterns:
        if "/" in pattern.strip("/"):
            pat = pattern.strip("/")
            if fnmatch.fnmatchcase(rel, pat) or fnmatch.fnmatchcase(path, pattern) \
                    or fnmatch.fnmatchcase(rel, pat + "/*"):
                return pattern
        elif any(fnmatch.fnmatchcase(part, pattern.strip("/")) for part in parts):
            return pattern
    return None


def builtin_rule(path, project):
    parts = components(path, project)
    if ".git" in parts:
        return ".git/ (git internals)"
    name = parts[-1] if parts else ""
    if name == ".env" or name.startswith(".env."):
        return ".env / .env.* (environment secrets)"
    if name.endswith(".pem"):
        return "*.pem (key or certificate)"
    if name.endswith(".key"):
        return "*.key (private key)"
    return None


def deny(reason):
    out = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                  "permissionDecisionReason": reason}}
    sys.stdout.write(json.dumps(out, ensure_ascii=False) + "\n")


def main():
    try:
        data = json.loads(sys.stdin.read())
    except ValueError as err:
        deny(f"protect-files could not parse its input ({err}); refusing the edit")
        return 0
    tool_input = data.get("tool_input") or {}
    target = tool_input.get("file_path") or tool_input.get("notebook_path")
    if not isinstance(target, str) or not target:
        return 0
    project = posixpath.normpath(os.environ.get("CLAUDE_PROJECT_DIR") or data.get("cwd")
                                 or os.getcwd())
    base = data.get("cwd") or project
    path = posixpath.normpath(posixpath.join(base, target))
    candidates = [path]
    real = os.path.realpath(path)
    if real != path:
        candidates.append(real)
    allow = globs("PROTECT_FILES_ALLOW")
    extra = globs("PROTECT_FILES_EXTRA")
    for candidate in candidates:
        if allow and glob_hits(candidate, project, allow):
            return 0
        rule = builtin_rule(candidate, project)
        if rule is None:
            pattern = glob_hits(candidate, project, extra)
            if pattern:
                rule = f"{pattern} (PROTECT_FILES_EXTRA)"
        if rule:
            via = "" if candidate == path else f" (symlink to {candidate})"
            deny(f"Protected file: {target}{via} matches {rule}; edit it by hand if you must")
            return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
