#!/usr/bin/env python3
"""An Agent SDK `query()` of one turn against rein and against the `claude` binary bundled in
the same SDK (issue 25), side by side in one run: wall time and the binary's peak RSS.

    cargo build --release
    pip install --target /tmp/sdk-bench claude-agent-sdk==0.2.189   # keeps the bundled claude
    PYTHONPATH=/tmp/sdk-bench python3 benches/agent_sdk.py [--quick]

Both binaries answer the same prompt from the same loopback Anthropic Messages server
(streamed, stdlib only; nothing leaves 127.0.0.1: the proxy variables point at it too), so the
model costs the same nothing for both: what is measured is the binary's start, the SDK
handshake, one model round trip and the exit. Each trial is a fresh python process that runs
one `query()` and reports the wall time of that call; the binary's peak RSS comes from separate
trials in which a posix_spawn wrapper starts the binary and reads its `ru_maxrss` (the SDK
forks python to start a child, and a forked python's pages would count as the child's). The floor is the same python process doing everything but
the query (interpreter start, SDK import). Prints a markdown table (docs/performance.md keeps a
copy).
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REIN = os.path.join(ROOT, "target", "release", "rein")
QUICK = "--quick" in sys.argv
TRIALS = 5 if QUICK else 15


class Messages(BaseHTTPRequestHandler):
    """One streamed reply, `hello`, to every request."""

    def log_message(self, *a):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        model = body.get("model", "claude-sonnet-4-5")
        if not body.get("stream"):
            data = json.dumps({"id": "msg_b", "type": "message", "role": "assistant", "model": model,
                               "content": [{"type": "text", "text": "hello"}], "stop_reason": "end_turn",
                               "usage": {"input_tokens": 10, "output_tokens": 2}}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        events = [
            ("message_start", {"type": "message_start", "message": {
                "id": "msg_b", "type": "message", "role": "assistant", "model": model, "content": [],
                "stop_reason": None, "usage": {"input_tokens": 10, "output_tokens": 1}}}),
            ("content_block_start", {"type": "content_block_start", "index": 0,
                                     "content_block": {"type": "text", "text": ""}}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                     "delta": {"type": "text_delta", "text": "hello"}}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn"},
                               "usage": {"output_tokens": 2}}),
            ("message_stop", {"type": "message_stop"}),
        ]
        data = "".join(f"event: {n}\ndata: {json.dumps(d)}\n\n" for n, d in events).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_CONNECT(self):
        self.send_response(403)
        self.end_headers()


TRIAL = r'''
import os, resource, sys, time
import anyio
from claude_agent_sdk import ClaudeAgentOptions, ResultMessage, query
cli, extra = sys.argv[1], sys.argv[2:]
async def main():
    if cli == "-":
        return None
    opts = ClaudeAgentOptions(cli_path=cli, cwd=os.getcwd(), model="claude-sonnet-4-5",
                              extra_args=dict(a.split("=", 1) for a in extra))
    result = None
    async for m in query(prompt="say hello", options=opts):
        if isinstance(m, ResultMessage):
            result = m
    return result
started = time.perf_counter()
r = anyio.run(main)
wall = time.perf_counter() - started
if cli != "-":
    assert r is not None and not r.is_error and r.result == "hello", r
print(wall, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
'''


# The binary's own peak RSS: this wrapper starts it with posix_spawn (no forked copy of a
# python whose pages would count) on the same stdin/stdout, waits for it and writes its
# ru_maxrss to RSS_FILE. Used for the RSS trials only; the wall trials run the binary directly.
WRAPPER = r'''#!PYTHON
import os, sys
pid = os.posix_spawn(sys.argv[1], sys.argv[1:], os.environ)
_, status, usage = os.wait4(pid, 0)
with open(os.environ["RSS_FILE"], "w") as f:
    f.write(str(usage.ru_maxrss))
sys.exit(os.waitstatus_to_exitcode(status))
'''


def peak_rss(cli, extra, env, cwd, tmp):
    wrapper = os.path.join(tmp, "measure-rss")
    with open(wrapper, "w") as f:
        f.write(WRAPPER.replace("PYTHON", sys.executable, 1))
    os.chmod(wrapper, 0o755)
    rss_file = os.path.join(tmp, "rss")
    # The wrapper takes the binary as its first argument: a one-line shim per binary.
    shim = os.path.join(tmp, "shim-" + os.path.basename(cli))
    with open(shim, "w") as f:
        f.write(f"#!/bin/sh\nexec {wrapper} {cli} \"$@\"\n")
    os.chmod(shim, 0o755)
    trial(shim, extra, dict(env, RSS_FILE=rss_file), cwd)
    return int(open(rss_file).read())


def trial(cli, extra, env, cwd):
    proc_start = __import__("time").perf_counter()
    out = subprocess.run([sys.executable, "-c", TRIAL, cli, *extra], env=env, cwd=cwd,
                         capture_output=True, text=True, timeout=120)
    total = __import__("time").perf_counter() - proc_start
    if out.returncode != 0:
        raise SystemExit(f"{cli}: {out.stderr[-2000:]}")
    wall, rss = out.stdout.split()
    return float(wall), int(rss), total


def main():
    import claude_agent_sdk
    sdk_dir = os.path.dirname(claude_agent_sdk.__file__)
    claude = os.path.join(sdk_dir, "_bundled", "claude")
    if not os.path.exists(claude):
        raise SystemExit(f"no bundled claude at {claude}: install the wheel with pip --target, unmodified")
    claude_version = open(os.path.join(sdk_dir, "_bundled", "claude.version")).read().strip()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Messages)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    tmp = tempfile.mkdtemp(prefix="sdk-bench-")
    home = os.path.join(tmp, "home")
    project = os.path.join(tmp, "project")
    os.makedirs(home)
    os.makedirs(project)
    env = {
        "PATH": os.environ["PATH"], "HOME": home, "PYTHONPATH": os.environ.get("PYTHONPATH", ""),
        "ANTHROPIC_BASE_URL": base, "ANTHROPIC_API_KEY": "sk-bench",
        "HTTP_PROXY": base, "HTTPS_PROXY": base, "NO_PROXY": "127.0.0.1",
        "DISABLE_TELEMETRY": "1", "DISABLE_ERROR_REPORTING": "1", "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "LANG": "C.UTF-8",
    }
    contenders = [
        ("floor (python + SDK import, no query)", "-", []),
        ("rein (release)", REIN, ["provider=anthropic"]),
        (f"claude {claude_version} (bundled in the SDK)", claude, []),
    ]
    rows = {}
    rss = {}
    # Interleaved, one trial of each per round, so drift hits all alike; one warm-up round.
    for round_ in range(TRIALS + 1):
        for name, cli, extra in contenders:
            t = trial(cli, extra, env, project)
            if round_ > 0:
                rows.setdefault(name, []).append(t)
                if cli != "-":
                    rss.setdefault(name, []).append(peak_rss(cli, extra, env, project, tmp))
    python = subprocess.run([sys.executable, "-c", "import sys; print(sys.version.split()[0])"],
                            capture_output=True, text=True).stdout.strip()
    print(f"SDK claude-agent-sdk {claude_agent_sdk.__version__}, python {python} ({sys.executable}), "
          f"{TRIALS} trials each, medians; load {os.getloadavg()[0]:.1f}, {os.cpu_count()} cores\n")
    print("| binary | query() wall | × rein | process wall (python start to exit) | peak RSS of the binary |")
    print("|---|---|---|---|---|")
    rein_wall = statistics.median(w for w, _, _ in rows["rein (release)"])
    for name, _, _ in contenders:
        ts = rows[name]
        wall = statistics.median(w for w, _, _ in ts)
        total = statistics.median(t for _, _, t in ts)
        ratio = "—" if name.startswith("floor") else f"{wall / rein_wall:.1f}×"
        rss_text = "—" if name.startswith("floor") else f"{statistics.median(rss[name]) / 1024:.1f} MiB"
        print(f"| {name} | {wall * 1000:.0f} ms | {ratio} | {total * 1000:.0f} ms | {rss_text} |")


CALLBACKS = r'''
import json, os, sys, time
import anyio
from claude_agent_sdk import ClaudeAgentOptions, HookMatcher, ResultMessage, query
rein, mode, calls, script = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
async def noop(inp, tool_use_id, ctx):
    return {}
async def main():
    hooks = {"PreToolUse": [HookMatcher(matcher="Bash", hooks=[noop])]} if mode == "callback" else None
    settings = None
    if mode == "command":
        settings = json.dumps({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": "true"}]}]}})
    opts = ClaudeAgentOptions(cli_path=rein, cwd=os.getcwd(), permission_mode="bypassPermissions",
                              hooks=hooks, settings=settings, extra_args={"mock-script": script})
    async for m in query(prompt="go", options=opts):
        if isinstance(m, ResultMessage):
            assert not m.is_error, m
started = time.perf_counter()
anyio.run(main)
print(time.perf_counter() - started)
'''


def callbacks():
    """What a PreToolUse hook costs per tool call under the SDK: a callback in the SDK program
    against a settings command hook (`true`) against none, on a 20-call session of rein's mock
    model (each call `true` in Bash)."""
    calls = 20
    tmp = tempfile.mkdtemp(prefix="sdk-cb-")
    script = os.path.join(tmp, "turns.json")
    with open(script, "w") as f:
        json.dump([{"tool_use": [{"name": "Bash", "input": {"command": "true"}}]}] * calls
                  + [{"text": "done"}], f)
    env = dict(os.environ, HOME=tmp, IS_SANDBOX="1")
    for key in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY"):
        env.pop(key, None)
    rows = {}
    for round_ in range(TRIALS + 1):
        for mode in ("none", "command", "callback"):
            out = subprocess.run([sys.executable, "-c", CALLBACKS, REIN, mode, str(calls), script],
                                 env=env, cwd=tmp, capture_output=True, text=True, timeout=120)
            if out.returncode != 0:
                raise SystemExit(out.stderr[-2000:])
            if round_ > 0:
                rows.setdefault(mode, []).append(float(out.stdout))
    base = statistics.median(rows["none"])
    print(f"\n{calls} Bash calls in one query(), {TRIALS} rounds, medians of the query() wall time\n")
    print("| PreToolUse hook | session | per call over no hook |")
    print("|---|---|---|")
    for mode, label in (("none", "none"), ("command", "settings command hook `true`"),
                        ("callback", "SDK callback (python, returns {})")):
        t = statistics.median(rows[mode])
        extra = "—" if mode == "none" else f"{(t - base) / calls * 1000:.2f} ms"
        print(f"| {label} | {t * 1000:.0f} ms | {extra} |")


if __name__ == "__main__":
    main()
    callbacks()
