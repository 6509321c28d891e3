#!/usr/bin/env bash
# quiet.sh LOG COMMAND...: runs COMMAND with its output (e.g. hundreds of "go: downloading" lines
# on a fresh machine) written to LOG instead of the terminal; on failure prints LOG's last 40
# lines and where the rest is, and exits with COMMAND's status. Sourced, it defines the function
# quietly LOG COMMAND... (COMMAND may then be a shell function).
quietly() {
  local log=$1 rc; shift
  mkdir -p "$(dirname "$log")"
  if "$@" >"$log" 2>&1; then
    return 0
  else
    rc=$?
  fi
  echo "--- last lines of $log ---" >&2
  tail -n 40 "$log" >&2
  echo "--- $* failed (exit $rc); full output in $log" >&2
  return "$rc"
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
  set -uo pipefail
  quietly "$@"
fi
