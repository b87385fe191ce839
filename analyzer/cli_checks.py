"""What the command line says about names that are not in the bundle: a `--gpu-pod` or `-n` that matches nothing
is warned about (the answer would silently be about something else), a `why` target gets "did you mean"."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from analyzer.pipeline import Analysis

SHOWN = 8  # namespaces named in a hint


def _namespaces(analysis: Analysis) -> set[str]:
    out = {k.partition("/")[0] for k in analysis.cluster.pod_keys}
    out.update(t.namespace for t in analysis.extra)
    return out


def unknown_names(analysis: Analysis, *, namespaces: Iterable[str] = (), gpu_pods: Iterable[str] = ()) -> list[str]:
    """One warning per `-n` namespace with no pod (nor attempt) in the bundle and per `--gpu-pod` naming no pod."""
    out = []
    known = _namespaces(analysis)
    for ns in dict.fromkeys(namespaces):
        if ns not in known:
            have = sorted(known)
            listed = ", ".join(have[:SHOWN]) + (f" (+{len(have) - SHOWN} more)" if len(have) > SHOWN else "")
            near = difflib.get_close_matches(ns, have, n=1)
            hint = f"; did you mean {near[0]}?" if near else ""
            out.append(f"-n {ns}: no pod of this bundle is in namespace {ns!r} "
                       f"(namespaces with pods: {listed or 'none'}){hint}")
    pods = analysis.cluster.pod_keys
    for key in dict.fromkeys(gpu_pods):
        if key not in pods:
            out.append(f"--gpu-pod {key}: no such pod in pods.json{did_you_mean(key, pods)}; it declares nothing")
    return out


def did_you_mean(key: str, known: Iterable[str]) -> str:
    """'; did you mean lab/exhausted?' for the closest known name, or ''."""
    near = difflib.get_close_matches(key, list(known), n=3, cutoff=0.75)
    return f"; did you mean {' or '.join(near)}?" if near else ""


__all__ = ["did_you_mean", "unknown_names"]
