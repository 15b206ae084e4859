#!/bin/sh
# turn-log: observability ledger of session and turn boundaries; one JSON line per event.
#
# Event:    SessionStart, Stop, SessionEnd (works on any event; UserPromptSubmit, SubagentStop,
#           PreCompact, … are fine too)
# Matcher:  none needed (SessionStart/SessionEnd accept one: source / reason)
# Wire:     {"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/hooks/turn-log.sh"}
#
# Line written: {"ts":"<UTC, seconds>","event":"<hook_event_name>","input":<the stdin JSON as is>}
# The hook input is embedded verbatim (Claude Code sends it as one compact line), so session_id,
# last_assistant_message, source, reason, … are all in the ledger. Pure POSIX sh (runs under dash
# as `/bin/sh -c`); needs only date, mktemp, cat and sed.
#
# Never prints to stdout: on SessionStart plain stdout would be injected into the model's context,
# and this hook must stay invisible. Always exits 0, even if the ledger cannot be written (it says
# why on stderr), so it can never block a Stop or fail a SessionEnd.
#
# Appends are atomic: the line is first written to a private temp file, then appended with one
# `cat` (a single write() for lines under 128 KiB) on an O_APPEND descriptor, under `flock` when
# the flock(1) utility exists, so parallel sessions never interleave lines.
#
# Config (environment):
#   REIN_LEDGER_DIR  ledger directory (default "$CLAUDE_PROJECT_DIR/.rein", else "./.rein")
#   TURN_LOG_FILE    ledger path (default "$REIN_LEDGER_DIR/turns.jsonl")
# Exit codes: always 0.

dir=${REIN_LEDGER_DIR:-${CLAUDE_PROJECT_DIR:-.}/.rein}
ledger=${TURN_LOG_FILE:-$dir/turns.jsonl}

# JSON.stringify output has no raw newlines inside strings, so any newline is layout: flatten it.
input=$(cat | tr '\n\r' '  ')
input=$(printf '%s' "$input" | sed 's/^[[:space:]]*//; s/[[:space:]]*$//')
case $input in
    '{'*'}') ;;
    *) input=null ;;
esac
# In compact JSON the key `"hook_event_name":"` cannot occur inside a string (quotes there are
# escaped), so this finds the real field.
event=$(printf '%s' "$input" |
    sed -n 's/.*"hook_event_name"[[:space:]]*:[[:space:]]*"\([A-Za-z]*\)".*/\1/p')
ts=$(date -u +%Y-%m-%dT%H:%M:%SZ)

mkdir -p "$(dirname "$ledger")" 2>/dev/null
tmp=$(mktemp "${TMPDIR:-/tmp}/turn-log.XXXXXX") || {
    echo "turn-log: cannot create a temp file" >&2
    exit 0
}
trap 'rm -f "$tmp"' EXIT
printf '{"ts":"%s","event":"%s","input":%s}\n' "$ts" "$event" "$input" >"$tmp"

if command -v flock >/dev/null 2>&1; then
    { flock 9 && cat "$tmp" >&9; } 9>>"$ledger" || echo "turn-log: cannot append to $ledger" >&2
else
    cat "$tmp" >>"$ledger" || echo "turn-log: cannot append to $ledger" >&2
fi
exit 0
