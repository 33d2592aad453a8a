"""A real PostgreSQL server for tests and benchmarks: ``initdb`` + ``pg_ctl``, Unix socket only.

The server listens on no TCP port (``listen_addresses=''``), only on a socket
in its own temporary folder, and is stopped afterwards. As root, ``initdb``
refuses to run, so the server runs as the ``postgres`` user. Durability is off
(``fsync=off``): a test server is thrown away.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

INSTALL_HINT = "install the PostgreSQL server (Debian: apt-get install postgresql-15)"


def find_binary(name: str) -> str | None:
    """``name`` on PATH, else in Debian's per-version folder (newest version first)."""
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(
        glob.glob(f"/usr/lib/postgresql/*/bin/{name}"),
        key=lambda path: int(Path(path).parts[-3]) if Path(path).parts[-3].isdigit() else 0,
        reverse=True,
    )
    return candidates[0] if candidates else None


class PgServer:
    def __init__(self) -> None:
        initdb, pg_ctl = find_binary("initdb"), find_binary("pg_ctl")
        if initdb is None or pg_ctl is None:
            raise FileNotFoundError(f"no PostgreSQL server found: {INSTALL_HINT}")
        self.initdb, self.pg_ctl = initdb, pg_ctl
        self.folder = Path(tempfile.mkdtemp(prefix="reliora-pg-"))
        self.data = self.folder / "data"
        self.socket = self.folder
        self.prefix: list[str] = []
        if os.geteuid() == 0:
            import pwd

            user = pwd.getpwnam("postgres")
            os.chown(self.folder, user.pw_uid, user.pw_gid)
            self.prefix = ["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}",
                           "--init-groups", "--"]  # fmt: skip

    def _run(self, *args: str) -> None:
        done = subprocess.run(
            [*self.prefix, *args], capture_output=True, text=True, check=False, cwd=self.folder
        )
        if done.returncode != 0:
            raise RuntimeError(f"{args[0]} failed: {done.stdout}{done.stderr}")

    def start(self) -> PgServer:
        self._run(
            self.initdb, "-D", str(self.data), "-U", "postgres", "-E", "UTF8",
            "--locale=C", "--auth=trust", "--no-sync",
        )  # fmt: skip
        options = f"-c listen_addresses='' -k {self.socket} -c fsync=off -c full_page_writes=off"
        self._run(
            self.pg_ctl, "-D", str(self.data), "-o", options, "-l", str(self.folder / "log"),
            "-w", "start",
        )  # fmt: skip
        return self

    def url(self, dbname: str = "postgres") -> str:
        return f"postgresql://postgres@/{dbname}?host={self.socket}"

    def stop(self) -> None:
        try:
            self._run(self.pg_ctl, "-D", str(self.data), "-m", "fast", "-w", "stop")
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)
