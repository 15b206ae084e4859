#!/usr/bin/env python3
"""Warm hooks in a session with calls back to back (issue 33).

    cargo build --release && python3 benches/session_hooks.py [--quick]

A `rein -p` session (mock model) of N Bash calls that follow each other with no pause
(`true`), with H python or node hooks on PreToolUse and H on PostToolUse (H distinct scripts
that read their JSON input), run three ways, interleaved round-robin: no hooks, the hooks cold
(`REIN_WARM_HOOKS=0`) and warm. Per hook run = (session - session without hooks) / (2·N·H).
The floor is the same script spawned bare by this harness with its stdin (the real
interpreter binary, not a pyenv shim). Also the resident memory of each waiting interpreter.
"""

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from hookbench import NODE_HOOK, PY_HOOK, REIN, floor, real, sandbox_env, session, warm_share

QUICK = "--quick" in sys.argv
# The model takes 0.5 s to give its first answer (the mock's `delay_ms`), as a real model always
# does before the first call: the interpreters start meanwhile. The calls after it still
# follow each other with no pause.
LEAD_IN = "--lead-in" in sys.argv

def sandbox(interp, ext, body, calls, per_event):
    root = tempfile.mkdtemp(prefix="rein-session-bench-")
    project = os.path.join(root, "proj")
    os.makedirs(os.path.join(project, ".claude"))
    os.makedirs(os.path.join(root, "home"))
    handlers = []
    for i in range(per_event):
        name = f"hook{i}.{ext}"
        with open(os.path.join(project, name), "w") as f:
            f.write(body)
        handlers.append({"type": "command", "command": f"{interp} $CLAUDE_PROJECT_DIR/{name}"})
    settings = {"permissions": {"allow": ["Bash"]}}
    if handlers:
        settings["hooks"] = {ev: [{"matcher": "Bash", "hooks": handlers}]
                             for ev in ("PreToolUse", "PostToolUse")}
    with open(os.path.join(project, ".claude", "settings.json"), "w") as f:
        json.dump(settings, f)
    steps = [{"tool_use": [{"name": "Bash", "input": {"command": "true"}}]} for _ in range(calls)]
    if LEAD_IN and steps:
        steps[0]["delay_ms"] = 500
    steps.append({"text": "done"})
    with open(os.path.join(project, "mock.json"), "w") as f:
        json.dump(steps, f)
    return root, project, sandbox_env(root)


def waiting_cost(interp, ext, body, per_event):
    """What `rein hooks warm` reports for per_event hook scripts."""
    root, project, env = sandbox(interp, ext, body, 0, per_event)
    out = subprocess.run([REIN, "hooks", "warm", "--json"], cwd=project, env=env, capture_output=True,
                         text=True, check=True).stdout
    shutil.rmtree(root, ignore_errors=True)
    return json.loads(out)


def bench(name, interp, ext, body, cases, rounds):
    stdin = json.dumps({"session_id": "x", "hook_event_name": "PreToolUse", "tool_name": "Bash",
                        "tool_input": {"command": "true"}}).encode()
    print(f"### {name}: `{interp}`\n")
    rows = []
    fl = None
    for calls, per_event in cases:
        roots = []
        variants = {}
        r0, p0, e0 = sandbox(interp, ext, body, calls, 0)
        r1, p1, e1 = sandbox(interp, ext, body, calls, per_event)
        roots += [r0, r1]
        variants = {"no hooks": (p0, e0), "cold": (p1, dict(e1, REIN_WARM_HOOKS="0")), "warm": (p1, e1)}
        session(p0, e0)
        session(p1, e1)
        warm_share(e1)
        times = {k: [] for k in variants}
        warm = [0, 0]
        names = list(variants)
        for r in range(rounds):
            for k in names[r % 3:] + names[:r % 3]:
                project, env = variants[k]
                times[k].append(session(project, env))
                w, n = warm_share(env)
                if k == "warm":
                    warm[0] += w
                    warm[1] += n
        if fl is None:
            fl = floor(interp, os.path.join(p1, f"hook0.{ext}"), stdin, 30)
        base = statistics.median(times["no hooks"])
        runs = 2 * calls * per_event
        for k in ("cold", "warm"):
            t = statistics.median(times[k])
            per = (t - base) / runs
            rows.append((calls, per_event, k, base, t, per, per / fl,
                         f"{warm[0]} of {warm[1]}" if k == "warm" else "—"))
        for root in roots:
            shutil.rmtree(root, ignore_errors=True)
    print(f"Floor (the script spawned bare from Python, with its stdin): **{fl * 1e3:.2f} ms** median.\n")
    print("| calls | hooks per event | variant | no hooks | session | per hook run | / floor | warm runs |")
    print("|---|---|---|---|---|---|---|---|")
    for calls, per_event, k, base, t, per, ratio, w in rows:
        print(f"| {calls} | {per_event} | {k} | {base * 1e3:.0f} ms | {t * 1e3:.0f} ms | "
              f"{per * 1e3:.2f} ms | {ratio:.3f}× | {w} |")
    cost = waiting_cost(interp, ext, body, 4)
    per = ", ".join(f"{w['pss_kib'] / 1024:.1f} MiB ({w['processes']} processes)" for w in cost["waiting"])
    print(f"\nWaiting with 4 hook scripts (`rein hooks warm`, proportional set size): {per}; "
          f"total {cost['pss_kib_total'] / 1024:.1f} MiB.\n")


if __name__ == "__main__":
    if not os.path.exists(REIN):
        raise SystemExit("build first: cargo build --release")
    print(f"nproc {os.cpu_count()}; load {os.getloadavg()[0]:.2f}; lead-in {LEAD_IN}; "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}\n")
    cases = [(20, 1), (20, 4)] if QUICK else [(20, 1), (20, 4), (200, 1), (200, 4)]
    rounds = 2 if QUICK else 3
    which = [a for a in sys.argv[1:] if not a.startswith("--")] or ["python", "node"]
    if "python" in which:
        bench("python", real("python3", "import sys; print(sys.executable)"), "py", PY_HOOK, cases, rounds)
    if "node" in which:
        bench("node", real("node", "console.log(process.execPath)"), "js", NODE_HOOK, cases, rounds)
