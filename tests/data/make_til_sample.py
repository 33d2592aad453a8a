"""Write ``tests/data/til/``: a fixed sample of the til corpus that ships with the repository.

The full corpus (1,871 records of jbranchaud/til, MIT) lives outside the
repository (``../shared/corpora/til`` next to the checkout); the benchmarks take
it with ``--corpus``. The tests need a real-world store in every clone, so this
script copies a few hundred of its records, unchanged, with the corpus's
LICENSE and an attribution README, to ``tests/data/til/``.

Which records, deterministically:

* every record a test names: the retired/superseded ones of the golden test
  (``make_til_golden.RETIRED``) and those of ``NAMED`` below;
* the first ``TOP`` results, on the full corpus, of every query the corpus tests
  run (the golden query set, ``TOPIC_QUERIES``), so that those queries still
  rank a realistic field of close candidates;
* then, in each topic folder, the records with the smallest sha256 of their
  locator until the topic holds ``SHARE`` of its records (at least one), so that
  every one of the 76 topics is there in proportion.

Run it from the repository root (it imports the installed ``reliora_git`` to
rank the queries), then regenerate ``til_golden.json`` (``make_til_golden.py``)::

    python tests/data/make_til_sample.py --corpus ../shared/corpora/til
"""

from __future__ import annotations

import argparse
import hashlib
import math
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

from tests.data.make_til_golden import QUERIES, RETIRED, environment  # noqa: E402

#: Records a test names by id or locator (tests/test_search_document.py).
NAMED = (".reliora/experiences/postgres/extracting-nested-json-data-b320db.md",)
#: Queries of the other corpus tests (test_search_document, test_search_speedups),
#: as (text, project context).
TOPIC_QUERIES: tuple[tuple[str, str | None], ...] = (
    ("tmux copy mode", "tmux"),
    ("undo last git commit", None),
    ("postgres json column", None),
    ("react hooks state", None),
    ("configuration files", "unix"),
    ("vim search and replace across files with regex", None),
    ("postgres index performance query plan explain analyze slow", None),
)
#: Results kept per query, and the share of each topic kept at least.
TOP = 6
SHARE = 0.15


def locators(corpus: Path) -> list[str]:
    files = (corpus / ".reliora" / "experiences").rglob("*.md")
    return sorted(path.relative_to(corpus).as_posix() for path in files)


def top_results(corpus: Path) -> set[str]:
    from reliora_git.operations.lessons.reads import search
    from reliora_git.records.errors import RelioraError
    from reliora_git.storage.store import Store

    store = Store(corpus)
    asked = [(q["text"], q["projectContext"]) for q in QUERIES] + list(TOPIC_QUERIES)
    chosen: set[str] = set()
    with environment(RELIORA_NO_CACHE="1", RELIORA_CACHE_DIR=None):
        for text, context in asked:
            try:
                found = search(store, text, project_context=context)
            except RelioraError:  # a query of stop words only, say: it ranks nothing
                continue
            chosen.update(hit.doc.locator for hit in found.hits[:TOP])
    return chosen


def sample(corpus: Path) -> list[str]:
    every = locators(corpus)
    chosen = set(RETIRED) | set(NAMED) | top_results(corpus)
    missing = chosen - set(every)
    assert not missing, f"not in the corpus: {sorted(missing)}"
    topics: dict[str, list[str]] = {}
    for locator in every:
        topics.setdefault(locator.split("/")[2], []).append(locator)
    for members in topics.values():
        want = max(1, math.ceil(len(members) * SHARE))
        by_hash = sorted(members, key=lambda loc: hashlib.sha256(loc.encode()).hexdigest())
        for locator in by_hash:
            if sum(1 for m in members if m in chosen) >= want:
                break
            chosen.add(locator)
    return sorted(chosen)


ATTRIBUTION = """\
# A sample of the til corpus: {count} of its {total} records

Short technical notes ("today I learned") written by Josh Branchaud and
contributors, MIT licensed (see LICENSE in this folder), taken from the public
repository jbranchaud/til at commit 453e9ed and converted into Reliora records:

* title = the note's H1; project_context = its topic folder;
* tags = the topic plus up to three code-block languages;
* Problems = the first prose paragraph; Solution = the rest of the note
  (headings inside the note were demoted to level 3).

The records are copied unchanged. Which ones, and how to regenerate the sample
and the golden search results on it: tests/data/make_til_sample.py. Tests read
this folder only; a test that writes copies it to a temporary folder first.
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", type=Path, default=HERE.parents[2] / "shared/corpora/til")
    parser.add_argument("--out", type=Path, default=HERE / "til")
    args = parser.parse_args()
    chosen = sample(args.corpus)
    if args.out.exists():
        shutil.rmtree(args.out)
    for locator in chosen:
        target = args.out / locator
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(args.corpus / locator, target)
    shutil.copyfile(args.corpus / "LICENSE", args.out / "LICENSE")
    total = len(locators(args.corpus))
    text = ATTRIBUTION.format(count=len(chosen), total=f"{total:,}")
    (args.out / "README.md").write_text(text, encoding="utf-8")
    topics = {locator.split("/")[2] for locator in chosen}
    print(f"wrote {args.out}: {len(chosen)} records in {len(topics)} topics", file=sys.stderr)


if __name__ == "__main__":
    main()
