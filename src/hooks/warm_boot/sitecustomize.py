# rein's start hook for warm python hooks (see src/hooks/warm.rs). Imported by site.py because
# rein put this directory first on PYTHONPATH.
#
# Before the call: imports what it needs (and `json`, which most hooks import), tells rein it is
# ready, and waits on stdin for rein's go message. Then it makes the environment, cwd and
# sys.path those of the call, takes itself out, and runs, in order, what a cold start runs after
# this point: the user's own sitecustomize and usercustomize, then the script as the
# interpreter's main: `sys.path[0]` the script's real directory, a `__main__` with `__file__`
# (absolute), `__cached__` None and a SourceFileLoader, the source compiled under its name, an
# uncaught exception printed by `sys.excepthook` from the script's own frame, `SystemExit`
# turned into the exit status as the interpreter does, then the interpreter's exit: non-daemon
# threads joined, atexit handlers, stdout and stderr flushed (120 if that fails), and the
# process ends with the status. What it skips is the interpreter's teardown of its modules
# (~5 ms), which nothing a hook does can observe except through `__del__` methods that print
# while the interpreter is going away.
#
# A script path that is not a regular file (missing, a directory, a zip) is left to the
# interpreter, which then reports or runs it as it always does.
def _rein_warm_start():
    import atexit
    import builtins
    import importlib.machinery
    import importlib.util
    import json
    import os
    import sys

    def read_exact(n):
        chunks = []
        while n > 0:
            chunk = os.read(0, n)
            if not chunk:
                # rein is gone before the call: nothing ran, nothing will.
                os._exit(0)
            chunks.append(chunk)
            n -= len(chunk)
        return b"".join(chunks)

    os.write(2, b"\0rein-warm-ready\n")
    size = int(read_exact(8), 16)
    go = json.loads(read_exact(size))
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
    del _rein_warm_start, exit_status
    raise ImportError("No module named 'sitecustomize'", name="sitecustomize")
del _rein_warm_start, exit_status
