# rein's start hook for warm python hooks (see src/hooks/warm.rs). Imported by site.py because
# rein put this directory first on PYTHONPATH. It waits on stdin for rein's go message, makes
# the environment, cwd and sys.path those of the call, and takes itself out: the user's own
# sitecustomize, if there is one further along sys.path, is run in its place; if there is none,
# the import fails as it would have without rein (site.py ignores that). The interpreter then
# runs the script as usual. `json` is imported before the wait: most hooks import it, and it
# costs ~1 ms.
def _rein_warm_start():
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
    import importlib.machinery
    import importlib.util

    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", sys.path)
    if spec is None:
        return False
    module = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = module
    spec.loader.exec_module(module)
    return True


if not _rein_warm_start():
    del _rein_warm_start
    raise ImportError("No module named 'sitecustomize'", name="sitecustomize")
del _rein_warm_start
