"""The DRA part of the cluster view: the resource.k8s.io files -> DraViews -> one DraWorld.

Built once per bundle beside the node views. One of the four files the rules need that is missing is named, so a
pod with claims answers `insufficient-evidence` naming it (causes.md: "When the bundle cannot decide").
`devicetaintrules.json` is read where present; without it no rule applies, which is what the scheduler does where
the API is not served (the collector records that as "not served")."""

from __future__ import annotations

from dataclasses import dataclass

from analyzer.bundle.catalog import DEVICETAINTRULES, NEEDED_BY_CLAIMS
from analyzer.bundle.engines import Violation
from analyzer.bundle.validation import Loaded
from analyzer.model.dra.allocate import DraWorld
from analyzer.model.dra.reading import build_views
from analyzer.model.nodes import NodeView

# The files a pod with claims cannot be judged without; the others (DeviceTaintRules) only refine.
FILES = NEEDED_BY_CLAIMS
RULES = DEVICETAINTRULES.name


@dataclass(frozen=True, kw_only=True)
class Dra:
    world: DraWorld
    missing: dict[str, str]  # kind -> why its file is not usable (a pod with claims cannot be judged without it)
    findings: list[Violation]  # DRA objects left out as unreadable (file and JSON path)


def build_dra(loaded: Loaded, nodes: list[NodeView]) -> Dra:
    # Every item, schema-invalid ones too: build_views leaves out what it cannot read and remembers it as
    # unreadable, so a pod naming it answers insufficient-evidence rather than "missing" (the paths stay right).
    items = {kind: loaded.documents[kind].items if kind in loaded.documents else [] for kind in (*FILES, RULES)}
    views = build_views(**items)
    missing = {kind: loaded.why_missing(kind) for kind in FILES if kind not in loaded.documents}
    # The schema findings already name the schema-invalid items; report only what they do not.
    reported = {(f"{k}.json", loaded.documents[k].item_path(i)) for k in (*FILES, RULES) if k in loaded.documents
                for i in loaded.documents[k].invalid}
    findings = [Violation(file=p.file, path=p.path, expected="a DRA object the rules can read", found=p.message) for p in views.problems
                if (p.file, _item_of(p.path)) not in reported]
    return Dra(world=DraWorld(views, nodes), missing=missing, findings=findings)


def _item_of(path: str) -> str:
    """`$.items[3].spec…` -> `$.items[3]`: the item a finding is about."""
    end = path.find("]")
    return path[: end + 1] if path.startswith("$.items[") and end > 0 else path
