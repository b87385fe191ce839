"""Run the real CLI (analyzer/__main__.py, what `python -m analyzer` runs) in a fresh process per input, fast.

Starting Python and importing the analyzer costs ~0.13 s of CPU, more than most hostile inputs take to
refuse; with ~240 runs that would be most of the test budget. So the corpus uses a multiprocessing
*forkserver* that imports the analyzer once: each run is a new process forked from it, with its own
address-space limit, working directory, TMPDIR, HOME, and stdout/stderr files, and the same code path
as `python -m analyzer` (an uncaught exception prints a traceback and exits 1, as the interpreter would).
A test in test_hostile.py checks that a sample of rows gives the same result through `python -m analyzer`.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
import time
from multiprocessing.connection import wait
from pathlib import Path

# Not "__main__": a forkserver that preloads it re-runs the parent's main script. Under `python -m pytest`
# (CI) children skip the main module; under the `pytest` script each child imports pytest once more (slower).
# Everything `validate` and `analyze` import, lazily included (the JSON Schema engine, the CEL bindings, the output
# formats): a name that no longer imports would be skipped silently by the forkserver, so a test imports each.
PRELOAD = ["analyzer.cli", "analyzer.pipeline", "analyzer.report", "analyzer.report.json_format",
           "analyzer.report.table", "analyzer.report.words_format", "analyzer.progress", "analyzer.bundle.validation",
           "analyzer.targets", "analyzer.classify", "analyzer.model.dra.cel", "jsonschema_rs", "cel", "yaml", "tarfile"]

# Executed by `exec` in the forked child (a builtin target pickles by reference; no test module is imported there).
CHILD = r"""
import os, resource, sys, tempfile, traceback
resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))
resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
os.environ.pop("GPU_TRIAGE_DEBUG", None)
os.environ.update(ENV)
tempfile.tempdir = None
os.chdir(CWD)
for target, path in ((1, STDOUT), (2, STDERR)):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(fd, target)
    os.close(fd)
code = 0
sys.argv = ["gpu-triage", *ARGS]
try:
    import runpy
    runpy.run_module("analyzer", run_name="__main__", alter_sys=True)  # exactly what `python -m analyzer` runs
except SystemExit as exc:
    code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
except BaseException:
    traceback.print_exc()
    code = 1
finally:
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:
        pass
os._exit(code)
"""

_ctx = None
_LOCK = threading.Lock()


def _context():
    global _ctx
    if _ctx is None:
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(PRELOAD)
        _ctx = ctx
    return _ctx


def run_forked(args: list[str], *, cwd: Path, env: dict[str, str], stdout: Path, stderr: Path, memory: int,
               timeout: float) -> tuple[int | None, float]:
    """(exit status, seconds); status None when it did not finish within timeout (it is killed),
    negative when a signal ended it (e.g. -6: aborted after an allocation failed under the memory limit)."""
    scope = {"ARGS": list(args), "CWD": str(cwd), "ENV": dict(env), "STDOUT": str(stdout), "STDERR": str(stderr),
             "MEMORY": memory, "__name__": "__gpu_triage_child__"}
    p = _context().Process(target=exec, args=(CHILD, scope), daemon=True)
    start = time.monotonic()
    # Process objects are not thread-safe: start() polls every other live child, and two threads reading one
    # child's status pipe make one of them see EOF (exit status 255). Every start/poll goes under one lock;
    # the waiting itself does not.
    with _LOCK:
        p.start()
    finished = wait([p.sentinel], timeout)
    with _LOCK:
        if not finished:
            p.kill()
        p.join()
    return (p.exitcode if finished else None), time.monotonic() - start


def read(path: Path) -> str:
    return path.read_bytes().decode("utf-8", "replace") if path.exists() else ""


def environment(tmp: Path, home: Path) -> dict[str, str]:
    return {"TMPDIR": str(tmp), "HOME": str(home), "PYTHONDONTWRITEBYTECODE": "1",
            "TEMP": str(tmp), "TMP": str(tmp)} | ({"LANG": os.environ["LANG"]} if "LANG" in os.environ else {})
