#!/usr/bin/env python3
"""Organisation-wide search (SPEC.md §13): sync time and search latency on PostgreSQL.

Usage (from the repository root, with ``pip install -e '.[org,test]'``):

    python bench/org.py --corpus ../shared/corpora/til            # 200 × 500 records
    python bench/org.py --corpus ../shared/corpora/til --repos 20 --records 100
    python bench/org.py --corpus … --db postgresql:///reliora     # an existing server

Repositories are made with ``git fast-import`` as bare mirrors, each holding
``--records`` notes of the corpus (a different sample per repository, so every
note is in about repos × records / 1,871 of them). Without ``--db`` a throwaway
server is started with ``initdb`` and ``pg_ctl`` on a Unix socket (tests/pgserver.py;
``fsync=off``, so sync times are what the work costs, not the disk).

Measured: the first sync (one ``reliora org sync`` of every repository), a
re-sync with nothing changed, a re-sync after one record changed in each of ten
repositories, and search latency (p50, p95) over 50 queries (two or three words
of corpus titles, seeded), through the CLI (``reliora org search --json``, a new
process each time) and through a long-running process (``OrgSearcher`` on one
connection, the way a service would hold it).
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Bench",
    "GIT_AUTHOR_EMAIL": "bench@example.com",
    "GIT_COMMITTER_NAME": "Bench",
    "GIT_COMMITTER_EMAIL": "bench@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def corpus_files(corpus: Path) -> list[Path]:
    return sorted((corpus / ".reliora" / "experiences").rglob("*.md"))


def make_mirror(root: Path, notes: list[Path], corpus: Path, stamp: int) -> None:
    """A bare repository whose main branch holds ``notes`` under .reliora/experiences/."""
    env = {**os.environ, **GIT_ENV}
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(root)], check=True, env=env)
    chunks = [
        b"commit refs/heads/main\n",
        b"committer Bench <bench@example.com> %d +0000\n" % stamp,
        b"data 5\nnotes\n",
    ]
    for note in notes:
        raw = note.read_bytes()
        path = note.relative_to(corpus).as_posix().encode()
        chunks.append(b"M 100644 inline %s\ndata %d\n%s\n" % (path, len(raw), raw))
    subprocess.run(
        ["git", "fast-import", "--quiet"], cwd=root, input=b"".join(chunks), check=True, env=env
    )


def change_one(root: Path, note: Path, corpus: Path) -> None:
    """A new commit on main that appends a warning line to one record."""
    env = {**os.environ, **GIT_ENV}
    raw = note.read_bytes() + b"\n## Warnings\n- changed by the benchmark\n"
    path = note.relative_to(corpus).as_posix().encode()
    stream = (
        b"commit refs/heads/main\ncommitter Bench <bench@example.com> 1800000000 +0000\n"
        b"data 7\nchange\nfrom refs/heads/main^0\n"
        b"M 100644 inline %s\ndata %d\n%s\n" % (path, len(raw), raw)
    )
    subprocess.run(["git", "fast-import", "--quiet"], cwd=root, input=stream, check=True, env=env)


def queries(notes: list[Path], count: int, seed: int) -> list[str]:
    """Two or three words of the titles of random notes (what someone would type)."""
    import frontmatter

    rng = random.Random(seed)
    found: list[str] = []
    while len(found) < count:
        title = str(frontmatter.load(rng.choice(notes)).get("title", ""))
        words = [w for w in title.split() if len(w) > 3]
        if len(words) >= 2:
            found.append(" ".join(rng.sample(words, min(len(words), rng.choice((2, 3))))))
    return found


def candidates_scored_in_python(searcher: object, text: str) -> int:
    """The other design: every candidate's masks shipped here, scored by rank.score_masks."""
    from reliora_git.org import search
    from reliora_git.records.model import FeedbackSummary
    from reliora_git.search.rank import IndexedRecord, Query, score_masks, sort_key

    query = Query.parse(text)
    params = searcher._params(query, None, [], None, False)  # type: ignore[attr-defined]
    rows = searcher.conn.execute(  # type: ignore[attr-defined]
        search.scored_sql(len(query.tokens), False)
        + " SELECT id, repo_name, masks, phrase, feedback FROM lv",
        params,
    ).fetchall()
    hits = []
    for rid, repo, masks, phrase, adjustment in rows:
        doc = IndexedRecord(rid, "", repo, (), "active", None, "", "")
        feedback = FeedbackSummary(adjustment=adjustment)
        hits.append(score_masks(doc, query, list(masks), phrase, feedback))
    hits.sort(key=sort_key)
    searcher.conn.rollback()  # type: ignore[attr-defined]
    return len(hits)


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def timed(args: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(args, capture_output=True, env=env, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args[:4])}… failed: {done.stderr.decode()}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, required=True, help="a folder holding .reliora/")
    parser.add_argument("--repos", type=int, default=200)
    parser.add_argument("--records", type=int, default=500, help="records per repository")
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--db", help="an existing database (default: a throwaway server)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    from reliora_git.org.db import connect
    from reliora_git.org.search import OrgSearcher

    notes = corpus_files(args.corpus)
    rng = random.Random(args.seed)
    work = Path(tempfile.mkdtemp(prefix="reliora-org-bench-"))
    server = None
    try:
        if args.db:
            url = args.db
        else:
            from tests.pgserver import PgServer

            server = PgServer().start()
            url = server.url()
        exe = str(Path(sys.executable).with_name("reliora"))
        env = {**os.environ, "RELIORA_DB_URL": url, "RELIORA_NO_PROGRESS": "1"}

        started = time.perf_counter()
        mirrors = []
        for n in range(args.repos):
            mirror = work / f"repo{n:03d}.git"
            make_mirror(mirror, rng.sample(notes, min(args.records, len(notes))), args.corpus, n)
            mirrors.append(mirror)
        print(f"made {args.repos} mirrors in {time.perf_counter() - started:.1f} s", flush=True)

        total = args.repos * min(args.records, len(notes))
        first = timed([exe, "org", "sync", *map(str, mirrors)], env)
        print(f"first sync of {total:,} records: {first:.1f} s", flush=True)
        again = timed([exe, "org", "sync", *map(str, mirrors)], env)
        print(f"re-sync, nothing changed: {again:.2f} s", flush=True)
        for mirror in mirrors[:10]:
            change_one(mirror, rng.choice(notes), args.corpus)
        changed = timed([exe, "org", "sync", *map(str, mirrors)], env)
        print(f"re-sync, one record changed in 10 repositories: {changed:.2f} s", flush=True)

        texts = queries(notes, args.queries, args.seed)
        cli = [timed([exe, "org", "search", text, "--json"], env) for text in texts]
        conn = connect(url)
        searcher = OrgSearcher(conn)
        for text in texts[:5]:  # warm: statements prepared, pages cached
            searcher.search(text)
        api: list[float] = []
        for text in texts:
            started = time.perf_counter()
            searcher.search(text).document()
            api.append(time.perf_counter() - started)
        shipped: list[float] = []
        sizes: list[int] = []
        for text in texts:
            started = time.perf_counter()
            sizes.append(candidates_scored_in_python(searcher, text))
            shipped.append(time.perf_counter() - started)
        conn.close()
        print(
            f"candidates scored in Python:  p50 {statistics.median(shipped) * 1000:.1f} ms, "
            f"p95 {percentile(shipped, 0.95) * 1000:.1f} ms "
            f"(candidates per query: median {statistics.median(sizes):.0f}, max {max(sizes)})"
        )
        print(
            f"org search, CLI process:      p50 {statistics.median(cli) * 1000:.0f} ms, "
            f"p95 {percentile(cli, 0.95) * 1000:.0f} ms"
        )
        print(
            f"org search, long-running API: p50 {statistics.median(api) * 1000:.1f} ms, "
            f"p95 {percentile(api, 0.95) * 1000:.1f} ms"
        )
    finally:
        if server is not None:
            server.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
