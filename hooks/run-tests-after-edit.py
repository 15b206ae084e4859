#!/usr/bin/env python3
# run-tests-after-edit: run the project's tests after every file edit and tell the model when
# they fail.
#
# Event:    PostToolUse
# Matcher:  Edit|Write   (add MultiEdit if you use it)
# Wire:     {"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/hooks/run-tests-after-edit.py",
#            "timeout": 330}
#
# The test command is RUN_TESTS_CMD, else the contents of "$CLAUDE_PROJECT_DIR/.rein/test-command"
# (a shell snippet; lines starting with # are ignored). With neither, the hook does nothing and
# exits 0 silently. The command runs as `/bin/sh -c <cmd>` in $CLAUDE_PROJECT_DIR, stdin closed,
# in its own process group (a timeout kills the whole tree). Runs are serialised with a lock
# file, so parallel edits never start two test suites at once.
#
# Output (synchronous hook, the default):
#   failure -> {"decision": "block", "reason": "Tests failed after editing <file>:\n<last lines>"}
#              (PostToolUse "block" does not undo the edit; the model reads the reason as feedback)
#   timeout -> the same with "Tests timed out after <N> s after editing <file>"
#   success -> nothing; with RUN_TESTS_REPORT_SUCCESS=1, additionalContext "Tests passed after …"
# As an async hook ("async": true in settings, and RUN_TESTS_ASYNC=1): Claude Code only delivers
#   additionalContext / systemMessage from background hooks, so failures are reported as
#   {"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "Tests failed …"}}
#   on the next turn. With "asyncRewake": true use RUN_TESTS_ASYNC=rewake: a failure exits 2 with
#   the report on stderr, which wakes the model.
# Every run also records "passing"/"failing" in the TDD state file read by tdd-guard.
#
# Config (environment):
#   RUN_TESTS_CMD             the test command (overrides .rein/test-command)
#   RUN_TESTS_TIMEOUT         seconds before the run is killed (default 300)
#   RUN_TESTS_TAIL_LINES      lines of output quoted on failure (default 40)
#   RUN_TESTS_REPORT_SUCCESS  1 = also report success as additionalContext
#   RUN_TESTS_ASYNC           "" (sync), 1 (async: additionalContext), rewake (exit 2 + stderr)
#   TDD_STATE_FILE            state path shared with tdd-guard (default .rein/tdd-state.json;
#                             "-" disables recording)
# Exit codes: 0 (also for failing tests: the verdict is in the JSON); 2 only in rewake mode;
#   1 when the hook itself cannot run (bad input), which is non-blocking.

import datetime
import fcntl
import json
import os
import signal
import subprocess
import sys
import tempfile
import time


def project_dir(data):
    return os.environ.get("CLAUDE_PROJECT_DIR") or data.get("cwd") or os.getcwd()


def test_command(project):
    cmd = os.environ.get("RUN_TESTS_CMD", "").strip()
    if cmd:
        return cmd
    try:
        with open(os.path.join(project, ".rein", "test-command")) as f:
            lines = [ln for ln in f.read().splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
        return "\n".join(lines).strip() or None
    except OSError:
        return None


def env_int(name, default):
    try:
        return max(1, int(os.environ.get(name, "")))
    except ValueError:
        return default


def run(cmd, cwd, timeout):
    """Run `cmd`; returns (exit code or None on timeout, combined output)."""
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen(["/bin/sh", "-c", cmd], cwd=cwd, stdin=subprocess.DEVNULL,
                                stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            code = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except OSError:
                pass
            proc.wait()
            code = None
        out.seek(0)
        return code, out.read().decode("utf-8", "replace")


def record_state(project, status, session_id, cmd):
    path = os.environ.get("TDD_STATE_FILE")
    if path == "-":
        return
    path = path or os.path.join(project, ".rein", "tdd-state.json")
    now = datetime.datetime.now(datetime.timezone.utc)
    state = {"status": status, "ts": now.isoformat(timespec="seconds").replace("+00:00", "Z"),
             "epoch": time.time(), "session_id": session_id, "source": "run-tests-after-edit",
             "command": cmd}
    try:
        directory = os.path.dirname(path) or "."
        os.makedirs(directory, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tdd-state.", dir=directory)
        with os.fdopen(fd, "w") as f:
            json.dump(state, f)
            f.write("\n")
        os.replace(tmp, path)
    except OSError as err:
        sys.stderr.write(f"run-tests-after-edit: cannot record test state in {path}: {err}\n")


def main():
    try:
        data = json.loads(sys.stdin.read())
    except ValueError as err:
        sys.stderr.write(f"run-tests-after-edit: input is not JSON ({err})\n")
        return 1
    project = project_dir(data)
    cmd = test_command(project)
    if not cmd:
        return 0
    edited = (data.get("tool_input") or {}).get("file_path") or "a file"
    timeout = env_int("RUN_TESTS_TIMEOUT", 300)
    tail_lines = env_int("RUN_TESTS_TAIL_LINES", 40)
    mode = os.environ.get("RUN_TESTS_ASYNC", "")

    lock_dir = os.path.join(project, ".rein")
    os.makedirs(lock_dir, exist_ok=True)
    with open(os.path.join(lock_dir, "run-tests.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        code, output = run(cmd, project, timeout)

    if code == 0:
        record_state(project, "passing", data.get("session_id"), cmd)
        if os.environ.get("RUN_TESTS_REPORT_SUCCESS") == "1":
            out = {"hookSpecificOutput": {"hookEventName": "PostToolUse",
                                          "additionalContext": f"Tests passed after editing {edited}"}}
            sys.stdout.write(json.dumps(out, ensure_ascii=False) + "\n")
        return 0

    record_state(project, "failing", data.get("session_id"), cmd)
    tail = "\n".join(output.rstrip("\n").splitlines()[-tail_lines:])
    if code is None:
        report = f"Tests timed out after {timeout} s after editing {edited}:\n{tail}"
    else:
        report = f"Tests failed after editing {edited}:\n{tail}"
    if mode == "rewake":
        sys.stderr.write(report + "\n")
        return 2
    if mode:
        out = {"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": report}}
    else:
        out = {"decision": "block", "reason": report}
    sys.stdout.write(json.dumps(out, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
