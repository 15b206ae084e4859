# rein's start hook for warm python hooks (see src/hooks/warm.rs). Imported by site.py because
# rein put this directory first on PYTHONPATH.
#
# Before any call: imports what it needs (and `json`, which most hooks import), tells rein it is
# ready, and serves: fd 0 is a Unix packet socket from rein, and each packet is one call's go
# message with the call's three pipes attached. Ahead of each call the server forks a leader,
# which plays the cold run's `/bin/sh -c`: it leads a session of its own, forks the call's
# process into it and exits at once. The call's process (the server, a child subreaper, is
# its parent then) takes the call off the socket, tells rein its pid and group, and runs the
# call; the server reaps it and reports its status, and forks the next leader as the call
# begins. The call's process puts the pipes on fds 0, 1 and 2 and makes the environment, cwd
# and sys.path those of the call, takes every trace of the server out, and runs, in order, what a cold start runs after this point: the user's own sitecustomize and
# usercustomize, then the script as the interpreter's main: `sys.path[0]` the script's real
# directory, a `__main__` with `__file__` (absolute), `__cached__` None and a SourceFileLoader,
# the source compiled under its name, an uncaught exception printed by `sys.excepthook` from
# the script's own frame, `SystemExit` turned into the exit status as the interpreter does,
# then the interpreter's exit: non-daemon threads joined, atexit handlers, stdout and stderr
# flushed (120 if that fails), and the process ends with the status. What it skips is the
# interpreter's teardown of its modules (~5 ms), which nothing a hook does can observe except
# through `__del__` methods that print while the interpreter is going away.
#
# A script path that is not a regular file (missing, a directory, a zip) is left to the
# interpreter, which then reports or runs it as it always does.


