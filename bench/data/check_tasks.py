#!/usr/bin/env python3
"""Check the brief task set (bench/data/brief_tasks.jsonl) against the corpus it was written from.

Usage (from the repository root):

    python bench/data/check_tasks.py --corpus ../shared/corpora/til
    python bench/data/check_tasks.py --corpus ../shared/corpora/til --verbose
    python bench/data/check_tasks.py --corpus ../shared/corpora/til --twins 0.45

Checks that every line is a JSON object with ``id``, ``task``, ``query`` and ``kind``
(bug, feature, chore or question), that ids are unique and name a record of the corpus
(the ``id:`` of its front matter), that a task is 1 to 4 sentences and a query 2 to 6
keywords (words other than common English ones).

Then it measures how much of each task leaks the lesson's words: the share of the task's
distinct content tokens that occur in the record's title (flagged above 0.5), the same
for the query, and the share of the title's content tokens the task repeats. Tokens are
lower-cased letters and digits, common English words dropped, a plain suffix stripped
(``branches`` and ``branch`` count as one). ``--twins 0.45`` lists targets that have a near
twin in the corpus (the same lesson written twice), which no ranking can tell apart.
Exit 0 when all is well, 1 when a line is invalid or a task or query is flagged, 2 on a
usage error. Only the standard library.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import statistics
import sys
from collections import Counter
from pathlib import Path

KINDS = frozenset({"bug", "feature", "chore", "question"})
FLAG_ABOVE = 0.5
TOKEN = re.compile(r"[a-z0-9]+")
SENTENCE_END = re.compile(r"[.?!]+(?:\s|$)")
STOPWORDS = frozenset(
    """a an and are as at be been but by can could do does did for from get got has have how i
    if in into is it its it's just me my no not of on or our so some that the their them then
    there this to up us was we what when where which who why will with without you your
    all any out own too very also than s t""".split()
)
SUFFIXES = ("ing", "ed", "es", "s")


def stem(token: str) -> str:
    """Strip one plain English suffix from a longer word (branches -> branch, renaming -> renam)."""
    for suffix in SUFFIXES:
        if len(token) > len(suffix) + 3 and token.endswith(suffix):
            return token[: -len(suffix)]
    return token


def content_tokens(text: str) -> set[str]:
    return {stem(t) for t in TOKEN.findall(text.lower()) if len(t) > 1 and t not in STOPWORDS}


def share(part: set[str], whole: set[str]) -> float:
    """The fraction of ``part`` found in ``whole`` (0 for an empty ``part``)."""
    return len(part & whole) / len(part) if part else 0.0


def front_matter(path: Path) -> dict[str, str]:
    """The ``key: value`` lines between the first two ``---`` lines (enough for id and title)."""
    fields: dict[str, str] = {}
    with path.open(encoding="utf-8") as handle:
        if handle.readline().strip() != "---":
            return fields
        for line in handle:
            if line.strip() == "---":
                break
            key, sep, value = line.partition(":")
            if sep:
                fields[key.strip()] = value.strip().strip('"')
    return fields


def load_corpus(corpus: Path) -> dict[str, tuple[str, str, Path]]:
    """Record id -> (title, topic folder, file) for every record of the corpus."""
    records: dict[str, tuple[str, str, Path]] = {}
    root = corpus / ".reliora" / "experiences"
    for path in sorted(root.glob("*/*.md")):
        fields = front_matter(path)
        if "id" in fields:
            records[fields["id"]] = (fields.get("title", ""), path.parent.name, path)
    return records


def neighbours(
    records: dict[str, tuple[str, str, Path]], wanted: list[str]
) -> dict[str, tuple[float, str]]:
    """For each wanted id, the most similar other record (cosine of tf-idf over the whole text).

    A task whose lesson has a near twin in the corpus (the same lesson written twice) cannot
    tell rankings apart: either record answers it. Reported so that such targets are swapped.
    """
    counts: dict[str, dict[str, int]] = {}
    for rid, (_, _, path) in records.items():
        bag: dict[str, int] = {}
        for token in TOKEN.findall(path.read_text(encoding="utf-8").lower()):
            if len(token) > 2 and token not in STOPWORDS:
                bag[token] = bag.get(token, 0) + 1
        counts[rid] = bag
    frequency = Counter(token for bag in counts.values() for token in bag)
    total = len(counts)
    vectors: dict[str, dict[str, float]] = {}
    for rid, bag in counts.items():
        weights = {t: (1 + math.log(n)) * math.log(total / frequency[t]) for t, n in bag.items()}
        norm = math.sqrt(sum(w * w for w in weights.values())) or 1.0
        vectors[rid] = {t: w / norm for t, w in weights.items()}
    nearest: dict[str, tuple[float, str]] = {}
    for rid in wanted:
        mine = vectors[rid]
        nearest[rid] = max(
            (sum(w * other.get(t, 0.0) for t, w in mine.items()), oid)
            for oid, other in vectors.items()
            if oid != rid
        )
    return nearest


def check_line(
    number: int, line: str, seen: set[str], records: dict[str, tuple[str, str, Path]]
) -> tuple[dict[str, str] | None, list[str]]:
    """The task of one line, or None, and the problems found in it."""
    where = f"line {number}"
    try:
        item = json.loads(line)
    except json.JSONDecodeError as err:
        return None, [f"{where}: not JSON ({err.msg})"]
    if not isinstance(item, dict):
        return None, [f"{where}: not a JSON object"]
    problems = [
        f"{where}: field {name!r} missing or not a non-empty string"
        for name in ("id", "task", "query", "kind")
        if not isinstance(item.get(name), str) or not item[name].strip()
    ]
    if problems:
        return None, problems
    task: dict[str, str] = {name: item[name] for name in ("id", "task", "query", "kind")}
    if task["id"] not in records:
        problems.append(f"{where}: id {task['id']!r} is not a record of the corpus")
    if task["id"] in seen:
        problems.append(f"{where}: id {task['id']!r} appears twice")
    seen.add(task["id"])
    if task["kind"] not in KINDS:
        problems.append(f"{where}: kind {task['kind']!r} is not one of {sorted(KINDS)}")
    sentences = len(SENTENCE_END.findall(task["task"].strip() + " "))
    if not 1 <= sentences <= 4:
        problems.append(f"{where}: task has {sentences} sentences (1 to 4)")
    keywords = [w for w in task["query"].lower().split() if w not in STOPWORDS]
    if not 2 <= len(keywords) <= 6:
        problems.append(f"{where}: query has {len(keywords)} keywords (2 to 6)")
    return (task if not problems else None), problems


def check_prompts(path: Path) -> list[str]:
    lines = path.read_text(encoding="utf-8").splitlines()
    problems = [f"{path}: line {n} is empty" for n, text in enumerate(lines, 1) if not text.strip()]
    dupes = [text for text, count in Counter(lines).items() if count > 1]
    problems += [f"{path}: {text!r} appears more than once" for text in dupes]
    print(f"{path}: {len(lines)} prompts without a task")
    return problems


def main(argv: list[str] | None = None) -> int:
    here = Path(__file__).resolve().parent
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, required=True, help="folder holding .reliora/")
    parser.add_argument("--tasks", type=Path, default=here / "brief_tasks.jsonl")
    parser.add_argument("--prompts", type=Path, default=here / "brief_no_task_prompts.txt")
    parser.add_argument("--verbose", action="store_true", help="one line of figures per task")
    parser.add_argument(
        "--twins",
        type=float,
        metavar="COS",
        help="also list targets whose most similar other record has at least this cosine",
    )
    args = parser.parse_args(argv)
    if not (args.corpus / ".reliora" / "experiences").is_dir():
        print(f"error: {args.corpus} has no .reliora/experiences folder", file=sys.stderr)
        return 2
    if not args.tasks.is_file():
        print(f"error: {args.tasks} does not exist", file=sys.stderr)
        return 2

    records = load_corpus(args.corpus)
    problems: list[str] = []
    seen: set[str] = set()
    tasks: list[dict[str, str]] = []
    lines = args.tasks.read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines, 1):
        task, found = check_line(number, line, seen, records)
        problems += found
        if task is not None:
            tasks.append(task)

    flagged = 0
    task_shares: list[float] = []
    query_shares: list[float] = []
    title_shares: list[float] = []
    for task in tasks:
        title = content_tokens(records[task["id"]][0])
        words = content_tokens(task["task"])
        task_share = share(words, title)
        query_share = share(content_tokens(task["query"]), title)
        title_share = share(title, words)
        task_shares.append(task_share)
        query_shares.append(query_share)
        title_shares.append(title_share)
        flag = task_share > FLAG_ABOVE or query_share > FLAG_ABOVE
        flagged += flag
        if flag or args.verbose:
            mark = "FLAG " if flag else "     "
            print(
                f"{mark}{task['id']}: task {task_share:.2f} query {query_share:.2f} "
                f"title-in-task {title_share:.2f} (title {records[task['id']][0]!r})"
            )

    print(f"{args.tasks}: {len(lines)} lines, {len(tasks)} valid tasks, {len(problems)} problems")
    if tasks:
        kinds = Counter(task["kind"] for task in tasks)
        topics = Counter(records[task["id"]][1] for task in tasks)
        print("kinds: " + ", ".join(f"{k} {n}" for k, n in kinds.most_common()))
        print(f"topics ({len(topics)}): " + ", ".join(f"{t} {n}" for t, n in topics.most_common()))
        for name, values in (
            ("task tokens in title", task_shares),
            ("query tokens in title", query_shares),
            ("title tokens in task", title_shares),
        ):
            print(
                f"{name}: mean {statistics.mean(values):.3f}, "
                f"median {statistics.median(values):.3f}, max {max(values):.3f}"
            )
        print(f"flagged (task or query share > {FLAG_ABOVE}): {flagged}")
    if args.twins is not None and tasks:
        near = neighbours(records, [task["id"] for task in tasks])
        close = sorted(((cos, rid, oid) for rid, (cos, oid) in near.items()), reverse=True)
        print(f"most similar other record (cosine >= {args.twins}):")
        for cos, rid, oid in close:
            if cos >= args.twins:
                print(f"  {cos:.2f} {rid} ~ {oid}")
    if args.prompts.is_file():
        problems += check_prompts(args.prompts)
    for problem in problems:
        print(f"error: {problem}", file=sys.stderr)
    return 1 if problems or flagged else 0


if __name__ == "__main__":
    sys.exit(main())
