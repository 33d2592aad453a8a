"""bench/ scripts run with bench/ first on sys.path: a file there named like a standard
module shadows it for every import (bench/secrets.py once broke `mcp`, via starlette)."""

from __future__ import annotations

import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "bench"


def test_no_bench_script_is_named_like_a_standard_module() -> None:
    names = {path.stem for path in BENCH.glob("*.py")}
    assert names, "bench/ holds no scripts"
    assert sorted(names & set(sys.stdlib_module_names)) == []
