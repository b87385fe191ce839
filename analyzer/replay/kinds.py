"""The API resources a bundle file can become: the names kubectl discovers and asks for."""

from __future__ import annotations

from dataclasses import dataclass

from analyzer.bundle.catalog import KINDS as CATALOG


@dataclass(frozen=True, kw_only=True)
class Kind:
    resource: str  # plural, as in the URL and the bundle file name (<resource>.json)
    kind: str
    singular: str
    group: str  # "" for the core group
    version: str  # the default; DRA kinds take the version their items carry
    namespaced: bool
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    name: str = ""  # the catalog's name (the manifest's kind): the plural, or <plural>.<group> for a custom resource

    @property
    def file(self) -> str:
        return f"{self.name or self.resource}.json"

    def group_version(self, version: str | None = None) -> str:
        v = version or self.version
        return f"{self.group}/{v}" if self.group else v


# The kinds themselves come from the one catalog; here only how the API server presents them
# (short names and categories, as `kubectl api-resources` lists them).
_SHORT_NAMES = {"pods": ("po",), "nodes": ("no",), "events": ("ev",), "namespaces": ("ns",),
                "resourcequotas": ("quota",), "replicasets": ("rs",), "statefulsets": ("sts",), "daemonsets": ("ds",)}
_CATEGORIES = {"pods": ("all",), "replicasets": ("all",), "statefulsets": ("all",), "daemonsets": ("all",),
               "jobs": ("all",)}

KINDS: tuple[Kind, ...] = tuple(
    # The plural is the name's first part ("nodepools.karpenter.sh", "configmaps.cluster-autoscaler-status").
    Kind(resource=c.name.split(".")[0], kind=c.item_kind, singular=c.item_kind.lower(), group=c.group, version="v1",
         namespaced=c.namespaced, short_names=_SHORT_NAMES.get(c.name, ()), categories=_CATEGORIES.get(c.name, ()),
         name=c.name)
    for c in CATALOG)

BY_RESOURCE: dict[str, Kind] = {k.resource: k for k in KINDS}
