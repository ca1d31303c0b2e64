#!/usr/bin/env bash
# The summary of a call (callN/callN-run.txt) from its logs: bench/results/2026-12-01-h200-forward-shared-prefetch/summarize.sh LOGDIR
# usage: summ.sh LOGDIR  — a call's summary from its logs
d=$1
echo "# summary regenerated from the call's logs"
if ls $d/gpu-tests*.txt >/dev/null 2>&1; then echo "## GPU tests"; grep -hE '^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED  \]' $d/gpu-tests*.txt | sort | uniq -c; grep -hE '^\[ +OK \]' $d/gpu-tests*.txt | sed 's/^/  /'; fi
for f in $d/ab/*-cmp1.txt; do [ -f "$f" ] || continue; b=${f%-cmp1.txt}; echo "## A/B $(basename $b): round 1 | round 2 (graph us old new | plain us old new | config)"; paste -d'|' <(grep -E "^(layernorm|rmsnorm)" $f | cut -d'|' -f1-2) <(grep -E "^(layernorm|rmsnorm)" $b-cmp2.txt | cut -d'|' -f2,4 | cut -c1-90); tail -1 $f; tail -1 $b-cmp2.txt; done
for f in $d/*.txt; do
  case $(basename $f) in gpu-tests*|tests-run*|environment*) continue;; esac
  if grep -qE '^(layernorm|rmsnorm) ' $f && grep -q 'pct\|%copy\|GB/s' $f; then echo "## bench $(basename $f .txt)"; grep -E "^(layernorm|rmsnorm) " $f | sed 's/  */ /g' | cut -c1-220; fi
  if [[ $(basename $f) == tune-* ]]; then echo "## $(basename $f .txt): fastest four (us | config), then the heuristic/tuned line"; grep -E '^ *fit|^ *config' $f | awk -F'|' '{print $3, "|", $2}' | sort -n | head -4; grep -E "M<=[0-9]+ +[0-9]+ " $f | tail -1 | sed 's/  */ /g' | cut -c1-260; fi
done
