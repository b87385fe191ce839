"""Errors a person can act on: always a file, a JSON path when there is one, and a reason."""

from __future__ import annotations


class BundleError(Exception):
    """The bundle (or one file of it) cannot be read. The CLI turns it into exit 2."""

    def __init__(self, file: str | None, message: str, path: str | None = None) -> None:
        super().__init__(message)
        self.file = file
        self.path = path
        self.message = message

    def __str__(self) -> str:
        parts = [p for p in (self.file, self.path) if p]
        return ": ".join(parts + [self.message])


class UsageError(Exception):
    """A command-line argument is wrong (a manifest that is not a pod, a bad NS/NAME)."""
