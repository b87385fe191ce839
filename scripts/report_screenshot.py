#!/usr/bin/env python3
"""Refresh docs/report-example.png: the lab bundle's HTML report as headless Chromium draws it.

    .venv/bin/python scripts/report_screenshot.py [--bundle dumps/lab-seven-states-v1.36] [--out docs/report-example.png]

Same flags as tests/test_report_browser.py; every host name resolves to nothing, so the browser's own
background requests cannot leave the machine either.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--disable-extensions", "--disable-default-apps",
         "--host-resolver-rules=MAP * ~NOTFOUND", "--window-size=1280,2000", "--hide-scrollbars")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundle", type=Path, default=Path("dumps/lab-seven-states-v1.36"), help="relative to the repository")
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "report-example.png")
    args = parser.parse_args()
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        print("report_screenshot: chromium is not installed (apt-get install -y chromium)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="gpu-triage-shot-") as tmp:
        page = Path(tmp) / "report.html"
        subprocess.run([sys.executable, "-m", "analyzer", "report", str(args.bundle), "--file", str(page)], check=True, cwd=REPO)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run([browser, *FLAGS, f"--user-data-dir={tmp}/profile", f"--screenshot={args.out.resolve()}", page.as_uri()],
                       check=True, capture_output=True, timeout=180)
    print(f"report_screenshot: wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
