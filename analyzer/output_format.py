"""The one interface of every command's `-o` formats (the registry that finds them is analyzer/output.py).

Modelled on pip-audit's `VulnerabilityFormat` (pypa/pip-audit, pip_audit/_format/interface.py): an abstract class
with the format's name and one method that renders the command's document. Formats never compute: the document is
built before (analyze: the verdicts; report: ReportData; diff: Diff; nodes: Occupancy).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Generic, TextIO, TypeVar

Document = TypeVar("Document")
Write = Callable[[str], object]  # where a format's helpers write their text: out.write, or a list's append

ANALYZE, REPORT, DIFF, NODES = "analyze", "report", "diff", "nodes"  # the commands, as the CLI names them


class Format(ABC, Generic[Document]):
    """One output format: its `-o` name, the commands it serves, and how it writes a document."""

    name: str  # the value of -o
    commands: frozenset[str]
    # analyze: the formats that print only each verdict's word and reason, so the verdicts are made
    # without their evidence (classify.Classifier, evidence=False).
    needs_evidence: bool = True

    @abstractmethod
    def render(self, document: Document, out: TextIO) -> None:
        """Write the document to `out` (a format that depends on a terminal asks `out` itself)."""


class RenderFunction(Format[Document]):
    """A format whose whole work is its module's `render(document, out)`."""

    def __init__(self, name: str, command: str, function: Callable[[Document, TextIO], None], *,
                 needs_evidence: bool = True) -> None:
        self.name = name
        self.commands = frozenset({command})
        self.function = function
        self.needs_evidence = needs_evidence

    def render(self, document: Document, out: TextIO) -> None:
        self.function(document, out)
