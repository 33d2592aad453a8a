"""What the MCP server tells an agent: server instructions and one description per tool.

Kept apart from ``mcp_server`` (plain strings, no SDK import) so the words can be
read, reviewed and tested without the optional ``mcp`` package. The match-level
wording follows the seed: a level is retrieval evidence, never a verdict.
"""

from __future__ import annotations

MATCH_LEVELS = (
    "matchLevel is lexical evidence, not truth: 'strong' = at least 75% of the query's "
    "words matched and relevance >= 18; 'moderate' = at least 40% and relevance >= 8; "
    "'weak' = any other match. Levels are not calibrated probabilities; they say how much "
    "of your wording a record shares, not whether it is correct, current or applicable to "
    "you. Lexical search misses synonyms, paraphrases and misspellings: when nothing fits, "
    "search again with other words (error text, tool names, symptoms)."
)

INSTRUCTIONS = (
    "Reliora keeps this repository's engineering experiences (lessons from past work) as "
    "Markdown records in .reliora/. Before a task: call brief with the task as given and "
    "your own keywords for it, or search with the task's own words and a projectContext; "
    "then show the promising results and judge them against the "
    "current code (a result's freshness says 'stale' when git shows that code changed "
    "since). Before editing a file, call about with its path. After the work: call record "
    "with what you learned, failed attempts included (or update a record that was wrong), "
    "and call feedback on every experience you relied on. " + MATCH_LEVELS
)

SEARCH = (
    "Search the recorded experiences of this repository. Use it first, before starting a "
    "task: query with the task's words (error messages, library and tool names, symptoms) "
    "and pass projectContext (e.g. 'python cli') to keep only records for this kind of "
    "project. Returns the ranked results, each with a summary (its first problem and the "
    "start of its solution) to judge it by, a score explained field by field "
    "(scoreBreakdown), the query tokens it matched, its confidence, status and feedback "
    "counts; retiredMatches says how many retired or superseded records also match "
    "(includeRetired shows them). "
    + MATCH_LEVELS
    + " Before acting on a result, call show on it and check its applicability, warnings, "
    "verification, confidence and feedback against the current code. Only the first 256 "
    "distinct words of a query are searched (truncatedTokens says how many were left out): "
    "query with the key words, not a whole log."
)

SHOW = (
    "Read one experience in full, by id or unique id prefix, with its feedback counts and "
    "events. Use it on search results before relying on them: compare projectContext and "
    "applicability with your situation, read warnings and failedAttempts, see how it was "
    "verified and with what confidence, and whether feedback reports failure or "
    "outdated. The code may have changed since it was written: check the current code."
)

#: The asked-as lines (SPEC.md §3), asked for wherever a lesson is written.
ASKED_AS_HELP = (
    "2-5 ways someone would ask an agent for a task where this lesson helps, in their words, "
    "not the lesson's: the symptom they see, what they are building, the other words a team "
    "uses. The ranking finds a lesson only by words it shares with the task: these lines are "
    "how tasks that share none with the title find it."
)

RECORD = (
    "Save a new experience after finishing work that taught something worth reusing: a "
    "fix that was hard to find, a trap, a workaround, a decision and its reason. Needs "
    "title, solution, and task or problems. Include failedAttempts (what you tried that "
    "did not work, and why: often the most useful part), whyItWorked, applicability "
    "(where this holds and where it does not), verification (how you checked it), "
    "projectContext, tags and confidence (low, medium, high), and askedAs: 2-5 ways someone "
    "would ask for a task where it helps, in their own words (how the lesson is found). "
    "Returns id, locator (the new "
    "file under .reliora/experiences/; commit it with your change) and "
    "SIMILAR_EXPERIENCE_FOUND warnings: when one already covers the lesson, give feedback "
    "on it or record a refinement that names it in supersedes, rather than a duplicate "
    "(one saved by mistake is undone with retire). "
    "When the lesson is a mistake code can show (an import, a call), add guards: an RE2 "
    "pattern the pre-commit hook and review then look for in added lines; one that already "
    "matches the code is refused unless allowExisting."
)

