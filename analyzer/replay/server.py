"""aiohttp around api.Api: one event loop in a background thread, 127.0.0.1 unless told otherwise.

Bounded under a flood: request bodies are never read (every write is refused before it), the body
size limit is 64 KiB, handlers are synchronous over an immutable store (no per-request state kept),
and at most MAX_IN_FLIGHT requests build a reply at once; the rest wait in the accept queue.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import threading
from dataclasses import dataclass, field
from http import HTTPStatus

from aiohttp import web

from analyzer.replay.api import Api, Request, status_reply
from analyzer.text import printable

LOCALHOST = "127.0.0.1"
ANY_ADDRESS = "0.0.0.0"
MAX_IN_FLIGHT = 16


class _OneLine(logging.Formatter):
    """aiohttp logs a request it cannot parse (a 10 MB header: LineTooLong; 100,000 headers: BadHttpMessage) with
    its traceback, which reads as a crash in an operator's terminal: here it is one line, the client's address,
    the status it was answered with and why (the client already has its 400; the server goes on)."""

    def format(self, record: logging.LogRecord) -> str:
        exc = record.exc_info[1] if record.exc_info else None
        said = record.getMessage().replace("Error handling request from", "refused a request from")
        if exc is None:
            return f"gpu-triage serve: {said}"
        status = getattr(exc, "code", None) if isinstance(getattr(exc, "code", None), int) else 500
        phrase = HTTPStatus(status).phrase if status in HTTPStatus._value2member_map_ else ""
        # The reason quotes the client's bytes: made printable (no terminal escapes) and short.
        reason = printable(" ".join(str(getattr(exc, "message", "") or exc or type(exc).__name__).split()))[:200]
        return f"gpu-triage serve: {printable(said)}: {status} {phrase}: {reason}"


def _serve_log() -> logging.Logger:
    """The logger aiohttp's request handler is given (its default, aiohttp.server, prints tracebacks): one line
    per refused request on stderr, the first malformed request of a connection (debug for aiohttp) included."""
    log = logging.getLogger("gpu_triage.serve")
    if not log.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(_OneLine())
        handler.addFilter(lambda r: r.exc_info is not None or r.levelno >= logging.WARNING)
        log.addHandler(handler)
        log.setLevel(logging.DEBUG)
        log.propagate = False
    return log


def _loop_said(loop: asyncio.AbstractEventLoop, context: dict) -> None:
    """An error the event loop would print with a traceback (a connection torn down mid-write): one line."""
    exc = context.get("exception")
    print(f"gpu-triage serve: {context.get('message', 'error')}"
          + (f": {type(exc).__name__}: {exc}" if exc is not None else ""), file=sys.stderr)


def make_app(api: Api) -> web.Application:
    gate = asyncio.Semaphore(MAX_IN_FLIGHT)

    async def handle(request: web.Request) -> web.StreamResponse:
        async with gate:
            try:
                reply = api.handle(Request(method=request.method, path=request.path,
                                           query={k: v for k, v in request.query.items()},
                                           accept=request.headers.get("Accept", "")))
            except Exception as exc:  # noqa: BLE001 - the client gets a Status that says what, never ""
                reply = status_reply(500, "InternalError", f"gpu-triage serve failed on {request.method} "
                                     f"{request.path}: {type(exc).__name__}: {exc}")
        response = web.Response(status=reply.status, body=reply.body)
        response.content_type = reply.content_type
        return response

    app = web.Application(client_max_size=64 * 1024)
    app.router.add_route("*", "/{tail:.*}", handle)
    return app


@dataclass(kw_only=True)
class ReplayServer:
    """Serve `api` on host:port (port 0: a free one) from a daemon thread; `url` once started."""

    api: Api
    host: str = LOCALHOST
    port: int = 0
    url: str = ""
    _loop: asyncio.AbstractEventLoop | None = field(default=None, repr=False)
    _thread: threading.Thread | None = field(default=None, repr=False)
    _runner: web.AppRunner | None = field(default=None, repr=False)

    def start(self) -> str:
        ready = threading.Event()
        failure: list[BaseException] = []

        def run() -> None:
            loop = asyncio.new_event_loop()
            loop.set_exception_handler(_loop_said)
            self._loop = loop
            asyncio.set_event_loop(loop)
            try:
                loop.run_until_complete(self._serve())
            except BaseException as exc:  # noqa: BLE001 - handed to the caller of start()
                failure.append(exc)
                ready.set()
                return
            ready.set()
            loop.run_forever()
            loop.run_until_complete(self._cleanup())
            loop.close()

        self._thread = threading.Thread(target=run, name="gpu-triage-serve", daemon=True)
        self._thread.start()
        ready.wait()
        if failure:
            raise failure[0]
        return self.url

    async def _serve(self) -> None:
        runner = web.AppRunner(make_app(self.api), access_log=None, handle_signals=False, logger=_serve_log())
        await runner.setup()
        site = web.TCPSite(runner, self.host, self.port, backlog=128)
        await site.start()
        self._runner = runner
        sockets = runner.addresses
        port = sockets[0][1] if sockets else self.port
        self.port = port
        self.url = f"http://{'127.0.0.1' if self.host == ANY_ADDRESS else self.host}:{port}"

    async def _cleanup(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    def stop(self) -> None:
        if self._loop is not None and self._thread is not None and self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=10)
