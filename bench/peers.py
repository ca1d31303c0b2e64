"""normjit against its peers, in one run on the GPU machine (issue 3's evidence).

Each contender runs the same backward the same way: a forward builds an autograd graph once, then
torch.autograd.grad(y, (x, weight[, bias]), dy, retain_graph=True) is timed with CUDA events
around INNER back-to-back calls, median of the repetitions, two ways:
  GPU     the calls are queued behind a GPU sleep long enough for the host to queue them all, so
          the events time the backward's kernels back to back (every kernel it launches, the
          gaps between them, no host time). The bandwidth and the ratios use this time.
  python  the calls start on an idle GPU, as a training step makes them: the host's time per
          call (Python, autograd, launches) shows wherever it is not hidden behind the GPU work
          of the calls before it, including the first call's latency spread over INNER calls.
The contenders:

  torch    eager F.layer_norm / F.rms_norm: aten native_layer_norm_backward and
           _fused_rms_norm_backward
  compile  torch.compile of the same forward: inductor's generated backward
  liger    Liger-Kernel's LigerLayerNormFunction / LigerRMSNormFunction (Triton). The wheel is
           fetched beside the repository into .whl/ (scripts/gpu-peers.sh); it is never committed
  normjit  normjit.torch.layer_norm / rms_norm (this repository's kernels through the C API)

Effective bandwidth = the minimum bytes of the backward / median time, as a share of the
device-to-device copy bandwidth measured in the same run:
  LayerNorm 3*M*N*b + 8*M + 3*N*w,   RMSNorm 3*M*N*b + 4*M + 2*N*w.
Weights have x's dtype, since torch's CUDA layer_norm takes no fp32 weights with 16-bit inputs.

  python3 bench/peers.py [--n 1024,4096] [--kinds layernorm,rmsnorm] [--dtype bf16]
                         [--elements 67108864] [--reps 20] [--json FILE]
"""
import argparse
import json
import statistics
import sys
import time

import torch
import torch.nn.functional as F

from backward_bytes import min_bytes

DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}
# The speed issue's sweep (odd sizes included).
DEFAULT_N = [256, 512, 1024, 2048, 4096, 5120, 7168, 8192, 12288, 14336, 16384, 32768, 65536, 131072,
             262144, 1048576, 1000, 4095, 5003]
EPS = 1e-5
# Back-to-back backward calls per timed sample (time_calls).
INNER = 5


def copy_bandwidth_gbs(reps=10):
    """Device-to-device copy of 256 MB, read + write counted, median of reps."""
    n = 256 * 1024 * 1024 // 4
    src = torch.empty(n, dtype=torch.float32, device="cuda").uniform_()
    dst = torch.empty_like(src)
    times = time_calls(lambda: dst.copy_(src), reps)
    return 2 * n * 4 / (statistics.median(times) * 1e-6) / 1e9


def time_calls(fn, reps, warmup=3, inner=1, behind_sleep=False):
    """Microseconds per call: each sample is `inner` back-to-back calls between two events, so
    that a contender's host time (Python, autograd, launches) overlaps the previous call's GPU
    work as it does in a training step, instead of leaving the GPU idle inside the timed region.
    behind_sleep: the start event and the calls are queued behind a GPU sleep that outlasts the
    host's queueing of them (sized from the warm-up's host time, doubled and the sample taken
    again whenever the sleep was over before the calls were all queued), so the events time the
    GPU work alone."""
    host = float("inf")
    for _ in range(warmup):  # the least host time of a warm-up call: the first may compile
        t = time.perf_counter()
        fn()
        host = min(host, (time.perf_counter() - t) * 1e6)
    torch.cuda.synchronize()
    sleep_us = 2 * inner * host + 500
    times = []
    while len(times) < reps:
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        if behind_sleep:
            torch.cuda._sleep(int(sleep_us * _sleep_cycles_per_us()))
        start.record()
        for _ in range(inner):
            fn()
        end.record()
        if behind_sleep and start.query():  # the GPU reached the calls before they were all queued
            end.synchronize()
            sleep_us *= 2
            continue
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e3 / inner)  # microseconds
    return times


_cycles_per_us = None


def _sleep_cycles_per_us():
    """torch.cuda._sleep counts GPU clock cycles: measured once."""
    global _cycles_per_us
    if _cycles_per_us is None:
        cycles = 10_000_000
        torch.cuda._sleep(cycles)  # clocks up
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        torch.cuda._sleep(cycles)
        end.record()
        end.synchronize()
        _cycles_per_us = cycles / (start.elapsed_time(end) * 1e3)
    return _cycles_per_us


