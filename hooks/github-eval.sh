#!/usr/bin/env bash
# The eval step of action.yml (a composite GitHub Action), kept as a script so that it
# can be run, and tested, anywhere: `bash hooks/github-eval.sh`.
#
# Runs `reliora eval` in the checked-out change: the cases of .reliora/eval.toml
# pushed as the agent hooks push them, and every lesson's reach from its own task
# (docs/eval.md). Writes the report to $RUNNER_TEMP/reliora-eval.txt (or a temporary
# file), appends it to the job summary as a code block, names it as the step output
# `eval`, and exits with reliora's status: 1 when a case fails or R@5 is under
# RELIORA_FAIL_UNDER (when set), 2 for a bad eval.toml; the job then fails.
set -uo pipefail
out="${RUNNER_TEMP:-$(mktemp -d)}/reliora-eval.txt"
args=(eval)
[ -n "${RELIORA_FAIL_UNDER:-}" ] && args+=(--fail-under "$RELIORA_FAIL_UNDER")
reliora "${args[@]}" > "$out"
status=$?
cat "$out"
if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
  {
    echo "### Reliora eval: what agents are told"
    echo
    echo '~~~text'
    # Record titles are a pull request's text: no fence of theirs closes this one.
    sed -E 's/(`{3,}|~{3,})/"""/g' "$out"
    echo '~~~'
  } >> "$GITHUB_STEP_SUMMARY"
fi
[ -n "${GITHUB_OUTPUT:-}" ] && echo "eval=$out" >> "$GITHUB_OUTPUT"
exit "$status"
