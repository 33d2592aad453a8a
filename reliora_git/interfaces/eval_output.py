"""``reliora eval`` as text for people: short, every failure saying what was pushed instead."""

from __future__ import annotations

from collections.abc import Sequence

from reliora_git.interfaces.output import one_line
from reliora_git.operations.evaluation.reach import CROWD_MIN, TAKEN_SHOWN
from reliora_git.operations.evaluation.replay import Pushed, Verdict
from reliora_git.operations.evaluation.run import EvalReport

#: Unreachable lessons named in text (all of them in --json).
UNREACHABLE_SHOWN = 10
PROMPT_CHARS = 70


def pushed_list(pushed: Sequence[Pushed]) -> str:
    """``a (full), b (line)``, or ``nothing``."""
    return ", ".join(f"{one_line(p.id)} ({p.form})" for p in pushed) or "nothing"


def _case_lines(verdict: Verdict) -> list[str]:
    case = verdict.case
    prompt = one_line(case.prompt)
    if len(prompt) > PROMPT_CHARS:
        prompt = prompt[: PROMPT_CHARS - 1].rstrip() + "…"
    head = f"{'ok  ' if verdict.passed else 'FAIL'} {one_line(case.label)}: {prompt}"
    if verdict.passed:
        return [head]
    lines = [head]
    for record_id, got in verdict.missing:
        why = "only as a line, not in full" if got == "line" else "not pushed"
        reason = verdict.why.get(record_id)
        because = f" ({one_line(reason.text)})" if reason is not None else ""
        lines.append(f"     expected {one_line(record_id)}: {why}{because}")
    for pushed in verdict.unwanted:
        lines.append(f"     never {one_line(pushed.id)}: pushed ({pushed.form})")
    lines.append(f"     pushed instead: {pushed_list(verdict.pushed)}")
    return lines


def _lessons(count: int) -> str:
    return f"{count} lesson" if count == 1 else f"{count} lessons"


def to_text(report: EvalReport) -> str:
    lines: list[str] = []
    if report.verdicts:
        failed = len(report.failed_cases)
        lines.append(f"Cases ({len(report.verdicts)}, {failed} failed) from .reliora/eval.toml:")
        for verdict in report.verdicts:
            lines += _case_lines(verdict)
    else:
        lines.append("No cases (.reliora/eval.toml holds no [[case]]).")
    reach = report.reach
    lines.append("")
    if reach is None:
        lines.append("Reach not judged (--cases runs the cases only).")
    elif not reach.records:
        lines.append("Reach: no active record with a task or a problem to judge.")
    else:
        lines.append(
            f"Reach of {_lessons(len(reach.records))} from their own task: "
            f"R@1 {reach.recall(1):.3f}, R@5 {reach.recall(5):.3f}, MRR {reach.mrr:.3f}"
        )
        unreachable = reach.unreachable
        if unreachable:
            lines.append(
                f"{_lessons(len(unreachable))} no prompt can reach (not pushed for its own task):"
            )
            for record in unreachable[:UNREACHABLE_SHOWN]:
                lines.append(f"  {one_line(record.id)}: {record.reason}")
            if len(unreachable) > UNREACHABLE_SHOWN:
                lines.append(f"  … {len(unreachable) - UNREACHABLE_SHOWN} more (--json lists them)")
        to_ask = reach.to_give_asked_as
        if to_ask:
            lines.append(
                f"{_lessons(len(to_ask))} to give asked-as lines (its own task leaves it out, "
                "or shares no word with its title, tags or asked-as lines): add how people "
                'would ask for it, `reliora update ID --add-asked "…"`:'
            )
            shown = ", ".join(one_line(r.id) for r in to_ask[:UNREACHABLE_SHOWN])
            more = (
                f", … {len(to_ask) - UNREACHABLE_SHOWN} more (--json)"
                if len(to_ask) > UNREACHABLE_SHOWN
                else ""
            )
            lines.append(f"  {shown}{more}")
        crowding = reach.crowding()
        if crowding:
            lines.append(f"First for the tasks of {CROWD_MIN} or more other lessons:")
            for record_id, taken in crowding:
                shown = ", ".join(one_line(t) for t in taken[:TAKEN_SHOWN])
                more = "…" if len(taken) > TAKEN_SHOWN else ""
                lines.append(f"  {one_line(record_id)}: first for {len(taken)} ({shown}{more})")
    if reach is not None and reach.without_task:
        lines.append(f"{_lessons(reach.without_task)} (active) with neither a task nor a problem.")
    if report.under and reach is not None:
        lines.append(f"R@5 {reach.recall(5):.3f} is under --fail-under {report.fail_under:g}.")
    lines.append(f"{'Passed' if report.passed else 'Failed'} in {report.seconds:.1f} s.")
    return "\n".join(lines)
