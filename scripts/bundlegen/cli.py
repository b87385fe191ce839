"""The command line (scripts/generate_bundle.py runs main())."""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from pathlib import Path

from bundlegen.common import POD_WORDS
from bundlegen.extras import add_stuck_daemonset, write_truth
from bundlegen.generator import Generator
from bundlegen.writer import Writer


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, required=True, help="number of nodes (at least 16)")
    ap.add_argument("--pods", type=int, required=True, help="number of pods in pods.json, every phase included")
    ap.add_argument("--seed", type=int, default=1, help="same seed, same bytes (default 1)")
    ap.add_argument("--out", type=Path, required=True, help="bundle directory to create")
    ap.add_argument("--truth", type=Path, help="write the intended cause word per target here (TSV, sorted)")
    ap.add_argument("--pending-percent", type=float, default=3.0, help="share of pods that are pending targets (default 3)")
    ap.add_argument("--force", action="store_true", help="replace --out if it exists")
    ap.add_argument("--stuck-daemonset", action="store_true",
                    help="also one Pending DaemonSet pod per node, each pinned to its node by matchFields "
                         "(one pod shape per node)")
    ap.add_argument("--diverse", action="store_true",
                    help="also hundreds of distinct pending shapes, most with hundreds of candidates (bundlegen/diverse.py)")
    ap.add_argument("--kueue", action="store_true",
                    help="a fifth of the pods held by Kueue, with its queues and workloads (scripts/generate_kueue.py)")
    ap.add_argument("--hami", action="store_true",
                    help="half the GPU pods for HAMi (hami-scheduler, whole cards), the GPU nodes registered with it")
    ap.add_argument("--kai", action="store_true",
                    help="a third of the other GPU pods for KAI-Scheduler, its Queues, PodGroups and pods, and pods its "
                         "queues refuse or whose GPU reservation failed (bundlegen/kai.py, scripts/generate_kai.py)")
    ap.add_argument("--dra", action="store_true", help="add DRA objects and claim pods (scripts/generate_dra.py)")
    ap.add_argument("--node-side", action="store_true",
                    help="add time-sliced and MIG nodes and bound pods the node will not start (scripts/generate_nodeside.py)")
    ap.add_argument("--unhealthy-nodes", action="store_true",
                    help="a tenth of the GPU nodes under pressure or NotReady, with their pods (scripts/generate_unhealthy.py)")
    ap.add_argument("--admission", action="store_true",
                    help="a fifth of the namespaces under a LimitRange, and three webhook configurations with ready "
                         "endpoints (scripts/generate_admission.py)")
    args = ap.parse_args(argv)

    t_start = time.perf_counter()
    out: Path = args.out
    if out.exists() and any(out.iterdir()):
        if not args.force:
            print(f"generate_bundle: {out} exists and is not empty (use --force to replace it)", file=sys.stderr)
            return 2
    gen = Generator(args.nodes, args.pods, args.seed, args.pending_percent, diverse=args.diverse, kueue=args.kueue,
                    hami=args.hami, kai=args.kai)
    gen.build()
    t_built = time.perf_counter()
    tmp = out.with_name(f".{out.name}.partial-{os.getpid()}")
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    try:
        writer = Writer(gen, tmp)
        writer.write_all()
        if writer.kai is not None:
            from generate_kai import add_kai
            add_kai(tmp, writer.kai)
        from generate_filters import add_filters  # volumes, inter-pod terms, spread, host ports
        add_filters(tmp, args.seed, gen.claim_plan)
        if args.kueue:
            from generate_kueue import add_kueue
            add_kueue(tmp, gen)
        if args.admission:  # objects only: every answer of the bundle stays as it was
            from generate_admission import add_admission
            add_admission(tmp, args.seed)
        if args.stuck_daemonset:
            add_stuck_daemonset(tmp)
        if args.dra:  # after the device-plugin world is written: its pods and truth stay as they are
            from generate_dra import add_dra
            gen.truth.update(add_dra(tmp, args.seed))
        if args.node_side:  # last: its namespace sorts after the DRA one, its nodes after every generated node
            from generate_nodeside import add_node_side
            gen.truth.update(add_node_side(tmp, args.seed))
        if args.unhealthy_nodes:  # last of all: its namespace sorts after every other
            from generate_unhealthy import add_unhealthy
            gen.truth.update(add_unhealthy(tmp, args.seed))
        if out.exists():
            shutil.rmtree(out)
        os.rename(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if args.truth:
        write_truth(gen, args.truth)
    words: dict[str, int] = {}
    for w in gen.truth.values():
        words[w] = words.get(w, 0) + 1
    size = (out / "pods.json").stat().st_size
    print(f"generate_bundle: {out}: {len(gen.nodes)} nodes, {len(gen.pods)} pods ({size / 1e6:,.1f} MB pods.json), "
          f"{len(gen.truth)} targets; planned in {t_built - t_start:.1f} s, total {time.perf_counter() - t_start:.1f} s",
          file=sys.stderr)
    extra = sorted(set(words) - set(POD_WORDS) - {"no-runtimeclass", "quota-exceeded"})
    print("  " + ", ".join(f"{w} {words.get(w, 0)}" for w in ("no-runtimeclass", "quota-exceeded") + POD_WORDS + tuple(extra)),
          file=sys.stderr)
    return 0
