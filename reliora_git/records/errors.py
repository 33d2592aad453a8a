"""The project's own error types: one message a user can act on, and an exit code."""

from __future__ import annotations


class RelioraError(Exception):
    """An error meant for the user. ``exit_code`` follows SPEC.md §7 (2: usage or input)."""

    exit_code = 2

    def __init__(
        self, message: str, *, path: str | None = None, line: int | None = None, code: str = "error"
    ) -> None:
        super().__init__(message)
        self.message = message
        self.path = path
        self.line = line
        self.code = code

    def __str__(self) -> str:
        where = self.path or ""
        if where and self.line is not None:
            where = f"{where}:{self.line}"
        return f"{where}: {self.message}" if where else self.message

    @property
    def details(self) -> list[str]:
        """More lines for people, after the message (one per secret found, say)."""
        return []

    def to_json(self) -> dict[str, object]:
        return {
            "error": {
                "code": self.code,
                "message": self.message,
                "path": self.path,
                "line": self.line,
            }
        }


def from_os_error(error: OSError) -> RelioraError:
    """An operating-system failure (permissions, a file where a folder should be…) as one line."""
    reason = error.strerror or str(error)
    path = None if error.filename is None else str(error.filename)
    return RelioraError(f"cannot access the file system: {reason}", path=path, code="os_error")


class RecordError(RelioraError):
    """A record file that cannot be read as a record at all (it is skipped by search)."""

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None) -> None:
        super().__init__(message, path=path, line=line, code="invalid_record")
