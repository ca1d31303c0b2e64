#!/usr/bin/env bash
# bench/sass_lines.py and bench/ncu_stalls.py --lines on a real cubin (no GPU: NVRTC on the CPU)
# and a made-up Nsight Compute SASS table of the same kernel: the line tables decode (against
# llvm-dwarfdump where this machine has one), the machine code with line tables is the bytes
# without, each SASS line's samples land on the source line its offset maps to, and a table of
# another kernel is flagged.
# Usage: tests/scripts/ncu_lines_test.sh REPO_ROOT NORMJIT_CLI
set -uo pipefail
root="${1:-$(cd "$(dirname "$0")/../.." && pwd)}"
cli="${2:-$root/build/normjit}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fail=0
problem=(--kind layernorm --n 4096 --dtype bf16 --weight-dtype fp32)
if ! "$cli" emit "${problem[@]}" --cubin "$tmp/k.cubin" --line-info > "$tmp/emit.txt" 2>&1; then
  # No NVRTC here (the CLI says why): nothing to compile, so nothing this test can check.
  if grep -qi "nvrtc" "$tmp/emit.txt"; then echo "skip: $(head -1 "$tmp/emit.txt")"; exit 0; fi
  cat "$tmp/emit.txt"; exit 1
fi
"$cli" emit "${problem[@]}" --cubin "$tmp/plain.cubin" > /dev/null
"$cli" emit "${problem[@]}" > "$tmp/k.cu"
python3 - "$root/bench" "$tmp" <<'PY' || fail=1
import csv, os, shutil, subprocess, sys
sys.path.insert(0, sys.argv[1])
import sass_lines
tmp = sys.argv[2]
ok = True
def check(cond, what):
    global ok
    print(("ok   " if cond else "FAIL ") + what)
    ok &= bool(cond)
blob = open(f"{tmp}/k.cubin", "rb").read()
plain = open(f"{tmp}/plain.cubin", "rb").read()
text = lambda b, k: sass_lines.elf_sections(b)[".text." + k][4]
check(text(blob, "nj_norm_backward") == text(plain, "nj_norm_backward") and len(blob) > len(plain),
      "line tables add to the cubin, not to the machine code")
lines = sass_lines.kernel_lines(blob, "nj_norm_backward")
size = sass_lines.text_size(blob, "nj_norm_backward")
source = open(f"{tmp}/k.cu").read().splitlines()
check(lines and lines[0][0] == 0 and lines[-1][0] < size, f"{len(lines)} rows inside the kernel's {size} bytes")
check(all(f.endswith(".cu") and 0 < l <= len(source) for _, f, l in lines),
      "every row names a line of the emitted source")
dump = shutil.which("llvm-dwarfdump")
if dump:
    out = subprocess.run([dump, "--debug-line", f"{tmp}/k.cubin"], capture_output=True, text=True).stdout
    seqs, cur = [], []
    for row in out.splitlines():
        if row.startswith("0x"):
            parts = row.split()
            if "end_sequence" in row:
                seqs.append(cur); cur = []
            else:
                cur.append((int(parts[0], 16), int(parts[1])))
    mine = [(a, l) for a, _, l in sass_lines.line_rows(blob)[".text.nj_norm_backward"]]
    check(mine in seqs, "the rows are llvm-dwarfdump's sequence for nj_norm_backward")
else:
    print("skip llvm-dwarfdump comparison (none here)")
# A made-up SASS table: one row per instruction at a runtime base address, samples = offset/16 + 1,
# executed 32 each, all of them long_sb.
base = 0x7F0000000000
head = ["Address", "Source", "Warp Stall Sampling (All Samples)", "Warp Stall Sampling (Not-issued Samples)",
        "# Samples", "Instructions Executed", "stall_long_sb"]
def table(path, count):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["Kernel Name", "nj_norm_backward"])
        w.writerow(head)
        for i in range(count):
            w.writerow([hex(base + 16 * i), "      NOP ;", i + 1, 0, i + 1, 32, i + 1])
table(f"{tmp}/k.csv", size // 16)
table(f"{tmp}/short.csv", size // 16 - 4)
run = lambda csvf: subprocess.run([sys.executable, os.path.join(sys.argv[1], "ncu_stalls.py"), csvf, "--lines",
                                   f"{tmp}/k.cubin", f"{tmp}/k.cu", "--top", "3"], capture_output=True, text=True)
res = run(f"{tmp}/k.csv")
check(res.returncode == 0 and "warning" not in res.stdout, "the table of the same kernel joins without a warning")
expect = {}
for i in range(size // 16):
    f, l = sass_lines.line_at(lines, 16 * i)
    expect[l] = expect.get(l, 0) + i + 1
best = max(expect, key=expect.get)
total = sum(expect.values())
first = [r for r in res.stdout.splitlines() if r.startswith("  ")][0]
check(f"L{best}:" in first and f"{100 * expect[best] / total:5.1f}%" in first,
      f"the top line is L{best} with its share of the samples: {first.strip()[:70]}")
check(source[best - 1].strip()[:40] in first, "and its text")
res = run(f"{tmp}/short.csv")
check("warning" in res.stdout and "not the same kernel" in res.stdout, "a table of another kernel is flagged")
sys.exit(0 if ok else 1)
PY
exit $fail
