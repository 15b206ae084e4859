#!/usr/bin/env python3
# inject-context: give the model the project's notes and the git working-tree status.
#
# Event:    SessionStart (matcher optional: startup|resume|clear|compact), UserPromptSubmit
# Wire:     {"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/hooks/inject-context.py"}
#
# Builds one context text from
#   - the notes file ($REIN_NOTES_FILE, default "$CLAUDE_PROJECT_DIR/.rein/notes.md"), capped at
#     INJECT_NOTES_MAX_CHARS characters;
#   - `git status --short --branch` of the project, if it is a git work tree, capped at
#     INJECT_GIT_MAX_LINES lines (skipped if git is missing or takes longer than 5 s);
# and prints it as {"hookSpecificOutput": {"hookEventName": "<the event from stdin>",
# "additionalContext": "…"}}; the event name is echoed from the input because Claude Code rejects
# output whose hookEventName differs from the running event. Prints nothing when there is nothing
# to say. The whole text stays under 9,000 characters, below Claude Code's 10,000-character limit
# beyond which context is moved to a file.
#
# Config (environment):
#   REIN_NOTES_FILE         notes path (default "$CLAUDE_PROJECT_DIR/.rein/notes.md")
#   INJECT_NOTES_MAX_CHARS  cap on the notes (default 4000)
#   INJECT_GIT_MAX_LINES    cap on git status lines (default 40)
#   INJECT_CONTEXT_GIT      0 = leave git status out (e.g. on every UserPromptSubmit)
# Exit codes: 0 always (a diagnostic goes to stderr if the input is not JSON).

import json
import os
import subprocess
import sys

TOTAL_CAP = 9000


def env_int(name, default):
    try:
        return max(0, int(os.environ.get(name, "")))
    except ValueError:
        return default


def notes(project):
    path = os.environ.get("REIN_NOTES_FILE") or os.path.join(project, ".rein", "notes.md")
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read().strip()
    except OSError:
        return None
    if not text:
        return None
    cap = env_int("INJECT_NOTES_MAX_CHARS", 4000)
    if len(text) > cap:
        text = text[:cap] + f"\n[… notes truncated, {len(text) - cap} more characters in {path}]"
    return f"Project notes ({path}):\n{text}"


def git_status(project):
    if os.environ.get("INJECT_CONTEXT_GIT") == "0":
        return None
    try:
        proc = subprocess.run(["git", "-C", project, "status", "--short", "--branch"],
                              stdin=subprocess.DEVNULL, capture_output=True, timeout=5)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if proc.returncode != 0:
        return None
    lines = proc.stdout.decode("utf-8", "replace").splitlines()
    cap = env_int("INJECT_GIT_MAX_LINES", 40)
    if len(lines) > cap:
        lines = lines[:cap] + [f"… {len(lines) - cap} more lines"]
    return "git status --short --branch:\n" + "\n".join(lines)


def main():
    try:
        data = json.loads(sys.stdin.read())
    except ValueError as err:
        sys.stderr.write(f"inject-context: input is not JSON ({err})\n")
        return 0
    event = data.get("hook_event_name") or "SessionStart"
    project = os.environ.get("CLAUDE_PROJECT_DIR") or data.get("cwd") or os.getcwd()
    parts = [p for p in (notes(project), git_status(project)) if p]
    if not parts:
        return 0
    context = "\n\n".join(parts)
    if len(context) > TOTAL_CAP:
        context = context[:TOTAL_CAP] + "\n[… context truncated]"
    out = {"hookSpecificOutput": {"hookEventName": event, "additionalContext": context}}
    sys.stdout.write(json.dumps(out, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
