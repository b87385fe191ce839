"""Measure gpu-triage on one bundle: the floor, validate, analyze; seconds, ratio, peak RSS.

    python scripts/benchmark.py BUNDLE [--runs 3] [--output table|words|json]
    python scripts/benchmark.py BUNDLE --collector [--collector-script PATH] [--runs 1]

--collector measures the collector instead: scripts/collect.py run against the
stand-in kubectl (tests/fake_kubectl) replaying BUNDLE's files, writing into a
temporary directory that is removed afterwards; once redacting (the default)
and once with --no-redact. Peak RSS covers the collector and its kubectl.

The floor is what no analyzer can beat: read every JSON file of the bundle and
orjson.loads it with Python's garbage collector disabled, keeping the
documents alive. Each measurement runs in a fresh process (so peak RSS is that
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
from datetime import datetime, timezone
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
os._exit(0)  # the floor is reading and parsing, not freeing it all at exit (the CLI leaves the same way)
"""


def run(cmd: list[str]) -> tuple[float, int, int]:
    """(seconds, peak RSS in bytes, exit status) of one child process."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
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
          f"{datetime.now(timezone.utc):%Y-%m-%d}\n")
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
    ap.add_argument("bundle", type=Path)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--output", default="table", choices=["table", "words", "json"])
    ap.add_argument("--collector", action="store_true",
                    help="measure scripts/collect.py against the stand-in kubectl replaying BUNDLE")
    ap.add_argument("--collector-script", type=Path, default=REPO / "scripts" / "collect.py",
                    help="the collector to measure (e.g. an older copy, to compare)")
    args = ap.parse_args(argv)
    if args.collector:
        return bench_collector(args.bundle, args.collector_script, args.runs)
    py = sys.executable
    steps = {
        "floor": [py, "-c", FLOOR, str(args.bundle)],
        "validate": [py, "-m", "analyzer", "validate", str(args.bundle)],
        "analyze": [py, "-m", "analyzer", "analyze", str(args.bundle), "-o", args.output],
    }
    pods = args.bundle / "pods.json"
    size = pods.stat().st_size if pods.exists() else 0
    print(f"bundle   {args.bundle}  (pods.json {size / 1e6:,.0f} MB)")
    print(f"machine  {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"{datetime.now(timezone.utc):%Y-%m-%d}")
    print(f"runs     {args.runs} rounds, steps interleaved, median time and largest peak shown\n")
    # Rounds interleave the steps (floor, validate, analyze, floor, …) so a machine that slows down
    # or speeds up during the run affects every step alike.
    times: dict[str, list[float]] = {name: [] for name in steps}
    peaks: dict[str, list[int]] = {name: [] for name in steps}
    for _ in range(args.runs):
        for name, cmd in steps.items():
            t, rss, status = run(cmd)
            if status not in (0, 1, 2):
                print(f"{name}: exit status {status}", file=sys.stderr)
            times[name].append(t)
            peaks[name].append(rss)
    results = {name: (statistics.median(times[name]), max(peaks[name])) for name in steps}
    floor_t, floor_rss = results["floor"]
    print(f"{'step':<10}{'seconds':>9}{'x floor':>9}{'peak RSS':>12}{'x floor':>9}")
    for name, (t, rss) in results.items():
        print(f"{name:<10}{t:>9.2f}{t / floor_t:>9.2f}{rss / 2**30:>10.2f}GB{rss / floor_rss:>9.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
