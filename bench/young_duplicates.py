#!/usr/bin/env python3
"""Reworded duplicates in young stores, written by hand (SPEC.md §6.1).

Usage (from the repository root, with the package installed):

    python bench/young_duplicates.py --corpus ../shared/corpora/til
    python bench/young_duplicates.py --corpus PATH --sizes 3 9 20 --out young.json

``bench/data/reworded_notes.jsonl`` holds 60 notes of the corpus written again
by hand, as a second author who hit the same problem would write them without
having read the first: another title (``Don't sleep in max_age tests, use
freeze_time`` → ``Timed tests must freeze time with freezegun, never sleep``),
the symptom and the fix in other words, the same commands. Five notes from
each of twelve topic folders, taken at even positions of the folder, not chosen
for being easy. Even lines are the tuning half, odd lines are held out.

For each note and store size N, a young store is the original and the N − 1
notes of the same folder that follow it in name order (a store is about one
project, so its notes share a topic, which is what makes duplicates hard to
tell from related notes). Figures, for each half:

* **reworded likely**: the copy, checked as ``record`` checks a new record, gets
  its original as a likely duplicate;
* **copy without its original**: the same copy checked against the store with
  its original taken out gets any likely duplicate (each one is false);
* **distinct notes**: every note of the store checked against the others gets
  any likely duplicate (each one is false: they are distinct write-ups).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from reliora_git.records.model import Record  # noqa: E402
from reliora_git.records.parse import parse_record  # noqa: E402
from reliora_git.search.duplicates import DocsPool, find_similar  # noqa: E402
from reliora_git.search.rank import index_record  # noqa: E402

DEFAULT_CORPUS = REPO_ROOT.parent / "shared" / "corpora" / "til"
NOTES = REPO_ROOT / "bench" / "data" / "reworded_notes.jsonl"
SIZES = (3, 9, 20)


@dataclass(frozen=True)
class Reworded:
    original: str
    topic: str
    record: Record
    held_out: bool


def read_reworded(path: Path) -> list[Reworded]:
    found = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
        if not line.strip():
            continue
        data = json.loads(line)
        given = data["record"]
        record = Record(
            id=f"reworded-{data['original']}"[:80],
            title=given["title"],
            task=given.get("task", ""),
            problems=list(given.get("problems", [])),
            solution=given.get("solution", ""),
            tags=list(given.get("tags", [])),
        )
        found.append(Reworded(data["original"], data["topic"], record, held_out=n % 2 == 1))
    return found


def read_topic(corpus: Path, topic: str) -> list[Record]:
    folder = corpus / ".reliora" / "experiences" / topic
    return [
        parse_record(path.read_text(encoding="utf-8"), path.relative_to(corpus).as_posix()).record
        for path in sorted(folder.glob("*.md"))
    ]


def young_store(notes: list[Record], original: str, size: int) -> list[Record]:
    """The original and the ``size - 1`` notes after it in name order (wrapping round)."""
    at = next(i for i, r in enumerate(notes) if r.id == original)
    return [notes[(at + k) % len(notes)] for k in range(min(size, len(notes)))]


def likely_ids(record: Record, stored: list[Record]) -> set[str]:
    pool = DocsPool([index_record(r) for r in stored])
    return {w.id for w in find_similar(record, pool) if w.likely}


def measure(items: list[Reworded], corpus: Path, size: int) -> dict[str, Any]:
    topics: dict[str, list[Record]] = {}
    found = without = distinct = distinct_of = 0
    missed: list[str] = []
    for item in items:
        notes = topics.setdefault(item.topic, read_topic(corpus, item.topic))
        stored = young_store(notes, item.original, size)
        if item.original in likely_ids(item.record, stored):
            found += 1
        else:
            missed.append(item.original)
        others = [r for r in stored if r.id != item.original]
        without += bool(likely_ids(item.record, others))
        for note in stored:
            distinct_of += 1
            distinct += bool(likely_ids(note, [r for r in stored if r.id != note.id]))
    return {
        "size": size,
        "copies": len(items),
        "rewordedLikely": found,
        "copyWithoutOriginalFlagged": without,
        "distinctChecked": distinct_of,
        "distinctFlagged": distinct,
        "missed": missed,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--notes", type=Path, default=NOTES)
    parser.add_argument("--sizes", type=int, nargs="*", default=list(SIZES))
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    if not (args.corpus / ".reliora" / "experiences").is_dir():
        print(f"no corpus at {args.corpus} (pass --corpus PATH): nothing measured")
        return 0
    items = read_reworded(args.notes)
    results: dict[str, Any] = {}
    print(
        "| half | store size | reworded copy likely | copy without original flagged "
        "| distinct notes flagged |"
    )
    print("| --- | ---: | ---: | ---: | ---: |")
    for half, held in (("tuning", False), ("held out", True)):
        chosen = [item for item in items if item.held_out is held]
        for size in args.sizes:
            row = measure(chosen, args.corpus, size)
            results.setdefault(half, []).append(row)
            print(
                f"| {half} | {size} | {row['rewordedLikely']}/{row['copies']} "
                f"({100 * row['rewordedLikely'] / row['copies']:.0f}%) | "
                f"{row['copyWithoutOriginalFlagged']}/{row['copies']} | "
                f"{row['distinctFlagged']}/{row['distinctChecked']} |",
                flush=True,
            )
    if args.out:
        args.out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
