#!/usr/bin/env python3
# audit-log: append one JSON line per tool call to an audit ledger, and one per refused call to a
# blocked ledger.
#
# Event:    PostToolUse, PostToolUseFailure   -> audit.jsonl
#           PermissionDenied                  -> blocked.jsonl
#           (any other event is recorded in audit.jsonl with its event name)
# Matcher:  * (all tools)
# Wire:     {"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/hooks/audit-log.py"}
#           Safe with "async": true (it prints nothing the agent needs).
#
# audit.jsonl line:   {"ts", "event", "session_id", "tool_use_id", "tool", "input", "ok",
#                      "error" (failures), "is_interrupt" (failures), "duration_ms",
#                      "response_chars" (successes: size of the JSON tool_response)}
# blocked.jsonl line: {"ts", "event", "session_id", "tool_use_id", "tool", "input", "reason"}
# "ts" is UTC ISO-8601 with milliseconds. String values in "input" longer than
# AUDIT_LOG_MAX_STRING characters are cut and marked "…[+N chars]".
#
# Appends are atomic: each line is written with a single write() on an O_APPEND descriptor while
# holding an exclusive flock(), so hooks running in parallel (Claude Code runs PostToolUse hooks of
# parallel tool calls concurrently) never interleave or lose lines.
#
# Config (environment):
#   REIN_LEDGER_DIR       directory of the ledgers (default "$CLAUDE_PROJECT_DIR/.rein", falling
#                         back to the input's cwd, then the current directory)
#   AUDIT_LOG_FILE        audit ledger path   (default "$REIN_LEDGER_DIR/audit.jsonl")
#   BLOCKED_LOG_FILE      blocked ledger path (default "$REIN_LEDGER_DIR/blocked.jsonl")
#   AUDIT_LOG_MAX_STRING  cap per string in "input" (default 2000; 0 = no cap)
# Output: nothing on stdout.
# Exit codes: 0 when the line was written; 1 (non-blocking: the tool call is unaffected, the user
#   sees the stderr message) when the input is not JSON or the ledger cannot be written.

import datetime
import fcntl
import json
import os
import sys


def ledger_dir(data):
    explicit = os.environ.get("REIN_LEDGER_DIR")
    if explicit:
        return explicit
    base = os.environ.get("CLAUDE_PROJECT_DIR") or data.get("cwd") or os.getcwd()
    return os.path.join(base, ".rein")


def append_line(path, record):
    """Append `record` as one JSON line: one write() under an exclusive lock."""
    line = (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")
    parent = os.path.dirname(path)
    if parent:
        os.makedirs(parent, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        view = memoryview(line)
        while view:
            written = os.write(fd, view)
            view = view[written:]
    finally:
        os.close(fd)  # closing releases the lock


def cap_strings(value, limit):
    if limit <= 0:
        return value
    if isinstance(value, str):
        if len(value) > limit:
            return value[:limit] + f"…[+{len(value) - limit} chars]"
        return value
    if isinstance(value, dict):
        return {k: cap_strings(v, limit) for k, v in value.items()}
    if isinstance(value, list):
        return [cap_strings(v, limit) for v in value]
    return value


def main():
    try:
        data = json.loads(sys.stdin.read())
    except ValueError as err:
        sys.stderr.write(f"audit-log: hook input is not JSON ({err})\n")
        return 1
    try:
        limit = int(os.environ.get("AUDIT_LOG_MAX_STRING", "2000"))
    except ValueError:
        limit = 2000
    event = data.get("hook_event_name", "")
    now = datetime.datetime.now(datetime.timezone.utc)
    record = {
        "ts": now.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        "event": event,
        "session_id": data.get("session_id"),
        "tool_use_id": data.get("tool_use_id"),
        "tool": data.get("tool_name"),
        "input": cap_strings(data.get("tool_input"), limit),
    }
    directory = ledger_dir(data)
    if event == "PermissionDenied":
        record["reason"] = data.get("reason")
        path = os.environ.get("BLOCKED_LOG_FILE") or os.path.join(directory, "blocked.jsonl")
    else:
        if event == "PostToolUse":
            record["ok"] = True
            record["response_chars"] = len(json.dumps(data.get("tool_response"),
                                                      ensure_ascii=False))
        elif event == "PostToolUseFailure":
            record["ok"] = False
            record["error"] = data.get("error")
            record["is_interrupt"] = data.get("is_interrupt", False)
        record["duration_ms"] = data.get("duration_ms")
        path = os.environ.get("AUDIT_LOG_FILE") or os.path.join(directory, "audit.jsonl")
    try:
        append_line(path, record)
    except OSError as err:
        sys.stderr.write(f"audit-log: cannot append to {path}: {err}\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
