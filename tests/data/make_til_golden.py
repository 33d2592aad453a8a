"""Write ``til_golden.json``: what search returns on the til sample, for a fixed set of queries.

``tests/test_til_golden.py`` runs the current code on the same queries and
asserts that every result (id, order, score, relevance, coverage, level,
matched tokens, score breakdown) is still what this file holds. A ranking
change that is meant to change no result (a faster index, a cache) must keep
it green; one that is meant to change results must say so by regenerating it.

Regenerate with the code *before* the ranking change, never with the code
under test (the golden file would then only repeat it)::

    git worktree add /tmp/orig <commit before the change>
    cd /tmp/orig && PYTHONPATH=/tmp/orig /path/to/.venv/bin/python \\
        /path/to/checkout/tests/data/make_til_golden.py
    git worktree remove /tmp/orig

It prints which ``reliora_git`` it imported (check that it is the old one) and
writes ``til_golden.json`` next to this script (``--out`` to change that). The
store is the sample of the til corpus in ``tests/data/til`` (``--corpus`` to
change that; see make_til_sample.py); it is only read; the variant with
retired and superseded records is a copy in a temporary folder, and the cache
is off.

The test imports the query set and the helpers below, so both sides build the
store copy, run a query and encode its results in exactly one way.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

#: Store-file mtime of the copy: old enough to be cached (see reliora_git.storage.cache.RACY_NS).
OLD_MTIME = 1_700_000_000
#: Store of each query: the corpus as it is, or a copy where these records are retired
#: or superseded (the corpus itself has none), for --include-retired.
STORES = ("til", "til-retired")
RETIRED: dict[str, str] = {
    ".reliora/experiences/git/dropping-commits-with-git-rebase-f857b0.md": "retired",
    ".reliora/experiences/git/pulling-in-changes-during-an-interactive-rebase-672e81.md": (
        "superseded"
    ),
    ".reliora/experiences/postgres/create-an-index-without-locking-the-table-bde6ea.md": (
        "superseded"
    ),
    ".reliora/experiences/postgres/add-unique-constraint-using-existing-index-6fc59f.md": (
        "retired"
    ),
    ".reliora/experiences/vim/previous-visual-selection-4b78fa.md": "retired",
}
#: When every result of every query would make the file larger than MAX_BYTES, a query
#: stores its first FULL_LIMIT results only (and, always, the digest of all).
FULL_LIMIT = 50
MAX_BYTES = 3_000_000


def q(
    text: str,
    context: str | None = None,
    *,
    min_level: str | None = None,
    include_retired: bool = False,
    store: str = "til",
) -> dict[str, Any]:
    return {
        "store": store,
        "text": text,
        "projectContext": context,
        "minLevel": min_level,
        "includeRetired": include_retired,
    }


QUERIES: list[dict[str, Any]] = [
    # one word
    q("migration"),
    q("regex"),
    # several words
    q("postgres index performance"),
    q("environment variable"),
    q("git rebase interactive"),
    # phrases (stop words kept in the phrase, dropped from the tokens)
    q("search and replace"),
    q("pull request"),
    q("foreign key"),
    q("the command line"),
    q("git git rebase"),
    # prefixes (§4: the shorter of at least 5 characters)
    q("config"),
    q("configuration"),
    q("timeouts"),
    q("timeout"),
    q("migrat"),
    # short tokens (exact only)
    q("js"),
    q("ls"),
    q("cd"),
    q("x"),
    # nothing matches
    q("xyzzyplugh"),
    q("qwertyuiop zxcvbnm"),
    # unicode (NFKC: full width, ligature) and punctuation
    q("café"),
    q("σ"),
    q("Ｃｏｎｆｉｇ"),
    q("❯ prompt"),
    q("ﬁlename"),
    q("node.js"),
    q("utf-8"),
    q("--force-with-lease"),
    # --project-context
    q("search and replace", "vim"),
    q("rebase", "git"),
    q("index", "postgres"),
    q("config", "unix"),
    q("test", "rails ruby"),
    q("migration", "nosuchcontextword"),
    # --min-level
    q("git rebase", min_level="strong"),
    q("postgres index", min_level="moderate"),
    q("vim buffer", min_level="strong"),
    q("configuration files", min_level="moderate"),
    # --include-retired (on the copy with retired and superseded records)
    q("git rebase", store="til-retired"),
    q("git rebase", include_retired=True, store="til-retired"),
    q("postgres index", store="til-retired"),
    q("postgres index", include_retired=True, store="til-retired"),
    q("index", "postgres", min_level="strong", include_retired=True, store="til-retired"),
    q("previous visual selection", store="til-retired"),
    q("previous visual selection", include_retired=True, store="til-retired"),
]


def query_name(query: dict[str, Any]) -> str:
    """A readable, unique test id."""
    parts = [query["text"]]
    if query["projectContext"]:
        parts.append(f"ctx={query['projectContext']}")
    if query["minLevel"]:
        parts.append(f"min={query['minLevel']}")
    if query["includeRetired"]:
        parts.append("retired")
    if query["store"] != "til":
        parts.append(query["store"])
    return " ".join(parts)


def corpus_digest(corpus: Path) -> dict[str, Any]:
    """The corpus's store files (locators and bytes): the golden file holds for these only."""
    digest = hashlib.sha256()
    files = sorted(p for p in (corpus / ".reliora").rglob("*") if p.is_file())
    for path in files:
        digest.update(path.relative_to(corpus).as_posix().encode("utf-8") + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return {"files": len(files), "sha256": digest.hexdigest()}


def make_retired_copy(corpus: Path, root: Path) -> Path:
    """Copy the corpus's store to ``root`` and retire or supersede the RETIRED records."""
    shutil.copytree(corpus / ".reliora", root / ".reliora")
    paths = [root / ".reliora", *(root / ".reliora").rglob("*")]
    for path in paths:
        path.chmod(0o755 if path.is_dir() else 0o644)  # the corpus is read-only
    for locator, status in RETIRED.items():
        path = root / locator
        text = path.read_text(encoding="utf-8")
        assert text.startswith("---\n") and "\nstatus:" not in text.split("\n---\n")[0], locator
        path.write_text(f"---\nstatus: {status}\n{text[4:]}", encoding="utf-8")
    for path in paths:
        os.utime(path, (OLD_MTIME, OLD_MTIME))
    return root


@contextmanager
def environment(**values: str | None) -> Iterator[None]:
    saved = {key: os.environ.get(key) for key in values}
    try:
        for key, value in values.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def run_query(root: Path, query: dict[str, Any]) -> dict[str, Any]:
    """Search ``root`` as `reliora search --json` does, with every result (no limit)."""
    from reliora_git.operations.lessons.reads import search
    from reliora_git.search.jsonio import search_document
    from reliora_git.storage.store import Store

    found = search(
        Store(root),
        query["text"],
        project_context=query["projectContext"],
        min_level=query["minLevel"],
        include_retired=query["includeRetired"],
    )
    assert not found.skipped, [str(e) for e in found.skipped]
    document = json.loads(json.dumps(search_document(found.query, found.context, found.hits, None)))
    keys = ("id", "score", "relevance", "coverage", "matchLevel", "matchedTokens")
    results = [
        {**{key: r[key] for key in keys}, "scoreBreakdown": r["scoreBreakdown"]}
        for r in document["results"]
    ]
    return {
        "tokens": document["tokens"],
        "projectContext": document["projectContext"],
        "total": document["total"],
        "results": results,
    }


def canonical(results: list[dict[str, Any]]) -> str:
    """sha256 of the canonical JSON of a complete result list."""
    text = json.dumps(results, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def golden_entry(query: dict[str, Any], found: dict[str, Any], keep: int | None) -> dict[str, Any]:
    """What the golden file stores of one query: all results, or the first ``keep``."""
    results = found["results"]
    return {
        "name": query_name(query),
        "query": query,
        "tokens": found["tokens"],
        "projectContext": found["projectContext"],
        "total": found["total"],
        "resultsSha256": canonical(results),
        "storedResults": len(results) if keep is None else min(keep, len(results)),
        "results": results if keep is None else results[:keep],
    }


def dump(golden: dict[str, Any]) -> str:
    """Indented JSON with one result per line: readable diffs, a third of the size."""

    def one(value: Any) -> str:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))

    lines = ["{"]
    lines += [f" {one(key)}: {one(value)}," for key, value in golden.items() if key != "queries"]
    lines.append(' "queries": [')
    entries = []
    for entry in golden["queries"]:
        fields = [f"  {one(key)}: {one(value)}" for key, value in entry.items() if key != "results"]
        results = ",\n".join(f"   {one(result)}" for result in entry["results"])
        fields.append(f'  "results": [\n{results}\n  ]' if results else '  "results": []')
        entries.append("  {\n" + ",\n".join(fields) + "\n  }")
    lines += [",\n".join(entries), " ]", "}"]
    text = "\n".join(lines) + "\n"
    assert json.loads(text) == golden
    return text


