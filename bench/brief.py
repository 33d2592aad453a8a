#!/usr/bin/env python3
"""Measure the brief's task ranking, its relevance floor and its speed (SPEC.md §14).

Usage (from the repository root, with the package importable):

    python bench/brief.py --corpus ../shared/corpora/til            # ranking and floor
    python bench/brief.py --corpus ../shared/corpora/til --timing   # and `reliora brief` at 1k/10k
    python bench/brief.py --variants                                 # every candidate measured

**Ranking.** ``bench/data/brief_tasks.jsonl`` holds tasks written from the corpus'
notes (``{"id", "task", "query", "kind"}``: ``id`` is the note the task needs,
``task`` the situation as a person would hand it to an agent, never the note's
distinctive words, ``query`` the keywords an agent would search with). For each
ranking, R@1, R@5 and MRR@10 of the note, from the task alone and from the task
with the keywords: the §5 ranking of ``search`` (the text as its query), plain
BM25 over each record's whole text (real term frequencies, k1 1.2, b 0.75,
computed here from the records' field strings, independent of the index), and
the brief's ranking (search/taskrank.py) with its candidate settings.

**Floor.** ``bench/data/brief_no_task_prompts.txt`` holds prompts that carry no
task ("yes, go ahead"), one a line: the share that gets a non-empty brief
(target ≤ 10%), and the share of tasks whose note is in the top 5 without the
floor but lost with it.

**Asked-as lines** (SPEC.md §3): ``bench/data/asked_as.jsonl`` holds three lines for every
record of the corpus, written from each record alone by writers who never saw the tasks
(bench/data/README.md says how). Every figure is measured twice: on the records as they are,
and on a copy of the corpus with those lines added as each record's ``## Asked as``.
The tasks are split once, by a hash of the note's id, into a tuning part (two thirds: the
asked-as field's weight was chosen there) and a held-out part; R@k are given for both.

**Speed** (``--timing``): ``reliora brief TASK`` as a whole process on stores of
1,000 and 10,000 records made as bench/run.py makes them, medians of several
runs, next to ``reliora search`` of the task's keywords and ``git grep -il`` of
the same keywords in the same run.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import math
import os
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from reliora_git.operations.lessons import reads  # noqa: E402
from reliora_git.records.errors import RelioraError  # noqa: E402
from reliora_git.search.rank import FIELD_SEPARATOR  # noqa: E402
from reliora_git.search.stopwords import STOP_WORDS  # noqa: E402
from reliora_git.search.taskrank import Settings, rank_task, task_words  # noqa: E402
from reliora_git.search.tokens import tokenize  # noqa: E402
from reliora_git.storage.index import StoreIndex, open_index  # noqa: E402
from reliora_git.storage.store import Store  # noqa: E402

DEFAULT_CORPUS = REPO_ROOT.parent / "shared" / "corpora" / "til"
TASKS = REPO_ROOT / "bench" / "data" / "brief_tasks.jsonl"
PROMPTS = REPO_ROOT / "bench" / "data" / "brief_no_task_prompts.txt"
ASKED = REPO_ROOT / "bench" / "data" / "asked_as.jsonl"
#: Ranks looked at: R@1, R@5, MRR@10.
DEPTH = 10


@dataclass(frozen=True)
class Task:
    id: str
    task: str
    query: str
    kind: str


def read_tasks(path: Path) -> list[Task]:
    tasks = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            data = json.loads(line)
            tasks.append(
                Task(data["id"], data["task"], data.get("query", ""), data.get("kind", ""))
            )
    return tasks


def held_out(task: Task) -> bool:
    """One task in three is held out of tuning, chosen by its note's id (stable, blind)."""
    return int(hashlib.sha1(task.id.encode("utf-8")).hexdigest(), 16) % 3 == 0


