"""Measure gpu-triage on one bundle: the floor, validate, analyze; seconds, ratio, peak RSS.

    python scripts/benchmark.py BUNDLE [--runs 3] [--output table|words|json]

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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("bundle", type=Path)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--output", default="table", choices=["table", "words", "json"])
    args = ap.parse_args(argv)
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
