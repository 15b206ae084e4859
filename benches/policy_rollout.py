#!/usr/bin/env python3
"""Policy rollout benchmarks (issue 27): replay throughput and memory, and what tracing costs.

    cargo build --release && python3 benches/policy_rollout.py [--quick]

Prints markdown tables (docs/performance.md keeps a copy). Every timing is a wall time of the
release binary run from here; read the ratios within a table. Needs the OTLP receiver's packages
(`opentelemetry-proto`, `protobuf`) importable, e.g. PYTHONPATH=<dir of a pip --target install>.
"""

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REIN = os.path.join(ROOT, "target", "release", "rein")
QUICK = "--quick" in sys.argv


def run(args, cwd, env, stdin=None):
    """Runs a command; returns (seconds, peak RSS KiB of that child, returncode)."""
    start = time.perf_counter()
    proc = subprocess.Popen(args, cwd=cwd, env=env, stdin=subprocess.DEVNULL if stdin is None else subprocess.PIPE,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if stdin is not None:
        proc.stdin.write(stdin)
        proc.stdin.close()
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode(errors="replace")
    if proc.returncode not in (0, 3):
        raise SystemExit(f"{args} failed ({proc.returncode}): {err}")
    return elapsed, usage.ru_maxrss, proc.returncode


def transcript(path, calls):
    with open(path, "w") as f:
        f.write(json.dumps({"type": "user", "sessionId": "bench", "cwd": "/",
                            "message": {"role": "user", "content": "go"}}) + "\n")
        for i in range(calls):
            tid = f"toolu_{i:024d}"
            f.write(json.dumps({"type": "assistant", "sessionId": "bench", "message": {
                "role": "assistant", "content": [{"type": "tool_use", "id": tid, "name": "Bash",
                                                  "input": {"command": f"echo {i}"}}]}}) + "\n")
            f.write(json.dumps({"type": "user", "sessionId": "bench", "message": {
                "role": "user", "content": [{"type": "tool_result", "tool_use_id": tid,
                                             "content": str(i), "is_error": False}]},
                "toolUseResult": {"stdout": str(i), "stderr": "", "interrupted": False}}) + "\n")
        f.write(json.dumps({"type": "assistant", "sessionId": "bench", "message": {
            "role": "assistant", "content": [{"type": "text", "text": "done"}]}}) + "\n")


def sandbox(hooks):
    root = tempfile.mkdtemp(prefix="rein-bench-")
    project = os.path.join(root, "proj")
    os.makedirs(os.path.join(project, ".claude"))
    os.makedirs(os.path.join(root, "home", ".claude"))
    with open(os.path.join(root, "home", ".claude", "settings.json"), "w") as f:
        json.dump({"permissions": {"allow": ["Bash"]}}, f)
    if hooks:
        with open(os.path.join(project, ".claude", "settings.json"), "w") as f:
            json.dump({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
                {"type": "command", "command": "cat >/dev/null"}]}]}}, f)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OTEL_", "CLAUDE_", "REIN_", "ANTHROPIC_", "OPENAI_"))}
    env.update({"HOME": os.path.join(root, "home"), "REIN_HOME": os.path.join(root, "home", ".rein"),
                "REIN_MANAGED_SETTINGS_DIR": os.path.join(root, "none")})
    return root, project, env


def replay_section():
    print("## Replay: `rein hooks replay --json` over a synthetic transcript\n")
    print("| transcript | hooks | calls | wall | calls/s | peak RSS |")
    print("|---|---|---|---|---|---|")
    sizes = [(10_000, False), (100_000, False), (1_000 if QUICK else 2_000, True)]
    for calls, hooks in sizes:
        root, project, env = sandbox(hooks)
        path = os.path.join(root, f"t{calls}.jsonl")
        transcript(path, calls)
        mb = os.path.getsize(path) / 1e6
        times, rss = [], 0
        for _ in range(1 if calls >= 100_000 or QUICK else 3):
            t, r, _ = run([REIN, "hooks", "replay", "--json", path], project, env)
            times.append(t)
            rss = max(rss, r)
        t = statistics.median(times)
        label = "1 sh hook (`cat >/dev/null`)" if hooks else "none"
        print(f"| {calls:,} calls, {mb:.1f} MB | {label} | {calls:,} | {t:.2f} s | {calls / t:,.0f} | {rss / 1024:.1f} MiB |")
    print()


