"""The DRA part of the cluster view: the resource.k8s.io files -> DraViews -> one DraWorld.

Built once per bundle beside the node views. One of the four files the rules need that is missing is named, so a
pod with claims answers `insufficient-evidence` naming it (causes.md: "When the bundle cannot decide").
`devicetaintrules.json` is read where present; without it no rule applies, which is what the scheduler does where
the API is not served (the collector records that as "not served")."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from analyzer.bundle.catalog import DEVICETAINTRULES, NEEDED_BY_CLAIMS
from analyzer.bundle.engines import Violation
from analyzer.bundle.validation import Loaded
from analyzer.model.nodes import NodeView

if TYPE_CHECKING:
    from analyzer.model.dra.allocate import DraWorld
    from analyzer.model.dra.outcomes import ExtendedOffer

# The files a pod with claims cannot be judged without; the others (DeviceTaintRules) only refine.
FILES = NEEDED_BY_CLAIMS
RULES = DEVICETAINTRULES.name


class Dra:
    """The DRA part of the cluster view. `world` is made at its first use: in a bundle with no DRA object at all
    (`empty`) no DeviceClass serves an extended resource and every pod with claims stops at the missing files,
    so most runs never make it, nor import the DRA model (a few dozen milliseconds of every start)."""

    def __init__(self, *, missing: dict[str, str], findings: list[Violation], empty: bool,
                 make: Callable[[], DraWorld]) -> None:
        self.missing = missing  # kind -> why its file is not usable (a pod with claims cannot be judged without it)
        self.findings = findings  # DRA objects left out as unreadable (file and JSON path)
        self.empty = empty
        self._make: Callable[[], DraWorld] | None = make
        self._world: DraWorld | None = None

    @property
    def world(self) -> DraWorld:
        if self._world is None:
            assert self._make is not None
            self._world, self._make = self._make(), None
        return self._world

    def extended_class(self, resource_name: str) -> str | None:
        """DraWorld.extended_class: none without a DeviceClass."""
        return None if self.empty else self.world.extended_class(resource_name)

    def extended_offer(self, resource_name: str, node: NodeView) -> ExtendedOffer | None:
        return None if self.empty else self.world.extended_offer(resource_name, node)


def build_dra(loaded: Loaded, nodes: list[NodeView]) -> Dra:
    missing = {kind: loaded.why_missing(kind) for kind in FILES if kind not in loaded.documents}
    if not any(kind in loaded.documents for kind in (*FILES, RULES)):
        return Dra(missing=missing, findings=[], empty=True, make=lambda: _world(loaded, nodes)[0])
    world, findings = _world(loaded, nodes)
    return Dra(missing=missing, findings=findings, empty=False, make=lambda: world)


def _world(loaded: Loaded, nodes: list[NodeView]) -> tuple[DraWorld, list[Violation]]:
    from analyzer.model.dra.allocate import DraWorld
    from analyzer.model.dra.reading import build_views

    # Every item, schema-invalid ones too: build_views leaves out what it cannot read and remembers it as
    # unreadable, so a pod naming it answers insufficient-evidence rather than "missing" (the paths stay right).
    items = {kind: loaded.documents[kind].items if kind in loaded.documents else [] for kind in (*FILES, RULES)}
    views = build_views(**items)
    # The schema findings already name the schema-invalid items; report only what they do not.
    reported = {(f"{k}.json", loaded.documents[k].item_path(i)) for k in (*FILES, RULES) if k in loaded.documents
                for i in loaded.documents[k].invalid}
    findings = [Violation(file=p.file, path=p.path, expected="a DRA object the rules can read", found=p.message) for p in views.problems
                if (p.file, _item_of(p.path)) not in reported]
    return DraWorld(views, nodes), findings


def _item_of(path: str) -> str:
    """`$.items[3].spec…` -> `$.items[3]`: the item a finding is about."""
    end = path.find("]")
    return path[: end + 1] if path.startswith("$.items[") and end > 0 else path