def forward_for(peer, kind):
    """The forward whose autograd backward is the contender's, as f(x, w, b) -> y."""
    if peer == "torch":
        if kind == "layernorm":
            return lambda x, w, b: F.layer_norm(x, (x.shape[-1],), w, b, EPS)
        return lambda x, w, b: F.rms_norm(x, (x.shape[-1],), w, EPS)
    if peer == "compile":
        # One compiled graph per shape: lift dynamo's per-function recompile limit (8 by
        # default), past which it would silently fall back to eager for the rest of the sweep.
        import torch._dynamo
        for limit in ("cache_size_limit", "recompile_limit", "accumulated_cache_size_limit",
                      "accumulated_recompile_limit"):
            if hasattr(torch._dynamo.config, limit):
                setattr(torch._dynamo.config, limit, 1024)
        eager = forward_for("torch", kind)
        return torch.compile(eager, dynamic=False)
    if peer == "liger":
        if kind == "layernorm":
            from liger_kernel.ops.layer_norm import LigerLayerNormFunction
            return lambda x, w, b: LigerLayerNormFunction.apply(x, w, b, EPS)
        from liger_kernel.ops.rms_norm import LigerRMSNormFunction
        # in_place=False: timing repeats the backward over the same dy.
        return lambda x, w, b: LigerRMSNormFunction.apply(x, w, EPS, 0.0, "llama", False)
    if peer == "normjit":
        import normjit.torch as njt
        if kind == "layernorm":
            return lambda x, w, b: njt.layer_norm(x, (x.shape[-1],), w, b, EPS)
        return lambda x, w, b: njt.rms_norm(x, (x.shape[-1],), w, EPS)
    raise ValueError(peer)


def time_backward(peer, kind, m, n, dtype, reps):
    torch.manual_seed(0)
    x = torch.randn(m, n, device="cuda", dtype=dtype, requires_grad=True)
    w = (1 + 0.25 * torch.randn(n, device="cuda", dtype=dtype)).requires_grad_()
    b = (0.1 * torch.randn(n, device="cuda", dtype=dtype)).requires_grad_() if kind == "layernorm" else None
    y = forward_for(peer, kind)(x, w, b)
    dy = torch.randn_like(y)
    inputs = (x, w, b) if b is not None else (x, w)
    call = lambda: torch.autograd.grad(y, inputs, dy, retain_graph=True)
    return (statistics.median(time_calls(call, reps, inner=INNER, behind_sleep=True)),
            statistics.median(time_calls(call, reps, inner=INNER)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", default=",".join(map(str, DEFAULT_N)))
    ap.add_argument("--kinds", default="layernorm,rmsnorm")
    ap.add_argument("--dtype", default="bf16", choices=sorted(DTYPES))
    ap.add_argument("--elements", type=int, default=64 * 1024 * 1024, help="M*N per shape")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--peers", default="torch,compile,liger,normjit")
    ap.add_argument("--json")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("peers.py: no CUDA device: nothing to time", file=sys.stderr)
        return 3
    dtype = DTYPES[args.dtype]
    elem = torch.finfo(dtype).bits // 8
    peers = args.peers.split(",")
    copy = copy_bandwidth_gbs()
    print(f"peers.py on {torch.cuda.get_device_name()}, torch {torch.__version__}: device copy {copy:.0f} GB/s")
    print(f"{args.dtype}, weights {args.dtype}, M*N = {args.elements}; per contender: GPU us, its % of copy, "
          "python us; then normjit's speed-up over each (peer time / normjit time), GPU | python")
    head = f"{'kind':9} {'M':>7} {'N':>8} " + " ".join(f"{p:>25}" for p in peers)
    others = [p for p in peers if p != "normjit"]
    if "normjit" in peers:
        head += "  " + " ".join(f"{'x ' + p:>10}" for p in others) + " |" + " ".join(f"{'x ' + p:>10}" for p in others)
    print(head)
    rows = []
    for kind in args.kinds.split(","):
        for n in map(int, args.n.split(",")):
            m = max(1, args.elements // n)
            need = min_bytes(kind, m, n, elem, elem)
            cells, result = [], {"kind": kind, "dtype": args.dtype, "m": m, "n": n, "us": {}, "us_python": {},
                                 "pct_copy": {}, "error": {}}
            for peer in peers:
                try:
                    us, us_python = time_backward(peer, kind, m, n, dtype, args.reps)
                    pct = 100 * need / (us * 1e-6) / 1e9 / copy
                    result["us"][peer], result["us_python"][peer], result["pct_copy"][peer] = us, us_python, pct
                    cells.append(f"{us:9.1f} {pct:5.1f}% {us_python:8.1f}")
                except Exception as e:  # a contender that cannot run this shape says so and the row goes on
                    result["error"][peer] = f"{type(e).__name__}: {e}"[:200]
                    cells.append(f"{'fails':>25}")
                torch.cuda.empty_cache()
            line = f"{kind:9} {m:7d} {n:8d} " + " ".join(cells)
            if "normjit" in result["us"]:
                for key, sep in (("us", "  "), ("us_python", " |")):
                    times = result[key]
                    ratios = [times[p] / times["normjit"] if p in times else None for p in others]
                    line += sep + " ".join(f"{r:10.2f}" if r else f"{'-':>10}" for r in ratios)
            print(line, flush=True)
            rows.append(result)
    for r in rows:
        for peer, why in r["error"].items():
            print(f"{r['kind']} N={r['n']}: {peer} failed: {why}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__, "copy_gbs": copy, "rows": rows},
                      f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
