"""Bridge to the stdlib collector, so `gpu-triage collect` runs the very same
file a customer copies to a machine that has only kubectl and python3.

The script is looked up, in order, at:
  analyzer/_data/collect.py   (a wheel install: pyproject force-includes it)
  <repo>/scripts/collect.py   (a source checkout or an editable install)
and loaded with importlib; nothing is copied or re-implemented here.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

_HERE = Path(__file__).resolve().parent
CANDIDATES: tuple[Path, ...] = (
    _HERE / "_data" / "collect.py",
    _HERE.parent / "scripts" / "collect.py",
)
_MODULE_NAME = "gpu_triage_collect"


def collector_path() -> Path:
    """The collect.py that `gpu-triage collect` runs."""
    for candidate in CANDIDATES:
        if candidate.is_file():
            return candidate
    tried = ", ".join(str(c) for c in CANDIDATES)
    raise FileNotFoundError(f"the collector script is missing (looked for {tried})")


def load_collector() -> ModuleType:
    """Import collect.py as a module (once per process)."""
    loaded = sys.modules.get(_MODULE_NAME)
    path = collector_path()
    if loaded is not None and getattr(loaded, "__file__", None) == str(path):
        return loaded
    spec = importlib.util.spec_from_file_location(_MODULE_NAME, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load the collector from {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[_MODULE_NAME] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(_MODULE_NAME, None)
        raise
    return module


def run_collector(argv: list[str], prog: str = "gpu-triage collect") -> int:
    """Run the collector with these arguments (as after `gpu-triage collect`);
    returns its exit status: 0 complete, 3 partial, 2 usage / no kubectl."""
    return int(load_collector().main(list(argv), prog=prog))
