"""Measure gpu-triage on one bundle: the floors, validate, analyze; seconds, ratio, peak RSS, output size.

    python scripts/benchmark.py BUNDLE [BUNDLE …] [--runs 3] [--steps floor,words,json]
    python scripts/benchmark.py BUNDLE --collector [--collector-script PATH] [--runs 1]

--collector measures the collector instead: scripts/collect.py run against the
stand-in kubectl (tests/fake_kubectl) replaying BUNDLE's files, writing into a
temporary directory that is removed afterwards; once redacting (the default)
and once with --no-redact. Peak RSS covers the collector and its kubectl.

The floor ("floor") is what a whole-document analyzer cannot beat: read every JSON file of the
bundle and orjson.loads it with Python's garbage collector disabled, keeping the documents alive.
The streaming floor ("stream") is what a streaming one cannot beat: per file, msgspec
splits the List into raw item slices, then every item is orjson.loads-ed, checked by jsonschema-rs
is_valid against its kind's item schema, and only a few fields kept. Then `validate`,
`analyze -o words` and `analyze -o json` (to a file: its size is shown). Several bundles (e.g. the uniform,
the --diverse and the --stuck-daemonset ones) are measured one after the other, each beside its own floor. Each measurement runs in a fresh process (so peak RSS is that
process's own, from wait4), several times; the median is printed. Figures are
printed, never asserted: timing belongs here, not in the tests.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

FLOOR = r"""
import gc, sys, orjson
from pathlib import Path
gc.disable()
root = Path(sys.argv[1])
docs = []
for p in sorted(root.glob("*.json")) + sorted(root.glob("attempts/*.json")):
    with open(p, "rb") as fh:
        data = fh.read()
    docs.append(orjson.loads(data))
    del data
import os
os._exit(0)  # the floor is reading and parsing, not freeing it all at exit
"""


STREAM_FLOOR = r"""
import gc, sys, msgspec, orjson
from pathlib import Path
from analyzer.bundle.engines import SchemaSet
gc.disable()
root = Path(sys.argv[1])
schemas = SchemaSet("jsonschema-rs")
kept = []
for p in sorted(root.glob("*.json")) + sorted(root.glob("attempts/*.json")):
    with open(p, "rb") as fh:
        data = fh.read()
    split = schemas.split(p.stem) if p.parent == root and p.stem != "manifest" else None
    top = msgspec.json.decode(data, type=dict[str, msgspec.Raw])
    if split is None or "items" not in top:
        kept.append(orjson.loads(data))
        continue
    is_valid = split[1].is_valid
    items = msgspec.json.decode(top.pop("items"), type=list[msgspec.Raw])
    for i in range(len(items)):
        item = orjson.loads(memoryview(items[i]))
        items[i] = None
        if is_valid(item):
            meta = item.get("metadata") or {}
            kept.append((meta.get("namespace"), meta.get("name"), (item.get("spec") or {}).get("nodeName"),
                         (item.get("status") or {}).get("phase")))
    del data, top, items
import os
os._exit(0)
"""


def run(cmd: list[str], out: Path | None = None) -> tuple[float, int, int]:
    """(seconds, peak RSS in bytes, exit status) of one child process; its stdout to `out` if given.
    The peak is wait4's: the largest of the process and any child it starts (each counted whole), not their sum."""
    start = time.perf_counter()
    sink = open(out, "wb") if out else subprocess.DEVNULL
    try:
        proc = subprocess.Popen(cmd, stdout=sink, stderr=subprocess.DEVNULL, cwd=REPO)
    finally:
        if out:
            sink.close()  # type: ignore[union-attr]
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    return elapsed, usage.ru_maxrss * 1024, proc.returncode


REPO = Path(__file__).resolve().parents[1]


