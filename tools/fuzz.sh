#!/usr/bin/env bash
# make fuzz: run every native Go fuzz target (func FuzzXxx in the test files, as
# `go test -list` finds them) for FUZZTIME each, one after another (go test -fuzz
# takes one target of one package at a time), and report how long each ran, its
# executions, its corpus and its result. Plain `go test` already runs the seed
# corpora (f.Add and testdata/fuzz/<target>/); this searches for new inputs.
#
#   FUZZTIME      per target, a duration or a count such as 5000x (make fuzz sets it)
#   FUZZPARALLEL  fuzzing processes per target (default 1)
#   FUZZMINIMIZE  -fuzzminimizetime (default 1000x): go test minimizes every input
#                 that finds new code; with its default of 60 s per input, a target
#                 with kilobyte inputs (FuzzParse) spends its whole run minimizing
#
# Arguments name the targets to run (default: all). A failing input is saved by
# go test under the package's testdata/fuzz/<target>/; its output is shown here.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
FUZZTIME=${FUZZTIME:?set FUZZTIME to the time per target, e.g. FUZZTIME=30s}
FUZZPARALLEL=${FUZZPARALLEL:-1}
FUZZMINIMIZE=${FUZZMINIMIZE:-1000x}
# FuzzDetect writes its fake /proc and /boot for every input: ten times faster on
# tmpfs than on a disk.
if [ -z "${TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ]; then
  export TMPDIR=/dev/shm
fi

targets=() # "package target"
names=()
while read -r first pkg _; do
  case $first in
  Fuzz*) names+=("$first") ;;
  ok)
    for n in "${names[@]}"; do targets+=("$pkg $n"); done
    names=()
    ;;
  esac
done < <($GO test -list '^Fuzz' ./...)
[ ${#targets[@]} -gt 0 ] || { echo "fuzz: go test -list found no fuzz target" >&2; exit 1; }
if [ $# -gt 0 ]; then
  picked=()
  for want in "$@"; do
    found=
    for t in "${targets[@]}"; do
      if [ "${t#* }" = "$want" ]; then picked+=("$t") found=1; fi
    done
    [ -n "$found" ] || { echo "fuzz: no fuzz target $want; there are: $(printf '%s ' "${targets[@]#* }")" >&2; exit 1; }
  done
  targets=("${picked[@]}")
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT
summary=()
failed=0
echo "fuzz: ${#targets[@]} targets, $FUZZTIME each, -parallel $FUZZPARALLEL, -fuzzminimizetime $FUZZMINIMIZE"
for t in "${targets[@]}"; do
  pkg=${t% *} name=${t#* }
  start=$(date +%s)
  if $GO test -run '^$' -fuzz "^$name\$" -fuzztime "$FUZZTIME" -fuzzminimizetime "$FUZZMINIMIZE" \
    -parallel "$FUZZPARALLEL" "$pkg" >"$log" 2>&1; then
    result=ok
  else
    result=FAIL
    failed=$((failed + 1))
  fi
  wall=$(($(date +%s) - start))
  last=$(grep '^fuzz: elapsed:' "$log" | tail -1 || true)
  elapsed=$(sed -n 's/^fuzz: elapsed: \([^,]*\),.*/\1/p' <<<"$last")
  execs=$(sed -n 's/.*execs: \([0-9]*\).*/\1/p' <<<"$last")
  corpus=$(sed -n 's/.*(total: \([0-9]*\)).*/\1/p' <<<"$last")
  line=$(printf '%-4s %-22s %-18s fuzzed %-7s (%4ds with the build) %10s execs, corpus %s' \
    "$result" "$name" "$pkg" "${elapsed:-0s}" "$wall" "${execs:-0}" "${corpus:-?}")
  echo "$line"
  summary+=("$line")
  if [ $result = FAIL ]; then
    sed 's/^/    /' "$log"
  fi
done
echo
echo "fuzz: summary"
printf '%s\n' "${summary[@]}"
if [ $failed -gt 0 ]; then
  echo "fuzz: $failed of ${#targets[@]} targets failed; the failing inputs are under each package's testdata/fuzz/" >&2
  exit 1
fi
echo "fuzz: all ${#targets[@]} targets passed"
