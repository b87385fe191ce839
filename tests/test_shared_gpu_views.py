"""A GPU shared by a scheduler with its own accounting (schedulers.md "Their device accounting"), as a user sees it
in `nodes -o json` and in the ticket report: per card, memory and cores used and free, the split count used of its
total, health, and the age of HAMi's handshake (HAMi pkg/device/devices.go DeviceInfo and CheckHealth; the bundle is
test_schedulers.py's: gpu-ok registered with 4 A100 40 GB cards of 10 shares, filler-c holding 36000 MiB and 30%
of the fourth card)."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema

from helpers import run_cli
from test_occupancy import SCHEMA
from test_schedulers import CARDS, _hami_bundle


def _card(doc: dict, uuid: str) -> dict:
    return next(c for c in doc["shared_gpus"] if c["card"] == uuid)


def test_nodes_json_shows_each_shared_card_as_hami_counts_it(tmp_path: Path) -> None:
    root = _hami_bundle(tmp_path, handshake="Requesting_2026-11-29 17:10:00")
    doc = json.loads(run_cli("nodes", root, "-o", "json", check=True).stdout)
    jsonschema.Draft202012Validator(SCHEMA).validate(doc)
    card = _card(doc, CARDS[3])
    assert card["node"] == "gpu-ok" and card["scheduler"] == "HAMi" and card["type"] == "NVIDIA-NVIDIA A100-SXM4-40GB"
    assert card["memory_mib"] == {"total": 40960, "used": 36000, "free": 4960}
    assert card["cores_percent"] == {"total": 100, "used": 30, "free": 70}
    assert card["split"] == {"total": 10, "used": 1}
    assert card["healthy"] is True and card["handshake_age_seconds"] == 437
    assert "expired" in card["problem"] and card["pods"] == ["lab/filler-c"]
    assert _card(doc, CARDS[0])["memory_mib"]["free"] == 2960


def test_nodes_json_keeps_shared_cards_when_filtered_by_resource(tmp_path: Path) -> None:
    root = _hami_bundle(tmp_path)
    doc = json.loads(run_cli("nodes", root, "-o", "json", "--resource", "nvidia.com/gpu", check=True).stdout)
    assert len(doc["shared_gpus"]) == 4 and all(c["problem"] is None for c in doc["shared_gpus"])
    assert _card(doc, CARDS[3])["handshake_age_seconds"] == 7


def test_nodes_json_without_a_sharing_scheduler_has_no_shared_cards(tmp_path: Path) -> None:
    from test_schedulers import LAB

    doc = json.loads(run_cli("nodes", LAB, "-o", "json", check=True).stdout)
    assert doc["shared_gpus"] == []


def test_the_report_says_each_shared_card_in_prose(tmp_path: Path) -> None:
    root = _hami_bundle(tmp_path, handshake="Requesting_2026-11-29 17:10:00")
    for fmt in ("markdown", "html"):
        page = tmp_path / f"report.{fmt}"
        run_cli("report", root, "-o", fmt, "--file", page, check=True)
        text = page.read_text()
        assert (f"HAMi card {CARDS[3]} (NVIDIA-NVIDIA A100-SXM4-40GB): memory 36000 MiB used, 4960 MiB free of "
                "40960 MiB; cores 30% used, 70% free; 1 of 10 shares used (by lab/filler-c); healthy; handshake 437 s "
                "ago") in text, fmt
        assert "HAMi sees no device on this node: handshake" in text
        assert '"memory_mib"' not in text and "{'" not in text  # prose, not JSON


def test_an_unreadable_registration_is_one_entry_saying_why(tmp_path: Path) -> None:
    root = _hami_bundle(tmp_path, register="garbage")
    doc = json.loads(run_cli("nodes", root, "-o", "json").stdout)
    jsonschema.Draft202012Validator(SCHEMA).validate(doc)
    (card,) = doc["shared_gpus"]
    assert card["card"] == "-" and card["healthy"] is False and "unreadable" in card["problem"]
    page = tmp_path / "report.md"
    run_cli("report", root, "-o", "markdown", "--file", page, check=True)
    text = page.read_text()
    assert "HAMi sees no device on this node: hami.io/node-nvidia-register unreadable" in text
    assert "HAMi card -" not in text


def test_idle_cards_alike_are_one_sentence_naming_each(tmp_path: Path) -> None:
    """A fresh handshake, the recording's filler-a holding 3 cards, filler-c the fourth: with filler-a's allocation
    gone, three cards are idle and read as one sentence; the held one keeps its own."""
    root = _hami_bundle(tmp_path, allocation="")
    page = tmp_path / "report.md"
    run_cli("report", root, "-o", "markdown", "--file", page, check=True)
    text = page.read_text()
    assert (f"HAMi 3 cards {CARDS[0]}, {CARDS[1]}, {CARDS[2]} (NVIDIA-NVIDIA A100-SXM4-40GB): nothing held, 40960 MiB "
            "and 100% cores free each, 0 of 10 shares used; healthy; handshake 7 s ago") in text
    assert f"HAMi card {CARDS[3]} (NVIDIA-NVIDIA A100-SXM4-40GB): memory 36000 MiB used" in text
