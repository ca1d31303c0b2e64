#!/usr/bin/env bash
# Where two builds' heuristics differ over normjit_config_sweep's whole grid (about 100 M forward
# problems; no GPU): the review of a rule change that is meant to move some configs and no others.
# Streams both sweeps side by side (no 9.5 GB files), keeps the problems whose config differs, and
# prints a count per problem class (kind, x dtype, arch, SMs, memory rate, M), the N range, and a
# few examples.
#
#   scripts/sweep-diff.sh OLD_SWEEP NEW_SWEEP [forward|backward] [OUT_FILE]
#   e.g. scripts/sweep-diff.sh /tmp/normjit-old-9f8d1b8/build/normjit_config_sweep \
#          build/normjit_config_sweep forward /tmp/forward-diff.txt
#
# OUT_FILE (default a temporary file) keeps every differing line, old and new tab-separated.
# Both sweeps print the same grid in the same order (tools/config_sweep/main.cpp), so line k of
# one is line k of the other; the script stops if their problems ever disagree.
set -uo pipefail
if [ $# -lt 2 ]; then
  sed -n '2,12p' "$0" >&2
  exit 2
fi
old=$1 new=$2 what=${3:-forward} out=${4:-$(mktemp)}
paste <("$old" "$what" 2>/dev/null) <("$new" "$what" 2>/dev/null) |
  awk -F'\t' '{
    split($1, a, ": "); split($2, b, ": ")
    if (a[1] != b[1]) { print "sweep-diff: the sweeps disagree at line " NR ": " a[1] " / " b[1] > "/dev/stderr"; exit 3 }
    if ($1 != $2) print
  }' >"$out"
status=${PIPESTATUS[1]}
[ "$status" -eq 0 ] || exit "$status"
echo "sweep-diff: $(wc -l <"$out") problems differ ($what; every line in $out)"
[ -s "$out" ] || exit 0
# The class of a problem: its kind, x dtype, alignment, arch, SM count and memory rate; then
# the range of N and of M (-1: M not known) its differing problems span.
cut -f2 "$out" | awk '{
    n = ""; x = ""; sm = ""; sms = ""; rate = ""; m = ""; align = ""
    for (i = 1; i <= NF; ++i) {
      if ($i ~ /^N=/) n = substr($i, 3) + 0
      if ($i ~ /^x=/) x = $i
      if ($i ~ /^align=/) align = $i
      if ($i ~ /^sm_/) { sm = $i; sms = $(i + 1) }
      if ($i == "rate") rate = $(i + 1)
      if ($i ~ /^M=/) { m = substr($i, 3); sub(/:$/, "", m); m += 0 }
    }
    key = $1 " " x " " align " " sm " " sms " SMs rate " rate
    if (!(key in count)) { nlo[key] = nhi[key] = n; mlo[key] = mhi[key] = m }
    count[key]++
    if (n < nlo[key]) nlo[key] = n
    if (n > nhi[key]) nhi[key] = n
    if (m < mlo[key]) mlo[key] = m
    if (m > mhi[key]) mhi[key] = m
  }
  END { for (k in count) printf "%9d  %s  N %d..%d  M %d..%d\n", count[k], k, nlo[k], nhi[k], mlo[k], mhi[k] }' |
  sort -k1,1nr | head -40
echo "examples (old, then new):"
awk 'NR % int(('"$(wc -l <"$out")"' + 4) / 5) == 1' "$out" | head -5 | tr '\t' '\n'
