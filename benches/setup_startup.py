#!/usr/bin/env python3
"""Start-up of `rein -p` with a whole Claude Code setup present (issue 34): 5 plugins (each a
manifest, a hooks.json with one PreToolUse hook, 2 commands, a skill and an agent), 20 project
commands and 10 project skills, against the same run in an empty project and a floor
(`/bin/true` spawned the same way). Runs interleaved, the mock model answering "hi".

    python3 benches/setup_startup.py [path/to/rein] [runs]

The clock is this script's: fork to exit of the child (python's own start is not measured).
HOME points into a temp dir, so no user settings, commands or skills are read.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def loaded_project(root):
    proj = os.path.join(root, "loaded")
    plugin_args = []
    for i in range(5):
        plug = os.path.join(root, "plugins", "p%d" % i)
        write(os.path.join(plug, ".claude-plugin/plugin.json"), json.dumps({"name": "p%d" % i, "version": "1.0.0"}))
        write(os.path.join(plug, "hooks/hooks.json"), json.dumps({"hooks": {"PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/hooks/guard.sh"}]}]}}))
        write(os.path.join(plug, "hooks/guard.sh"), "#!/bin/sh\ncat >/dev/null\n")
        os.chmod(os.path.join(plug, "hooks/guard.sh"), 0o755)
        for c in range(2):
            write(os.path.join(plug, "commands/c%d.md" % c), "---\ndescription: plugin command %d\n---\nDo $ARGUMENTS\n" % c)
        write(os.path.join(plug, "skills/s/SKILL.md"), "---\nname: s\ndescription: plugin skill\n---\nBody\n")
        write(os.path.join(plug, "agents/a.md"), "---\nname: a\ndescription: plugin agent\n---\nYou are a.\n")
        plugin_args += ["--plugin-dir", plug]
    for c in range(20):
        write(os.path.join(proj, ".claude/commands/cmd%02d.md" % c),
              "---\ndescription: command %d\nallowed-tools: Bash(echo:*)\nargument-hint: [x]\n---\nRun $ARGUMENTS now.\n" % c)
    for s in range(10):
        write(os.path.join(proj, ".claude/skills/skill%02d/SKILL.md" % s),
              "---\nname: skill%02d\ndescription: skill %d\n---\nSteps for ${CLAUDE_SKILL_DIR}\n" % (s, s))
    return proj, plugin_args


def run(argv, cwd, env):
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    took = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit("%s failed: %s" % (argv[:3], done.stderr.decode()[-500:]))
    return took


def main():
    rein = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "target/release/rein")
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 50
    with tempfile.TemporaryDirectory() as root:
        home = os.path.join(root, "home")
        os.makedirs(home)
        empty = os.path.join(root, "empty")
        os.makedirs(empty)
        proj, plugin_args = loaded_project(root)
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home,
               "REIN_HOME": os.path.join(home, ".rein")}
        cases = {
            "floor: /bin/true": (["/bin/true"], empty),
            "rein -p hi, empty project": ([rein, "-p", "hi", "--trust"], empty),
            "rein -p hi, 5 plugins + 20 commands + 10 skills": (
                [rein, "-p", "hi", "--trust"] + plugin_args, proj),
        }
        times = {k: [] for k in cases}
        for _ in range(3):  # warm the page cache
            for argv, cwd in cases.values():
                run(argv, cwd, env)
        for _ in range(runs):
            for k, (argv, cwd) in cases.items():
                times[k].append(run(argv, cwd, env))
        print("| run | n | median | p90 |")
        print("|---|---|---|---|")
        med = {}
        for k, v in times.items():
            v.sort()
            med[k] = statistics.median(v)
            print("| %s | %d | %.2f ms | %.2f ms |" % (k, len(v), med[k] * 1e3, v[int(len(v) * 0.9) - 1] * 1e3))
        keys = list(cases)
        print()
        print("setup / empty: %.3fx; (setup - floor) / (empty - floor): %.3fx" % (
            med[keys[2]] / med[keys[1]],
            (med[keys[2]] - med[keys[0]]) / (med[keys[1]] - med[keys[0]])))


if __name__ == "__main__":
    main()
