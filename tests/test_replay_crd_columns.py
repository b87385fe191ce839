"""The custom resources' tables in replay: the columns each CRD declares (`additionalPrinterColumns`, in
replay/crd_tables.py with the CRD files they come from), with the cells the API server's tableconvertor gives,
read by the real kubectl. Karpenter's NodePool and NodeClaims are the real recording's; the Volcano and KAI
objects are the ones the queue tests use (tests/test_queues.py, tests/test_kai_queues.py), with status filled
where a column reads it."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

from analyzer.bundle.catalog import KAI_PODGROUPS, KAI_QUEUES, NODECLAIMS, NODEPOOLS, PODGROUPS, VOLCANO_JOBS, VOLCANO_QUEUES
from analyzer.replay.crd_tables import PrinterColumn, cell, find_first
from analyzer.replay.humantime import since
from helpers import RECORDINGS
from test_replay import serving

KARPENTER = RECORDINGS / "karpenter-nodepool-limits-v1.36"
COLLECTED = "2026-12-01T23:30:00Z"


def _list(items: list[dict]) -> str:
    return json.dumps({"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": items})


def _bundle(tmp: Path) -> Path:
    root = tmp / "crds"
    shutil.copytree(KARPENTER, root)
    (root / "manifest.json").write_text(json.dumps({"format": 1, "created": COLLECTED}))
    volcano = {
        VOLCANO_QUEUES: [{"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
                          "metadata": {"name": "research", "creationTimestamp": "2026-12-01T20:00:00Z"},
                          "spec": {"capability": {"nvidia.com/gpu": "8"}, "parent": "root"},
                          "status": {"state": "Open"}}],
        PODGROUPS: [{"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
                     "metadata": {"name": "pg-train", "namespace": "team-a", "creationTimestamp": "2026-12-01T23:20:00Z"},
                     "spec": {"minMember": 2, "queue": "research", "minResources": {"nvidia.com/gpu": "8"}},
                     "status": {"phase": "Pending", "running": 1}}],
        VOLCANO_JOBS: [{"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
                        "metadata": {"name": "train", "namespace": "team-a", "creationTimestamp": "2026-12-01T23:29:30Z"},
                        "spec": {"minAvailable": 2, "queue": "research", "schedulerName": "volcano"},
                        "status": {"state": {"phase": "Pending"}, "minAvailable": 2}}],
        KAI_QUEUES: [{"apiVersion": "scheduling.run.ai/v2", "kind": "Queue",
                      "metadata": {"name": "team-a", "creationTimestamp": "2026-11-29T16:00:00Z"},
                      "spec": {"parentQueue": "default", "resources": {"gpu": {"quota": 4, "limit": 8}}},
                      "status": {"childQueues": ["team-a-dev", "team-a-prod"]}}],
        KAI_PODGROUPS: [{"apiVersion": "scheduling.run.ai/v2alpha2", "kind": "PodGroup",
                         "metadata": {"name": "pg-kai", "namespace": "lab", "creationTimestamp": "2026-12-01T23:00:00Z"},
                         "spec": {"minMember": 1, "queue": "team-a"}, "status": {"phase": "Pending"}}],
    }
    for kind, items in volcano.items():
        (root / kind.file).write_text(_list(items))
    return root


def _rows(text: str) -> tuple[list[str], list[list[str]]]:
    """A kubectl table cut at its header's columns: a cell the server sent none for is printed empty by kubectl,
    so splitting at runs of spaces would shift the cells after it."""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    # kubectl pads columns with at least three spaces; a header such as CREATED AT holds one
    starts = [i for i, ch in enumerate(lines[0]) if ch != " " and (i == 0 or lines[0][i - 2:i] == "  ")]
    bounds = list(zip(starts, starts[1:] + [None]))
    return ([lines[0][a:b].strip() for a, b in bounds],
            [[ln[a:b].strip() for a, b in bounds] for ln in lines[1:]])


def test_simple_jsonpaths_as_the_api_server_evaluates_them():
    claim = json.loads((KARPENTER / NODECLAIMS.file).read_text())["items"][0]
    assert find_first(claim, r".metadata.labels.node\.kubernetes\.io/instance-type") == "g5.12xlarge"
    assert find_first(claim, '.status.conditions[?(@.type=="Ready")].status') == "True"
    now = datetime(2026, 12, 1, 23, 30, tzinfo=UTC)
    # An integer under a `string` column prints as the JSONPath printer writes it; a `date` is an age; missing: no cell.
    assert cell(PrinterColumn(name="Nodes", json_path=".status.nodes"), {"status": {"nodes": 2}}, now) == "2"
    assert cell(PrinterColumn(name="Age", json_path=".metadata.creationTimestamp", type="date"),
                {"metadata": {"creationTimestamp": "2026-12-01T23:20:00Z"}}, now) == "10m"
    assert cell(PrinterColumn(name="Age", json_path=".metadata.creationTimestamp", type="date"),
                {"metadata": {"creationTimestamp": "yesterday"}}, now) == "<invalid>"
    # A list or map under a `string` column prints as Go's fmt prints the decoded JSON (KAI's Children).
    children = PrinterColumn(name="Children", json_path=".status.childQueues")
    assert cell(children, {"status": {"childQueues": ["team-a-dev", "team-a-prod"]}}, now) == "[team-a-dev team-a-prod]"
    assert cell(PrinterColumn(name="R", json_path=".status.resources"), {"status": {"resources": {"gpu": 8, "cpu": "4"}}},
                now) == "map[cpu:4 gpu:8]"
    assert cell(PrinterColumn(name="Weight", json_path=".spec.weight", type="integer"), {"spec": {}}, now) is None
    assert cell(PrinterColumn(name="Weight", json_path=".spec.weight", type="integer"), {"spec": {"weight": "x"}}, now) is None


def test_kubectl_get_shows_each_crds_printer_columns(kubectl: str, tmp_path: Path) -> None:
    root = _bundle(tmp_path)
    now = datetime.fromisoformat(COLLECTED.replace("Z", "+00:00"))
    pool = json.loads((root / NODEPOOLS.file).read_text())["items"][0]
    claims = json.loads((root / NODECLAIMS.file).read_text())["items"]
    with serving(root, tmp_path / "serve") as replay:
        header, rows = _rows(replay.kubectl("get", "nodepools").stdout)
        assert header == ["NAME", "NODECLASS", "NODES", "READY", "AGE"]
        assert rows == [["gpu", "gpu", "2", "True", since(pool["metadata"]["creationTimestamp"], now)]]
        header, rows = _rows(replay.kubectl("get", "nodepools", "-o", "wide").stdout)
        assert header == ["NAME", "NODECLASS", "NODES", "READY", "AGE", "WEIGHT", "CPU", "MEMORY"]
        assert rows[0][5:] == ["", "96", "391556248Ki"]  # no spec.weight in the recording: no cell, printed empty
        header, rows = _rows(replay.kubectl("get", "nodeclaims").stdout)
        assert header == ["NAME", "TYPE", "CAPACITY", "ZONE", "NODE", "READY", "AGE"]
        assert sorted(r[:6] for r in rows) == sorted(
            [c["metadata"]["name"], "g5.12xlarge", "on-demand", c["metadata"]["labels"]["topology.kubernetes.io/zone"],
             c["status"]["nodeName"], "True"] for c in claims)
        header, rows = _rows(replay.kubectl("get", "nodeclaims", "-o", "wide").stdout)
        assert header[-5:] == ["IMAGEID", "ID", "NODEPOOL", "NODECLASS", "DRIFTED"]
        assert {(r[-3], r[-1]) for r in rows} == {("gpu", "")}

        # Volcano: the Queue's only column is PARENT (no AGE: the CRD declares none).
        header, rows = _rows(replay.kubectl("get", VOLCANO_QUEUES.resource).stdout)
        assert (header, rows) == (["NAME", "PARENT"], [["research", "root"]])
        header, rows = _rows(replay.kubectl("get", PODGROUPS.resource, "-A", "-o", "wide").stdout)
        assert header == ["NAMESPACE", "NAME", "STATUS", "MINMEMBER", "RUNNINGS", "AGE", "QUEUE"]
        assert rows == [["team-a", "pg-train", "Pending", "2", "1", "10m", "research"]]
        header, rows = _rows(replay.kubectl("get", VOLCANO_JOBS.resource, "-A").stdout)
        assert header == ["NAMESPACE", "NAME", "STATUS", "MINAVAILABLE", "RUNNINGS", "AGE"]
        assert rows == [["team-a", "train", "Pending", "2", "", "30s"]]  # no status.running yet

        # KAI: the Queue's four columns; its PodGroup's CRD declares none, so the server gives Age alone.
        header, rows = _rows(replay.kubectl("get", KAI_QUEUES.resource).stdout)
        assert (header, rows) == (["NAME", "PRIORITY", "PARENT", "CHILDREN", "DISPLAYNAME"],
                                  [["team-a", "", "default", "[team-a-dev team-a-prod]", ""]])
        header, rows = _rows(replay.kubectl("get", KAI_PODGROUPS.resource, "-n", "lab").stdout)
        assert (header, rows) == (["NAME", "AGE"], [["pg-kai", "30m"]])
