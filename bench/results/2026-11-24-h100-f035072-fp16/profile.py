"""Why normjit's fp16 backward reads 1.5-1.9x its bf16 time through bench/peers.py at some shapes
(LN 1000, 14336; RMS 512, 2048, 7168) while `normjit bench` times it like bf16: the same
autograd.grad loop as peers.py, three repetitions of peers.py's timing per (kind, N, dtype), then the
GPU kernels and their CUDA time under the profiler."""
import statistics
import sys

import torch
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, "bench")
import peers  # noqa: E402

SHAPES = [("layernorm", 1000), ("layernorm", 14336), ("rmsnorm", 512), ("rmsnorm", 2048), ("rmsnorm", 7168),
          ("layernorm", 4096)]
for kind, n in SHAPES:
    m = 64 * 1024 * 1024 // n
    for dtype in (torch.float16, torch.bfloat16):
        for peer in ("normjit", "torch"):
            torch.manual_seed(0)
            x = torch.randn(m, n, device="cuda", dtype=dtype, requires_grad=True)
            w = (1 + 0.25 * torch.randn(n, device="cuda", dtype=dtype)).requires_grad_()
            b = (0.1 * torch.randn(n, device="cuda", dtype=dtype)).requires_grad_() if kind == "layernorm" else None
            y = peers.forward_for(peer, kind)(x, w, b)
            dy = torch.randn_like(y)
            inputs = (x, w, b) if b is not None else (x, w)
            call = lambda: torch.autograd.grad(y, inputs, dy, retain_graph=True)
            ts = [statistics.median(peers.time_calls(call, 20, inner=peers.INNER)) for _ in range(3)]
            t1 = statistics.median(peers.time_calls(call, 20, inner=1))
            torch.cuda.synchronize()
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                for _ in range(10):
                    call()
                torch.cuda.synchronize()
            kernels = [(e.key, e.device_time_total / e.count, e.count) for e in prof.key_averages()
                       if e.device_time_total > 0]
            ks = "; ".join(f"{k[:40]} {t:.1f}us x{c}" for k, t, c in kernels)
            print(f"{kind:9} N={n:6d} M={m:6d} {str(dtype)[6:]:9} {peer:8}: inner5 "
                  f"{' '.join(f'{t:.1f}' for t in ts)} inner1 {t1:.1f} us | {ks}", flush=True)
            del x, w, b, y, dy
            torch.cuda.empty_cache()
