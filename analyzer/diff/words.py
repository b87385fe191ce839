"""The cause word per target of one bundle: the ONE place diff touches the classifier.

Isolated because analyzer.pipeline / classify are being restructured: when the API moves, only
this function changes. Imports: analyzer.pipeline.analyse, analyzer.pipeline.Options.
"""

from __future__ import annotations

from pathlib import Path


def cause_words(path: str | Path) -> dict[str, str]:
    """{target key: cause word} as `gpu-triage analyze -o words` gives them (default options).
    Raises BundleError when the bundle cannot be read."""
    from analyzer.pipeline import Options, analyse

    analysis = analyse(path, Options())
    try:
        return {v.key: v.word for v in analysis.verdicts}
    finally:
        analysis.bundle.close()
