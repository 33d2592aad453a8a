"""A review's context diff (operations/review/context_diff.py) as Markdown and text (pure).

Called by interfaces/review.py on a review that :func:`~reliora_git.interfaces.review.
shown_review` already withheld; record text is escaped here as there (``md``, ``plain``).
When pushes were compared and none differs, both formats say so in one line; when there
was nothing to compare (no eval case, no added or modified record with a task), nothing.
"""

from __future__ import annotations

from collections.abc import Callable

from reliora_git.operations.evaluation.replay import Pushed
from reliora_git.operations.review.context_diff import ContextDiff, PromptDiff

#: Prompts whose change is shown (JSON has all of them).
MAX_PROMPTS = 20
PROMPT_CHARS = 120
HEADING = "What agents are told"


def _counted(diff: ContextDiff) -> str:
    parts = []
    cases, records = diff.count("case"), diff.count("record")
    if cases:
        parts.append(f"{cases} eval case{'s' if cases != 1 else ''}")
    if records:
        parts.append(f"{records} record task{'s' if records != 1 else ''}")
    return ", ".join(parts)


def summary(diff: ContextDiff, heading: bool = True) -> str | None:
    """One line: for how many prompts the push differs (None: nothing compared)."""
    if not diff.prompts:
        return None
    changed = len(diff.changed)
    if not changed:
        line = f"no push differs ({_counted(diff)})."
    else:
        line = f"the push differs for {changed} of {len(diff.prompts)} prompts ({_counted(diff)})."
    if diff.records_left_out:
        line += f" {diff.records_left_out} more changed records' tasks were not pushed."
    return f"{HEADING}: {line}" if heading else line[:1].upper() + line[1:]


def flips(diff: ContextDiff, code: Callable[[str], str]) -> str | None:
    """The eval cases whose result changes, on one line (None: none does)."""
    failing = [code(p.label) for p in diff.flipped if p.passed and p.passed[0]]
    passing = [code(p.label) for p in diff.flipped if p.passed and not p.passed[0]]
    parts = []
    if failing:
        parts.append(f"start failing: {', '.join(failing)}")
    if passing:
        parts.append(f"start passing: {', '.join(passing)}")
    return f"Eval cases that {'; '.join(parts)}." if parts else None


def _changes(
    prompt: PromptDiff, code: Callable[[str], str], text: Callable[[str], str], arrow: str
) -> list[str]:
    def named(p: Pushed) -> str:
        return f"{code(p.id)} {text(p.title)} ({p.form})"

    lines = [f"enters: {named(p)}" for p in prompt.entering]
    lines += [f"leaves: {named(p)}" for p in prompt.leaving]
    lines += [
        f"{code(c.id)} {text(c.title)}: {c.base} {arrow} {c.head}" for c in prompt.form_changes
    ]
    return lines


def _what(prompt: PromptDiff) -> str:
    return "case" if prompt.kind == "case" else "task of"


def to_markdown(
    diff: ContextDiff, md: Callable[[str, int], str], code: Callable[[str], str]
) -> str | None:
    """The section for the pull-request comment, or None when nothing was compared."""
    line = summary(diff)
    error = (
        f"\n\n`.reliora/eval.toml` at head was not used: {md(str(diff.cases_error), 300)}"
        if diff.cases_error is not None
        else ""
    )
    if line is None:
        return f"### {HEADING}{error}" if error else None
    if not diff.changed:
        return line + error
    flipped = flips(diff, code)
    parts = [f"### {HEADING}\n\n{summary(diff, heading=False)}{error}"]
    if flipped:
        parts.append(f"**{flipped}**")
    for prompt in diff.changed[:MAX_PROMPTS]:
        files = f" (reads {', '.join(code(f) for f in prompt.files)})" if prompt.files else ""
        block = [
            f"**{_what(prompt)} {code(prompt.label)}**: {md(prompt.prompt, PROMPT_CHARS)}{files}"
        ]
        block += [f"- {item}" for item in _changes(prompt, code, lambda t: md(t, 100), "→")]
        parts.append("\n".join(block))
    if len(diff.changed) > MAX_PROMPTS:
        parts.append(f"_…{len(diff.changed) - MAX_PROMPTS} more: `reliora review --format json`._")
    return "\n\n".join(parts)


def to_text(diff: ContextDiff, plain: Callable[[str, int], str]) -> list[str]:
    """Lines for the terminal ([] when nothing was compared)."""
    lines = []
    if diff.cases_error is not None:
        lines.append(f"eval.toml at head not used: {plain(str(diff.cases_error), 300)}")
    line = summary(diff)
    if line is not None:
        lines.append(line)
    flipped = flips(diff, lambda label: plain(label, 100))
    if flipped:
        lines.append(flipped)
    for prompt in diff.changed:
        files = f" (reads {', '.join(plain(f, 100) for f in prompt.files)})" if prompt.files else ""
        asked = plain(prompt.prompt, PROMPT_CHARS)
        lines.append(f"  {_what(prompt)} {plain(prompt.label, 100)}: {asked}{files}")

        def shown(text: str) -> str:
            return plain(text, 100)

        lines += [f"    {item}" for item in _changes(prompt, shown, shown, "->")]
    return lines
