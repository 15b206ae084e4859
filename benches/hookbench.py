"""What the warm-hook benchmarks share (benches/warm_hooks.py, benches/session_hooks.py): the
hook scripts, the real interpreter behind a name, one `rein -p` session, the run log's warm
share, and the floor (the script spawned bare with its stdin)."""

import json
import os
import shutil
import statistics
import subprocess
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REIN = os.environ.get("REIN_BIN") or os.path.join(ROOT, "target", "release", "rein")

PY_HOOK = """import json, sys
d = json.load(sys.stdin)
if "rm -rf" in d.get("tool_input", {}).get("command", ""):
    print("no", file=sys.stderr)
    sys.exit(2)
"""
NODE_HOOK = """const d = JSON.parse(require('fs').readFileSync(0));
if ((d.tool_input.command || '').includes('rm -rf')) { console.error('no'); process.exit(2); }
"""


def real(cmd, code):
    """The interpreter binary `cmd` stands for (not a pyenv shim)."""
    return subprocess.run([cmd, "-e" if cmd == "node" else "-c", code], capture_output=True,
                          text=True).stdout.strip()


def sandbox_env(root):
    """rein's environment for a sandbox under `root`: its own home, nothing of the caller's."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("REIN_", "CLAUDE_", "OTEL_"))}
    env.update({"HOME": os.path.join(root, "home"), "REIN_HOME": os.path.join(root, "home", ".rein"),
                "REIN_MANAGED_SETTINGS_DIR": os.path.join(root, "none")})
    return env


def session(project, env):
    """Wall time of one `rein -p` session on the project's mock.json."""
    start = time.perf_counter()
    subprocess.run([REIN, "-p", "go", "--trust", "--mock-script", "mock.json"], cwd=project, env=env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def warm_share(env):
    """(warm runs, runs) in the run logs of the sessions since the last call; clears them."""
    logs = os.path.join(env["REIN_HOME"], "logs")
    runs = []
    if os.path.isdir(logs):
        for name in os.listdir(logs):
            with open(os.path.join(logs, name)) as f:
                runs += [json.loads(line) for line in f]
        shutil.rmtree(logs)
    return sum(1 for r in runs if r["warm"]), len(runs)


def floor(interp, path, stdin, n):
    """Median wall time of the script spawned bare with its stdin, n times."""
    times = []
    for _ in range(n):
        s = time.perf_counter()
        subprocess.run([interp, path], input=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - s)
    return statistics.median(times)
