#!/usr/bin/env python3
"""How often duplicate warnings are right, measured on a corpus of real notes (SPEC.md §6.1).

Usage (from the repository root, with the package installed):

    python bench/duplicates.py                       # ../shared/corpora/til next to the checkout
    python bench/duplicates.py --corpus PATH --sample 400 --seed 1 --out results.json

The corpus is copied into a temporary store and read through the store index,
as every command reads it. Three figures, each also for a range of
``duplicate_overlap`` thresholds:

* **false likely duplicates**: every note is checked against all the others
  (as ``check`` of a named file does); the share that gets a likely-duplicate
  warning. The notes are distinct write-ups, so each one is a false alarm (a
  few may be real repeats: the script lists the worst pairs to read).
* **recall on reworded duplicates**: for a sample of notes, a new record made
  from one: title words shuffled and about a quarter dropped, only the first
  problem kept and cut to its first half, task, solution and the other fields
  new text; tags kept (they name the topic), once more with the tags dropped,
  and once with two words of other notes' titles added to the title (every
  other variant takes all its query tokens from the original, so its overlap
  with it is 1 by construction). Recall is the share whose original gets a
  likely-duplicate warning.
* **hard negatives**: for each sampled note, its closest other note of the
  same topic (the corpus folder: ``vim``, ``postgres``…) by the duplicate
  query's score. These are the pairs most like duplicates that are not; the
  figure is the share flagged likely duplicates.

The seed's levels alone (a moderate or strong warning) are shown beside, for
comparison.

Most stores are young, so the same two figures are also measured in **small
stores** of 1, 2, 3, 5 and 20 notes sampled from the corpus (``--trials`` stores
of each size): a reworded copy (tags kept, 2 words of other notes' titles added
to the title) of one of the store's notes should be
a likely duplicate, and a note from outside the store should not be one.

Only the standard library and reliora_git are used.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = REPO_ROOT.parent / "shared" / "corpora" / "til"
SMALL_STORE_SIZES = (1, 2, 3, 5, 20)
THRESHOLDS = (0.5, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9)
DEFAULT_THRESHOLD = 0.75
NEW_TEXT = "A fresh write-up of this lesson, in other words than the original."


@dataclass
class Evidence:
    """What the duplicate check of one candidate found: similar records and their overlap."""

    #: Record id → (overlap, exact twin, overlap the other way) for every moderate or strong
    #: result and twin.
    found: dict[str, tuple[float, bool, float]]

    def flagged(self, record_id: str, threshold: float) -> bool:
        from reliora_git.search.duplicates import is_likely

        hit = self.found.get(record_id)
        return hit is not None and is_likely(*hit, threshold)

    def any_flagged(self, threshold: float) -> bool:
        from reliora_git.search.duplicates import is_likely

        return any(is_likely(*hit, threshold) for hit in self.found.values())


def evidence_of(record: Any, index: Any) -> Evidence:
    """Every similarity find_similar weighs, before its caps (so a threshold can be swept)."""
    from reliora_git.search.duplicates import (
        MUTUAL_MARGIN,
        YOUNG_STORE,
        duplicate_query,
        idf_weights,
        overlap_of,
        reverse_overlap,
    )
    from reliora_git.search.rank import index_record, score_record

    query = duplicate_query(record)
    found: dict[str, tuple[float, bool, float]] = {}
    if query is None:
        return Evidence(found)
    tokens = query.token_texts_tuple
    idf = idf_weights(tokens, index, record.id)
    candidate = index_record(record)
    young = index.record_count(record.id) < YOUNG_STORE

    def reverse(doc: Any, overlap: float) -> float:
        # Only an overlap that the mutual rule may lift needs it (as find_similar does).
        if not young or overlap < min(THRESHOLDS) - MUTUAL_MARGIN:
            return 0.0
        return reverse_overlap(doc, candidate, index)

    for hit in index.similar_hits(query, record.id):
        overlap = overlap_of(tokens, set(hit.matched_tokens), idf)[0]
        found[hit.doc.id] = (overlap, False, reverse(hit.doc, overlap))
    for twin in index.twins(candidate.fingerprint, record.id) if candidate.fingerprint else []:
        scored = score_record(twin, query)
        matched = set(scored.matched_tokens) if scored is not None else set()
        found[twin.id] = (overlap_of(tokens, matched, idf)[0], True, 0.0)
    return Evidence(found)


def reworded(record: Any, rng: random.Random, keep_tags: bool, foreign: list[str]) -> Any:
    """A new record repeating ``record`` in other words (see the module docstring).

    ``foreign`` words (from other notes' titles) join the title: without them every
    query token of the reworded record comes from the original, whose overlap is 1.
    """
    from reliora_git.records.model import Record

    words = record.title.split()
    rng.shuffle(words)
    drop = len(words) // 4
    for _ in range(drop):
        words.pop(rng.randrange(len(words)))
    for word in foreign:
        words.insert(rng.randrange(len(words) + 1), word)
    problems = []
    if record.problems:
        first = record.problems[0].split()
        problems = [" ".join(first[: max(1, len(first) // 2)])]
    return Record(
        id=f"reworded-{record.id}",
        title=" ".join(words) or record.title,
        task=NEW_TEXT,
        problems=problems,
        solution=NEW_TEXT,
        why_it_worked=NEW_TEXT,
        applicability="wherever the original applies",
        project_context="",
        tags=list(record.tags) if keep_tags else [],
    )


def rate(hits: int, total: int) -> dict[str, Any]:
    return {"count": hits, "of": total, "share": round(hits / total, 4) if total else None}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--corpus", type=Path, default=DEFAULT_CORPUS, help="a folder with .reliora/"
    )
    parser.add_argument("--sample", type=int, default=400, help="notes to reword (default 400)")
    parser.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    parser.add_argument("--out", type=Path, help="write the figures as JSON to this file")
    parser.add_argument(
        "--trials", type=int, default=300, help="small stores of each size (default 300)"
    )
    args = parser.parse_args(argv)
    if not (args.corpus / ".reliora" / "experiences").is_dir():
        print(f"no corpus at {args.corpus} (pass --corpus PATH): nothing measured")
        return 0
    os.environ["RELIORA_NO_CACHE"] = "1"  # a temporary store: nothing to keep
    os.environ.setdefault("RELIORA_NO_PROGRESS", "1")
    from reliora_git.operations.review.check import judged_of_index
    from reliora_git.search.duplicates import find_similar
    from reliora_git.storage.index import open_index
    from reliora_git.storage.store import Store

    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="reliora-dup-eval-") as tmp:
        root = Path(tmp)
        shutil.copytree(args.corpus / ".reliora", root / ".reliora")
        store = Store(root)
        with open_index(store) as index:
            records = [j.load() for j in judged_of_index(index) if j.load is not None]
            topic = {r.id: r.locator.split("/")[2] for r in records}
            rng = random.Random(args.seed)
            sample = rng.sample(records, min(args.sample, len(records)))
            print(
                f"{len(records)} notes from {args.corpus}; {len(sample)} sampled (seed {args.seed})"
            )

            distinct = {r.id: evidence_of(r, index) for r in records}
            shipped = sum(
                any(w.likely for w in find_similar(r, index, duplicate_overlap=DEFAULT_THRESHOLD))
                for r in records
            )
            assert shipped == sum(e.any_flagged(DEFAULT_THRESHOLD) for e in distinct.values())
            seed_levels = sum(bool(e.found) for e in distinct.values())

            recall: dict[str, dict[str, Evidence]] = {}
            title_words = [w for r in records for w in r.title.split() if len(w) > 3]
            variants = (
                ("tags kept", True, 0),
                ("tags dropped", False, 0),
                ("tags kept, 2 new title words", True, 2),
            )
            for variant, keep_tags, extra in variants:
                recall[variant] = {
                    r.id: evidence_of(
                        reworded(r, rng, keep_tags, rng.sample(title_words, extra)), index
                    )
                    for r in sample
                }

            negatives: dict[str, tuple[str, Evidence]] = {}
            for r in sample:
                hits = _nearest_same_topic(r, index, topic)
                if hits is not None:
                    negatives[r.id] = (hits, distinct[r.id])

    results: dict[str, Any] = {
        "corpus": str(args.corpus),
        "notes": len(records),
        "sample": len(sample),
        "seed": args.seed,
        "defaultThreshold": DEFAULT_THRESHOLD,
        "seedLevels": {
            "distinctWithWarning": rate(seed_levels, len(records)),
            "rewordedWarned": {
                v: rate(sum(rid in e.found for rid, e in ev.items()), len(ev))
                for v, ev in recall.items()
            },
            "hardNegativesWarned": rate(
                sum(n in e.found for n, e in negatives.values()), len(negatives)
            ),
        },
        "byThreshold": {},
    }
    for t in THRESHOLDS:
        results["byThreshold"][str(t)] = {
            "falseLikelyDuplicates": rate(
                sum(e.any_flagged(t) for e in distinct.values()), len(records)
            ),
            "recall": {
                v: rate(sum(e.flagged(rid, t) for rid, e in ev.items()), len(ev))
                for v, ev in recall.items()
            },
            "hardNegativesFlagged": rate(
                sum(e.flagged(n, t) for n, e in negatives.values()), len(negatives)
            ),
        }
    worst = sorted(
        (
            (overlap, rid, other)
            for rid, e in distinct.items()
            for other, (overlap, _, _) in e.found.items()
        ),
        reverse=True,
    )[:10]
    results["highestOverlapsAmongDistinctNotes"] = [
        {"note": rid, "existing": other, "overlap": round(o, 4)} for o, rid, other in worst
    ]
    results["smallStores"] = small_stores(
        records, args.trials, random.Random(args.seed), title_words
    )
    results["seconds"] = round(time.perf_counter() - started, 1)
    _print(results)
    if args.out:
        args.out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {args.out}")
    return 0


def small_stores(
    records: list[Any], trials: int, rng: random.Random, title_words: list[str]
) -> dict[str, Any]:
    """Recall on reworded copies and false likely duplicates in stores of a few notes."""
    from reliora_git.search.duplicates import DocsPool, find_similar
    from reliora_git.search.rank import index_record

    figures: dict[str, Any] = {}
    for size in SMALL_STORE_SIZES:
        found = false = 0
        for _ in range(trials):
            chosen = rng.sample(records, size + 1)
            stored, outsider = chosen[:size], chosen[size]
            pool = DocsPool([index_record(r) for r in stored])
            original = rng.choice(stored)
            copy = reworded(original, rng, True, rng.sample(title_words, 2))
            found += any(
                w.likely and w.id == original.id
                for w in find_similar(copy, pool, duplicate_overlap=DEFAULT_THRESHOLD)
            )
            false += any(
                w.likely for w in find_similar(outsider, pool, duplicate_overlap=DEFAULT_THRESHOLD)
            )
        figures[str(size)] = {
            "rewordedLikely": rate(found, trials),
            "distinctFlagged": rate(false, trials),
        }
    return figures


def _nearest_same_topic(record: Any, index: Any, topic: dict[str, str]) -> str | None:
    """The other note of the same topic that scores highest for ``record``'s duplicate query."""
    from reliora_git.search.duplicates import duplicate_query

    query = duplicate_query(record)
    if query is None:
        return None
    for hit in index.rank(query, include_retired=True):
        if hit.doc.id != record.id and topic.get(hit.doc.id) == topic[record.id]:
            return str(hit.doc.id)
    return None


def _print(results: dict[str, Any]) -> None:
    def pct(r: dict[str, Any]) -> str:
        return "—" if r["share"] is None else f"{100 * r['share']:.1f}% ({r['count']}/{r['of']})"

    seed = results["seedLevels"]
    print("\nseed levels alone (a moderate or strong warning):")
    print(f"  distinct notes warned:        {pct(seed['distinctWithWarning'])}")
    for variant, r in seed["rewordedWarned"].items():
        print(f"  reworded ({variant}) warned:  {pct(r)}")
    print(f"  hard negatives warned:        {pct(seed['hardNegativesWarned'])}")
    print("\nduplicate_overlap: false likely | recall: " + " / ".join(seed["rewordedWarned"]))
    print("  | hard negatives flagged")
    for t, row in results["byThreshold"].items():
        mark = " (default)" if float(t) == results["defaultThreshold"] else ""
        recalls = " / ".join(pct(r) for r in row["recall"].values())
        print(
            f"  {t}{mark}: {pct(row['falseLikelyDuplicates'])} | {recalls}"
            f" | {pct(row['hardNegativesFlagged'])}"
        )
    print("\nhighest overlaps among distinct notes (read these: some may be real repeats):")
    for pair in results["highestOverlapsAmongDistinctNotes"]:
        print(f"  {pair['overlap']:.4f}  {pair['note']}  ~  {pair['existing']}")
    print(f"\nsmall stores (threshold {results['defaultThreshold']}):")
    print("  notes: reworded copy likely | distinct note flagged")
    for size, row in results["smallStores"].items():
        print(f"  {size:>5}: {pct(row['rewordedLikely'])} | {pct(row['distinctFlagged'])}")
    print(f"\n{results['seconds']} s")


if __name__ == "__main__":
    sys.exit(main())
