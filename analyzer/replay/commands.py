"""`gpu-triage serve` and `gpu-triage shell`: typer commands, registered by analyzer/cli.py.

Heavy imports (aiohttp, the pipeline) happen inside the commands so other commands stay fast.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Callable, List, Optional

import typer

if TYPE_CHECKING:  # the server (aiohttp) is imported only when a command runs
    from analyzer.replay.server import ReplayServer

ANY_ADDRESS_FLAG = "--listen-any-address-i-know-this-exposes-the-bundle"
CONTEXT = "gpu-triage-replay"


def kubeconfig_text(url: str, namespace: str = "default") -> str:
    """A kubeconfig for the replay: no credentials (the server asks for none)."""
    return (
        "apiVersion: v1\n"
        "kind: Config\n"
        f"clusters:\n- name: {CONTEXT}\n  cluster:\n    server: {url}\n"
        f"users:\n- name: {CONTEXT}\n  user: {{}}\n"
        f"contexts:\n- name: {CONTEXT}\n  context:\n    cluster: {CONTEXT}\n    user: {CONTEXT}\n    namespace: {namespace}\n"
        f"current-context: {CONTEXT}\n"
    )


def write_kubeconfig(url: str, path: Path | None) -> Path:
    if path is None:
        path = Path(tempfile.mkdtemp(prefix="gpu-triage-replay-")) / "kubeconfig"
    path.write_text(kubeconfig_text(url))
    os.chmod(path, 0o600)
    return path


def _say(line: str) -> None:
    from analyzer.text import printable

    sys.stderr.write(printable(line) + "\n")
    sys.stderr.flush()


def start_replay(bundle: Path, *, port: int, any_address: bool, with_causes: bool = True) -> ReplayServer:
    """Load the bundle, add the cause annotations, start the server. Returns the ReplayServer."""
    from analyzer.replay import clock
    from analyzer.replay.annotate import annotate
    from analyzer.replay.api import Api
    from analyzer.replay.causes import causes
    from analyzer.replay.server import ANY_ADDRESS, LOCALHOST, ReplayServer
    from analyzer.replay.store import load_store

    store = load_store(bundle)
    for warning in store.warnings[:50]:
        _say(f"gpu-triage: serve: {warning}")
    if len(store.warnings) > 50:
        _say(f"gpu-triage: serve: … {len(store.warnings) - 50} more")
    if with_causes:
        try:
            annotate(store, causes(bundle, warn=lambda line: _say(f"gpu-triage: warning: {line}")))
        except Exception as exc:  # noqa: BLE001 - the replay is still useful without the words
            _say(f"gpu-triage: serve: cause annotations left out: the analysis could not run ({exc})")
    server = ReplayServer(api=Api(store), host=ANY_ADDRESS if any_address else LOCALHOST, port=port)
    try:
        server.start()
    except OSError as exc:
        raise _Refused(f"cannot listen on {server.host}:{port}: {exc.strerror or exc}") from None
    if store.shift_times:
        _say(f"gpu-triage: serve: times are moved forward by the time since collection ({_span(clock.offset(store.collected))} "
             f"now) so that every age, kubectl's and the server's, reads as it did at {store.collected:%Y-%m-%dT%H:%M:%SZ}")
    if any_address:
        _say(f"gpu-triage: serve: WARNING: listening on every address: anyone who can reach port {server.port} can read the bundle")
    return server


def _span(by: timedelta) -> str:
    from analyzer.replay.humantime import human_duration

    return human_duration(by.total_seconds())


class _Refused(Exception):
    pass


def _guarded(fn: Callable[[], int]) -> None:
    from analyzer.errors import BundleError

    try:
        code = fn()
    except (BundleError, _Refused) as exc:
        _say(f"gpu-triage: {exc}")
        raise typer.Exit(2) from None
    except KeyboardInterrupt:
        raise typer.Exit(130) from None
    raise typer.Exit(code)


SERVE_EXAMPLES = """\
Examples:
  gpu-triage serve dumps/lab-seven-states-v1.36     # prints: export KUBECONFIG=/tmp/…/kubeconfig
  gpu-triage serve BUNDLE.tar.gz --port 8001 --kubeconfig replay.kubeconfig
  kubectl get pods -A; kubectl describe pod -n lab exhausted"""

SHELL_EXAMPLES = """\
Examples:
  gpu-triage shell dumps/lab-seven-states-v1.36     # $SHELL with KUBECONFIG set; exit stops the server
  gpu-triage shell BUNDLE -- kubectl get pods -A    # or one command"""


