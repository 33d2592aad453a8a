"""The real pieces the web view's tests drive: `reliora serve` as a subprocess, and Debian's
headless Chromium through Selenium (never Selenium Manager, which would download a browser).

Without Chromium or ChromeDriver the tests skip locally and fail when ``CI`` is set, as the
real agent clients' tests do (tests/real_clients/mock_model.py).
"""

from __future__ import annotations

import os
import select
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
INSTALL_HINT = "apt-get install chromium chromium-driver (.ci/run does)"
#: Flags for a browser that never reaches the network (this machine's is closed anyway).
CHROME_FLAGS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1280,900",
)


def require_browser() -> None:
    missing = [str(p) for p in (CHROMIUM, CHROMEDRIVER) if not p.exists()]
    try:
        import selenium  # noqa: F401
    except ImportError:
        missing.append("selenium (the test extra)")
    if missing:
        message = f"{', '.join(missing)} missing: {INSTALL_HINT}"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


def start_browser(profile: Path) -> Any:
    """A headless Chromium driven by Debian's ChromeDriver, with a fresh profile."""
    require_browser()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    for flag in CHROME_FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={profile}")
    options.binary_location = str(CHROMIUM)
    return webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)), options=options)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


class Served:
    """`reliora serve --port N` running in ``cwd``, ready once it says where it listens."""

    def __init__(self, exe: str, cwd: Path, env: dict[str, str]) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process = subprocess.Popen(
            [exe, "serve", "--port", str(self.port)],
            cwd=cwd,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.banner = self._first_line(timeout=60)

    def _first_line(self, timeout: float) -> str:
        assert self.process.stdout is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            ready, _, _ = select.select([self.process.stdout], [], [], 0.2)
            if ready:
                line = self.process.stdout.readline()
                if line:
                    return line
            if self.process.poll() is not None:
                assert self.process.stderr is not None
                raise AssertionError(f"reliora serve exited: {self.process.stderr.read()}")
        raise AssertionError("reliora serve did not say it was ready")

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def serving(exe: str, cwd: Path, env: dict[str, str]) -> Iterator[Served]:
    served = Served(exe, cwd, env)
    try:
        yield served
    finally:
        served.stop()


def listening_addresses(port: int) -> list[str]:
    """The local addresses of the sockets listening on ``port`` (IPv4 and IPv6), from /proc."""
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            address, hex_port = fields[1].split(":")
            if fields[3] == "0A" and int(hex_port, 16) == port:  # 0A: LISTEN
                found.append(address)
    return found
