"""Fixtures for the volume, inter-pod, spread and port tests: the two real v1.36.2 recordings
(wffc-pv-on-cpu-node, pod-anti-affinity), copied, with only what each case needs changed."""

from __future__ import annotations

import copy
import json
import shutil
from collections.abc import Callable
from pathlib import Path

from conftest import kubectl_list, verdict
from helpers import RECORDINGS

WFFC = "wffc-pv-on-cpu-node-v1.36"
ANTI = "pod-anti-affinity-v1.36"


def items(name: str, kind: str) -> list[dict]:
    path = RECORDINGS / name / f"{kind}.json"
    return json.loads(path.read_text())["items"] if path.exists() else []


def recording(tmp_path: Path, name: str, edit: dict[str, Callable[[list[dict]], list[dict]]] | None = None,
              drop: tuple[str, ...] = ()) -> Path:
    """A copy of a recording; `edit` maps a kind to items -> items (kinds the recording lacks start empty)."""
    out = tmp_path / name
    shutil.copytree(RECORDINGS / name, out)
    for kind in drop:
        (out / f"{kind}.json").unlink()
    for kind, fn in (edit or {}).items():
        (out / f"{kind}.json").write_text(json.dumps(kubectl_list(fn(copy.deepcopy(items(name, kind)))), indent=4))
    return out


def pod_named(pods: list[dict], name: str) -> dict:
    return next(p for p in pods if p["metadata"]["name"] == name)


def edit_pod(name: str, fn: Callable[[dict], None]) -> Callable[[list[dict]], list[dict]]:
    def run(pods: list[dict]) -> list[dict]:
        fn(pod_named(pods, name))
        return pods
    return run


def edit_each(fn: Callable[[dict], None]) -> Callable[[list[dict]], list[dict]]:
    def run(objs: list[dict]) -> list[dict]:
        for o in objs:
            fn(o)
        return objs
    return run


def add(*objs: dict) -> Callable[[list[dict]], list[dict]]:
    return lambda existing: existing + list(objs)


def node_like(base: dict, name: str, **labels: str) -> dict:
    n = copy.deepcopy(base)
    n["metadata"]["name"] = name
    n["metadata"]["uid"] = f"uid-{name}"
    n["metadata"]["labels"].update({"kubernetes.io/hostname": name, **labels})
    return n


def running_like(base: dict, name: str, node: str, **labels: str) -> dict:
    """A copy of a running recorded pod, on another node, with other labels."""
    p = copy.deepcopy(base)
    p["metadata"]["name"] = name
    p["metadata"]["uid"] = f"uid-{name}"
    p["metadata"]["labels"] = dict(labels) if labels else p["metadata"]["labels"]
    p["spec"]["nodeName"] = node
    return p


def judge(path: Path, key: str):
    """The verdict of `key`; and every verdict of the bundle the same from the node columns as from the checks
    node by node (tests/reference_funnel.py)."""
    from analyzer.pipeline import Options, analyse
    from reference_funnel import verdicts_by_node

    analysis = analyse(path, Options())
    with analysis.bundle:
        fast = [v.to_dict() for v in analysis.verdicts]
        slow = [v.to_dict() for v in verdicts_by_node(analysis.cluster, analysis.extra)]
    assert fast == slow
    return verdict(path, key)
