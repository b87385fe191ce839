"""`gpu-triage serve` on hostile bundles and under a request flood: kubectl gets what the bundle has, every missing
or unreadable file named, and the server's memory stays bounded.

Bundles start from the lab's real objects (conftest), changed only where the case needs.
"""

from __future__ import annotations

import http.client
import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from analyzer.replay.api import MAX_LIMIT
from helpers import LAB, REPO
from conftest import copy_lab, kubectl_list, lab_node, lab_pod, make_bundle
from test_replay import serving



def _rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def _tiny_pod(i: int) -> dict:
    """A lab pod reduced to what the API and printer read, so thousands of them stay small."""
    p = lab_pod("exhausted")
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"p-{i:05d}", "namespace": f"ns-{i % 50}", "uid": f"u-{i}",
                         "resourceVersion": str(1000 + i), "creationTimestamp": p["metadata"]["creationTimestamp"],
                         "labels": {"shard": str(i % 7)}},
            "spec": {"containers": [{"name": "c", "image": "x"}]},
            "status": {"phase": "Pending" if i % 3 else "Running"}}


def test_names_with_control_characters_are_served_and_listed(kubectl: str, tmp_path: Path) -> None:
    evil = lab_pod("exhausted")
    evil["metadata"]["name"] = "evil\x1b[31mred\x07\ttab"
    bundle = make_bundle(tmp_path, pods=[evil, lab_pod("taint")], nodes=[lab_node("gpu-ok")])
    with serving(bundle, tmp_path / "run") as replay:
        status, body = replay.http("GET", "/api/v1/pods")
        names = [p["metadata"]["name"] for p in json.loads(body)["items"]]
        assert status == 200 and evil["metadata"]["name"] in names
        done = replay.kubectl("get", "pods", "-A", "-o", "json")
        assert evil["metadata"]["name"] in [p["metadata"]["name"] for p in json.loads(done.stdout)["items"]]
        table = replay.kubectl("get", "pods", "-A")
        assert table.stdout.count("\n") == 3  # header + 2 rows; the server survived the table too
        status, body = replay.http("GET", "/api/v1/namespaces/lab/pods/evil%1B%5B31mred%07%09tab")
        assert status == 200 and json.loads(body)["metadata"]["name"] == evil["metadata"]["name"]


@pytest.mark.slow
def test_a_large_pod_list_is_served_in_pages_kubectl_follows(kubectl: str, tmp_path: Path) -> None:
    """More pods than the largest page (api.MAX_LIMIT): kubectl's 500-item chunks are followed to the end, and
    no page, whatever limit is asked, is larger than MAX_LIMIT."""
    n = MAX_LIMIT + 2_000
    bundle = make_bundle(tmp_path, pods=[_tiny_pod(i) for i in range(n)], nodes=[lab_node("gpu-ok")])
    with serving(bundle, tmp_path / "run") as replay:
        status, body = replay.http("GET", "/api/v1/pods?limit=500")
        page = json.loads(body)
        assert status == 200 and len(page["items"]) == 500 and page["metadata"]["remainingItemCount"] == n - 500
        status, body = replay.http("GET", f"/api/v1/pods?limit={n}")
        page = json.loads(body)
        assert status == 200 and len(page["items"]) == MAX_LIMIT and page["metadata"]["remainingItemCount"] == n - MAX_LIMIT
        out = replay.kubectl("get", "pods", "-A", "--no-headers", "-l", "shard=3").stdout  # chunked: limit=500 + continue
        assert len(out.splitlines()) == sum(1 for i in range(n) if i % 7 == 3)
        assert replay.proc.poll() is None


def test_a_bundle_missing_most_kinds_serves_what_it_has_and_names_what_it_lacks(kubectl: str, tmp_path: Path) -> None:
    bundle = make_bundle(tmp_path, nodes=[lab_node("gpu-ok")])
    assert not (bundle / "pods.json").exists()
    with serving(bundle, tmp_path / "run") as replay:
        assert replay.kubectl("api-resources", "-o", "name").stdout.split() == ["nodes"]
        assert replay.kubectl("get", "nodes", "-o", "name").stdout.split() == ["node/gpu-ok"]
        status, body = replay.http("GET", "/api/v1/pods")
        doc = json.loads(body)
        assert status == 404 and "pods.json was not collected" in doc["message"]
        status, body = replay.http("GET", "/version")
        assert status == 404 and "version.json" in json.loads(body)["message"]


def test_an_unreadable_file_is_reported_with_its_name_and_the_rest_is_served(kubectl: str, tmp_path: Path) -> None:
    bundle = copy_lab(tmp_path)
    (bundle / "events.json").write_text('{"kind": "List", "items": [')
    (bundle / "namespaces.json").write_text(json.dumps(kubectl_list([{"metadata": {"name": 7}}])))
    with serving(bundle, tmp_path / "run") as replay:
        status, body = replay.http("GET", "/api/v1/events")
        assert status == 404 and "events.json: $: not JSON (truncated?)" in json.loads(body)["message"]  # as analyze says it
        assert replay.kubectl("get", "namespaces", "-o", "name").stdout == ""
        assert len(replay.kubectl("get", "pods", "-A", "-o", "name").stdout.split()) == 9
        replay.proc.terminate()
        stderr = replay.proc.communicate(timeout=20)[1]
    assert "namespaces.json: $.items[0].metadata.name" in stderr


def test_a_bundle_with_nothing_to_serve_exits_2_with_a_message(tmp_path: Path) -> None:
    bundle = tmp_path / "b"
    bundle.mkdir()
    (bundle / "pods.json").write_text("[1, 2]")
    done = subprocess.run([sys.executable, "-m", "analyzer", "serve", str(bundle)], capture_output=True, text=True,
                          cwd=REPO, timeout=60)
    assert done.returncode == 2
    assert "nothing to serve" in done.stderr and "Traceback" not in done.stderr


def test_a_request_flood_is_answered_without_unbounded_memory_growth(kubectl: str, tmp_path: Path) -> None:
    paths = ["/api/v1/pods", "/api/v1/namespaces/lab/pods/exhausted", "/api", "/apis", "/api/v1", "/version",
             "/api/v1/pods?labelSelector=case%3Dtaint", "/api/v1/pods?fieldSelector=bogus%3D1", "/api/v1/secrets"]

    def hit(i: int) -> int:
        conn = http.client.HTTPConnection("127.0.0.1", replay.port, timeout=30)
        try:
            method = "DELETE" if i % 10 == 0 else "GET"
            accept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json" if i % 2 else "application/json"
            conn.request(method, paths[i % len(paths)], headers={"Accept": accept})
            resp = conn.getresponse()
            body = resp.read()
            assert body, "every answer has a body (a Status at worst)"
            return resp.status
        finally:
            conn.close()

    with serving(LAB, tmp_path / "run") as replay:
        with ThreadPoolExecutor(max_workers=16) as pool:
            list(pool.map(hit, range(300)))  # warm up: imports, caches, allocator arenas
            before = _rss_kib(replay.proc.pid)
            statuses = list(pool.map(hit, range(2_000)))
            after = _rss_kib(replay.proc.pid)
        assert set(statuses) <= {200, 400, 404, 405}
        assert statuses.count(405) == 200
        # Generous: a leak of even 30 KiB per request (a kept reply) would exceed it.
        assert after - before < 64 * 1024, f"RSS grew {after - before} KiB over 2,000 requests"
        assert replay.proc.poll() is None