def receiver(mode):
    script = os.path.join(ROOT, "tests", "it", "otlp_receiver.py")
    out = tempfile.mktemp(suffix=".jsonl")
    proc = subprocess.Popen([sys.executable, script, out, mode], stdout=subprocess.PIPE)
    port = int(proc.stdout.readline())
    return proc, f"http://127.0.0.1:{port}"


def session_section():
    calls = 20 if QUICK else 50
    rounds = 5 if QUICK else 15
    steps = [{"tool_use": [{"name": "Bash", "input": {"command": f"echo {i}"}}]} for i in range(calls)]
    steps.append({"text": "done"})
    live, live_url = receiver("ok")
    dead_port = 9
    variants = {
        "no hooks, tracing off": (False, {}),
        "1 hook per call, tracing off": (True, {}),
        "1 hook per call, tracing on (live receiver)": (True, {"CLAUDE_CODE_ENABLE_TELEMETRY": "1",
                                                               "OTEL_EXPORTER_OTLP_ENDPOINT": live_url}),
        "1 hook per call, tracing on (nothing listening)": (True, {"CLAUDE_CODE_ENABLE_TELEMETRY": "1",
                                                                   "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{dead_port}"}),
    }
    boxes = {}
    for name, (hooks, extra) in variants.items():
        root, project, env = sandbox(hooks)
        env.update(extra)
        with open(os.path.join(project, "mock.json"), "w") as f:
            json.dump(steps, f)
        boxes[name] = (project, env)
    results = {name: [] for name in variants}
    names = list(variants)
    for r in range(rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        for name in order:
            project, env = boxes[name]
            t, rss, _ = run([REIN, "-p", "go", "--mock-script", "mock.json"], project, env)
            results[name].append((t, rss))
    # The floor: the hook's command spawned bare, once per call, from this script.
    stdin = json.dumps({"session_id": "x", "tool_input": {"command": "echo 1"}}).encode()
    floor = []
    for _ in range(rounds * 10):
        s = time.perf_counter()
        subprocess.run(["/bin/sh", "-c", "cat >/dev/null"], input=stdin)
        floor.append(time.perf_counter() - s)
    live.kill()
    base = statistics.median(t for t, _ in results["no hooks, tracing off"])
    off = statistics.median(t for t, _ in results["1 hook per call, tracing off"])
    floor_ms = statistics.median(floor) * 1e3
    print(f"## Tracing: a {calls}-call `rein -p` session, {rounds} rounds round-robin\n")
    print(f"Floor: `/bin/sh -c 'cat >/dev/null'` spawned bare from Python: {floor_ms:.2f} ms median.\n")
    print("| variant | session median | per call over no-hooks | per-hook cost / floor | session / tracing off | peak RSS |")
    print("|---|---|---|---|---|---|")
    for name in names:
        t = statistics.median(x for x, _ in results[name])
        rss = max(r for _, r in results[name]) / 1024
        per_call = (t - base) / calls * 1e3
        ratio = per_call / floor_ms if "no hooks" not in name else float("nan")
        vs_off = t / off
        print(f"| {name} | {t * 1e3:.1f} ms | {per_call:+.2f} ms | {ratio:.2f}× | {vs_off:.3f}× | {rss:.1f} MiB |")
    print()


if __name__ == "__main__":
    if not os.path.exists(REIN):
        raise SystemExit("build first: cargo build --release")
    print(f"rein: {REIN}; python: {sys.executable}; nproc {os.cpu_count()}; "
          f"load {os.getloadavg()[0]:.2f}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}\n")
    replay_section()
    session_section()