def source_of_code() -> dict[str, Any]:
    import reliora_git

    folder = Path(reliora_git.__file__).resolve().parent
    commit = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=folder, capture_output=True, text=True, check=False
    ).stdout.strip()
    status = subprocess.run(
        ["git", "status", "--porcelain", "--", "."],
        cwd=folder,
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    return {"package": str(folder), "commit": commit or None, "dirty": bool(status)}


def main() -> None:
    here = Path(__file__).resolve().parent
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", type=Path, default=here / "til")
    parser.add_argument("--out", type=Path, default=here / "til_golden.json")
    args = parser.parse_args()
    source = source_of_code()
    print(f"reliora_git from {source['package']} at {source['commit']}", file=sys.stderr)
    if source["dirty"]:
        print("warning: that reliora_git has uncommitted changes", file=sys.stderr)
    with (
        tempfile.TemporaryDirectory(prefix="til-golden-") as tmp,
        environment(RELIORA_NO_CACHE="1", RELIORA_CACHE_DIR=None),
    ):
        roots = {"til": args.corpus, "til-retired": make_retired_copy(args.corpus, Path(tmp))}
        found = [run_query(roots[query["store"]], query) for query in QUERIES]
    names = [query_name(query) for query in QUERIES]
    assert len(set(names)) == len(names), "query names must be unique"
    for keep in (None, FULL_LIMIT):
        golden = {
            "about": "search results on the til sample (tests/data/til); see make_til_golden.py",
            "source": {"commit": source["commit"], "dirty": source["dirty"]},
            "corpus": corpus_digest(args.corpus),
            "retired": RETIRED,
            "queries": [golden_entry(qy, f, keep) for qy, f in zip(QUERIES, found, strict=True)],
        }
        text = dump(golden)
        if len(text.encode("utf-8")) <= MAX_BYTES:
            break
    args.out.write_text(text, encoding="utf-8")
    stored = sum(e["storedResults"] for e in golden["queries"])
    total = sum(e["total"] for e in golden["queries"])
    print(
        f"wrote {args.out}: {len(QUERIES)} queries, {stored} of {total} results stored "
        f"({len(text.encode('utf-8')):,} bytes)",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
