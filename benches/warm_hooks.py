#!/usr/bin/env python3
"""Warm hooks benchmark (issue 26): what a python or node hook costs per call, warm and cold.

    cargo build --release && python3 benches/warm_hooks.py [--quick]

For each interpreter (the real binary, not a pyenv shim): the floor (the hook script spawned bare
from this harness with its stdin), and a 20-call `rein -p` session whose Bash calls each take
`sleep 0.15` (room for the next spare to start), with no hook, with one PreToolUse and one
PostToolUse hook run cold (`REIN_WARM_HOOKS=0`), and the same run warm. Per-call hook cost =
(session - session without hooks) / hook runs. Variants run round-robin. Also the resident size
of a waiting warm interpreter.
"""

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from hookbench import NODE_HOOK, PY_HOOK, REIN, real, sandbox_env, session, warm_share
from hookbench import floor as floor_n

QUICK = "--quick" in sys.argv
CALLS = 20
ROUNDS = 3 if QUICK else 8

def sandbox(interp, script_name, body, hooks):
    root = tempfile.mkdtemp(prefix="rein-warm-bench-")
    project = os.path.join(root, "proj")
    os.makedirs(os.path.join(project, ".claude"))
    os.makedirs(os.path.join(root, "home"))
    with open(os.path.join(project, script_name), "w") as f:
        f.write(body)
    command = f"{interp} $CLAUDE_PROJECT_DIR/{script_name}"
    settings = {"permissions": {"allow": ["Bash"]}}
    if hooks:
        settings["hooks"] = {
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": command}]}],
            "PostToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": command + " "}]}],
        }
    with open(os.path.join(project, ".claude", "settings.json"), "w") as f:
        json.dump(settings, f)
    steps = [{"tool_use": [{"name": "Bash", "input": {"command": "sleep 0.15"}}]} for _ in range(CALLS)]
    steps.append({"text": "done"})
    with open(os.path.join(project, "mock.json"), "w") as f:
        json.dump(steps, f)
    return root, project, sandbox_env(root)


def floor(interp, path, stdin):
    return floor_n(interp, path, stdin, 10 * ROUNDS)


def rss_of_waiting(project, env, script_name):
    """Starts a session that waits in a long Bash call and reads a spare's VmRSS."""
    with open(os.path.join(project, "mock-wait.json"), "w") as f:
        json.dump([{"tool_use": [{"name": "Bash", "input": {"command": "sleep 3"}}]}, {"text": "done"}], f)
    proc = subprocess.Popen([REIN, "-p", "go", "--trust", "--mock-script", "mock-wait.json"], cwd=project,
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1.5)
    rss = []
    for pid in subprocess.run(["pgrep", "-f", script_name], capture_output=True, text=True).stdout.split():
        try:
            with open(f"/proc/{pid}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        rss.append(int(line.split()[1]) / 1024)
        except OSError:
            pass
    proc.wait()
    return rss


def bench(name, interp, script_name, body):
    stdin = json.dumps({"session_id": "x", "hook_event_name": "PreToolUse", "tool_name": "Bash",
                        "tool_input": {"command": "sleep 0.15"}}).encode()
    bare_root, bare_project, bare_env = sandbox(interp, script_name, body, hooks=False)
    hook_root, hook_project, hook_env = sandbox(interp, script_name, body, hooks=True)
    cold_env = dict(hook_env, REIN_WARM_HOOKS="0")
    variants = {"no hooks": (bare_project, bare_env), "cold": (hook_project, cold_env),
                "warm": (hook_project, hook_env)}
    times = {k: [] for k in variants}
    warm_runs = [0, 0]
    names = list(variants)
    for r in range(ROUNDS):
        for k in names[r % 3:] + names[:r % 3]:
            project, env = variants[k]
            times[k].append(session(project, env))
            if k != "no hooks":
                w, n = warm_share(variants[k][1])
                if k == "warm":
                    warm_runs[0] += w
                    warm_runs[1] += n
    fl = floor(interp, os.path.join(hook_project, script_name), stdin)
    base = statistics.median(times["no hooks"])
    runs = CALLS * 2
    print(f"### {name}: `{interp}`\n")
    print(f"Floor (the script spawned bare from Python, with its stdin): **{fl * 1e3:.2f} ms** median.\n")
    print("| variant | session median | per hook run | / floor |")
    print("|---|---|---|---|")
    print(f"| no hooks | {base * 1e3:.0f} ms | — | — |")
    for k in ("cold", "warm"):
        t = statistics.median(times[k])
        per = (t - base) / runs
        print(f"| 1+1 hooks, {k} | {t * 1e3:.0f} ms | {per * 1e3:.2f} ms | {per / fl:.2f}× |")
    print(f"\nWarm runs: {warm_runs[0]} of {warm_runs[1]} in the warm sessions.")
    rss = rss_of_waiting(hook_project, hook_env, script_name)
    if rss:
        print(f"Waiting warm interpreters: {len(rss)}, VmRSS {', '.join(f'{x:.1f}' for x in rss)} MiB.\n")
    for root in (bare_root, hook_root):
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    if not os.path.exists(REIN):
        raise SystemExit("build first: cargo build --release")
    print(f"nproc {os.cpu_count()}; load {os.getloadavg()[0]:.2f}; "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}\n")
    bench("python", real("python3", "import sys; print(sys.executable)"), "hook.py", PY_HOOK)
    bench("node", real("node", "console.log(process.execPath)"), "hook.js", NODE_HOOK)
