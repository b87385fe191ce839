"""Archives a ticket already carries, read as a bundle: which files of another collector's layout hold each kind.

A format adapter (bundle/troubleshoot.py, bundle/mustgather.py) looks at a directory's layout and says, for every
kind of the catalog, which of its files hold that kind's objects (`Part`s, each read item by item by
bundle/parts.py into the same sinks as our own files), which kinds the format never collects, and what the
format itself wrote about its own collection errors. Nothing after the reader knows the format: the documents,
the findings and `Loaded.missing` read as for our bundle, and a kind the format lacks is "missing" with a reason
that names the format, so a rule needing it says insufficient-evidence.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

# The shapes one file may have (each read by bundle/parts.py):
LIST = "list"  # a List object, `{"kind": "PodList", "items": [...]}` (JSON or YAML)
ARRAY = "array"  # a bare array of objects (troubleshoot's custom resources, its namespaces.json when restricted)
OBJECT = "object"  # one object per file (must-gather's cluster-scoped `<name>.yaml`)


@dataclass(frozen=True, kw_only=True)
class Part:
    """One file holding (some of) a kind's objects, relative to the bundle's root."""

    path: str
    shape: str  # LIST, ARRAY or OBJECT
    yaml: bool = False
    only_name: str | None = None  # keep only the object of this name (the autoscaler's status ConfigMap)


@dataclass(frozen=True, kw_only=True)
class CollectionError:
    """What the format recorded about its own failure to collect something (troubleshoot's `*-errors.json`)."""

    file: str
    path: str  # JSON path in that file
    message: str
    kind: str | None = None  # the catalog kind it prevented, when one


@dataclass(frozen=True, kw_only=True)
class Format:
    """A foreign archive's layout as the catalog's kinds."""

    name: str  # "troubleshoot support bundle", "must-gather": said in the header and in every missing reason
    version: str | None  # troubleshoot's version.yaml versionNumber, must-gather's timestamp
    parts: dict[str, tuple[Part, ...]]  # kind name -> its files (an empty tuple: collected, none exist)
    lacks: dict[str, str] = field(default_factory=dict)  # kind name -> why it is not there ("not collected by …")
    errors: tuple[CollectionError, ...] = ()
    server: dict | None = None  # a version.json's `serverVersion`, when the format records the server's version
    # Kinds this format never collects that a GPU pod's answer can need, for the report's header.
    never: tuple[str, ...] = ()

    @property
    def lacks_line(self) -> str:
        """The header's sentence: what this format does not give GPU triage."""
        if not self.never:
            return f"{self.name}: every kind gpu-triage reads can be in it"
        return f"{self.name} does not collect " + ", ".join(self.never)


def objects(kind: str) -> str:
    """A kind's objects as a person names them: `ResourceClaims`, `StorageClasses`, `Workloads (kueue.x-k8s.io)`."""
    from analyzer.bundle.catalog import BY_NAME

    k = BY_NAME[kind]
    kind_name = k.item_kind
    name = kind_name[:-1] + "ies" if kind_name.endswith("y") else kind_name + ("es" if kind_name.endswith("s") else "s")
    custom = k.group and k.name.endswith("." + k.group)
    if k.only is not None:
        return f"ConfigMaps named {k.only[0]}/{k.only[1]}"
    return f"{name} ({k.group})" if custom else name


def part_of(root: Path, path: Path, shape: str) -> Part:
    """A file found under root as a Part; YAML by its extension (both formats name their files so)."""
    rel = path.relative_to(root).as_posix()
    return Part(path=rel, shape=shape, yaml=path.suffix in (".yaml", ".yml"))


def files_in(directory: Path, *suffixes: str) -> list[Path]:
    """Regular files (never links: a format's YAML twin of a JSON file is a link) directly in `directory`, sorted."""
    if not directory.is_dir() or directory.is_symlink():
        return []
    return sorted(p for p in directory.iterdir()
                  if p.suffix in suffixes and not p.is_symlink() and p.is_file() and not p.name.endswith("-errors.json"))
