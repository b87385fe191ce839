"""Helpers for the ticket-report tests: build a report in-process, read an HTML page as a person sees it,
(generated bundles: the session's `generated_large`, conftest.py)."""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

from analyzer.pipeline import Options, analyse
from analyzer.report import html, markdown
from analyzer.report.ticket import report_data
from analyzer.report.ticket_records import ReportData


def data_of(bundle: Path | str) -> ReportData:
    analysis = analyse(bundle, Options())
    with analysis.bundle:
        return report_data(analysis)


def html_of(data: ReportData) -> str:
    buf = io.StringIO()
    html.render(data, buf)
    return buf.getvalue()


def markdown_of(data: ReportData) -> str:
    buf = io.StringIO()
    markdown.render(data, buf)
    return buf.getvalue()


@dataclass
class Page:
    """What a browser makes of the markup: the elements and the text (entities decoded)."""

    tags: list[str] = field(default_factory=list)
    attrs: list[tuple[str, str, str | None]] = field(default_factory=list)  # (tag, name, value)
    text: str = ""
    rows: list[list[str]] = field(default_factory=list)  # each <tr>'s cells, as text


class _Reader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.page = Page()
        self._chunks: list[str] = []
        self._row: list[str] | None = None
        self._cell: list[str] | None = None
        self._skip = 0

    def handle_starttag(self, tag, attrs):  # type: ignore[no-untyped-def]
        self.page.tags.append(tag)
        self.page.attrs.extend((tag, k, v) for k, v in attrs)
        if tag in ("style", "title"):
            self._skip += 1
        if tag == "tr":
            self._row = []
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag):  # type: ignore[no-untyped-def]
        if tag in ("style", "title"):
            self._skip -= 1
        if tag in ("td", "th") and self._row is not None and self._cell is not None:
            self._row.append(" ".join("".join(self._cell).split()))
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self.page.rows.append(self._row)
            self._row = None
        if tag in ("p", "li", "div", "tr", "h1", "h2", "h3", "dd", "dt", "br"):
            self._chunks.append("\n")

    def handle_data(self, data):  # type: ignore[no-untyped-def]
        if self._skip:
            return
        self._chunks.append(data)
        if self._cell is not None:
            self._cell.append(data)

    def close(self) -> None:
        super().close()
        self.page.text = "".join(self._chunks)


def read_page(markup: str) -> Page:
    reader = _Reader()
    reader.feed(markup)
    reader.close()
    return reader.page


def node_row(page: Page, node: str) -> list[str]:
    """The occupancy table's row for one node (its first resource)."""
    found = [r for r in page.rows if r and r[0] == node]
    assert len(found) == 1, f"{node}: {len(found)} rows in {page.rows}"
    return found[0]
