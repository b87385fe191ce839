"""`gpu-triage report`: analyse, build the report data, render one format, write one file.

Kept out of cli.py so the command line holds no logic. The file is written beside its final name and
renamed into place, so an interrupted run never leaves half a report that looks whole.
"""

from __future__ import annotations

import io
import os
import sys
import tempfile
from pathlib import Path

from analyzer.errors import UsageError
from analyzer.output_format import Format
from analyzer.pipeline import Analysis, Options, analyse
from analyzer.report.ticket import report_data
from analyzer.report.ticket_records import ReportData

DEFAULT_FILES = {"html": "report.html", "markdown": "report.md"}
EXTENSIONS = {".html": "html", ".htm": "html", ".md": "markdown", ".markdown": "markdown"}
# Extensions that promise another kind of file: a report written there would mislead whoever opens it.
OTHER_FORMATS = (".json", ".csv", ".yaml", ".yml", ".pdf", ".png", ".tar", ".gz", ".tgz", ".zip")
STDOUT = "-"


def looks_like_file(value: str) -> bool:
    """`-o r.md`: a file name where a format was expected (the old spelling of --file)."""
    return "/" in value or "." in value


def resolve_format(fmt: str | None, file: str | None) -> str:
    """The format: -o when given, else what --file's extension says, else html. A file whose extension says
    another format (`-o markdown --file r.html`, `--file r.json`) is refused: nothing is written."""
    ext = Path(file).suffix.lower() if file and file != STDOUT else ""
    implied = EXTENSIONS.get(ext)
    if ext in OTHER_FORMATS or (fmt is not None and implied is not None and implied != fmt):
        wanted = fmt or "html"
        raise UsageError(f"--file {file}: the extension {ext} does not fit the {wanted} format; name it "
                         f"{Path(file or '').stem or 'report'}{'.html' if wanted == 'html' else '.md'}")
    return fmt or implied or "html"


def write_report(bundle: Path, fmt: Format[ReportData], output: str | None, options: Options) -> tuple[Analysis, str]:
    """Write the report in `fmt` (one of analyzer.output.formats_for("report")); returns the analysis (for its
    problems) and where the report went. `output`: the file (None: report.html or report.md in the current
    directory; "-": standard output)."""
    analysis = analyse(bundle, options)
    with analysis.bundle:
        data = report_data(analysis)
    buf = io.StringIO()
    fmt.render(data, buf)
    target = output or DEFAULT_FILES[fmt.name]
    if target == STDOUT:
        sys.stdout.write(buf.getvalue())
        sys.stdout.flush()
        return analysis, "standard output"
    try:
        _write_atomically(Path(target), buf.getvalue())
    except OSError as exc:
        raise UsageError(f"{target}: cannot write the report: {exc.strerror or exc}") from None
    return analysis, target


def _write_atomically(path: Path, text: str) -> None:
    directory = path.parent if str(path.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=".gpu-triage-report-", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
