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


def test_reading_a_bundle_imports_neither_the_rules_nor_numpy_before_its_worker_starts():
    # The worker reading pods.json is forked as soon as the file is split; this process imports the model, the
    # rules and numpy while the worker reads (pipeline._the_rest). A module-level import of them in the reading
    # path would put that fifth of a second back in front of the fork.
    import subprocess
    import sys

    code = ("import sys, analyzer.pipeline, analyzer.model.pods_index, analyzer.bundle.validation; "
            "print(sorted(m for m in ('numpy', 'analyzer.classify', 'analyzer.rules', 'analyzer.model.build', 'yaml') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_parent_reads_less_of_pods_json_the_more_other_files_it_reads():
    # The first split only: the worker then takes from the end of the parent's share (bundle/sharing.py).
    from analyzer.bundle.forked import MEANWHILE_BYTES, parent_share

    pods = 1_700 << 20
    shares = [parent_share(pods, others, MEANWHILE_BYTES) for others in (0, 100 << 20, 340 << 20, 2_000 << 20)]
    assert shares == sorted(shares, reverse=True) and 0.3 <= shares[-1] < shares[0] <= 0.8
    assert parent_share(pods, 340 << 20) > parent_share(pods, 340 << 20, MEANWHILE_BYTES)


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
