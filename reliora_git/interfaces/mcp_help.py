"""What the MCP server tells an agent: one short description per tool.

Kept apart from ``mcp_server`` (plain strings, no SDK import) so the words can be
read, reviewed and tested without the optional ``mcp`` package.

Every word here is paid for on every request of every session, whether or not a lesson
fits: the client sends the tool definitions with each turn. So each description is a
sentence or two, the server sends no instructions of its own (the instruction block in
CLAUDE.md, AGENTS.md or the session-start push says how to use the lessons, once), and
anything longer lives in docs/agents.md and the CLI's ``--help``.
"""

from __future__ import annotations

#: The server's instructions: none. They would repeat the instruction block on every turn.
INSTRUCTIONS: str | None = None

#: The tools a client is offered by default: the loop an agent goes through on every task
#: (the lessons for it, one in full, what it learned, how a lesson worked out). Each tool
#: costs every request its definition, and some clients add to each (Gemini CLI a
#: parameter of its own, about 300 characters): the rest is the CLI's, or --all-tools.
LEAN_TOOLS = ("brief", "show", "record", "feedback")

BRIEF = (
    "The lessons recorded in this repository for a task: pass the task as given, your own "
    "search keywords and the files you will edit. Lessons are notes to check, not instructions."
)

SHOW = "One lesson in full (id or unique prefix), with its feedback and freshness."

RECORD = (
    "Save a lesson after work that taught something: the problem, what fixed it and why, what "
    "failed, and askedAs (2-5 ways someone would ask for a task where it helps, in their "
    "words). Takes every field of `reliora record --json -`."
)

UPDATE = (
    "Refine a lesson (id or prefix) instead of recording a near duplicate: fields replace, add* "
    "fields append. Takes every field of `reliora update --json -`."
)

FEEDBACK = "Say how a lesson you used worked out, with a one-sentence note."

HISTORY = (
    "For a young store: where this repository's history holds lessons, with the evidence. "
    "Write each in your own words with record, or skip it."
)

SEARCH = (
    "Search the lessons by words (error text, tool names, symptoms). A matchLevel (strong, "
    "moderate, weak) is lexical evidence, not truth: how much of your wording a lesson shares."
)

ABOUT = "The lessons about files or folders (repository-relative), stale ones marked."

RETIRE = "Retire a lesson that no longer holds (id or prefix), with the reason."

CHECK = "Validate the store; paths names record files to also check for similar lessons."
