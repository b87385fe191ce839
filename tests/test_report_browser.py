"""The HTML report in a real browser (headless Chromium, Debian's `chromium` package).

Chromium loads the page from a file:// URL and dumps the DOM it built; the test reads that DOM as a
person would (every target and its word on the page). Chromium also writes a net log; a request the
page starts carries the page's origin as its initiator, while the browser's own background requests
carry "not an origin". The page must start none. A control case proves the detector sees a request
when a page makes one, and that the report's Content-Security-Policy alone would stop one.
Nothing leaves the machine: every host name resolves to nothing (--host-resolver-rules).
"""

from __future__ import annotations

import json
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from conftest import LAB, LAB_ATTEMPT_WORDS, LAB_WORDS, words_of
from report_pages import data_of, html_of, read_page

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install -y chromium; .ci/run does it)")

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--disable-extensions", "--disable-default-apps",
         "--host-resolver-rules=MAP * ~NOTFOUND")
PROBE = "http://127.0.0.1:9/probe.png"  # the discard port: nothing answers, the attempt is what counts


def chromium(tmp: Path, page: Path, *extra: str) -> tuple[str, list[str]]:
    """(the DOM Chromium built, the URLs the page itself asked for) for one file."""
    netlog = tmp / "netlog.json"
    cmd = [CHROMIUM, *FLAGS, f"--user-data-dir={tmp / 'profile'}", f"--log-net-log={netlog}", *extra, page.resolve().as_uri()]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout, page_requests(netlog)


def page_requests(netlog: Path) -> list[str]:
    log = json.loads(netlog.read_text())
    start = log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"]
    out = []
    for event in log["events"]:
        params = event.get("params") or {}
        if event["type"] == start and "url" in params and params.get("initiator") != "not an origin":
            out.append(params["url"])
    return out


def write(tmp: Path, markup: str, name: str = "report.html") -> Path:
    path = tmp / name
    path.write_text(markup, encoding="utf-8")
    return path


def test_lab_report_in_chromium_shows_every_target_and_word_and_makes_no_request(tmp_path):
    dom, requests = chromium(tmp_path, write(tmp_path, html_of(data_of(LAB))), "--dump-dom")
    page = read_page(dom)
    for key, word in {**LAB_WORDS, **LAB_ATTEMPT_WORDS}.items():
        card = next((c for c in page.text.split("source:") if key in c), None)
        assert card is not None, f"{key} is not on the page Chromium built"
        assert word in card, f"{key}: {word} not beside it"
    assert "gpu-tainted" in page.text and "GPU occupancy" in page.text
    assert "script" not in page.tags
    assert requests == []


def test_generated_500_node_report_in_chromium_names_every_target_and_makes_no_request(tmp_path, generated_large):
    bundle = generated_large
    expected = words_of(bundle)  # the analyzer's own answers, by key
    dom, requests = chromium(tmp_path, write(tmp_path, html_of(data_of(bundle))), "--dump-dom")
    text = read_page(dom).text
    assert len(expected) > 400
    missing = [k for k in expected if k not in text]
    assert not missing, missing[:5]
    for word in set(expected.values()):
        assert word in text
    assert requests == []


def test_the_request_detector_sees_a_page_request_and_the_reports_policy_blocks_it(tmp_path):
    bare = write(tmp_path, f'<!DOCTYPE html><html><body><p>probe</p><img src="{PROBE}"></body></html>', "bare.html")
    _, requests = chromium(tmp_path / "bare", bare, "--dump-dom")
    assert requests == [PROBE]  # a page that asks is caught
    # The same image smuggled into the report (as if a name escaped its escaping): the CSP stops it.
    markup = html_of(data_of(LAB)).replace("<main>", f'<main><img src="{PROBE}">', 1)
    dom, requests = chromium(tmp_path / "report", write(tmp_path, markup, "smuggled.html"), "--dump-dom")
    assert "img" in read_page(dom).tags
    assert requests == []


def test_screenshot_of_the_lab_report(tmp_path):
    shot = tmp_path / "report.png"
    chromium(tmp_path, write(tmp_path, html_of(data_of(LAB))), f"--screenshot={shot}", "--window-size=1280,2000")
    head = shot.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">II", head[16:24]) == (1280, 2000)


def test_readme_shows_the_kept_screenshot():
    readme = (LAB.parents[1] / "README.md").read_text()
    assert "![The ticket report of the lab bundle](docs/report-example.png)" in readme
    png = (LAB.parents[1] / "docs" / "report-example.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">II", png[16:24])[0] == 1280
