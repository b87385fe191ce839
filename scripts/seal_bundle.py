"""Write manifest.json for a directory of kubectl outputs made by hand (or re-seal after editing).

    python scripts/seal_bundle.py DIR [--context NAME] [--created 2026-11-29T17:20:00Z]

Lists every known <kind>.json, version.json and attempts/*.json present with
its size, sha256 and the kubectl command that makes it. Run from the repository (it reads the kinds catalog).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from analyzer.bundle.catalog import KINDS as CATALOG, VERSION_COMMAND  # noqa: E402

# The kinds come from the one catalog; the command is the one the collector runs.
KINDS = {k.name: list(k.command) for k in CATALOG}
KINDS["version"] = list(VERSION_COMMAND)


def entry(root: Path, rel: str, kind: str, command: list[str]) -> dict:
    data = (root / rel).read_bytes()
    items = None
    try:
        doc = json.loads(data)
        if isinstance(doc, dict) and isinstance(doc.get("items"), list):
            items = len(doc["items"])
    except ValueError:
        pass
    return {"path": rel, "kind": kind, "status": "ok", "command": command, "exitStatus": 0, "stderr": "",
            "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest(), "items": items}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir", type=Path)
    ap.add_argument("--context")
    ap.add_argument("--created", help="UTC time, RFC 3339 with Z (default: now)")
    args = ap.parse_args(argv)
    root: Path = args.dir
    created = args.created or datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    files = [entry(root, f"{k}.json", k, cmd) for k, cmd in KINDS.items() if (root / f"{k}.json").is_file()]
    attempts = [entry(root, f"attempts/{p.name}", "attempt", []) for p in sorted((root / "attempts").glob("*.json"))]
    for a in attempts:
        answer = json.loads((root / a["path"]).read_text()).get("answer") or {}
        a["command"] = answer.get("command", [])
    versions = {}
    if (root / "version.json").is_file():
        v = json.loads((root / "version.json").read_text())
        versions = {"clientVersion": (v.get("clientVersion") or {}).get("gitVersion"),
                    "serverVersion": (v.get("serverVersion") or {}).get("gitVersion")}
    manifest = {
        "format": "gpu-triage/bundle",
        "formatVersion": 1,
        "created": created,
        "completed": created,
        "collector": {"name": "seal_bundle.py", "version": "0.1.0"},
        "kubectl": versions,
        "context": args.context,
        "namespaces": None,
        "redaction": {"enabled": False, "rules": [], "counts": {}},
        "partial": False,
        "files": files,
        "attempts": attempts,
    }
    (root / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    print(root / "manifest.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
