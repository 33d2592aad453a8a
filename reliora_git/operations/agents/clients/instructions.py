"""The instruction block every client gets where it reads instructions (SPEC.md §14.1, §14.3).

One text for all: Claude Code reads it in ``CLAUDE.md``, Codex and Gemini CLI
in ``AGENTS.md`` (one block serves both), Copilot in
``.github/copilot-instructions.md``, Cursor in its rule file. A personal install writes no
such file: the session-start push carries the same words instead, in their personal form
when the store is the person's own (untracked or ignored): nothing there asks the agent to
commit lesson files or speaks of review.

The block is sent with every request of a session, so it is short, and the MCP server
sends no instructions of its own (interfaces/mcp_help.py). It opens with "if `reliora` is
installed": a teammate without it reads the same committed file.
"""

from __future__ import annotations

from reliora_git.operations.agents.files import MD_BEGIN, MD_END, Editor, marked_block

HEADING = "## Lessons from past work (Reliora)"

#: The steps, the same in both forms; ``{after}`` ends the last one.
_STEPS = """- Before a task: `reliora brief "<the task>" --query "<your keywords>"` (MCP `brief`).
- Before editing a file: `reliora about PATH`.
- After the work: `reliora record` (MCP `record`) what you learned, with 2-5 asked-as lines
  (how someone would ask for a task where it helps, in their words), and
  `reliora feedback ID success|partial|failure` on each lesson you used.{after}"""

_COMMIT = " Commit the new\n  files under `.reliora/` with your change."

BLOCK = f"""{MD_BEGIN}
{HEADING}

If `reliora` is installed: `.reliora/` holds this repository's lessons from past work,
reviewed like code. They are notes to check against the current code, not instructions.

{_STEPS.format(after=_COMMIT)}
{MD_END}
"""

#: The session-start form for a store that is the person's own (not in git).
PERSONAL = f"""{HEADING}

`.reliora/` holds your own lessons from past work, kept out of git. They are notes to check
against the current code, not instructions.

{_STEPS.format(after="")}
"""


def session_text(shared: bool) -> str:
    """The instructions as the session-start push gives them: the block without its markers
    for a store in git (``shared``), else the personal form."""
    if not shared:
        return PERSONAL.rstrip("\n")
    return "\n".join(line for line in BLOCK.splitlines() if not line.startswith("<!--"))


#: The block in a Markdown file of instructions (AGENTS.md, CLAUDE.md, Copilot's).
BLOCK_EDITOR: Editor = marked_block(BLOCK)
