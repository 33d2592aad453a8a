#!/usr/bin/env bash
# The review step of action.yml (a composite GitHub Action), kept as a script so
# that it can be run, and tested, anywhere: `RELIORA_BASE=main bash hooks/github-review.sh`.
#
# Writes the Markdown review to $RUNNER_TEMP/reliora-review.md (or a temporary
# file), appends it to the job summary, names it as the step output `review`,
# prints an annotation per guard finding (code a lesson's guard fires on: a
# warning, or an error for a `block` guard; docs/record-format.md), an error per
# guard it brings that already matches head's code (a warning when its record
# says `existing: allowed`), and one when the guards ran out of time
# (`reliora review --format github`), and exits with
# reliora's status, so the job fails after the review is written. It is 1 when
#   * a `block` guard fires on a line the pull request adds;
#   * a guard the pull request brings already matches head's code (an error on
#     its record: once merged it would fire on every commit touching those lines;
#     not when the record says `existing: allowed`, saved with --allow-existing);
#   * the guard budget ran out (10 s of CPU, RELIORA_GUARD_BUDGET): a review that
#     did not run every guard is no pass;
#   * a record or note holds a secret;
#   * a store folder is a symbolic link.
# Invalid records alone do not fail it: gate on `reliora check` for those.
set -uo pipefail
out="${RUNNER_TEMP:-$(mktemp -d)}/reliora-review.md"
args=(review --format markdown)
[ -n "${RELIORA_BASE:-}" ] && args+=(--base "$RELIORA_BASE")
[ -n "${RELIORA_HEAD:-}" ] && args+=(--head "$RELIORA_HEAD")
reliora "${args[@]}" > "$out"
status=$?
# Workflow commands on stdout: GitHub shows each on the file and line of the diff.
annotations=(review --format github)
[ -n "${RELIORA_BASE:-}" ] && annotations+=(--base "$RELIORA_BASE")
[ -n "${RELIORA_HEAD:-}" ] && annotations+=(--head "$RELIORA_HEAD")
reliora "${annotations[@]}" || true
if [ -s "$out" ]; then
  [ -n "${GITHUB_STEP_SUMMARY:-}" ] && cat "$out" >> "$GITHUB_STEP_SUMMARY"
  [ -n "${GITHUB_OUTPUT:-}" ] && echo "review=$out" >> "$GITHUB_OUTPUT"
fi
exit "$status"
