#!/usr/bin/env python3
# tdd-guard: test-driven development as a hook — production code may only change while a test
# is failing.
#
# Events and matchers (one script, three wirings):
#   PreToolUse          Write|Edit|MultiEdit  the guard: allow or deny the edit
#   PostToolUse         Bash                  recorder: a test command succeeded -> "passing"
#   PostToolUseFailure  Bash                  recorder: a test command failed    -> "failing"
# Wire:   {"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/hooks/tdd-guard.py"}
# Manual: hooks/tdd-guard.py record failing|passing   (e.g. to start a refactoring session)
#
# Workflow:
#   1. Edits of test files are always allowed: a path with a component tests/ test/ __tests__/
#      spec/, or a name like test_*.py, *_test.*, *.test.*, *.spec.*, *_spec.*.
#   2. Run the tests. A Bash command matching TDD_TEST_COMMANDS that fails (PostToolUseFailure,
#      i.e. non-zero exit) records "failing"; one that succeeds records "passing". The
#      run-tests-after-edit hook records the same state after each of its runs.
#   3. An edit of a production source file (extension in TDD_SOURCE_EXTS, not a test file) is
#      allowed only while the last recorded status is "failing", recorded by this session
#      (when the state carries a session id) and not older than TDD_MAX_AGE_SECONDS.
#      Otherwise it is denied with a reason telling the model to write a failing test first.
#   4. When the tests pass again the state is "passing" and the next production edit needs a new
#      failing test. Other files (docs, config, …) are never guarded.
# State file (JSON, replaced atomically via rename):
#   {"status": "failing"|"passing", "ts": "<UTC>", "epoch": <unix seconds>, "session_id": "…",
#    "source": "bash"|"run-tests-after-edit"|"manual", "command": "…"}
#
# Config (environment):
#   TDD_STATE_FILE       state path (default "$CLAUDE_PROJECT_DIR/.rein/tdd-state.json")
#   TDD_SOURCE_EXTS      guarded extensions, comma-separated
#                        (default ".rs,.py,.js,.jsx,.ts,.tsx,.go,.java,.kt,.rb,.c,.cc,.cpp,.h,.hpp,
#                        .cs,.swift,.ex,.exs,.php,.scala")
#   TDD_TEST_GLOBS       extra test-file globs (matched on the file name), comma-separated
#   TDD_TEST_COMMANDS    Python regex recognising a test run in a Bash command (default: cargo test,
#                        cargo nextest, pytest, python -m pytest/unittest, go test, npm/yarn/pnpm
#                        test, jest, vitest, rspec, mix test, make test, ctest)
#   TDD_MAX_AGE_SECONDS  a "failing" state older than this does not count (default 3600; 0 = never)
#   TDD_GUARD_DISABLE    set to 1 to allow everything (the recorder keeps recording)
# Output: PreToolUse deny JSON ({"hookSpecificOutput": {"permissionDecision": "deny", …}}) or
#   nothing. The recorder prints nothing.
# Exit codes: 0 always (a state file that cannot be written is reported on stderr).

import datetime
import fnmatch
import json
import os
import posixpath
import re
import sys
import tempfile
import time

DEFAULT_EXTS = (".rs,.py,.js,.jsx,.ts,.tsx,.go,.java,.kt,.rb,.c,.cc,.cpp,.h,.hpp,.cs,.swift,"
                ".ex,.exs,.php,.scala")
DEFAULT_TEST_COMMANDS = (r"\b(cargo\s+(test|nextest)|pytest|python3?\s+-m\s+(pytest|unittest)|"
                         r"go\s+test|(npm|yarn|pnpm)\s+(run\s+)?test|jest|vitest|rspec|"
                         r"mix\s+test|make\s+test|ctest)\b")
TEST_DIRS = {"tests", "test", "__tests__", "spec", "specs"}
TEST_NAMES = ["test_*.py", "*_test.*", "*.test.*", "*.spec.*", "*_spec.*", "*Test.java",
              "*Tests.java"]


def state_path():
    explicit = os.environ.get("TDD_STATE_FILE")
    if explicit:
        return explicit
    project = os.environ.get("CLAUDE_PROJECT_DIR") or os.getcwd()
    return os.path.join(project, ".rein", "tdd-state.json")


