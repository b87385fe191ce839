"""The one call from the replay into the analysis: each pod's cause word and reason.

One function, one import of the pipeline (analyse, Options); from each Verdict it reads
.target.kind/.namespace/.name, .word and .reason.
"""

from __future__ import annotations

from pathlib import Path


def causes(bundle_path: str | Path) -> dict[tuple[str, str], tuple[str, str]]:
    """(namespace, pod name) -> (cause word, reason) for every pod the analysis answers.
    Raises what analyse raises (BundleError for a bundle it cannot read)."""
    from analyzer.pipeline import Options, analyse

    analysis = analyse(bundle_path, Options())
    with analysis.bundle:
        return {(v.target.namespace, v.target.name): (v.word, v.reason)
                for v in analysis.verdicts if v.target.kind == "Pod"}
