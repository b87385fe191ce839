"""Hostile and broken bundles get clear answers, and nothing is lost.

The corpus (tests/hostile/corpus.py) is one row per input with its exact expected outcome.
Every row runs `gpu-triage validate` and `gpu-triage analyze -o words`, each in its own process
on its own copy of the input (forked from a server that imported the analyzer once, see
hostile/runner.py; all selected rows run in parallel on first use), with:
  - an address-space limit (RLIMIT_AS) and a timeout: bombs must be refused, not survived by luck;
  - TMPDIR, HOME and the working directory pointed at empty private directories, which must be
    empty again afterwards (no leftover gpu-triage-* unpack directory, nothing written beside);
and checks the exit status, the file and JSON path in the message, no traceback and no
"internal error", a bounded amount of output, the answers still given, and that the input
(including the files outside it that links point to) is byte for byte unchanged.

A row whose outcome the analyzer does not deliver yet carries `bug`: it stays, as
xfail(strict=True), so fixing the bug turns it into a failure until the mark is removed.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from analyzer.bundle.reading import open_bundle
from analyzer.errors import BundleError
from hostile.build import (DATA, FILE_ENTRY, LAB, LAB_WORDS, NODE, POD, gzip_bomb_tar, lab, lying_header_tar, member, pod, put,
                           tar_of, words_from_stdout)
from hostile.corpus import CASES, TOKEN, Case, Expect
from helpers import run_cli, run_process, tree_digest
from hostile.runner import PRELOAD, environment, read, run_forked

MEMORY_LIMIT = 2 << 30  # bytes of address space for each analyzer process
TIMEOUT = 60  # seconds for each analyzer process
MAX_OUTPUT = 256 << 10  # a 10 MB hostile string must not come back in full
COMMANDS = ("validate", "analyze")
WORKERS = max(2, (os.cpu_count() or 2) + 1)


@dataclass
class Run:
    command: str
    target: Path
    returncode: int | None
    stdout: str
    stderr: str
    seconds: float
    changed: list[str]
    left_behind: dict[str, list[str]]

    @property
    def text(self) -> str:
        return self.stdout + self.stderr

    def describe(self) -> str:
        return (f"$ gpu-triage {self.command} {self.target.name}  -> exit {self.returncode} in {self.seconds:.1f}s\n"
                f"--- stdout ---\n{self.stdout[:4000]}\n--- stderr ---\n{self.stderr[:4000]}")


def run_one(case: Case, command: str, place: Path) -> Run:
    """Build the input in place/in, run the command on it with private TMPDIR/HOME/cwd, and look afterwards."""
    inputs = place / "in"
    private = {name: place / name for name in ("tmp", "home", "cwd")}
    for d in (inputs, *private.values()):
        d.mkdir(parents=True)
    target = case.build(inputs)
    before = tree_digest(inputs)
    args = [command, str(target)] + (["-o", "words"] if command == "analyze" else [])
    code, seconds = run_forked(args, cwd=private["cwd"], env=environment(private["tmp"], private["home"]),
                               stdout=place / "stdout", stderr=place / "stderr", memory=MEMORY_LIMIT,
                               timeout=min(TIMEOUT, case.timeout))
    after = tree_digest(inputs)
    changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
    left = {name: sorted(os.listdir(d)) for name, d in private.items() if os.listdir(d)}
    beside = sorted(set(os.listdir(place)) - {"in", "tmp", "home", "cwd", "stdout", "stderr"})
    beside += sorted(p.name for p in place.parent.glob(f"{TOKEN}*"))
    if beside:
        left["beside the input"] = beside
    return Run(command, target, code, read(place / "stdout"), read(place / "stderr"), seconds, changed, left)


_RESULTS: dict[tuple[str, str], Run] = {}
HEAVY = ("billion-laughs", "quadratic", "50000", "10MB", "100000")


def outcome(case: Case, command: str, request: pytest.FixtureRequest) -> Run:
    """Runs are made in parallel, all at once, for every corpus item this session selected; then cached."""
    key = (case.id, command)
    if key not in _RESULTS:
        wanted = {key: case}
        for item in request.session.items:
            spec = getattr(item, "callspec", None)
            if spec is not None and getattr(item, "originalname", "") == "test_corpus" and item.module is sys.modules[__name__]:
                c = spec.params["case"]
                wanted[(c.id, spec.params["command"])] = c
        todo = sorted((k for k in wanted if k not in _RESULTS), key=lambda k: not any(h in k[0] for h in HEAVY))
        factory: pytest.TempPathFactory = request.getfixturevalue("tmp_path_factory")
        base = factory.mktemp("hostile")
        with ThreadPoolExecutor(WORKERS) as pool:
            futures = {k: pool.submit(run_one, wanted[k], k[1], base / f"{i:03}-{k[1]}") for i, k in enumerate(todo)}
            for k, f in futures.items():
                _RESULTS[k] = f.result()
    return _RESULTS[key]


def check(run: Run, expect: Expect) -> None:
    where = run.describe()
    assert run.returncode is not None, f"no answer in time ({run.seconds:.0f}s)\n{where}"
    assert run.returncode >= 0, f"killed by signal {-run.returncode} (memory limit {MEMORY_LIMIT >> 30} GiB?)\n{where}"
    assert "Traceback" not in run.text, where
    assert "internal error" not in run.text, where
    assert run.returncode == expect.status, where
    for needle in expect.needles:
        assert needle in run.text, f"{needle!r} not in the output\n{where}"
    for secret in expect.absent:
        assert secret not in run.text, f"{secret!r} must not be printed\n{where}"
    assert len(run.stdout) + len(run.stderr) < MAX_OUTPUT, f"{len(run.text)} characters of output\n{where[:2000]}"
    if expect.words is not None:
        assert words_from_stdout(run.stdout) == expect.words, where
    assert not run.changed, f"the input changed: {run.changed}\n{where}"
    assert not run.left_behind, f"left behind in private TMPDIR/HOME/cwd: {run.left_behind}\n{where}"
    escaped = [p for p in Path(tempfile.gettempdir()).glob(f"{TOKEN}*")] + [p for p in Path("/tmp").glob(f"{TOKEN}*")]
    assert not escaped, f"an archive member escaped: {escaped}"
    assert not Path("/tmp/gpu-triage-hostile-python-tag-ran").exists(), "a YAML tag was executed"


def _params() -> list:
    out = []
    for case in CASES:
        for command in COMMANDS:
            expect: Expect = getattr(case, command)
            marks = [pytest.mark.xfail(strict=True, reason=expect.bug)] if expect.bug else []
            out.append(pytest.param(case, command, id=f"{case.id}-{command}", marks=marks))
    return out


@pytest.mark.parametrize(("case", "command"), _params())
def test_corpus(case: Case, command: str, request: pytest.FixtureRequest) -> None:
    check(outcome(case, command, request), getattr(case, command))


# -- the corpus itself ---------------------------------------------------------------------------------

def test_corpus_size_and_shape() -> None:
    assert len(CASES) >= 60
    for case in CASES:
        for command in COMMANDS:
            expect: Expect = getattr(case, command)
            if expect.status:
                assert expect.needles, f"{case.id} {command}: a failure must name the file and path"
            if command == "validate":
                assert expect.words is None
                assert expect.status in (0, 1, 2)
            else:
                assert expect.status in (0, 2)


def test_lab_indexes_are_what_the_corpus_assumes() -> None:
    pods = json.loads((LAB / "pods.json").read_text())["items"]
    nodes = json.loads((LAB / "nodes.json").read_text())["items"]
    manifest = json.loads((LAB / "manifest.json").read_text())
    assert {p["metadata"]["name"]: i for i, p in enumerate(pods)} == POD
    assert {n["metadata"]["name"]: i for i, n in enumerate(nodes)} == NODE
    assert {e["path"]: i for i, e in enumerate(manifest["files"])} == FILE_ENTRY
    assert pods[POD["exhausted"]]["metadata"]["uid"]


def test_clean_lab_baseline(tmp_path: Path) -> None:
    """The reference every partial case compares with: the lab's words, exit 0, nothing on stderr."""
    b = lab(tmp_path)
    before = tree_digest(b)
    for command in COMMANDS:
        args = [command, str(b)] + (["-o", "words"] if command == "analyze" else [])
        r = run_process(*args, cwd=tmp_path, timeout=TIMEOUT)
        assert r.returncode == 0, r.stderr
        if command == "analyze":
            assert words_from_stdout(r.stdout) == LAB_WORDS
            assert r.stderr == ""
    assert tree_digest(b) == before