def read_asked(path: Path) -> dict[str, list[str]]:
    """Record id → its asked-as lines (``{"id", "askedAs"}`` a line)."""
    found: dict[str, list[str]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            data = json.loads(line)
            found[data["id"]] = [str(item) for item in data["askedAs"]]
    return found


def with_asked_lines(corpus: Path, asked: dict[str, list[str]], folder: Path) -> Path:
    """A copy of the corpus in ``folder`` whose records end with their ``## Asked as`` lines."""
    import shutil

    from reliora_git.records.parse import split_front_matter

    target = folder / "asked-store"
    shutil.copytree(corpus, target, ignore=shutil.ignore_patterns(".cache*"))
    for path in target.rglob("*.md"):
        text = path.read_text(encoding="utf-8")
        if not text.startswith("---"):
            continue
        meta = split_front_matter(text, str(path))[0]
        lines = asked.get(str(meta.get("id", "")))
        if lines:
            bullets = "".join(f"- {line}\n" for line in lines)
            path.write_text(f"{text.rstrip()}\n\n## Asked as\n{bullets}", encoding="utf-8")
    return target


def read_prompts(path: Path) -> list[str]:
    if not path.is_file():
        return []
    return [line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


# --- rankings --------------------------------------------------------------------------------

#: A ranking: (task text, keywords) → record ids, best first.
Ranking = Callable[[str, str], list[str]]


def search_ranking(store: Store, index: StoreIndex) -> Ranking:
    """The §5 ranking of ``search``, the task (and keywords) as the query."""

    def rank(task: str, query: str) -> list[str]:
        try:
            result = reads.search(store, f"{task} {query}".strip(), index=index)
        except RelioraError:
            return []
        return [hit.doc.id for hit in result.hits[:DEPTH]]

    return rank


class PlainBM25:
    """Textbook BM25 over each record's whole text (its nine fields as one), real tf."""

    def __init__(self, index: StoreIndex, k1: float = 1.2, b: float = 0.75) -> None:
        self.k1, self.b = k1, b
        self.ids: list[str] = []
        self.tfs: list[Counter[str]] = []
        df: Counter[str] = Counter()
        for slot in index.slots():
            doc = index.inverted.docs[slot]
            assert doc is not None
            if not doc.is_active:
                continue
            counts = Counter(index.text_of(slot).split())
            self.ids.append(doc.id)
            self.tfs.append(counts)
            df.update(counts.keys())
        self.df = df
        self.lengths = [sum(c.values()) for c in self.tfs]
        self.average = sum(self.lengths) / max(len(self.lengths), 1)

    def __call__(self, task: str, query: str) -> list[str]:
        words = list(dict.fromkeys(t for t in tokenize(f"{task} {query}") if t not in STOP_WORDS))
        n = len(self.ids)
        scores: list[tuple[float, str]] = []
        idf = {w: math.log(1 + (n - self.df[w] + 0.5) / (self.df[w] + 0.5)) for w in words}
        for doc_id, counts, length in zip(self.ids, self.tfs, self.lengths, strict=True):
            score = 0.0
            norm = self.k1 * (1 - self.b + self.b * length / self.average)
            for w in words:
                tf = counts.get(w, 0)
                if tf:
                    score += idf[w] * tf * (self.k1 + 1) / (tf + norm)
            if score > 0:
                scores.append((-score, doc_id))
        scores.sort()
        return [doc_id for _, doc_id in scores[:DEPTH]]


def field_lengths(index: StoreIndex) -> list[list[int] | None]:
    """Slot → tokens in each of the nine fields (for the length-normalised candidates)."""
    found: list[list[int] | None] = [None] * len(index.inverted.docs)
    for slot in index.slots():
        found[slot] = [len(f.split()) for f in index.text_of(slot).split(FIELD_SEPARATOR)]
    return found


def task_ranking(
    index: StoreIndex, settings: Settings, lengths: Sequence[Sequence[int] | None] | None = None
) -> Ranking:
    def rank(task: str, query: str) -> list[str]:
        words = task_words(task, query, settings)
        hits = rank_task(
            index.inverted, words, settings, floor=False, lengths=lengths, text_of=index.text_of
        )
        return [hit.doc.id for hit in hits[:DEPTH]]

    return rank


# --- measures --------------------------------------------------------------------------------


@dataclass
class Scores:
    r1: float
    r5: float
    mrr: float
    n: int

    def row(self) -> str:
        return f"{self.r1:.3f} | {self.r5:.3f} | {self.mrr:.3f}"


def measure(rank: Ranking, tasks: Sequence[Task], with_query: bool) -> Scores:
    r1 = r5 = mrr = 0.0
    for task in tasks:
        found = rank(task.task, task.query if with_query else "")
        position = found.index(task.id) + 1 if task.id in found else None
        if position is not None:
            r1 += position == 1
            r5 += position <= 5
            mrr += 1 / position
    n = max(len(tasks), 1)
    return Scores(r1 / n, r5 / n, mrr / n, len(tasks))


def candidates(chosen: Settings, all_variants: bool) -> list[tuple[str, Settings, bool]]:
    """(label, settings, needs field lengths) of the brief's candidate rankings."""
    weighted = (2.0, 3.0, 2.0, 1.5, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0)  # INDEX_FIELDS: tags, title, …
    found = [
        ("brief (chosen: BM25F, stems and compounds ×0.5, stuffing bounds)", chosen, False),
        (
            "brief, BM25F weights title 3, tags 2, problems 2, task 1.5",
            replace(chosen, field_weights=weighted),
            False,
        ),
        ("brief, field lengths normalised (b 0.3)", replace(chosen, b=0.3), True),
        ("brief, no stems", replace(chosen, stem_discount=0.0), False),
        ("brief, §4 prefix rule instead of stems", replace(chosen, prefix=True), False),
        ("brief, words in > 10% of records dropped", replace(chosen, max_df_share=0.1), False),
        ("brief, keywords weighted as task words (×1)", replace(chosen, query_weight=1.0), False),
        (
            "brief, no compounds, splits or stems rule (before issue 32)",
            replace(chosen, compound_discount=0.0, split_discount=0.0, lead_stems="keep"),
            False,
        ),
        ("brief, compounds but no splits", replace(chosen, split_discount=0.0), False),
        ("brief, splits but no compounds", replace(chosen, compound_discount=0.0), False),
        ("brief, stems of a compound's first word kept", replace(chosen, lead_stems="keep"), False),
        (
            "brief, stems off for the first word of any stored compound (user input)",
            replace(chosen, lead_stems="compound"),
            False,
        ),
        (
            "brief, stems off only before a particle whose compound is stored (times out)",
            replace(chosen, lead_stems="phrasal"),
            False,
        ),
        (
            "brief, the agent's keywords length-normalised too",
            replace(chosen, size_keywords=True),
            False,
        ),
        (
            "brief, no stuffing bounds (no size normalisation, no word or section caps)",
            replace(chosen, size_b=0.0, max_words=0, rarely_shown_cap=0.0),
            False,
        ),
    ]
    if all_variants:
        for b in (0.5, 0.75):
            found.append((f"brief, b {b}", replace(chosen, b=b), True))
        for k1 in (0.9, 1.2, 2.0):
            found.append((f"brief, k1 {k1}", replace(chosen, k1=k1), False))
        for share in (0.2, 0.3, 1.0):
            found.append(
                (
                    f"brief, words in > {share:.0%} dropped"
                    if share < 1
                    else "brief, no word dropped",
                    replace(chosen, max_df_share=share),
                    False,
                )
            )
        for discount in (0.3, 0.7, 1.0):
            found.append(
                (f"brief, stems ×{discount}", replace(chosen, stem_discount=discount), False)
            )
        for weight in (1.5, 2.0, 4.0):
            found.append(
                (f"brief, keywords ×{weight}", replace(chosen, query_weight=weight), False)
            )
        for discount in (0.3, 0.7, 1.0):
            found.append(
                (
                    f"brief, compounds and splits ×{discount}",
                    replace(chosen, compound_discount=discount, split_discount=discount),
                    False,
                )
            )
    return found


def floor_figures(
    index: StoreIndex, settings: Settings, tasks: Sequence[Task], prompts: Sequence[str]
) -> dict[str, Any]:
    """Prompts without a task that get a lesson, and tasks whose note the floor loses."""
    text_of = index.text_of
    injected = [
        p
        for p in prompts
        if rank_task(index.inverted, task_words(p, "", settings), settings, text_of=text_of)
    ]
    unfloored = [
        p
        for p in prompts
        if rank_task(
            index.inverted, task_words(p, "", settings), settings, floor=False, text_of=text_of
        )
    ]
    lost = []
    for task in tasks:
        words = task_words(task.task, "", settings)
        every = [
            h.doc.id
            for h in rank_task(index.inverted, words, settings, floor=False, text_of=text_of)[:5]
        ]
        kept = [h.doc.id for h in rank_task(index.inverted, words, settings, text_of=text_of)[:5]]
        if task.id in every and task.id not in kept:
            lost.append(task.id)
    return {
        "prompts": len(prompts),
        "promptsInjected": len(injected),
        "injectedShare": len(injected) / len(prompts) if prompts else None,
        "injectedExamples": injected[:10],
        "promptsInjectedWithoutFloor": len(unfloored),
        "tasks": len(tasks),
        "tasksLost": len(lost),
        "lostShare": len(lost) / len(tasks) if tasks else None,
    }


# --- keyword stuffing -------------------------------------------------------------------------

STUFFED_ID = "stuffed-vocabulary-000000"


def stuffed_store(
    corpus: Path, index: StoreIndex, words: int, folder: Path, asked: bool = False
) -> Store:
    """A copy of the corpus plus one record holding the store's ``words`` commonest words (by
    the number of records holding them) in its Task and Problems only, the sections a brief
    shows least of: the record an adversary would write to take every prompt. ``asked``: in
    its asked-as lines instead (five lines: as many as the ranking reads)."""
    import shutil

    shutil.copytree(corpus, folder / "store", ignore=shutil.ignore_patterns(".cache*"))
    counts: Counter[str] = Counter()
    for slot in index.slots():
        counts.update(set(index.text_of(slot).split()) - STOP_WORDS)
    common = [word for word, _ in counts.most_common(words)]
    half = len(common) // 2
    experiences = folder / "store" / ".reliora" / "experiences"
    if not experiences.is_dir():
        experiences = folder / "store" / "experiences"
    body = f"## Task\n{' '.join(common[:half])}\n\n## Problems\n- {' '.join(common[half:])}\n\n"
    if asked:
        step = max(len(common) // 5, 1)
        lines = [" ".join(common[n : n + step]) for n in range(0, len(common), step)][:5]
        body = "## Task\nNotes.\n\n## Asked as\n" + "".join(f"- {line}\n" for line in lines)
    (experiences / f"{STUFFED_ID}.md").write_text(
        f"---\nid: {STUFFED_ID}\ntitle: Notes on the toolchain\n---\n\n"
        f"{body}\n## Solution\nSee the team wiki.\n",
        encoding="utf-8",
    )
    return Store((folder / "store").resolve())


def stuffing_figures(
    store: Store,
    index: StoreIndex,
    settings: Settings,
    tasks: Sequence[Task],
    prompts: Sequence[str],
) -> dict[str, Any]:
    """How often the stuffed record ranks first or in the top 5 for a task, and for how many
    prompts without a task it clears the floor."""
    first = top5 = first_with_keywords = 0

    def ranked(text: str, query: str = "") -> list[str]:
        words = task_words(text, query, settings)
        return [h.doc.id for h in rank_task(index.inverted, words, settings, text_of=index.text_of)]

    for task in tasks:
        hits = ranked(task.task)
        first += hits[:1] == [STUFFED_ID]
        top5 += STUFFED_ID in hits[:5]
        first_with_keywords += ranked(task.task, task.query)[:1] == [STUFFED_ID]
    floor = sum(STUFFED_ID in ranked(p) for p in prompts)
    return {
        "tasks": len(tasks),
        "first": first,
        "top5": top5,
        "firstWithKeywords": first_with_keywords,
        "prompts": len(prompts),
        "promptsCleared": floor,
    }


# --- the push (brief --push, what hooks print) ------------------------------------------------


@contextlib.contextmanager
def moved_out(index: StoreIndex, record_id: str) -> Iterator[None]:
    """The index as if ``record_id`` were not stored: its slot dead, as a deleted file leaves it
    (it counts for no word's document frequency and is never a result)."""
    slot = index.slot_of(record_id)
    docs = index.inverted.docs
    kept = docs[slot] if slot is not None else None
    if slot is not None:
        docs[slot] = None
    try:
        yield
    finally:
        if slot is not None:
            docs[slot] = kept


def push_figures(store: Store, index: StoreIndex, tasks: Sequence[Task]) -> dict[str, Any]:
    """What the prompt push gives for each task (its text alone, as a hook gets it), with the
    task's note stored and with it moved out, against the full brief's top 5."""
    from reliora_git.operations.brief.earning import shown_on_line
    from reliora_git.operations.brief.full import brief
    from reliora_git.operations.brief.push import push

    figures: dict[str, Any] = {}
    for variant in ("stored", "movedOut"):
        sizes, fulls, named, named_full, full_right, brief_named, brief_sizes = (
            [] for _ in range(7)
        )
        lines = lines_note = lines_on_asked = 0
        for task in tasks:
            context = (
                moved_out(index, task.id) if variant == "movedOut" else contextlib.nullcontext()
            )
            with context:
                result = push(store, task.task, index=index)
                whole = brief(store, task.task, index=index)
            forms = {e.candidate.lesson.id: e.form for e in result.entries}
            sizes.append(len(result.text()))
            fulls.append(sum(form == "full" for form in forms.values()))
            named.append(task.id in forms)
            named_full.append(forms.get(task.id) == "full")
            full_right.extend(i == task.id for i, form in forms.items() if form == "full")
            for entry in result.entries:
                if entry.form == "line":
                    lines += 1
                    lines_note += entry.candidate.lesson.id == task.id
                    on_line = shown_on_line(entry.candidate.lesson.matches)
                    lines_on_asked += any("asked" in m.fields for m in on_line)
            brief_named.append(task.id in {lesson.id for lesson in whole.lessons})
            brief_sizes.append(len(whole.text()))
        figures[variant] = {
            "prompts": len(tasks),
            "medianChars": statistics.median(sizes),
            "p90Chars": sorted(sizes)[int(0.9 * (len(sizes) - 1))],
            "fullPerPrompt": sum(fulls) / len(tasks),
            "noteNamed": sum(named),
            "noteInFull": sum(named_full),
            "fullThatIsTheNote": sum(full_right),
            "fullLessons": sum(fulls),
            "briefNamesNote": sum(brief_named),
            "briefMedianChars": statistics.median(brief_sizes),
            "lines": lines,
            "linesThatAreTheNote": lines_note,
            "linesOnAskedWords": lines_on_asked,
        }
    return figures


def session_figures(
    store: Store, index: StoreIndex, tasks: Sequence[Task], size: int = 20
) -> dict[str, Any]:
    """A session of ``size`` prompts on one topic (the tasks whose notes share the commonest
    tag), pushed through compose with the session's memory as the hooks keep it."""
    from reliora_git.operations.brief.push import candidates, compose
    from reliora_git.operations.brief.selection import Situation

    tags: Counter[str] = Counter()
    tagged: dict[str, list[Task]] = {}
    for task in tasks:
        slot = index.slot_of(task.id)
        assert slot is not None
        for tag in index.record_json(slot).get("tags") or []:
            tags[tag] += 1
            tagged.setdefault(tag, []).append(task)
    topic = tags.most_common(1)[0][0]
    chosen = tagged[topic][:size]
    pushed: dict[str, str] = {}
    times: Counter[str] = Counter()
    chars = []
    for task in chosen:
        _, found = candidates(store, Situation(task.task), index=index)
        entries, text = compose(found, pushed)
        for entry in entries:
            times[entry.candidate.lesson.id] += 1
            pushed[entry.candidate.lesson.id] = entry.form
        chars.append(len(text))
    return {
        "topic": topic,
        "prompts": len(chosen),
        "lessonsPushed": len(times),
        "pushedTwice": sum(1 for n in times.values() if n > 1),
        "sessionChars": sum(chars),
        "medianChars": statistics.median(chars),
    }


# --- speed -----------------------------------------------------------------------------------


def timing(
    corpus: Path, tasks: Sequence[Task], sizes: Sequence[int], runs: int
) -> list[dict[str, Any]]:
    """``reliora brief`` as a process at each size, beside search and git grep of the keywords.

    Medians of wall and CPU seconds (user + system of the process: steadier than wall
    time on a shared machine) over five tasks, ``runs`` runs each after one untimed.
    """
    sys.path.insert(0, str(REPO_ROOT / "bench"))
    import run as bench_run  # bench/run.py: the same stores and the same process measure

    sources = bench_run.read_corpus(corpus)
    exe = bench_run.reliora_command()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    rows: list[dict[str, Any]] = []
    sample = list(tasks[:: max(len(tasks) // 5, 1)][:5])
    with tempfile.TemporaryDirectory(prefix="reliora-brief-bench-") as work:
        env["XDG_CACHE_HOME"] = str(Path(work) / "cache")
        for size in sizes:
            root = Path(work) / f"store-{size}"
            bench_run.make_store(root, sources, size)
            bench_run.run_once([*exe, "search", "warm", "--json"], root, env)  # the cache
            wall: dict[str, list[float]] = {}
            cpu: dict[str, list[float]] = {}
            for task in sample:
                argv = {
                    "brief TASK": [*exe, "brief", task.task],
                    "brief TASK --query": [*exe, "brief", task.task, "--query", task.query],
                    "brief --file": [*exe, "brief", "--file", "src/app.py"],
                    "search KEYWORDS": [*exe, "search", task.query or task.task, "--json"],
                    "git grep -il KEYWORDS": bench_run.grep_argv(task.query or task.task),
                }
                for label, command in argv.items():
                    bench_run.run_once(command, root, env)
                    for _ in range(runs):
                        elapsed, used, code, _peak, stderr = bench_run.run_once(command, root, env)
                        if code not in (0, 1):
                            sys.exit(f"bench: {label} failed: {stderr.strip()[:300]}")
                        wall.setdefault(label, []).append(elapsed)
                        cpu.setdefault(label, []).append(used)
            load = os.getloadavg()[0]
            for label in wall:
                row = {
                    "size": size,
                    "command": label,
                    "wall": statistics.median(wall[label]),
                    "cpu": statistics.median(cpu[label]),
                    "runs": len(wall[label]),
                    "load": load,
                }
                rows.append(row)
                print(
                    f"| {size:,} | {label} | {row['wall']:.3f} | {row['cpu']:.3f} | "
                    f"{row['runs']} | {load:.1f} |",
                    flush=True,
                )
    return rows


# --- main ------------------------------------------------------------------------------------


def rank_table(
    rankings: Sequence[tuple[str, Ranking]], tasks: Sequence[Task]
) -> list[dict[str, Any]]:
    """R@1, R@5, MRR@10 of each ranking on every task, the tuning part and the held-out part,
    from the task alone and with the keywords; printed as a table."""
    parts = {
        "all": list(tasks),
        "tuning": [t for t in tasks if not held_out(t)],
        "heldOut": [t for t in tasks if held_out(t)],
    }
    sizes = ", ".join(f"{name} {len(part)}" for name, part in parts.items())
    print(f"tasks: {sizes}\n")
    print("| ranking | part | task: R@1 | R@5 | MRR@10 | task + keywords: R@1 | R@5 | MRR@10 |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    rows = []
    for label, rank in rankings:
        row: dict[str, Any] = {"ranking": label}
        for name, part in parts.items():
            alone = measure(rank, part, with_query=False)
            both = measure(rank, part, with_query=True)
            print(f"| {label} | {name} | {alone.row()} | {both.row()} |", flush=True)
            row[name] = {"task": vars(alone), "taskAndQuery": vars(both)}
        rows.append(row)
    return rows


def asked_candidates(chosen: Settings) -> list[tuple[str, Settings, bool]]:
    """The asked-as field's weight, against 1 for every other field (tuned on the tuning part)."""
    found = []
    for weight in (0.0, 0.5, 1.5, 2.0, 3.0):
        weights = (*chosen.field_weights[:-1], weight)
        label = (
            "brief, asked-as lines not read (weight 0)"
            if weight == 0
            else f"brief, asked-as weight {weight}"
        )
        found.append((label, replace(chosen, field_weights=weights), False))
    return found


def measure_store(
    label: str,
    corpus: Path,
    tasks: Sequence[Task],
    prompts: Sequence[str],
    args: argparse.Namespace,
    asked: bool,
) -> dict[str, Any]:
    """Every figure of one store: the rankings, the floor, stuffing, the push, a session."""
    print(f"\n## {label}\n")
    store = Store(corpus.resolve())
    index = open_index(store)
    known = {doc.id for doc in index.docs()}
    unknown = [t.id for t in tasks if t.id not in known]
    if unknown:
        sys.exit(f"bench: tasks name notes the corpus lacks: {', '.join(unknown[:5])}")
    chosen = Settings()
    print(f"{len(tasks)} tasks, {len(prompts)} prompts without a task, {len(known)} records\n")

    rankings: list[tuple[str, Ranking]] = [
        ("search (§5 ranking, the text as its query)", search_ranking(store, index)),
        ("plain BM25 (whole text, real tf, k1 1.2, b 0.75)", PlainBM25(index)),
    ]
    lengths = None
    variants = candidates(chosen, args.variants) if not asked or args.variants else []
    if asked:
        variants = [variants[0]] if variants else [candidates(chosen, False)[0]]
        variants += asked_candidates(chosen) + candidates(chosen, args.variants)[1:]
    for name, settings, needs_lengths in variants:
        if needs_lengths and lengths is None:
            lengths = field_lengths(index)
        rankings.append((name, task_ranking(index, settings, lengths if needs_lengths else None)))

    figures: dict[str, Any] = {"tasks": len(tasks), "rankings": rank_table(rankings, tasks)}

    floor = floor_figures(index, chosen, tasks, prompts)
    figures["floor"] = floor
    print(
        f"\nfloor ({chosen.floor} × the idf of a word held by one record, at least "
        f"{chosen.min_words} words): "
        f"{floor['promptsInjected']}/{floor['prompts']} prompts without a task get a lesson; "
        f"{floor['tasksLost']}/{floor['tasks']} tasks lose their note from the top 5 "
        f"(without the floor {floor['promptsInjectedWithoutFloor']} prompts get a lesson)"
    )
    for prompt in floor["injectedExamples"]:
        print(f"  injected: {prompt!r}")

    with tempfile.TemporaryDirectory() as folder:
        figures["stuffing"] = {}
        for words in (3000, 500):
            for where in ("body", "asked") if asked else ("body",):
                (Path(folder) / f"{words}-{where}").mkdir()
                stuffed = stuffed_store(
                    corpus, index, words, Path(folder) / f"{words}-{where}", where == "asked"
                )
                found = stuffing_figures(stuffed, open_index(stuffed), chosen, tasks, prompts)
                figures["stuffing"][f"{words}-{where}"] = found
                place = "asked-as lines" if where == "asked" else "Task and Problems only"
                print(
                    f"\na record stuffed with the store's {words} commonest words ({place}): "
                    f"first for {found['first']}/{found['tasks']} tasks, in the top "
                    f"5 for {found['top5']} (first with the keywords: "
                    f"{found['firstWithKeywords']}); clears the floor for "
                    f"{found['promptsCleared']}/{found['prompts']} prompts without a task"
                )
    pushed = push_figures(store, index, tasks)
    figures["push"] = pushed
    print(
        "\n| prompt push | median chars | p90 chars | full a prompt | note named | note in full "
        "| full lessons that are the note | lines: the note / all (on asked-as words) "
        "| full brief: note in top 5 | full brief median chars |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for variant, row in pushed.items():
        print(
            f"| {variant} | {row['medianChars']:.0f} | {row['p90Chars']} | "
            f"{row['fullPerPrompt']:.2f} | {row['noteNamed']} | {row['noteInFull']} | "
            f"{row['fullThatIsTheNote']}/{row['fullLessons']} | "
            f"{row['linesThatAreTheNote']}/{row['lines']} ({row['linesOnAskedWords']}) | "
            f"{row['briefNamesNote']} | {row['briefMedianChars']:.0f} |"
        )
    session = session_figures(store, index, tasks)
    figures["session"] = session
    print(
        f"\nsession of {session['prompts']} prompts on '{session['topic']}': "
        f"{session['lessonsPushed']} lessons pushed, {session['pushedTwice']} twice, "
        f"{session['sessionChars']} characters in all "
        f"(median {session['medianChars']:.0f} a prompt)"
    )
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--tasks", type=Path, default=TASKS)
    parser.add_argument("--prompts", type=Path, default=PROMPTS)
    parser.add_argument(
        "--asked", type=Path, default=ASKED, help="asked-as lines to add to a copy of the corpus"
    )
    parser.add_argument(
        "--no-asked", action="store_true", help="only the records as they are (faster)"
    )
    parser.add_argument("--variants", action="store_true", help="measure every candidate setting")
    parser.add_argument("--timing", action="store_true", help="time `reliora brief` at 1k and 10k")
    parser.add_argument("--sizes", type=int, nargs="*", default=[1_000, 10_000])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--out", type=Path, help="write the figures as JSON here")
    args = parser.parse_args()

    tasks = read_tasks(args.tasks)
    prompts = read_prompts(args.prompts)
    figures: dict[str, Any] = {
        "asThey": measure_store("Records as they are", args.corpus, tasks, prompts, args, False)
    }
    if not args.no_asked:
        asked = read_asked(args.asked)
        with tempfile.TemporaryDirectory(prefix="reliora-asked-") as folder:
            copy = with_asked_lines(args.corpus, asked, Path(folder))
            figures["withAskedAs"] = measure_store(
                f"With asked-as lines ({len(asked)} records, {args.asked.name})",
                copy,
                tasks,
                prompts,
                args,
                True,
            )
    if args.timing:
        print("\n| records | command | median wall (s) | median CPU (s) | runs | load |")
        print("| ---: | --- | ---: | ---: | ---: | ---: |")
        figures["timing"] = timing(args.corpus, tasks, args.sizes, args.runs)
    if args.out:
        args.out.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    start = time.perf_counter()
    main()
    print(f"\n({time.perf_counter() - start:.1f} s)")
