"""The API resources a bundle file can become: the names kubectl discovers and asks for."""

from __future__ import annotations

from dataclasses import dataclass

from analyzer.bundle.catalog import KINDS as CATALOG


@dataclass(frozen=True, kw_only=True)
class ApiResource:
    name: str  # the catalog's name of the kind (the bundle file without .json; qualified for custom resources)
    file: str  # the bundle file
    resource: str  # plural, as in the URL
    kind: str
    singular: str
    group: str  # "" for the core group
    version: str  # the default; DRA kinds take the version their items carry
    namespaced: bool
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()

    def group_version(self, version: str | None = None) -> str:
        v = version or self.version
        return f"{self.group}/{v}" if self.group else v


# Every kind of the one catalog, as the API server presents it (`kubectl api-resources`). The URL's plural is the
# name's first part ("nodepools.karpenter.sh", "configmaps.cluster-autoscaler-status").
RESOURCES: tuple[ApiResource, ...] = tuple(
    ApiResource(name=c.name, file=c.file, resource=c.name.split(".", 1)[0], kind=c.item_kind,
                singular=c.item_kind.lower(), group=c.group, version=c.version, namespaced=c.namespaced,
                short_names=c.short_names, categories=c.categories)
    for c in CATALOG)