def test_every_module_the_forkserver_preloads_exists() -> None:
    """The forkserver skips a preload name that does not import, silently: then every run imports it again."""
    for name in PRELOAD:
        importlib.import_module(name)


SAMPLE = ("pods-truncated-half", "tar-hardlink-leaving", "pod-containers-string", "manifest-path-dotdot",
          "pods-kind-podlist-accepted")


@pytest.mark.parametrize("case", [c for c in CASES if c.id in SAMPLE], ids=lambda c: c.id)
def test_forked_runs_match_real_processes(case: Case, tmp_path: Path) -> None:
    """The corpus runs forked from a preloaded server (speed); `python -m analyzer` gives the same output."""
    target = case.build(tmp_path)
    for command in COMMANDS:
        args = [command, str(target)] + (["-o", "words"] if command == "analyze" else [])
        out = tmp_path / f"forked-{command}"
        out.mkdir()
        code, _ = run_forked(args, cwd=out, env=environment(out, out), stdout=tmp_path / f"{command}.out",
                             stderr=tmp_path / f"{command}.err", memory=MEMORY_LIMIT, timeout=TIMEOUT)
        real = run_process(*args, cwd=tmp_path, timeout=TIMEOUT)
        assert (code, read(tmp_path / f"{command}.out"), read(tmp_path / f"{command}.err")) == \
            (real.returncode, real.stdout, real.stderr)
        assert code == getattr(case, command).status