def write_state(status, session_id, source, command):
    path = state_path()
    now = datetime.datetime.now(datetime.timezone.utc)
    state = {"status": status, "ts": now.isoformat(timespec="seconds").replace("+00:00", "Z"),
             "epoch": time.time(), "session_id": session_id, "source": source,
             "command": command}
    directory = os.path.dirname(path) or "."
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tdd-state.", dir=directory)
    with os.fdopen(fd, "w") as f:
        json.dump(state, f)
        f.write("\n")
    os.replace(tmp, path)


def read_state():
    try:
        with open(state_path()) as f:
            state = json.load(f)
        return state if isinstance(state, dict) else None
    except (OSError, ValueError):
        return None


def csv(var, default=""):
    return [x.strip() for x in os.environ.get(var, default).split(",") if x.strip()]


def is_test_file(path):
    parts = [p for p in path.split("/") if p]
    if any(p in TEST_DIRS for p in parts[:-1]):
        return True
    name = parts[-1] if parts else ""
    return any(fnmatch.fnmatchcase(name, g) for g in TEST_NAMES + csv("TDD_TEST_GLOBS"))


def is_source_file(path):
    return any(path.endswith(ext) for ext in csv("TDD_SOURCE_EXTS", DEFAULT_EXTS))


def guard(data):
    if os.environ.get("TDD_GUARD_DISABLE") == "1":
        return
    tool_input = data.get("tool_input") or {}
    target = tool_input.get("file_path") or tool_input.get("notebook_path")
    if not isinstance(target, str) or not target:
        return
    base = data.get("cwd") or os.environ.get("CLAUDE_PROJECT_DIR") or os.getcwd()
    path = posixpath.normpath(posixpath.join(base, target))
    if is_test_file(path) or not is_source_file(path):
        return
    state = read_state()
    status = (state or {}).get("status")
    why = None
    if status != "failing":
        why = ("no test run has been recorded" if state is None
               else f"the last recorded test run is {status!r}")
    else:
        try:
            max_age = float(os.environ.get("TDD_MAX_AGE_SECONDS", "3600"))
        except ValueError:
            max_age = 3600.0
        epoch = state.get("epoch")
        recorded_session = state.get("session_id")
        if recorded_session and data.get("session_id") and recorded_session != data["session_id"]:
            why = "the failing test run was recorded by another session"
        elif max_age > 0 and isinstance(epoch, (int, float)) and time.time() - epoch > max_age:
            why = f"the failing test run is older than {max_age:g} s"
    if why is None:
        return
    reason = (f"TDD guard: {target} is production code and {why}. Write or change a test first "
              "(tests/, test_*.py, *_test.*, *.spec.*), run it and watch it fail; then this edit "
              "is allowed.")
    out = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                  "permissionDecisionReason": reason}}
    sys.stdout.write(json.dumps(out, ensure_ascii=False) + "\n")


def record(data, event):
    if data.get("tool_name") != "Bash" or data.get("is_interrupt"):
        return
    command = (data.get("tool_input") or {}).get("command")
    if not isinstance(command, str):
        return
    try:
        pattern = re.compile(os.environ.get("TDD_TEST_COMMANDS", DEFAULT_TEST_COMMANDS))
    except re.error as err:
        sys.stderr.write(f"tdd-guard: TDD_TEST_COMMANDS is not a valid regex: {err}\n")
        return
    if not pattern.search(command):
        return
    status = "passing" if event == "PostToolUse" else "failing"
    write_state(status, data.get("session_id"), "bash", command)


def main(argv):
    if len(argv) == 3 and argv[1] == "record" and argv[2] in ("failing", "passing"):
        write_state(argv[2], os.environ.get("CLAUDE_CODE_SESSION_ID"), "manual", None)
        return 0
    try:
        data = json.loads(sys.stdin.read())
    except ValueError as err:
        sys.stderr.write(f"tdd-guard: input is not JSON ({err})\n")
        return 0
    event = data.get("hook_event_name")
    try:
        if event == "PreToolUse":
            guard(data)
        elif event in ("PostToolUse", "PostToolUseFailure"):
            record(data, event)
    except OSError as err:
        sys.stderr.write(f"tdd-guard: cannot use the state file {state_path()}: {err}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
