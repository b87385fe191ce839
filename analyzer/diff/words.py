"""The cause word per target of one bundle: the ONE place diff touches the classifier.

One function, one import of the pipeline (analyse, Options): the rest of diff reads plain records.
"""

from __future__ import annotations

from pathlib import Path


def cause_words(path: str | Path) -> dict[str, tuple[str, str]]:
    """{target key: (kind, cause word)} as `gpu-triage analyze -o words` gives them (default options);
    kind is "Pod", "Attempt" (a stored or given manifest) or the refused owner's kind.
    Raises BundleError when the bundle cannot be read."""
    from analyzer.pipeline import Options, analyse

    analysis = analyse(path, Options())
    try:
        return {v.key: (v.target.kind, v.word) for v in analysis.verdicts}
    finally:
        analysis.bundle.close()
