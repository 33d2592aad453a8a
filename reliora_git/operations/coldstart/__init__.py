"""The cold start (SPEC.md §16, "From history"): where a repository already wrote its lessons
down, with the evidence an agent needs to write each one.

One pipeline, each stage a module (a contract in pyproject.toml keeps the order):

* ``signals``: the words and paths that say fix, cause, test, noise (pure);
* ``nouns``: an entry, its evidence parts and its evidence (pure);
* ``sources``: pull requests, direct commits, changelog lines and blame links from the
  commits of one ``git log -p`` (pure);
* ``evidence``: what an entry hands the agent: the body without narration, the changelog
  sentence, the tests, the fix as a diff, what later commits did to its lines (pure);
* ``ranking``: each entry judged and scored, part by part (pure);
* ``drafts``: the one record a commit or an entry suggests (pure);
* ``ask``: ``history --ask``, the task that hands the best entries to the agent (pure);
* ``reading``: git and the store: ``history`` and ``record --from-commit`` read here.
"""
