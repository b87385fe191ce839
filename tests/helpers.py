"""Shared helpers for tests that run the real CLI on bundles copied into tmp_path."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import traceback
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
LAB = REPO / "dumps" / "lab-seven-states-v1.36"
# Real recordings (tests/data/recordings/README.md says where and how each was recorded): tests copy, never edit.
RECORDINGS = REPO / "tests" / "data" / "recordings"
SCHEMAS = REPO / "schemas"
GENERATOR = REPO / "scripts" / "generate_bundle.py"


def copy_bundle(dest: Path, src: Path = LAB) -> Path:
    """A writable byte-for-byte copy of a bundle (the shipped example by default), manifest included."""
    out = dest / "lab"
    shutil.copytree(src, out)
    for p in out.rglob("*"):
        p.chmod(0o755 if p.is_dir() else 0o644)
    return out


def run_cli(*args: str | os.PathLike, cwd: Path | None = None, check: bool = False) -> subprocess.CompletedProcess:
    """`gpu-triage ARGS` as a person runs it, in this process: the typer app the console script runs, with
    GPU_TRIAGE_DEBUG unset and `cwd` (the repository by default) as the working directory. stdout, stderr
    and the exit status are the console script's; an exception the app lets out becomes what the
    interpreter would print (a traceback, exit 1). Starting a Python per call cost ~0.5 s of CPU each;
    run_process() is the real `python -m analyzer` for tests about the process itself. check: exit 0 or fail."""
    from typer.testing import CliRunner

    from analyzer.cli import app

    argv = [str(a) for a in args]
    debug = os.environ.pop("GPU_TRIAGE_DEBUG", None)
    here = os.getcwd()
    os.chdir(cwd or REPO)
    try:
        result = CliRunner().invoke(app, argv, prog_name="python -m analyzer")
    finally:
        os.chdir(here)
        if debug is not None:
            os.environ["GPU_TRIAGE_DEBUG"] = debug
    stderr, status = result.stderr, result.exit_code
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        stderr += "".join(traceback.format_exception(result.exception))
        status = 1
    if check:
        assert status == 0, f"exit {status}\nstdout:\n{result.stdout}\nstderr:\n{stderr}"
    return subprocess.CompletedProcess(["python", "-m", "analyzer", *argv], status, result.stdout, stderr)


def run_process(*args: str | os.PathLike, cwd: Path | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    """`python -m analyzer ARGS` in a new process (GPU_TRIAGE_DEBUG unset, `cwd` the repository by default)."""
    env = {k: v for k, v in os.environ.items() if k != "GPU_TRIAGE_DEBUG"}
    return subprocess.run([sys.executable, "-m", "analyzer", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd or REPO, env=env, timeout=timeout, check=False)


def _file_digest(p: Path, whole: int = 64 << 20) -> str:
    """sha256 of the content; for files over `whole` bytes (sparse giants), of size, mtime and both ends."""
    st = p.stat()
    if st.st_size <= whole:
        return hashlib.sha256(p.read_bytes()).hexdigest()
    h = hashlib.sha256(f"{st.st_size}:{st.st_mtime_ns}".encode())
    with open(p, "rb") as fh:
        h.update(fh.read(1 << 20))
        fh.seek(-(1 << 20), os.SEEK_END)
        h.update(fh.read())
    return "large:" + h.hexdigest()


def tree_digest(root: Path, skip: tuple[Path, ...] = ()) -> dict[str, str]:
    """Every path under root with its sha256 (links as links, FIFOs as fifos), never following links."""
    out: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        d = Path(dirpath)
        dirnames[:] = [n for n in dirnames if (d / n) not in skip]
        for n in dirnames:
            p = d / n
            out[str(p.relative_to(root))] = "link:" + os.readlink(p) if p.is_symlink() else "dir"
        for n in filenames:
            p = d / n
            rel = str(p.relative_to(root))
            if p.is_symlink():
                out[rel] = "link:" + os.readlink(p)
            elif p.is_file():
                out[rel] = _file_digest(p)
            else:
                out[rel] = "special"
    return out


def assert_clean_failure(result: subprocess.CompletedProcess, status: int, *needles: str) -> None:
    """The documented exit status, the needles in the message, and never a traceback."""
    text = result.stdout + result.stderr
    assert result.returncode == status, text
    assert "Traceback" not in text, text
    for n in needles:
        assert n in text, f"{n!r} not in:\n{text}"


def generate(out: Path, *, nodes: int, pods: int, seed: int, truth: Path | None = None,
             extra: tuple[str, ...] = ()) -> Path:
    """scripts/generate_bundle.py writes a bundle at `out` (and its intended words at `truth`): the one way tests
    make generated bundles. A test that only reads one uses the session's (conftest.py: `generated`,
    `generated_large`), made once."""
    cmd = [sys.executable, str(GENERATOR), "--nodes", str(nodes), "--pods", str(pods), "--seed", str(seed),
           "--out", str(out), *extra]
    if truth is not None:
        cmd += ["--truth", str(truth)]
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False)
    assert result.returncode == 0, result.stderr
    return out


def assert_answers_are_the_truth(bundle: Path, lines: list[str]) -> None:
    """`analyze -o words` gives exactly the truth file's lines (sorted: the analyzer prints in pods.json order), and
    the bundle is valid."""
    result = run_cli("analyze", bundle, "-o", "words")
    assert result.returncode == 0, result.stderr
    assert sorted(result.stdout.splitlines()) == lines
    assert run_cli("validate", bundle).returncode == 0


def generate_with_truth(root: Path, option: str) -> tuple[Path, Path]:
    """A small generated bundle (40 nodes, 600 pods, seed 3) with one of the generator's worlds (`--dra`,
    `--kueue` …) and its `--truth` file: (bundle, truth)."""
    truth = root / "truth.tsv"
    return generate(root / "b", nodes=40, pods=600, seed=3, truth=truth, extra=(option,)), truth
