"""Where the host time of a training step's norm goes: normjit's modules against torch's.

python_overhead.py times whole calls; this splits a module's forward + autograd backward into
pieces, so a gap between normjit and torch can be traced to one of them:
- step: y = module(x); torch.autograd.grad(y, (x, weight[, bias]), dy), host µs per step;
- fwd: module(x) alone (graph built), and grad: the grad call alone (step − fwd);
- node: the module's autograd node called directly on this thread (y.grad_fn(dy), or for a
  Python Function's node its apply, which runs the Function's backward; a graph built for each
  call, as a node runs once, and the forward's time taken off),
  where grad runs it on autograd's worker thread for the device: grad − node is the engine's
  own cost (the worker's wake-up, its stream and context handling, the gradients' checks);
- floor: the same step through a Python autograd.Function that only clones (autograd's
  cost of a Python node, no norm at all);
- torch.profiler's per-op self CPU time over the steps (every thread, the autograd engine's
  worker too), the top rows, for normjit's module and for torch's.
Modules in x's dtype (as torch.nn's are used) and with fp32 parameters.

    python3 bench/host_breakdown.py [--m 4] [--n 256] [--dtype bf16] [--steps 300]
    (--device cpu runs the script's mechanics without a GPU; normjit's modules then fall back to
    torch's own norms, so its numbers say nothing of normjit)
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

import torch  # noqa: E402

import normjit.torch as njt  # noqa: E402
from python_overhead import host_us, synchronize  # noqa: E402  (bench/, this script's folder)


class _CloneFunction(torch.autograd.Function):
    """The floor: a Python autograd node that does no norm (one clone each way)."""

    @staticmethod
    def forward(ctx, x, weight, bias):
        return x.clone()

    @staticmethod
    def backward(ctx, dy):
        return dy.clone(), None, None


class _CloneModule(torch.nn.Module):
    def __init__(self, n, device, dtype):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(n, device=device, dtype=dtype))
        self.bias = torch.nn.Parameter(torch.zeros(n, device=device, dtype=dtype))

    def forward(self, x):
        return _CloneFunction.apply(x, self.weight, self.bias)


def profile_table(step, steps, rows):
    from torch.profiler import ProfilerActivity, profile
    step()
    synchronize()
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(steps):
            step()
        synchronize()
    return prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=rows, max_name_column_width=60)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--m", type=int, default=4)
    ap.add_argument("--n", type=int, default=256)
    ap.add_argument("--dtype", choices=("fp32", "fp16", "bf16"), default="bf16")
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--profile-rows", type=int, default=22)
    ap.add_argument("--device", default="cuda")
    opt = ap.parse_args()
    dtype = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[opt.dtype]
    m, n = opt.m, opt.n
    dev = opt.device
    x = torch.randn(m, n, device=dev, dtype=dtype, requires_grad=True)
    dy = torch.randn(m, n, device=dev, dtype=dtype)
    where = torch.cuda.get_device_name() if dev.startswith("cuda") else dev
    print("torch %s, %s; M=%d N=%d %s; host us per call, median of 15 x %d"
          % (torch.__version__, where, m, n, opt.dtype, opt.steps))
    print("%-44s %9s %9s %9s %9s" % ("module", "step", "fwd", "grad", "node"))
    steps = {}
    for pdtype in (dtype, torch.float32):
        modules = [("normjit LayerNorm", njt.LayerNorm(n, device=dev, dtype=pdtype)),
                   ("torch LayerNorm", torch.nn.LayerNorm(n, device=dev, dtype=pdtype)),
                   ("normjit RMSNorm", njt.RMSNorm(n, device=dev, dtype=pdtype)),
                   ("torch RMSNorm", torch.nn.RMSNorm(n, device=dev, dtype=pdtype)),
                   ("floor: Python autograd.Function (clone)", _CloneModule(n, dev, pdtype))]
        for name, module in modules:
            inputs = (x,) + tuple(module.parameters())

            def step(module=module, inputs=inputs):
                # allow_unused: the floor's node gives the parameters no gradient
                torch.autograd.grad(module(x), inputs, dy, allow_unused=True)

            def fwd(module=module):
                return module(x)
            label = "%s, %s params" % (name, "fp32" if pdtype == torch.float32 else opt.dtype)
            try:
                s = host_us(step, opt.steps)
                f = host_us(fwd, opt.steps)
            except RuntimeError as e:  # torch's CUDA LayerNorm refuses some mixes of dtypes
                print("%-44s %s" % (label, str(e).splitlines()[0][:60]))
                continue
            def fwd_and_node(module=module):
                # A node runs once: its saved tensors are freed after it (normjit's Functions
                # save x, γ and the statistics), so each call builds its own graph and the
                # forward's time is taken off. A Python Function's node is not callable: its
                # apply runs the Function's backward.
                node = module(x).grad_fn
                (node.apply if hasattr(node, "_forward_cls") else node)(dy)
            why = ""
            try:
                d = host_us(fwd_and_node, opt.steps) - f
            except Exception as e:  # a node that cannot be called directly
                d = float("nan")
                why = "  (node: %s: %s)" % (type(e).__name__, (str(e).splitlines() or [""])[0][:80])
            steps[label] = step
            print("%-44s %9.2f %9.2f %9.2f %9.2f%s" % (label, s, f, s - f, d, why))
    for label in ("normjit LayerNorm, %s params" % opt.dtype, "torch LayerNorm, %s params" % opt.dtype,
                  "normjit RMSNorm, %s params" % opt.dtype):
        if label in steps:
            print("\n== torch.profiler, %d steps of %s (self CPU time, every thread)" % (50, label))
            print(profile_table(steps[label], 50, opt.profile_rows))


if __name__ == "__main__":
    main()