def register(app: typer.Typer, cls: type | None = None) -> None:
    """Add `serve` and `shell` to the CLI (`cls`: the command class whose help pages the CLI uses)."""
    extra = {"cls": cls} if cls is not None else {}

    @app.command(epilog=SERVE_EXAMPLES, **extra)
    def serve(bundle: Path = typer.Argument(..., metavar="BUNDLE", help="Bundle directory or .tar.gz"),
              port: int = typer.Option(0, "--port", metavar="PORT", help="Port on 127.0.0.1 (0: a free one)."),
              kubeconfig: Optional[Path] = typer.Option(None, "--kubeconfig", metavar="FILE", help="Write the kubeconfig here (default: a private temporary file)."),
              any_address: bool = typer.Option(False, ANY_ADDRESS_FLAG, help="Listen on every address, not only 127.0.0.1 (anyone who can reach the port reads the bundle).")) -> None:
        """Replay the bundle as a read-only Kubernetes API for kubectl, until interrupted."""
        def run() -> int:
            server = start_replay(bundle, port=port, any_address=any_address)
            path = write_kubeconfig(server.url, kubeconfig)
            store = server.api.store
            _say(f"gpu-triage: serving {store.label} read-only at {server.url} "
                 f"(collected {store.collected:%Y-%m-%dT%H:%M:%SZ}, from {store.collected_from}); Ctrl-C stops")
            print(f"export KUBECONFIG={path}", flush=True)
            stop = threading.Event()
            signal.signal(signal.SIGTERM, lambda *_: stop.set())
            signal.signal(signal.SIGINT, lambda *_: stop.set())
            try:
                stop.wait()
            finally:
                server.stop()
                if kubeconfig is None:  # our private temporary file: it points at a server that is gone
                    shutil.rmtree(path.parent, ignore_errors=True)
            return 0
        _guarded(run)

    @app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True}, epilog=SHELL_EXAMPLES,
                 **extra)
    def shell(bundle: Path = typer.Argument(..., metavar="BUNDLE", help="Bundle directory or .tar.gz"),
              command: Optional[List[str]] = typer.Argument(None, metavar="-- COMMAND", help="A command to run instead of $SHELL."),
              port: int = typer.Option(0, "--port", metavar="PORT", help="Port on 127.0.0.1 (0: a free one).")) -> None:
        """Start $SHELL (or the command after --) with KUBECONFIG pointing at a replay of the bundle."""
        def run() -> int:
            server = start_replay(bundle, port=port, any_address=False)
            path: Path | None = None
            try:
                path = write_kubeconfig(server.url, None)
                env = {**os.environ, "KUBECONFIG": str(path), "GPU_TRIAGE_REPLAY": str(bundle)}
                argv = list(command) if command else [os.environ.get("SHELL") or "/bin/sh"]
                _say(f"gpu-triage: {argv[0]} with KUBECONFIG={path} (replay of {bundle}, read-only); exit to stop")
                try:
                    return subprocess.call(argv, env=env)
                except OSError as exc:
                    raise _Refused(f"cannot run {argv[0]}: {exc.strerror or exc}") from None
            finally:
                server.stop()
                if path is not None:
                    shutil.rmtree(path.parent, ignore_errors=True)
        _guarded(run)
