"""Why peers.py times normjit's backward 15-25 µs above `normjit bench` (LN bf16 4096, M = 16384):
the same autograd.grad loop as peers.py, under torch.profiler: every GPU kernel and every CUDA
runtime/driver call per backward, and the timings with and without INNER back-to-back calls."""
import statistics
import sys

import torch
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, "bench")
import peers  # noqa: E402

import normjit.torch as njt  # noqa: E402

m, n, dtype = 16384, 4096, torch.bfloat16
for name, fwd in (("normjit", lambda x, w, b: njt.layer_norm(x, (n,), w, b, 1e-5)),
                  ("torch", lambda x, w, b: F.layer_norm(x, (n,), w, b, 1e-5))):
    torch.manual_seed(0)
    x = torch.randn(m, n, device="cuda", dtype=dtype, requires_grad=True)
    w = (1 + 0.25 * torch.randn(n, device="cuda", dtype=dtype)).requires_grad_()
    b = (0.1 * torch.randn(n, device="cuda", dtype=dtype)).requires_grad_()
    y = fwd(x, w, b)
    dy = torch.randn_like(y)
    call = lambda: torch.autograd.grad(y, (x, w, b), dy, retain_graph=True)
    for inner in (1, 5, 20):
        t = statistics.median(peers.time_calls(call, 20, inner=inner))
        print(f"{name}: inner={inner}: {t:.1f} us per backward")
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(10):
            call()
        torch.cuda.synchronize()
    print(f"--- {name}: 10 backwards under the profiler")
    print(prof.key_averages().table(sort_by="count", row_limit=40, max_name_column_width=60))
