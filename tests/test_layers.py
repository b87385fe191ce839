"""The code's shape, checked: imports run one way (no cycle between modules, nor between the packages of
analyzer/, type-only and function-level imports counted), and no module grows past 400 lines. The
collector is the one exception to the size rule: it is one stdlib-only file a customer copies."""

from __future__ import annotations

import ast
from pathlib import Path

from helpers import REPO

ANALYZER = REPO / "analyzer"
MAX_LINES = 400
ONE_FILE_BY_DESIGN = {REPO / "scripts" / "collect.py"}


def _module(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports() -> dict[str, set[str]]:
    modules = {_module(p): p for p in ANALYZER.rglob("*.py")}
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text())):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else []))
                targets = [f"{base}.{a.name}" for a in node.names] + [base]
            for t in targets:
                while t and t not in modules:
                    t = t.rpartition(".")[0]
                if t and t != name and not name.startswith(t + ".") :
                    graph[name].add(t)
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(n: str) -> list[str] | None:
        state[n] = 1
        stack.append(n)
        for m in sorted(graph.get(n, ())):
            if state.get(m) == 1:
                return stack[stack.index(m):] + [m]
            if m not in state:
                found = visit(m)
                if found:
                    return found
        stack.pop()
        state[n] = 2
        return None

    for n in sorted(graph):
        if n not in state:
            found = visit(n)
            if found:
                return found
    return None


def _package(module: str) -> str:
    parts = module.split(".")
    return ".".join(parts[:2])  # analyzer.<package> (or a top-level module)


def test_no_import_cycle_between_modules():
    assert _cycle(_imports()) is None


def test_no_import_cycle_between_packages():
    packages: dict[str, set[str]] = {}
    for a, deps in _imports().items():
        for b in deps:
            if _package(a) != _package(b) and _package(a) != "analyzer" and _package(b) != "analyzer":
                packages.setdefault(_package(a), set()).add(_package(b))
    assert _cycle(packages) is None


def test_no_module_over_400_lines():
    long = {str(p.relative_to(REPO)): n for p in [*ANALYZER.rglob("*.py"), *(REPO / "scripts").rglob("*.py")]
            if p not in ONE_FILE_BY_DESIGN and (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert long == {}


def test_bundle_file_names_are_written_only_in_the_catalog():
    """A kind's file is named once (bundle/catalog.py); everything else takes it from there."""
    from analyzer.bundle.catalog import KINDS

    files = {k.file for k in KINDS}
    found = []
    for path in ANALYZER.rglob("*.py"):
        if path == ANALYZER / "bundle" / "catalog.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and node.value in files:
                found.append(f"{path.relative_to(REPO)}:{node.lineno} {node.value}")
    assert found == []


def test_reading_and_classifying_is_one_process():
    # One plain pass: read, validate and reduce each item, build the model, classify, write. No module forks,
    # starts processes, shares memory between them or leaves without the interpreter's own exit.
    banned_modules = {"multiprocessing", "concurrent.futures", "subprocess"}
    banned_calls = {"fork", "forkpty", "memfd_create", "_exit", "posix_spawn"}
    allowed = {ANALYZER / "replay" / "commands.py"}  # `shell` starts the user's shell beside the replayed API
    found = []
    for path in ANALYZER.rglob("*.py"):
        if path in allowed:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            found += [f"{path.relative_to(REPO)}:{node.lineno} import {n}" for n in names
                      if n in banned_modules or n.split(".")[0] == "multiprocessing"]
            if isinstance(node, ast.Attribute) and node.attr in banned_calls:
                found.append(f"{path.relative_to(REPO)}:{node.lineno} .{node.attr}")
    assert found == []


def test_a_bundle_without_dra_objects_answers_without_importing_the_dra_model():
    # The recording of seven states has no resource.k8s.io file: the DRA world is never made (model/dra/world.Dra),
    # and neither it nor its CEL evaluator is imported.
    import subprocess
    import sys

    code = ("import sys; from analyzer.pipeline import Options, analyse; "
            "a = analyse('dumps/lab-seven-states-v1.36', Options()); assert a.verdicts; "
            "print(sorted(m for m in ('analyzer.model.dra.allocate', 'analyzer.model.dra.cel', 'analyzer.model.dra.views') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
