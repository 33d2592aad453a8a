"""A record stuffed with a store's vocabulary does not take every prompt (issue: hostile round 4).

The task ranking normalises by record length, counts at most ten words per record,
and caps what words held only in rarely-shown sections give (search/taskrank.py).
"""

from __future__ import annotations

import json

from reliora_git.storage.store import Store
from tests.conftest import Cli, RecordMaker

TOPICS = [
    (
        "postgres-vacuum",
        "Postgres autovacuum stalls on the orders table",
        "bloat grew until queries crawled",
        "Lower autovacuum_vacuum_scale_factor for hot tables",
    ),
    (
        "webpack-chunks",
        "Webpack splits vendor chunks badly",
        "the vendor bundle doubled after an upgrade",
        "Set splitChunks cacheGroups per framework",
    ),
    (
        "kafka-rebalance",
        "Kafka consumers rebalance in a loop",
        "consumer group never settles during deploys",
        "Raise max.poll.interval.ms above the slowest batch",
    ),
    (
        "docker-dns",
        "Docker containers cannot resolve internal hostnames",
        "name lookups time out inside containers",
        "Point the daemon's dns at the corporate resolver",
    ),
    (
        "terraform-lock",
        "Terraform state lock never released",
        "apply hangs waiting for the lock",
        "Force-unlock with the lock id after checking no run is live",
    ),
]
FILLER = [
    "vim macros",
    "tmux panes",
    "ssh agent forwarding",
    "css grid areas",
    "sql window functions",
    "rust lifetimes",
    "go modules proxy",
    "java heap dumps",
    "nginx rewrite rules",
    "redis eviction",
    "python wheels",
    "node streams",
    "bash traps",
    "git bisect",
    "make pattern rules",
    "jq filters",
    "yaml anchors",
    "cron schedules",
    "systemd timers",
    "ruby gems",
]
TASKS = {
    "postgres-vacuum": "the orders table keeps growing, postgres queries crawl, autovacuum stuck",
    "kafka-rebalance": "our kafka consumer group keeps rebalancing forever whenever we deploy",
    "docker-dns": "inside docker containers hostname lookups for internal services time out",
    "terraform-lock": "terraform apply hangs forever waiting on the state lock",
}


def make_store(write_record: RecordMaker) -> None:
    vocabulary: set[str] = set()
    for record_id, title, problem, solution in TOPICS:
        write_record(record_id, title, f"## Problems\n- {problem}\n\n## Solution\n{solution}.\n")
        vocabulary.update(f"{title} {problem} {solution}".lower().replace(".", " ").split())
    for number, topic in enumerate(FILLER):
        write_record(
            f"note-{number}",
            f"A note about {topic}",
            f"## Problems\n- {topic} misbehaved once\n\n## Solution\nRead the manual of {topic}.\n",
        )
        vocabulary.update(topic.split())
    for task in TASKS.values():
        vocabulary.update(task.split())
    words = " ".join(sorted(vocabulary))
    write_record(
        "stuffed",
        "Notes on the toolchain",
        f"## Task\n{words}\n\n## Problems\n- {words}\n\n## Solution\nSee the wiki.\n",
    )


def test_a_stuffed_record_does_not_rank_first_for_any_task(
    store: Store, write_record: RecordMaker, cli: Cli
) -> None:
    make_store(write_record)
    for expected, task in TASKS.items():
        lessons = cli.json("brief", task)["lessons"]
        assert lessons and lessons[0]["id"] == expected, (task, [x["id"] for x in lessons])
        keywords = " ".join(task.split()[:4])
        with_query = cli.json("brief", task, "--query", keywords)["lessons"]
        assert with_query and with_query[0]["id"] == expected, (task, keywords)
        pushed = cli.json("brief", "--push", task)["lessons"]
        assert all(x["form"] == "line" for x in pushed if x["id"] == "stuffed")


def test_a_stuffed_record_counts_at_most_ten_words(
    store: Store, write_record: RecordMaker, cli: Cli
) -> None:
    make_store(write_record)
    document = cli.json("brief", "--limit", "30", TASKS["docker-dns"])
    stuffed = [x for x in document["lessons"] + document["omitted"] if x["id"] == "stuffed"]
    assert not stuffed or len(stuffed[0]["reason"]["tokens"]) <= 10


def test_check_warns_about_a_record_far_larger_than_the_store_s(
    store: Store, write_record: RecordMaker, cli: Cli
) -> None:
    make_store(write_record)
    words = " ".join(f"word{n}" for n in range(1000))
    write_record(
        "huge-vocabulary",
        "Notes on everything",
        f"## Task\n{words}\n\n## Solution\nSee the wiki.\n",
    )
    report = cli("check", "--json")
    files = {f["locator"].rsplit("/", 1)[-1]: f for f in json.loads(report.stdout)["files"]}
    warned = [
        name
        for name, f in files.items()
        if any("times the store's median" in p["message"] for p in f["problems"])
    ]
    assert warned == ["huge-vocabulary.md"]