def bench_collector(bundle: Path, script: Path, runs: int) -> int:
    """Seconds and peak RSS of the collector on BUNDLE, beside pods.json's size."""
    import shutil
    import tempfile

    fake = REPO / "tests" / "fake_kubectl" / "kubectl"
    pods = (bundle / "pods.json").stat().st_size
    env = dict(os.environ, FAKE_KUBECTL_DATA=str(bundle.resolve()),
               PATH=os.pathsep.join([str(fake.parent), os.path.dirname(sys.executable),
                                     os.environ.get("PATH", "")]))
    print(f"collector {script}  on {bundle}")
    print(f"pods.json {pods / 1e6:,.0f} MB; target peak RSS <= 2 x pods.json + 300 MB = "
          f"{(2 * pods + 300e6) / 1e9:.2f} GB")
    print(f"machine   {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"{datetime.now(UTC):%Y-%m-%d}\n")
    print(f"{'mode':<12}{'seconds':>9}{'peak RSS':>12}{'x pods.json':>13}{'exit':>6}")
    for mode, extra in (("redacting", []), ("--no-redact", ["--no-redact"])):
        for _ in range(runs):
            out = Path(tempfile.mkdtemp(prefix="gpu-triage-collector-bench-"))
            try:
                start = time.perf_counter()
                proc = subprocess.Popen(
                    [sys.executable, str(script), "--kubectl", str(fake), "--output-dir", str(out),
                     *extra], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                _, status, usage = os.wait4(proc.pid, 0)
                elapsed = time.perf_counter() - start
                rss = usage.ru_maxrss * 1024
                print(f"{mode:<12}{elapsed:>9.2f}{rss / 2**30:>10.2f}GB{rss / pods:>13.2f}"
                      f"{os.waitstatus_to_exitcode(status):>6}")
            finally:
                shutil.rmtree(out, ignore_errors=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("bundle", type=Path, nargs="+")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--steps", default="floor,stream,validate,words,json",
                    help="comma-separated steps to measure (floor is always measured)")
    ap.add_argument("--collector", action="store_true",
                    help="measure scripts/collect.py against the stand-in kubectl replaying BUNDLE")
    ap.add_argument("--collector-script", type=Path, default=REPO / "scripts" / "collect.py",
                    help="the collector to measure (e.g. an older copy, to compare)")
    args = ap.parse_args(argv)
    if args.collector:
        return bench_collector(args.bundle[0], args.collector_script, args.runs)
    wanted = {"floor"} | set(args.steps.split(","))
    for n, bundle in enumerate(args.bundle):
        if n:
            print()
        bench_analyzer(bundle, args.runs, wanted)
    return 0


def bench_analyzer(bundle: Path, runs: int, wanted: set[str]) -> None:
    import tempfile

    py = sys.executable
    b = str(bundle)
    steps = {
        "floor": [py, "-c", FLOOR, b],
        "stream": [py, "-c", STREAM_FLOOR, b],
        "validate": [py, "-m", "analyzer", "validate", b],
        "words": [py, "-m", "analyzer", "analyze", b, "-o", "words"],
        "json": [py, "-m", "analyzer", "analyze", b, "-o", "json"],
    }
    steps = {name: cmd for name, cmd in steps.items() if name in wanted}
    json_out = Path(tempfile.mkdtemp(prefix="gpu-triage-bench-")) / "verdicts.json"
    json_size = 0
    shapes = ""
    pods = bundle / "pods.json"
    size = pods.stat().st_size if pods.exists() else 0
    print(f"bundle   {bundle}  (pods.json {size / 1e6:,.0f} MB)")
    print(f"machine  {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"{datetime.now(UTC):%Y-%m-%d}")
    print(f"runs     {runs} rounds, steps interleaved, median time and largest peak shown\n")
    # Rounds interleave the steps (floor, validate, analyze, floor, …) so a machine that slows down
    # or speeds up during the run affects every step alike.
    times: dict[str, list[float]] = {name: [] for name in steps}
    peaks: dict[str, list[int]] = {name: [] for name in steps}
    for _ in range(runs):
        for name, cmd in steps.items():
            t, rss, status = run(cmd, json_out if name == "json" else None)
            if name == "json":
                json_size = json_out.stat().st_size
                if not shapes and json_size:
                    import orjson

                    doc = orjson.loads(json_out.read_bytes())
                    shapes = (f"{len(doc.get('verdicts') or ())} verdicts, {len(doc.get('funnels') or ())} distinct "
                              f"funnels (pod shapes), {len(doc.get('fits') or ())} fit tables")
                    del doc
                json_out.unlink()
            if status not in (0, 1, 2):
                print(f"{name}: exit status {status}", file=sys.stderr)
            times[name].append(t)
            peaks[name].append(rss)
    results = {name: (statistics.median(times[name]), max(peaks[name])) for name in steps}
    floor_t, floor_rss = results["floor"]
    json_out.parent.rmdir()
    print(f"{'step':<10}{'seconds':>9}{'x floor':>9}{'peak RSS':>12}{'x floor':>9}")
    for name, (t, rss) in results.items():
        print(f"{name:<10}{t:>9.2f}{t / floor_t:>9.2f}{rss / 2**30:>10.2f}GB{rss / floor_rss:>9.2f}")
    if "json" in steps:
        print(f"\nanalyze -o json wrote {json_size / 1e6:,.1f} MB: {shapes}")
    print("steps: floor = orjson.loads of every file, GC off; stream = msgspec split + orjson per item + is_valid;\n"
          "       validate; words = analyze -o words; json = analyze -o json > file")


if __name__ == "__main__":
    sys.exit(main())
