#!/usr/bin/env bash
# bench/sass_loads.py's counts on a made-up nvdisasm listing (no GPU, no nvdisasm): the loads
# before the first barrier, their distance to the first instruction that reads them (a store
# reads its data register too), the split at a marked opcode, and a clear error for a listing
# without the kernel.
# Usage: tests/scripts/sass_loads_test.sh REPO_ROOT
set -uo pipefail
root="${1:-$(cd "$(dirname "$0")/../.." && pwd)}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fail=0
cat > "$tmp/k.sass" <<'SASS'
	.section	.text.nj_reduce_partials,"ax",@progbits
nj_reduce_partials:
        /*0000*/                   LDG.E R2, desc[UR4][R4.64] ;
        /*0010*/                   FADD R3, R2, R2 ;
	.section	.text.nj_norm_backward,"ax",@progbits
nj_norm_backward:
.text.nj_norm_backward:
        /*0000*/                   LDG.E R2, desc[UR4][R4.64] ;
        /*0010*/                   LDG.E R3, desc[UR4][R4.64+0x4] ;
        /*0020*/                   IADD3 R7, R8, R9, RZ ;
        /*0030*/                   FADD R5, R2, R2 ;
        /*0040*/                   MUFU.RCP R6, R5 ;
        /*0050*/              @!P0 LDG.E R10, desc[UR4][R4.64+0x8] ;
        /*0060*/                   FMUL R11, R10, R6 ;
        /*0070*/                   STG.E desc[UR4][R12.64], R3 ;
        /*0080*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;
        /*0090*/                   LDG.E R20, desc[UR4][R4.64] ;
        /*00a0*/                   EXIT ;
SASS
check() {  # check NAME EXPECTED_STATUS PATTERN ARGS...
  local name=$1 want=$2 pattern=$3
  shift 3
  python3 "$root/bench/sass_loads.py" "$@" > "$tmp/$name.out" 2>&1
  local got=$?
  if [ "$got" -ne "$want" ] || ! grep -q -- "$pattern" "$tmp/$name.out"; then
    echo "FAIL $name: exit $got (expected $want), no '$pattern' in"; cat "$tmp/$name.out"; fail=1
  else
    echo "ok   $name"
  fi
}
check counts 0 "11 instructions, the first barrier at 8; 3 global loads before it, 3 used within 12" "$tmp/k.sass"
check near 0 "1 used within 2 instructions" "$tmp/k.sass" --near 2
check near_names_the_load 0 "R10, desc\[UR4\]\[R4.64+0x8\]  *used 1 later" "$tmp/k.sass" --near 2
check store_reads_its_data 0 "R3, desc\[UR4\]\[R4.64+0x4\]  *used 6 later" "$tmp/k.sass" --list
check mark 0 "first MUFU.RCP at 4: 2 loads issue before it, 1 after" "$tmp/k.sass" --mark MUFU.RCP
check other_kernel 0 "2 instructions, the first barrier at 2; 1 global loads before it" "$tmp/k.sass" --kernel nj_reduce_partials
check no_kernel 1 "no function nj_norm_forward" "$tmp/k.sass" --kernel nj_norm_forward
exit $fail
