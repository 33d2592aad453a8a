#!/usr/bin/env bash
# The review step of action.yml (a composite GitHub Action), kept as a script so
# that it can be run, and tested, anywhere: `RELIORA_BASE=main bash hooks/github-review.sh`.
#
# Writes the Markdown review to $RUNNER_TEMP/reliora-review.md (or a temporary
# file), appends it to the job summary, names it as the step output `review`,
# prints an annotation per guard finding (code a lesson's guard fires on: a
# warning, or an error for a `block` guard; docs/record-format.md), and exits with
# reliora's status: 1 when a record or note holds a secret, a store folder is a
# symbolic link or a `block` guard fired, so the job fails after the review is written.
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
