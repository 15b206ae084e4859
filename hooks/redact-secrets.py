#!/usr/bin/env python3
# redact-secrets: mask credentials in tool output before the model sees it.
#
# Event:    PostToolUse
# Matcher:  * (all tools; Bash and Read matter most)
# Wire:     {"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/hooks/redact-secrets.py"}
#
# Every string inside tool_response (at any depth) is scanned for
#   -----BEGIN … PRIVATE KEY----- … -----END … PRIVATE KEY-----   body replaced, markers kept
#   AKIA…/ASIA… (AWS access key ids)        sk-… / sk-ant-… / sk-proj-… (OpenAI, Anthropic)
#   ghp_/gho_/ghu_/ghs_/ghr_…, github_pat_… (GitHub)   xoxb-/xoxa-/xoxp-/xoxr-/xoxs-… (Slack)
#   AIza… (Google API keys)                 sk_live_/rk_live_… (Stripe)
#   password=…, passwd: …, secret=…, api_key=…, access_token=…, auth_token=…,
#   client_secret=…, aws_secret_access_key=…  (name kept, value masked; values that look like a
#   function call, a variable reference or a placeholder are left alone)
# and each hit becomes "[REDACTED:<kind>]". The response keeps its exact shape (same keys, same
# types, same array lengths) because Claude Code requires updatedToolOutput to match the tool's
# output schema.
#
# Output: when something was masked, {"hookSpecificOutput": {"hookEventName": "PostToolUse",
#   "updatedToolOutput": <the masked tool_response>}}; otherwise nothing.
#   Note: the model then sees masked text; an Edit whose old_string contains a masked secret will
#   not match the file, which is the point.
# Config (environment):
#   REDACT_SECRETS_EXTRA  extra Python regexes, one per line; each match becomes [REDACTED:custom]
# Exit codes: 0 always (bad input or a bad extra regex is reported on stderr; output untouched).

import json
import os
import re
import sys

PEM = re.compile(r"-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY-----(?:.*?-----END \1PRIVATE KEY-----|.*\Z)",
                 re.S)
TOKENS = [
    ("aws-access-key", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("github-token", re.compile(r"\bgh[pousr]_[A-Za-z0-9]{30,}\b")),
    ("github-token", re.compile(r"\bgithub_pat_[A-Za-z0-9_]{22,}")),
    ("slack-token", re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}")),
    ("stripe-key", re.compile(r"\b[sr]k_live_[A-Za-z0-9]{16,}")),
    ("api-key", re.compile(r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}")),
    ("google-api-key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}")),
]
ASSIGNED = re.compile(
    r"(?i)\b(password|passwd|secret|api[_-]?key|access[_-]?token|auth[_-]?token|client[_-]?secret"
    r"|aws_secret_access_key)(\"?'?\s*[=:]\s*)([\"']?)([^\s\"'&;,]+)")


def assigned(match):
    value = match.group(4)
    end = match.end(4)
    following = match.string[end:end + 1]
    if (following == "(" or value.startswith(("$", "<", "{", "[REDACTED", "*", "%"))
            or "(" in value or value.lower() in ("null", "none", "true", "false", "")):
        return match.group(0)
    return f"{match.group(1)}{match.group(2)}{match.group(3)}[REDACTED:{match.group(1).lower()}]"


def extra_patterns():
    patterns = []
    for line in os.environ.get("REDACT_SECRETS_EXTRA", "").splitlines():
        if line.strip():
            try:
                patterns.append(("custom", re.compile(line.strip())))
            except re.error as err:
                sys.stderr.write(f"redact-secrets: bad regex in REDACT_SECRETS_EXTRA {line!r}: {err}\n")
    return patterns


def mask(text, patterns):
    out = PEM.sub(lambda m: f"-----BEGIN {m.group(1)}PRIVATE KEY-----\n[REDACTED:private-key]\n"
                            f"-----END {m.group(1)}PRIVATE KEY-----", text)
    for kind, pattern in patterns:
        out = pattern.sub(f"[REDACTED:{kind}]", out)
    return ASSIGNED.sub(assigned, out)


def walk(value, patterns):
    if isinstance(value, str):
        return mask(value, patterns)
    if isinstance(value, dict):
        return {k: walk(v, patterns) for k, v in value.items()}
    if isinstance(value, list):
        return [walk(v, patterns) for v in value]
    return value


def main():
    try:
        data = json.loads(sys.stdin.read())
    except ValueError as err:
        sys.stderr.write(f"redact-secrets: input is not JSON ({err})\n")
        return 0
    if "tool_response" not in data:
        return 0
    response = data["tool_response"]
    masked = walk(response, TOKENS + extra_patterns())
    if masked != response:
        out = {"hookSpecificOutput": {"hookEventName": "PostToolUse", "updatedToolOutput": masked}}
        sys.stdout.write(json.dumps(out, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