MANIFEST_FLAG_CASES = [
    pytest.param("deep.yaml", "[" * 500 + "]" * 500, 2, "deep.yaml: ",
                 id="nested-500-deep"),
    pytest.param("bomb.yaml", (DATA / "yaml-bomb.yaml").read_text(), 2, "bomb.yaml: ",
                 id="billion-laughs"),
    pytest.param("secret.yaml", (DATA / "secret.yaml").read_text(), 2, "secret.yaml: no Pod", id="a-secret"),
    pytest.param("python.yaml", (DATA / "python-tag.yaml").read_text(), 2, "python.yaml: not YAML or JSON", id="python-tag"),
]


@pytest.mark.parametrize(("name", "text", "status", "needle"), MANIFEST_FLAG_CASES)
def test_hostile_manifest_given_with_the_flag(tmp_path: Path, name: str, text: str, status: int, needle: str) -> None:
    """`analyze BUNDLE --manifest FILE`: the file comes from a ticket too."""
    (tmp_path / name).write_text(text)
    private = tmp_path / "private"
    private.mkdir()
    code, _ = run_forked(["analyze", str(LAB), "--manifest", str(tmp_path / name), "-o", "words"], cwd=private,
                         env=environment(private, private), stdout=tmp_path / "out", stderr=tmp_path / "err",
                         memory=MEMORY_LIMIT, timeout=TIMEOUT)
    text_out = read(tmp_path / "out") + read(tmp_path / "err")
    assert code == status, text_out
    assert needle in text_out
    assert "Traceback" not in text_out and "internal error" not in text_out
    assert "hunter2" not in text_out
    assert os.listdir(private) == []
    assert not Path("/tmp/gpu-triage-hostile-python-tag-ran").exists()


# -- archive bombs, in-process with small caps ------------------------------------------------------------

@pytest.fixture
def private_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """tempfile's directory for this test only: it must be empty again afterwards."""
    d = tmp_path / "systmp"
    d.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(d))
    return d


def _refused(archive: Path, private: Path, *needles: str, **caps: int) -> BundleError:
    start = time.monotonic()
    with pytest.raises(BundleError) as info:
        open_bundle(archive, **caps)
    assert time.monotonic() - start < 20
    text = str(info.value)
    assert archive.name in text
    for n in needles:
        assert n in text, text
    assert os.listdir(private) == [], "the unpack directory was not removed"
    return info.value


def test_gzip_bomb_over_the_cap_is_refused_before_unpacking(tmp_path: Path, private_tmp: Path) -> None:
    archive = gzip_bomb_tar(tmp_path, 256 * (1 << 20))  # 256 MiB of zeros: well under a MiB compressed
    assert archive.stat().st_size < 2 << 20
    _refused(archive, private_tmp, "refusing archive: it unpacks to more than 16777216 bytes", max_unpacked=16 << 20)


def test_gzip_bomb_with_a_header_that_understates_its_size(tmp_path: Path, private_tmp: Path) -> None:
    """The header says 1 KiB; 256 MiB of zeros follow. Only what the header says is unpacked (the zeros then
    read as end-of-archive blocks), and the user is told that pods.json is not JSON: exit 2, no traceback."""
    archive = gzip_bomb_tar(tmp_path, 256 * (1 << 20), honest=False)
    with open_bundle(archive, max_unpacked=16 << 20) as b:
        unpacked = {str(p.relative_to(b.root)): p.stat().st_size for p in b.root.rglob("*")}
    assert unpacked == {"pods.json": 1024}
    assert os.listdir(private_tmp) == [], "the unpack directory was not removed"
    private = tmp_path / "private"
    private.mkdir()
    for command in COMMANDS:
        code, _ = run_forked([command, str(archive)], cwd=private, env=environment(private, private),
                             stdout=tmp_path / "out", stderr=tmp_path / "err", memory=MEMORY_LIMIT, timeout=TIMEOUT)
        said = read(tmp_path / "out") + read(tmp_path / "err")
        assert code == 2, said
        assert "pods.json: $: not JSON" in said and "Traceback" not in said
        assert os.listdir(private) == []


