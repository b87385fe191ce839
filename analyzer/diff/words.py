"""The analysis of one bundle, words included: the ONE place diff touches the classifier.

One function, one import of the pipeline (analyse, Options): the rest of diff reads plain records.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from analyzer.errors import BundleError

if TYPE_CHECKING:
    from analyzer.model.accelerators import AcceleratorConfig
    from analyzer.pipeline import Analysis


def cause_words(path: str | Path, config: "AcceleratorConfig | None" = None) -> "Analysis":
    """The bundle analysed as `gpu-triage analyze` analyses it (default options, or `config`'s accelerators),
    with every pod's node and phase kept (`pod_states`). The caller closes `analysis.bundle`. Raises
    BundleError, naming the bundle, when it cannot be read."""
    from analyzer.pipeline import Options, analyse

    try:
        analysis = analyse(path, Options(), pod_states=True)
    except BundleError as exc:
        label = str(path)
        if exc.file and not exc.file.startswith(label):
            raise BundleError(f"{label}: {exc.file}", exc.message, exc.path) from None  # which of the two bundles
        raise
    if config is not None:
        analysis.cluster.config = config
    return analysis