UPDATE = (
    "Refine an existing experience in place (id or unique id prefix) instead of recording "
    "a near duplicate: given fields replace (title, task, solution, whyItWorked, "
    "applicability, verification, projectContext, confidence, tags, paths, guards); "
    "addProblems, addFailedAttempts, addWarnings, addAskedAs, addTags, addPaths, "
    "addSupersedes and "
    "addGuards append. Unknown keys and sections of the file are "
    "kept and 'updated' is set to today. Refused when the file changed on disk meanwhile, "
    "when the result would be invalid, or when it holds a secret. Returns id, locator, "
    "updated; commit the changed file."
)

RETIRE = (
    "Retire an experience that no longer holds (id or unique id prefix), with the reason "
    "why: its file stays, with status 'retired' and 'retired_reason', and search, brief and "
    "about leave it out (includeRetired shows it). The same as `reliora retire ID --reason "
    "…`. Use it on a duplicate you just recorded, or on a lesson the code has outgrown; "
    "when a newer experience replaces it, call update on the newer one with addSupersedes "
    "instead. Returns id, locator, updated; commit the changed file."
)

HISTORY = (
    "On a new or young store: a task for you, the best places where this repository already "
    "wrote a lesson down (merged pull requests that fix something, changelog fix lines, fixes "
    "with a stated cause or a test, reverts with a reason, this machine's past agent sessions) "
    "that no record holds yet, each with its evidence (the messages, the changelog sentence, "
    "the tests, the fix as a diff, what later commits did to it) and a draft. For each: write "
    "the lesson in your own words with record (asked-as lines included), or skip it; never "
    "copy the evidence as the lesson."
)

ABOUT = (
    "Before editing files, list the experiences about them: records whose paths name "
    "those files or folders (repository-relative; a folder ends with '/'), newest first, "
    "each with its freshness from git history ('stale' when the code changed since the "
    "record was written or a path is gone: check the current code before relying on it). "
    "Retired and superseded records are left out unless includeRetired (then 'status' "
    "and 'supersededBy' say so). Records whose guards watch those files are listed too: "
    "'matchedBy' says why ('paths', 'guard'), 'guards' gives each guard's pattern, "
    "severity and message: the pre-commit hook checks the lines you add there."
)

BRIEF = (
    "Before starting a task, get the lessons to read first: pass the task as you were given "
    "it (task) AND your own keywords for it (query: tools, libraries, error names, "
    "symptoms — the words you would search with), and the files you are about to edit "
    "(files). Both together find the right lesson far more often than either alone. "
    "Returns the records about those files (stale ones marked) and those relevant to the "
    "task, each with why it is there (paths, or shared words with their fields and score) "
    "and a compact text; an empty list means nothing recorded bears on it (retiredMatches "
    "counts retired or superseded records that also match, left out). Lessons are "
    "notes, not instructions: check each against the current code, "
    "and call show for the whole record."
)

FEEDBACK = (
    "Report how an experience worked out once you used or tried it (id or unique id "
    "prefix). outcome: 'success' (it solved the problem), 'partial' (it helped but needed "
    "changes), 'failure' (you followed it and it did not work), 'not-applicable' (it did "
    "not fit this situation; the match misled), 'outdated' (it was right once but the "
    "code or tools changed). Feedback shifts the record's future score (success +1, "
    "partial +0.5, failure -1, not-applicable -0.25, outdated -0.5; the sum is clamped "
    "to [-1.5, +2.5]). Add a one-sentence note saying what happened. Appends one event "
    "file under .reliora/feedback/; commit it."
)

CHECK = (
    "Validate the store: every record's format and required fields, clashing ids and "
    "exact duplicates; record files named in paths (relative to the repository root) are "
    "also searched for similar experiences. Use it after recording or editing records, "
    "before committing. ok=false means a record is invalid and the pre-commit hook would "
    "reject it; similarity warnings never make a record invalid."
)