def test_header_claiming_more_than_the_cap(tmp_path: Path, private_tmp: Path) -> None:
    archive = lying_header_tar(tmp_path, claimed=1 << 30, actual=b"{}")
    _refused(archive, private_tmp, "refusing archive: it unpacks to more than 1048576 bytes", max_unpacked=1 << 20)


def test_many_small_members_are_counted_together(tmp_path: Path, private_tmp: Path) -> None:
    """Each member is small; together they pass the cap."""
    extra = [member(f"lab/filler-{i:03}.bin", payload=b"\0" * 4096) for i in range(200)]
    archive = tar_of(tmp_path, extra)
    _refused(archive, private_tmp, "refusing archive: it unpacks to more than 262144 bytes", max_unpacked=256 << 10)


def test_too_many_members(tmp_path: Path, private_tmp: Path) -> None:
    extra = [member(f"lab/empty-{i:04}", payload=b"") for i in range(300)]
    archive = tar_of(tmp_path, extra)
    _refused(archive, private_tmp, "refusing archive: more than 100 members", max_members=100)


@pytest.mark.parametrize("kind", [tarfile.CHRTYPE, tarfile.BLKTYPE, tarfile.FIFOTYPE, tarfile.SYMTYPE, tarfile.LNKTYPE])
def test_special_members_never_reach_the_disk(tmp_path: Path, private_tmp: Path, kind: bytes) -> None:
    archive = tar_of(tmp_path, [member("lab/special", kind, linkname="/etc/passwd")])
    _refused(archive, private_tmp, "refusing archive member 'lab/special'")


def test_a_good_archive_is_removed_after_use(tmp_path: Path, private_tmp: Path) -> None:
    archive = tar_of(tmp_path)
    with open_bundle(archive) as b:
        assert (b.root / "pods.json").is_file()
        assert str(b.root).startswith(str(private_tmp))
    assert os.listdir(private_tmp) == []


def test_pipeline_on_archives_leaves_nothing_behind(tmp_path: Path, private_tmp: Path) -> None:
    """In-process: answered, refused after unpacking (pods.json not JSON), refused while checking members."""
    from analyzer.pipeline import Options, analyse, validate_only

    good = tar_of(tmp_path, name="good.tar.gz")
    analysis = analyse(good, Options())
    assert {v.key: v.word for v in analysis.verdicts} == LAB_WORDS
    analysis.bundle.close()
    assert os.listdir(private_tmp) == []
    src = lab(tmp_path / "src")
    (src / "pods.json").write_bytes(b"{")
    broken = tmp_path / "broken.tar.gz"
    with tarfile.open(broken, "w:gz") as tf:
        tf.add(src, arcname="lab")
    for fn in (lambda: analyse(broken, Options()), lambda: validate_only(broken)):
        with pytest.raises(BundleError, match=r"pods\.json"):
            fn()
        assert os.listdir(private_tmp) == []
    hostile = tar_of(tmp_path, [member("lab/../../x")], name="hostile.tar.gz")
    with pytest.raises(BundleError, match="leaves the bundle"):
        analyse(hostile, Options())
    assert os.listdir(private_tmp) == []


# -- partial badness: answer what can be answered, mark the rest ------------------------------------------

def _cli(tmp_path: Path, *args: str | Path) -> subprocess.CompletedProcess:
    return run_cli(*args, cwd=tmp_path)


def test_one_invalid_pod_among_valid_ones(tmp_path: Path) -> None:
    b = lab(tmp_path)
    pod("exhausted", put("spec.containers", "cuda"))(b)
    before = tree_digest(b)
    r = _cli(tmp_path, "analyze", b, "-o", "json")
    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stdout + r.stderr
    verdicts = {f"{v['namespace']}/{v['name']}": v for v in json.loads(r.stdout)["verdicts"]}
    assert {k: v["word"] for k, v in verdicts.items()} == {**LAB_WORDS, "lab/exhausted": "insufficient-evidence"}
    bad = verdicts["lab/exhausted"]
    assert bad["source"] == "pods.json $.items[1]"
    assert 'pods.json: $.items[1].spec.containers: expected array, found string "cuda"' in bad["reason"]
    # Invalid, not missing: the action is to fix the named item, and the finding is said once in the answer.
    assert bad["evidence"]["invalid_file"] == "pods.json" and "missing" not in bad["evidence"]
    assert bad["next_action"] == "fix pods.json $.items[1] (or collect pods.json again), then run again"
    explain = _cli(tmp_path, "why", b, "lab/exhausted", "--explain").stdout
    assert explain.count("expected array, found string") == 1 and "missing" not in explain
    assert 'pods.json: $.items[1].spec.containers: expected array, found string "cuda"' in r.stderr
    assert "partly invalid (1 problem(s))" in r.stderr
    assert tree_digest(b) == before


