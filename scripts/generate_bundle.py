#!/usr/bin/env python3
"""Write a synthetic, internally consistent gpu-triage bundle of N nodes and M pods.

    python scripts/generate_bundle.py --nodes 500 --pods 15000 --seed 1 --out /tmp/gen-med \\
        [--truth /tmp/gen-med.truth.tsv] [--pending-percent 3] [--force] [--dra] [--node-side] [--kueue] [--admission]

The bundle is what `scripts/collect.py` would write for a GKE-like cluster
(v1.36): every `<resource>.json` in kubectl's List shape and indentation (4
spaces, keys sorted, final newline), `version.json`, and `manifest.json` with
sizes, sha256 and redaction counts (env values and last-applied annotations
carry the collector's marker). Objects come from ``bundle_objects.py``
(pre-encoded templates), so 150,000 pods (~1.6 GB) stream to disk in minutes.

Deterministic: one ``random.Random(seed)`` drives every choice, names and
uids are hashes of the seed, and every time is an offset from a fixed clock;
the same arguments give the same bytes.

The cluster: GPU node pools (H100 x8 and A100 x4 tainted ``nvidia.com/gpu=
present:NoSchedule``, L4 x4 untainted, an A100 MIG pool with
``nvidia.com/mig-1g.10gb``, an L4 spot pool whose device plugin never came
up), CPU pools, a few cordoned nodes, single GPU nodes without the plugin
and with allocatable 0; DaemonSet pods on every node, Deployments
(ReplicaSets), Jobs (some from CronJobs), StatefulSets and bare pods; init
containers and native sidecars; RuntimeClass overhead; Succeeded and Failed
pods that keep their nodeName; per-namespace quotas whose status.used is the
sum over the namespace's non-terminated pods.

A few percent of the pods are Pending, built so that exactly one cause word of
shared/spec/causes.md holds (see Generator.make_scenarios, and make_filter_scenarios
for volumes and pod affinity), plus a ReplicaSet
refused by quota and a Job refused for a missing RuntimeClass (FailedCreate
events, owners short of replicas). Scheduler messages (PodScheduled condition
and FailedScheduling event, v1.36 wording) are rebuilt from the final world;
for fits-now they are deliberately stale. About a fifth of the pods carry a volume
claim, pod (anti-)affinity or a spread constraint (scripts/generate_filters.py). The one deliberate overcommit: a
node whose GPUs went unhealthy (allocatable 0) still runs the pod it had.
``--truth FILE`` writes the intended word per target: ``namespace/name<TAB>word``
(owners ``namespace/replicaset/NAME``, ``namespace/job/NAME``), sorted.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bundlegen.cli import main

if __name__ == "__main__":
    sys.exit(main())