def _rein_serve(os, sys, json, importlib):
    """Serves calls until rein is gone; returns (in a call's process only) that call's go."""
    before = set(sys.modules)
    import _signal
    import _socket
    import select
    import ctypes

    # Each call's process is forked by a leader that exits at once (see below): the server is
    # made their subreaper, so it reaps them and reports their status.
    if ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) != 0:  # PR_SET_CHILD_SUBREAPER
        os._exit(0)
    del ctypes
    os.write(2, b"\0rein-warm-ready\n")
    sock = _socket.socket(fileno=0)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_r, False)
    os.set_blocking(wake_w, False)
    # The server's own channel: leaders say which waiter they made (W <leader> <waiter>),
    # waiters that a call came (T <pid> <call>, with the call's stderr attached).
    ctl_r, ctl_w = _socket.socketpair(_socket.AF_UNIX, _socket.SOCK_SEQPACKET)
    ctl_r.setblocking(False)
    _signal.signal(_signal.SIGCHLD, lambda signum, frame: None)
    _signal.set_wakeup_fd(wake_w)
    GONE = 77

    def send(text):
        try:
            sock.send(text.encode())
        except OSError:
            # rein is gone: the call's run is over for it too.
            os._exit(0)

    def fds_of(ancillary):
        fds = []
        for level, kind, payload in ancillary:
            if level == _socket.SOL_SOCKET and kind == _socket.SCM_RIGHTS:
                usable = len(payload) - len(payload) % 4
                fds += [
                    int.from_bytes(payload[i : i + 4], sys.byteorder, signed=True)
                    for i in range(0, usable, 4)
                ]
        return fds

    def rehearse():
        # What the call does first, done once before it comes: the pages it touches are this
        # process's own by then (copy-on-write), which takes ~0.3 ms off the call. Side-effect
        # free (it imports nothing); the call does each of these again for real.
        try:
            for name in ("sitecustomize", "usercustomize"):
                importlib.machinery.PathFinder.find_spec(name, sys.path)
            if sys.argv and sys.argv[0]:
                os.path.realpath(sys.argv[0])
                os.path.abspath(sys.argv[0])
            compile(b"import json\n", "<rein>", "exec", dont_inherit=True)
            json.loads('{"a": [1, "b", {"c": null}]}')
        except Exception:
            pass

    def waiter():
        """The call's process, forked ahead: it waits for one call on rein's socket, says its
        pid and group to rein, hands its stderr to the server (for the words a shell writes
        when a signal ends its child), and becomes the call."""
        ctl_r.close()
        rehearse()
        try:
            data, ancillary, _flags, _addr = sock.recvmsg(1 << 20, _socket.CMSG_SPACE(3 * 4))
        except OSError:
            data, ancillary = b"", []
        if not data:
            # rein is gone: the server ends too (it tells this status from a killed waiter's).
            os._exit(GONE)
        fds = fds_of(ancillary)
        go = json.loads(data)
        if len(fds) != 3:
            send("E %d" % go["id"])
            os._exit(0)
        # Before anything of the call runs: a call rein has no pid for never started, so rein
        # may run it cold when this process dies first.
        send("P %d %d %d" % (go["id"], os.getpid(), os.getpgid(0)))
        try:
            ctl_w.sendmsg(
                [b"T %d %d" % (os.getpid(), go["id"])],
                [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, fds[2].to_bytes(4, sys.byteorder, signed=True))],
            )
        except OSError:
            pass
        ctl_w.close()
        _signal.signal(_signal.SIGINT, _signal.default_int_handler)
        sock.detach()
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        for fd in fds:
            if fd > 2:
                os.close(fd)
        for name in set(sys.modules) - before:
            del sys.modules[name]
        return go

    def leader():
        """Plays the cold run's `/bin/sh -c`: leads a session and a group of its own (the
        group rein kills), forks the call's process into them, tells the server which, and
        exits: the call's process then runs, as a script under a shell does, in a session and
        group it does not lead."""
        _signal.set_wakeup_fd(-1)
        _signal.signal(_signal.SIGCHLD, _signal.SIG_DFL)
        _signal.signal(_signal.SIGINT, _signal.SIG_DFL)
        os.close(wake_r)
        os.close(wake_w)
        # The stderr of calls still running is the server's to keep, not the next call's.
        for _call, stderr in calls.values():
            if stderr is not None:
                os.close(stderr)
        os.setsid()
        pid = os.fork()
        if pid == 0:
            return waiter()
        try:
            ctl_w.send(b"W %d %d" % (os.getpid(), pid))
        except OSError:
            pass
        os._exit(0)

    def fork_leader():
        pid = os.fork()
        if pid == 0:
            try:
                return leader()
            except BaseException:
                # Never the script: a waiter that fails before its call ends.
                os._exit(1)
        coming.add(pid)
        return None

    def signal_words(status, stderr):
        """The exit code a shell reports for a child's wait status, with its words on the
        call's stderr when a signal other than SIGINT or SIGPIPE ended it."""
        if not os.WIFSIGNALED(status):
            return os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1
        signum = os.WTERMSIG(status)
        if signum not in (_signal.SIGINT, _signal.SIGPIPE) and stderr is not None:
            text = _signal.strsignal(signum) or "Signal %d" % signum
            if os.WCOREDUMP(status):
                text += " (core dumped)"
            try:
                os.write(stderr, (text + "\n").encode())
            except OSError:
                pass
        return 128 + signum

    coming = set()  # leaders whose waiter is not known yet
    leaders = set()  # leaders that said which waiter they made
    waiters = set()  # waiters with no call yet
    calls = {}  # waiter pid -> (call id, its stderr)
    go = fork_leader()
    if go is not None:
        return go
    strikes = 0

    def read_ctl():
        while True:
            try:
                data, ancillary, _flags, _addr = ctl_r.recvmsg(256, _socket.CMSG_SPACE(4))
            except (BlockingIOError, InterruptedError):
                return
            words = data.split()
            fds = fds_of(ancillary)
            if len(words) == 3 and words[0] == b"W":
                leader_pid, waiter_pid = int(words[1]), int(words[2])
                coming.discard(leader_pid)
                leaders.add(leader_pid)
                # A waiter may take its call before its leader's word comes.
                if waiter_pid not in calls:
                    waiters.add(waiter_pid)
            elif len(words) == 3 and words[0] == b"T":
                pid = int(words[1])
                waiters.discard(pid)
                calls[pid] = (int(words[2]), fds[0] if fds else None)
                fds = fds[1:]
            for fd in fds:
                os.close(fd)

    while True:
        try:
            select.select([ctl_r, wake_r], [], [])
        except InterruptedError:
            pass
        try:
            os.read(wake_r, 4096)
        except BlockingIOError:
            pass
        read_ctl()
        reaped = []
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            reaped.append((pid, status))
        # A waiter says T before its call can end: whatever it said is read before its end is
        # looked at.
        if reaped:
            read_ctl()
        lost = 0
        for pid, status in reaped:
            if pid in calls:
                call, stderr = calls.pop(pid)
                code = signal_words(status, stderr)
                if stderr is not None:
                    os.close(stderr)
                send("X %d %d" % (call, code << 8))
                strikes = 0
            elif pid in leaders:
                leaders.discard(pid)
            elif pid in coming:
                # A leader that ended before it made its waiter.
                coming.discard(pid)
                lost += 1
                strikes += 1
            elif pid in waiters:
                waiters.discard(pid)
                if os.WIFEXITED(status) and os.WEXITSTATUS(status) == GONE:
                    os._exit(0)
                # A waiter that ended without a call (killed): another takes its place, up to
                # three in a row; then the server ends and rein runs the hook cold.
                lost += 1
                strikes += 1
            # Anything else is a process a call left behind, reparented here: reaped, no more.
        if strikes >= 3:
            os._exit(0)
        # One waiter at a time: the next call needs one; the next comes as a call takes it.
        if not waiters and not coming:
            go = fork_leader()
            if go is not None:
                return go


