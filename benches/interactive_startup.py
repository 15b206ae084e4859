#!/usr/bin/env python3
"""Start-up of an interactive rein session: time from fork to the first `>` prompt on a
pseudo-terminal, and the peak RSS of rein, against a floor (the same measurement of
`/bin/sh -c 'printf "> "; read x'`, a process that prints a prompt and waits).

    python3 benches/interactive_startup.py [path/to/rein] [runs]

The project is a temp dir with a CLAUDE.md and a SessionStart-less settings file; HOME and
REIN_HOME point into it, so no user settings or memory files are read. Python's own start is
not measured: the clock starts at fork. Peak RSS is rein's VmHWM 0.3 s after the prompt.
"""
import os
import pty
import resource
import select
import statistics
import sys
import tempfile
import time


def hwm_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def measure(argv, env, cwd, prompt=b"> ", rss=None):
    pid, fd = pty.fork()
    if pid == 0:
        os.chdir(cwd)
        os.execve(argv[0], argv, env)
    start = time.perf_counter()
    seen = b""
    first = None
    while first is None:
        r, _, _ = select.select([fd], [], [], 10)
        if not r:
            raise SystemExit("no prompt within 10 s: %r" % seen[-200:])
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            raise SystemExit("exited before the prompt: %r" % seen[-200:])
        seen += chunk
        if prompt in seen.replace(b"\x1b[1m", b"").replace(b"\x1b[0m", b""):
            first = time.perf_counter() - start
    if rss is not None:
        time.sleep(0.3)  # let start-up work that runs after the prompt settle
        rss.append(hwm_kib(pid))
    os.write(fd, b"\x04")  # Ctrl+D: exit
    deadline = time.time() + 10
    while time.time() < deadline:
        r, _, _ = select.select([fd], [], [], 0.2)
        if r:
            try:
                if not os.read(fd, 4096):
                    break
            except OSError:
                break
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
    else:
        os.kill(pid, 9)
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass
    os.close(fd)
    return first


def main():
    rein = sys.argv[1] if len(sys.argv) > 1 else "target/release/rein"
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    rein = os.path.abspath(rein)
    with tempfile.TemporaryDirectory() as root:
        project = os.path.join(root, "project")
        home = os.path.join(root, "home")
        os.makedirs(os.path.join(project, ".claude"))
        os.makedirs(home)
        with open(os.path.join(project, "CLAUDE.md"), "w") as f:
            f.write("Project rules: be brief.\n")
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home,
               "REIN_HOME": os.path.join(home, ".rein"), "TERM": "xterm", "LANG": "C.UTF-8"}
        floor_argv = ["/bin/sh", "-c", 'printf "> "; read x']
        rein_argv = [rein]
        measure(rein_argv, env, project)  # warm the page cache
        floor = [measure(floor_argv, env, project) for _ in range(runs)]
        times = [measure(rein_argv, env, project) for _ in range(runs)]
        # VmHWM of rein's own address space (reset at exec, so the forked Python is not in it).
        rss_list = []
        for _ in range(3):
            measure(rein_argv, env, project, rss=rss_list)
        rss = max(rss_list)
        f_med = statistics.median(floor) * 1000
        r_med = statistics.median(times) * 1000
        print("runs: %d" % runs)
        print("floor (sh prints a prompt): median %.2f ms" % f_med)
        print("rein to the first prompt:   median %.2f ms, p90 %.2f ms, ratio to floor %.1fx"
              % (r_med, sorted(times)[int(runs * 0.9) - 1] * 1000, r_med / f_med))
        print("rein peak RSS at the prompt (VmHWM, max of 3): %.1f MiB" % (rss / 1024))


if __name__ == "__main__":
    main()
