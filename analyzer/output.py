"""Every command's `-o` formats, by name: the one registry analyze, report, diff and nodes look a format up in.

A format is one file (report/table.py, diff/formats/markdown.py, occupancy/formats/csv_format.py, ...) that ends
with its `Format` (analyzer/output_format.py), as pip-audit and kubeconform keep one file per output format.
The registry imports only the formats of the command asked for, and only when asked: a command pays for the import
of its own formats, never for every format of every command.
"""

from __future__ import annotations

from typing import Any

from analyzer.output_format import ANALYZE, DIFF, NODES, REPORT, Format


def _registered(command: str) -> tuple[Format[Any], ...]:
    if command == ANALYZE:
        from analyzer.report import json_format, table, words_format

        return (table.TABLE, table.WIDE, json_format.FORMAT, words_format.FORMAT)
    if command == REPORT:
        from analyzer.report import html, markdown

        return (html.FORMAT, markdown.FORMAT)
    if command == DIFF:
        from analyzer.diff.formats import json_format as diff_json, markdown as diff_markdown, table as diff_table

        return (diff_table.FORMAT, diff_json.FORMAT, diff_markdown.FORMAT)
    if command == NODES:
        from analyzer.occupancy.formats import csv_format, json_format as nodes_json, table as nodes_table

        return (nodes_table.FORMAT, nodes_json.FORMAT, csv_format.FORMAT)
    raise KeyError(command)


def formats_for(command: str) -> dict[str, Format[Any]]:
    """The formats of one command (analyze, report, diff, nodes) by their `-o` name, in the order its help lists them."""
    return {f.name: f for f in _registered(command) if command in f.commands}