def _rein_warm_start():
    import atexit
    import builtins
    import importlib.machinery
    import importlib.util
    import json
    import os
    import sys

    go = _rein_serve(os, sys, json, importlib)
    for name in go["unset"]:
        os.environ.pop(name, None)
    for name, value in go["set"].items():
        os.environ[name] = value
    os.chdir(go["cwd"])
    here = go["dir"]
    sys.path[:] = [p for p in sys.path if p != here]

    def run_customize(name):
        spec = importlib.machinery.PathFinder.find_spec(name, sys.path)
        if spec is None:
            return False
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except Exception as exc:
            del sys.modules[name]
            # site.py's words for a customize module that fails.
            if sys.flags.verbose:
                sys.excepthook(*sys.exc_info())
            else:
                sys.stderr.write(
                    "Error in %s; set PYTHONVERBOSE for traceback:\n%s: %s\n"
                    % (name, exc.__class__.__name__, exc)
                )
        return True

    found = run_customize("sitecustomize")
    script = sys.argv[0] if sys.argv else ""
    if not os.path.isfile(script) or sys.flags.inspect:
        # The interpreter takes it from here (and imports usercustomize itself).
        return found
    if not found:
        # No sitecustomize of the user's: as after a cold start, there is none loaded (this
        # import never returns, so nothing looks for this module again).
        sys.modules.pop("sitecustomize", None)
    import site

    if site.ENABLE_USER_SITE:
        run_customize("usercustomize")
    if not (sys.flags.safe_path if hasattr(sys.flags, "safe_path") else False):
        sys.path.insert(0, os.path.dirname(os.path.realpath(script)))
    filename = os.path.abspath(script)
    main = type(sys)("__main__")
    main.__dict__.update(
        __file__=filename,
        __cached__=None,
        __loader__=importlib.machinery.SourceFileLoader("__main__", filename),
        __spec__=None,
        __builtins__=builtins,
    )
    sys.modules["__main__"] = main
    status = 0
    try:
        with open(filename, "rb") as f:
            source = f.read()
        code = compile(source, filename, "exec", dont_inherit=True)
        del source
        exec(code, main.__dict__)
    except SystemExit as exc:
        status = exit_status(exc, sys)
    except BaseException as exc:
        tb = exc.__traceback__
        # Drop this file's own frames, as the interpreter's main has none.
        while tb is not None and tb.tb_frame.f_code.co_filename == __file__:
            tb = tb.tb_next
        exc.__traceback__ = tb
        sys.last_type, sys.last_value, sys.last_traceback = type(exc), exc, tb
        try:
            sys.excepthook(type(exc), exc, tb)
        except BaseException:
            pass
        status = 1
        if isinstance(exc, KeyboardInterrupt):
            status = "SIGINT"
    # The interpreter's exit, without its teardown.
    try:
        if "threading" in sys.modules:
            sys.modules["threading"]._shutdown()
        atexit._run_exitfuncs()
    except SystemExit as exc:
        status = exit_status(exc, sys)
    flushed_ok = True
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except Exception:
            flushed_ok = False
    if not flushed_ok and status == 0:
        status = 120
    if status == "SIGINT":
        import signal

        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
        status = 130
    os._exit(status & 0xFF if isinstance(status, int) else 1)


def exit_status(exc, sys):
    """The exit status of an uncaught SystemExit, as the interpreter computes it."""
    code = exc.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    try:
        sys.stderr.write(str(code) + "\n")
        sys.stderr.flush()
    except Exception:
        pass
    return 1


if not _rein_warm_start():
    del _rein_warm_start, _rein_serve, exit_status
    raise ImportError("No module named 'sitecustomize'", name="sitecustomize")
del _rein_warm_start, _rein_serve, exit_status
