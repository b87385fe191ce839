"""A file that differs from what manifest.json recorded when it was collected: edited on purpose (a what-if),
or changed in transit. Said the right way round: the file changed, not the manifest."""

from __future__ import annotations

from dataclasses import dataclass

from analyzer.bundle.catalog import MANIFEST
from analyzer.bundle.engines import Violation


def manifest_findings(rel: str, size: int, digest: str, index: tuple[str, int, dict] | None) -> list["FileChanged"]:
    """The file against the size and sha256 manifest.json recorded at collection: one finding when it
    changed since (an edit on purpose, a what-if, or damage in transit), none when it agrees."""
    if index is None:
        return []
    section, i, entry = index
    recorded_size = entry.get("bytes") if isinstance(entry.get("bytes"), int) else None
    recorded_sha = entry.get("sha256") if isinstance(entry.get("sha256"), str) else None
    parts = []
    if recorded_size is not None and recorded_size != size:
        parts.append(f"{size} bytes now, {recorded_size} when collected")
    if recorded_sha is not None and recorded_sha != digest:
        parts.append(f"sha256 {digest[:12]}… now, {recorded_sha[:12]}… when collected")
    if not parts:
        return []
    return [FileChanged(file=MANIFEST, path=f"$.{section}[{i}]", expected=str(recorded_size), found=str(size), changed=rel,
                        detail="; ".join(parts))]


@dataclass(frozen=True, order=True, kw_only=True)
class FileChanged(Violation):
    """A file that differs from what manifest.json recorded when it was collected. The file is read as it
    is now (every answer is about the edited file); `validate` counts it as a finding, the other commands
    warn once and answer."""

    changed: str = ""
    detail: str = ""

    def __str__(self) -> str:
        return f"{self.changed} changed after collection: {self.detail} (manifest.json {self.path})"


__all__ = ["FileChanged", "manifest_findings"]