def test_unreadable_optional_file_is_treated_as_missing(tmp_path: Path) -> None:
    b = lab(tmp_path)
    data = (b / "events.json").read_bytes()
    (b / "events.json").write_bytes(data[:500])
    r = _cli(tmp_path, "analyze", b, "-o", "json")
    assert r.returncode == 2
    assert {f"{v['namespace']}/{v['name']}": v["word"] for v in json.loads(r.stdout)["verdicts"]} == LAB_WORDS
    assert "events.json: $: not JSON (truncated?)" in r.stderr
    # the scheduler's message still comes from the PodScheduled condition, which is in pods.json
    exhausted = next(v for v in json.loads(r.stdout)["verdicts"] if v["name"] == "exhausted")
    assert exhausted["scheduler_message"].startswith("0/4 nodes are available")


def test_invalid_running_pod_makes_its_node_usage_unknown(tmp_path: Path) -> None:
    """filler-a (Running on gpu-ok, 3 GPUs) is invalid: gpu-ok's usage is unknown, and exhausted, which could
    only go there, is insufficient-evidence naming filler-a's path; the other pods keep their words."""
    b = lab(tmp_path)
    pod("filler-a", put("spec.containers[0].resources.requests.cpu", "lots"))(b)
    r = _cli(tmp_path, "analyze", b, "-o", "json")
    assert r.returncode == 2
    verdicts = {f"{v['namespace']}/{v['name']}": v for v in json.loads(r.stdout)["verdicts"]}
    assert {k: v["word"] for k, v in verdicts.items()} == {**LAB_WORDS, "lab/exhausted": "insufficient-evidence"}
    ev = verdicts["lab/exhausted"]["evidence"]
    assert ev["missing"] == "pods.json"
    assert "pods.json: $.items[2].spec.containers[0].resources.requests.cpu" in ev["unknown_usage"]["gpu-ok"]


def test_why_on_an_invalid_pod_names_the_file_and_path(tmp_path: Path) -> None:
    b = lab(tmp_path)
    pod("exhausted", put("spec.containers", "cuda"))(b)
    bad = _cli(tmp_path, "why", b, "lab/exhausted", "--explain")
    assert bad.returncode == 2
    assert "lab/exhausted: insufficient-evidence" in bad.stdout
    assert 'pods.json: $.items[1].spec.containers: expected array, found string "cuda"' in bad.stdout
    assert "Traceback" not in bad.stdout + bad.stderr


def test_why_on_a_partly_invalid_bundle_answers_the_good_pod(tmp_path: Path) -> None:
    b = lab(tmp_path)
    pod("exhausted", put("spec.containers", "cuda"))(b)
    good = _cli(tmp_path, "why", b, "lab/taint")
    assert (good.returncode, good.stdout) == (2, "untolerated-taint\n")


def test_why_on_a_partly_invalid_bundle_says_why_it_exits_2(tmp_path: Path) -> None:
    b = lab(tmp_path)
    pod("exhausted", put("spec.containers", "cuda"))(b)
    good = _cli(tmp_path, "why", b, "lab/taint")
    assert good.returncode == 2
    assert 'pods.json: $.items[1].spec.containers: expected array, found string "cuda"' in good.stderr


def test_why_on_an_archive_cleans_up_on_every_path(tmp_path: Path, private_tmp: Path) -> None:
    """Answered, partly invalid, and asked about a pod that is not there: the unpack directory goes each time."""
    src = lab(tmp_path / "src")
    pod("exhausted", put("spec.containers", "cuda"))(src)
    archive = tmp_path / "b.tar.gz"
    with tarfile.open(archive, "w:gz") as tf:
        tf.add(src, arcname="lab")
    for args, status in ((["why", archive, "lab/taint"], 2), (["why", archive, "lab/nobody"], 2),
                         (["analyze", archive], 2), (["validate", archive], 1)):
        r = _cli(tmp_path, *args)
        assert r.returncode == status, (args, r.stderr)
        assert "Traceback" not in r.stdout + r.stderr
        assert os.listdir(private_tmp) == [], args
