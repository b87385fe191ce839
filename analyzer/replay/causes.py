"""The one call from the replay into the analysis: each pod's cause word and reason.

One function, one import of the pipeline (analyse, Options); from each Verdict it reads
.target.kind/.namespace/.name, .word and .reason.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable


def causes(bundle_path: str | Path, warn: Callable[[str], None] | None = None) -> dict[tuple[str, str], tuple[str, str]]:
    """(namespace, pod name) -> (cause word, reason) for every pod the analysis answers; `warn` gets each
    file edited after collection, as every command names it. Raises what analyse raises (BundleError for a
    bundle it cannot read)."""
    from analyzer.pipeline import Options, analyse

    analysis = analyse(bundle_path, Options())
    if warn is not None:
        for line in analysis.changed:
            warn(line)
    with analysis.bundle:
        return {(v.target.namespace, v.target.name): (v.word, v.reason)
                for v in analysis.verdicts if v.target.kind == "Pod"}
