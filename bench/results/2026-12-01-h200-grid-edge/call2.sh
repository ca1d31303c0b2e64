#!/usr/bin/env bash
# Session 58, call 2 (H200). build-device: as call 1 (4960795's code).
# Call 1: past 262144 columns a cluster of 16 blocks of 1024 threads holding 3 slots a thread
# beat the grid 1.55-1.9x (LN bf16 270328 290 vs 490 us; 393216 344 vs 533). Here, for a rule:
# clusters of 16 at 3-7 slots a thread (wherever the shared sums fit) against the grid the rules
# give, 16-bit and fp32, both kinds, with and without γ in shared memory, aligned and unaligned,
# at M = 64 Mi / N and at few rows (M = 1, 16). `normjit tune --config` per shape: every sm_90
# candidate the search space lists, then the cluster configs.
set -uo pipefail
B=build-device
while read -r kind dtype w n align ms; do
  [ $SECONDS -gt 480 ] && { echo "out of time at $kind $dtype $n"; break; }
  prob=(--kind $kind --dtype $dtype --weight-dtype $w --n $n --align $align)
  vec=$([ $dtype = fp32 ] && echo 4 || echo 8)
  c16="threads=1024 threads_per_row=1024 vec=$vec registers cluster=16 shared_sums"
  mapfile -t cands < <($B/normjit tune "${prob[@]}" --memory-rate 18.4 --m 256 --list 2>/dev/null | sed -n '/sm_90/,$p' | grep 'threads=' | sed 's/^ *//' | head -3)
  args=()
  for c in "${cands[@]}" "$c16" "$c16 shared_weights"; do args+=(--config "$c"); done
  for m in ${ms//,/ }; do
    [ $m = 0 ] && m=$(( 64 * 1024 * 1024 / n ))
    echo "### $kind $dtype $w $n align $align m $m" | tee -a $OUT/configs.txt >> $OUT/tune-progress.txt
    NORMJIT_CACHE_DIR=$(mktemp -d) timeout 60 $B/normjit tune "${prob[@]}" --m $m "${args[@]}" \
      2>> $OUT/tune-progress.txt | grep -E "^ *config" >> $OUT/configs.txt
  done
done <<'SHAPES'
layernorm bf16 fp32 262152 16 0,1,16
layernorm bf16 fp32 327680 16 0
layernorm bf16 fp32 393216 16 0,1,16
rmsnorm bf16 fp32 327680 16 0
rmsnorm bf16 fp32 393216 16 0,1,16
rmsnorm bf16 fp32 458752 16 0
rmsnorm bf16 fp32 524288 16 0,1,16
rmsnorm bf16 fp32 655360 16 0
rmsnorm bf16 fp32 786432 16 0
layernorm fp16 fp16 393216 16 0
rmsnorm bf16 bf16 393216 16 0
rmsnorm bf16 bf16 524288 16 0
layernorm fp32 fp32 262148 16 0,1,16
layernorm fp32 fp32 327680 16 0
layernorm fp32 fp32 393216 16 0
layernorm fp32 fp32 458752 16 0
rmsnorm fp32 fp32 262148 16 0,1,16
rmsnorm fp32 fp32 327680 16 0
rmsnorm fp32 fp32 393216 16 0
rmsnorm fp32 fp32 458752 16 0
layernorm bf16 fp32 327681 2 0
rmsnorm bf16 fp32 327681 2 0
layernorm bf16 fp32 266241 2 0
layernorm fp32 fp32 327681 4 0
rmsnorm fp32 fp32 327681 4 0
SHAPES
echo "configs done at $SECONDS s"
mkdir -p $OUT/logs && mv $OUT/tune-progress.txt $OUT/logs/ 2>/dev/null
tar czf $OUT/call2.tgz -C $OUT logs && rm -rf $OUT/logs
