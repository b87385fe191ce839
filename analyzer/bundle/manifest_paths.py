"""The manifest's own promise: every file it lists as collected exists inside the bundle, as a regular file."""

from __future__ import annotations

from typing import Callable

from analyzer.bundle.catalog import BY_NAME, MANIFEST, NAMES, VERSION
from analyzer.bundle.reading import Bundle
from analyzer.errors import BundleError


def check_manifest_paths(bundle: Bundle, add: Callable[[str, list[tuple[str, str, str]]], None]) -> None:
    """Every file the manifest lists as collected must exist inside the bundle."""
    manifest = bundle.manifest or {}
    for section in ("files", "attempts"):
        entries = manifest.get(section)
        if not isinstance(entries, list):
            continue
        for i, e in enumerate(entries):
            if not isinstance(e, dict) or not isinstance(e.get("path"), str) or e.get("status") != "ok":
                continue
            try:
                bundle.path(e["path"])
            except BundleError as exc:
                add(MANIFEST, [(f"$.{section}[{i}].path", "a path inside the bundle", f"{e['path']!r} ({exc.message})")])
                continue
            try:
                present = bundle.present(e["path"])
            except BundleError as exc:
                if section == "files" and e["path"] not in _READ:  # a file read is named by its reader, once
                    add(MANIFEST, [(f"$.{section}[{i}].path", "a regular file", f"{e['path']!r} ({exc.message})")])
                continue
            if not present:
                add(MANIFEST, [(f"$.{section}[{i}].path", "a file that exists in the bundle", f"{e['path']!r} is missing")])


_READ = frozenset([*(BY_NAME[k].file for k in NAMES), VERSION])  # the files the readers read (and name)
