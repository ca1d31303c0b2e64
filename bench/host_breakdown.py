"""Where the host time of a training step's norm goes: normjit's modules against torch's.

python_overhead.py times whole calls; this splits a module's forward + autograd backward into
pieces, so a gap between normjit and torch can be traced to one of them:
- step: y = module(x); torch.autograd.grad(y, (x, weight[, bias]), dy), host µs per step;
- fwd: module(x) alone (graph built), and grad: the grad call alone (step − fwd);
- bwd: the backward alone, torch.autograd.grad over one graph built once (retain_graph=True):
  the autograd engine's hand-over to the device's worker thread, the node, the gradients'
  checks and captures; grad − bwd is what freeing the graph and its saved tensors costs;
- node: the module's autograd node run directly on this thread, over that same graph (for a
  Python Function, its backward with the node as ctx; for torch's nodes, the node called), so
  bwd − node is the engine's own cost around the node;
- floor: the same step through a Python autograd.Function that only clones (autograd's cost of
  a Python node, no norm at all), and "floor, 3 gradients": one that also returns a new empty
  dweight and dbias, as a norm's node does;
- on CUDA, the pieces of normjit's nodes (each timed alone, on this thread unless a row says
  otherwise): the backward body, _launch.backward_packed, _launch._run, the output
  allocations, the C entry point alone with its args packed once (and its GPU time), the same
  on a fresh thread (no CUDA context current: pushed and popped per call, as on autograd's
  worker thread), the forward's _run and C call; and whether each step took the fast paths;
- the timeline (--timeline-steps, 0 for none): the same steps measured inside autograd's own
  run, every case's steps in turn: fwd, then the grad call split into "to node" (until the
  Function's backward starts on autograd's worker thread), "node" (of which normjit's _run, the
  C entry point and the context check), "after" (until grad returns). On the H200 (2026-11-28,
  LayerNorm M=4 N=256 bf16) normjit's backward took 2-3x as long there as the same code called
  in a loop of its own on this thread (the pieces above): node 61 against 20-30 us, _run 46
  against 16-19, the C call 14 against 7-8, the context check 4.7 against 0.6. In a loop the
  code's caches stay warm; inside a step they are shared with the forward, the engine and the
  allocator (and on CUDA the backward runs on autograd's worker thread), so each Python call
  and ctypes call costs more (bench/python_glue_cpu.py --timeline shows the same ratio on the
  CPU, the backward on the calling thread). The wrappers' own cost (a Python call each) is in
  the normjit rows;
- torch.profiler's per-op self CPU time over the steps (every thread, the autograd engine's
  worker too), the top rows, for normjit's module and for torch's.
Modules in x's dtype (as torch.nn's are used) and with fp32 parameters.

    python3 bench/host_breakdown.py [--m 4] [--n 256] [--dtype bf16] [--steps 300] [--no-pieces]
                                    [--timeline-steps 2000]
    (--device cpu runs the script's mechanics without a GPU; normjit's modules then fall back to
    torch's own norms, so its numbers say nothing of normjit: bench/python_glue_cpu.py times
    normjit's Python glue on the CPU with the C entry points stubbed)
"""
import argparse
import ctypes
import os
import sys
import threading
from unittest import mock

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

import torch  # noqa: E402

import normjit.torch as njt  # noqa: E402
from normjit import _capi  # noqa: E402
from normjit.torch import _context, _functional, _launch, _launch_forward  # noqa: E402
from python_overhead import gpu_us, host_us, synchronize  # noqa: E402  (bench/, this script's folder)
from autograd_floor import CloneFunction, Clone3Function  # noqa: E402  (bench/)


class _CloneModule(torch.nn.Module):
    def __init__(self, n, device, dtype, function=CloneFunction):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(n, device=device, dtype=dtype))
        self.bias = torch.nn.Parameter(torch.zeros(n, device=device, dtype=dtype))
        self.function = function

    def forward(self, x):
        return self.function.apply(x, self.weight, self.bias)


def node_call(y, dy):
    """A function that runs y's autograd node on this thread, over y's graph (kept alive by y)."""
    node = y.grad_fn
    function = getattr(type(node), "_forward_cls", None)
    if function is not None:  # a Python Function's node is its backward's ctx
        return lambda: function.backward(node, dy)
    return lambda: node(dy)


def on_fresh_thread(fn, calls):
    """host_us of fn on a new thread: no CUDA context current there, as on autograd's worker."""
    out = []
    t = threading.Thread(target=lambda: out.append(host_us(fn, calls)))
    t.start()
    t.join()
    return out[0] if out else float("nan")


def general_path_calls(step, steps=20):
    """(forward, backward) general-path calls over `steps` steps after one warm-up: 0, 0 when
    every call took a plan's fast path."""
    step()
    synchronize()
    counts = [0, 0]

    def counting(module, name, i):
        real = getattr(module, name)

        def wrapper(*args, **kwargs):
            counts[i] += 1
            return real(*args, **kwargs)
        return mock.patch.object(module, name, wrapper)
    with counting(_launch_forward, "_forward", 0), counting(_launch, "_backward", 1):
        for _ in range(steps):
            step()
        synchronize()
    return counts


def pieces(label, module, x, dy, steps):
    """The rows of normjit's node, timed one by one (CUDA only), printed under label."""
    y = module(x)
    node = y.grad_fn
    saved = node.saved_tensors
    layer_norm = len(saved) == 4
    if layer_norm:
        xs, w, b, stats = saved
    else:
        (xs, w, stats), b = saved, None
    plan = node.plan
    if plan is None or plan.workspace_bytes is None:
        print("%s: no plan with a known workspace (plan %r); no pieces" % (label, plan))
        return
    m, n = plan.m, plan.n
    device = plan.device
    stream = _launch._raw_stream(device)
    p = stats.data_ptr()
    mean_ptr, rstd_ptr = (p, p + 4 * m) if layer_norm else (0, p)
    kind = _capi.LAYERNORM if layer_norm else _capi.RMSNORM
    # The C backward call alone: outputs made once, the args packed once (a struct of its own).
    dx, dw = torch.empty_like(x), torch.empty_like(w)
    db = None if b is None else torch.empty_like(b)
    ws, ws_ptr, nbytes = (None, 0, 0)
    if plan.workspace_bytes:
        ws, ws_ptr, nbytes = _launch._workspace(device, stream, plan.workspace_bytes, x)
    bargs = _capi.BackwardArgs()
    _capi.ARGS_HEAD.pack_into(bargs, 0, m, xs.data_ptr(), n, dy.data_ptr(), n, mean_ptr, rstd_ptr, w.data_ptr(),
                              dx.data_ptr(), n, dw.data_ptr(), 0 if db is None else db.data_ptr(), ws_ptr, nbytes)
    baddress = ctypes.addressof(bargs)
    yo = torch.empty_like(x)
    fstats = torch.empty(plan.packed_shape, device=x.device)
    fp = fstats.data_ptr()
    fargs = _capi.ForwardArgs()
    _capi.FORWARD_ARGS.pack_into(fargs, 0, m, xs.data_ptr(), n, w.data_ptr(), 0 if b is None else b.data_ptr(),
                                 yo.data_ptr(), n, fp if layer_norm else 0, fp + 4 * m if layer_norm else fp, 1e-5)
    faddress = ctypes.addressof(fargs)

    def c_call(entry, address):  # one C entry point on its packed args, as _launch calls it
        def call():
            pushed = stream <= _launch._LAST_SPECIAL_STREAM and _context.push_context(device)
            status = entry(plan.engine, plan.problem_address, address, stream)
            if pushed:
                _context.pop_context()
            return status
        return call

    c_backward = c_call(plan.backward, baddress)
    c_forward = c_call(plan.forward, faddress)

    assert c_backward() == _capi.OK and c_forward() == _capi.OK

    def push_pop():
        if _context.push_context(device):
            _context.pop_context()

    rows = [
        ("node body: Function.backward (this thread)", node_call(y, dy), False),
        ("node body on a fresh thread", node_call(y, dy), True),
        ("  _launch.backward_packed", lambda: _launch.backward_packed(plan, kind, dy, xs, w, b, stats, 1), False),
        ("  _launch._run (allocations, C call)", lambda: _launch._run(plan, dy, xs, w, b, mean_ptr, rstd_ptr), False),
        ("  the outputs alone (empty_like, new_empty)",
         (lambda: (torch.empty_like(xs), w.new_empty(size=plan.weight_shape), b.new_empty(size=plan.bias_shape)))
         if b is not None else (lambda: (torch.empty_like(xs), w.new_empty(size=plan.weight_shape))), False),
        ("  the C backward call alone (args packed once)", c_backward, False),
        ("  the C backward call alone on a fresh thread", c_backward, True),
        ("  push_context + pop_context on a fresh thread", push_pop, True),
        ("  _raw_stream", lambda: _launch._raw_stream(device), False),
        ("forward: _launch_forward._run packed (allocations, C call)",
         lambda: _launch_forward._run(plan, xs, w, b, 1e-5, True), False),
        ("  the C forward call alone (args packed once)", c_forward, False),
    ]
    print("\n== the pieces of %s (host us per call; GPU us for the C calls)" % label)
    for name, fn, thread in rows:
        us = on_fresh_thread(fn, steps) if thread else host_us(fn, steps)
        gpu = ""
        if fn is c_backward or fn is c_forward:
            gpu = "   GPU %7.2f" % gpu_us(fn)
        print("%-60s %9.2f%s" % (name, us, gpu))
    del ws


def timeline(cases, x, dy, steps):
    """Where one step's time goes, measured inside autograd's own run: per step of each case (the
    cases in turn, so drift hits them alike), perf_counter marks around module(x), the grad call,
    and, through wrappers, the Function's backward (on autograd's worker thread), and inside
    normjit's backward _launch._run, the C entry point and the context push. Medians (µs) of:
    fwd; to node (grad called → the backward entered: autograd.grad's Python, the engine's
    set-up, the hand-over to the worker thread); node (the backward, of which _run, of which the C
    call and push_context); after (the backward returned → grad returns: the gradients' checks
    and captures, freeing the graph, the hand-back to this thread). cases: (label, module,
    Function class or None)."""
    import statistics
    import time
    pc = time.perf_counter
    marks = {}

    def timed(real, tag):
        def wrapper(*args, **kwargs):
            t = pc()
            out = real(*args, **kwargs)
            marks[tag] = (t, pc())
            return out
        return wrapper
    patches = [mock.patch.object(_launch, "_run", timed(_launch._run, "run")),
               mock.patch.object(_launch, "push_context", timed(_launch.push_context, "push"))]
    functions = set()
    for _, _, function in cases:
        if function is not None and function not in functions:
            functions.add(function)
            patches.append(mock.patch.object(function, "backward", staticmethod(timed(function.backward, "node"))))
    plans = []
    rows = {label: [] for label, _, _ in cases}
    for p in patches:
        p.start()
    try:
        for i in range(steps + 100):
            for label, module, function in cases:
                inputs = (x,) + tuple(module.parameters())
                marks.clear()
                t0 = pc()
                y = module(x)
                t1 = pc()
                plan = getattr(y.grad_fn, "plan", None)
                if plan is not None and not isinstance(plan.backward, _TimedEntry):
                    plan.backward = _TimedEntry(plan.backward, marks)
                    plans.append(plan)
                torch.autograd.grad(y, inputs, dy, allow_unused=True)
                t2 = pc()
                del y
                if i < 100:
                    continue
                node = marks.get("node")
                span = lambda tag: (marks[tag][1] - marks[tag][0]) if tag in marks else float("nan")  # noqa: E731
                rows[label].append((t1 - t0, t2 - t1, (node[0] - t1) if node else float("nan"), span("node"),
                                    span("run"), span("c"), span("push"), (t2 - node[1]) if node else float("nan")))
            if i % 200 == 0:
                synchronize()
    finally:
        for p in reversed(patches):
            p.stop()
        for plan in plans:
            plan.backward = plan.backward.real
    print("\n== inside autograd's run: medians of %d steps, host us (each case's steps in turn)" % steps)
    print("%-44s %8s %8s %8s %8s %8s %8s %8s %8s" % ("module", "fwd", "grad", "to node", "node", "_run", "C call",
                                                     "push", "after"))
    for label, _, _ in cases:
        cols = [statistics.median(r[j] for r in rows[label]) * 1e6 for j in range(8)]
        print("%-44s %8.2f %8.2f %8.2f %8.2f %8.2f %8.2f %8.2f %8.2f" % ((label,) + tuple(cols)))


class _TimedEntry:
    """A plan's C entry point, timed into marks["c"]."""

    def __init__(self, real, marks):
        self.real = real
        self.marks = marks

    def __call__(self, *args):
        import time
        t = time.perf_counter()
        status = self.real(*args)
        self.marks["c"] = (t, time.perf_counter())
        return status


def profile_table(step, steps, rows, cuda):
    from torch.profiler import ProfilerActivity, profile
    step()
    synchronize()
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    with profile(activities=activities, acc_events=True) as prof:
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
    ap.add_argument("--no-pieces", action="store_true", help="skip the pieces of normjit's nodes")
    ap.add_argument("--timeline-steps", type=int, default=2000, help="steps of the timeline (0: none)")
    opt = ap.parse_args()
    dtype = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[opt.dtype]
    m, n = opt.m, opt.n
    dev = opt.device
    cuda = dev.startswith("cuda")
    x = torch.randn(m, n, device=dev, dtype=dtype, requires_grad=True)
    dy = torch.randn(m, n, device=dev, dtype=dtype)
    where = torch.cuda.get_device_name() if cuda else dev
    print("torch %s, %s; M=%d N=%d %s; host us per call, median of 15 x %d"
          % (torch.__version__, where, m, n, opt.dtype, opt.steps))
    print("%-44s %9s %9s %9s %9s %9s %9s" % ("module", "step", "fwd", "grad", "bwd", "node", "bwd-node"))
    steps = {}
    normjit_modules = []
    timeline_cases = []
    for pdtype in (dtype, torch.float32):
        modules = [("normjit LayerNorm", njt.LayerNorm(n, device=dev, dtype=pdtype)),
                   ("torch LayerNorm", torch.nn.LayerNorm(n, device=dev, dtype=pdtype)),
                   ("normjit RMSNorm", njt.RMSNorm(n, device=dev, dtype=pdtype)),
                   ("torch RMSNorm", torch.nn.RMSNorm(n, device=dev, dtype=pdtype)),
                   ("floor: Python autograd.Function (clone)", _CloneModule(n, dev, pdtype)),
                   ("floor, 3 gradients", _CloneModule(n, dev, pdtype, Clone3Function))]
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
            y = module(x)  # one graph, kept for bwd and node
            bwd = host_us(lambda y=y, inputs=inputs: torch.autograd.grad(y, inputs, dy, retain_graph=True,
                                                                         allow_unused=True), opt.steps)
            why = ""
            try:
                d = host_us(node_call(y, dy), opt.steps)
            except Exception as e:  # a node that cannot be called directly
                d = float("nan")
                why = "  (node: %s: %s)" % (type(e).__name__, (str(e).splitlines() or [""])[0][:80])
            steps[label] = step
            if name.startswith("normjit"):
                normjit_modules.append((label, module, step))
            if pdtype == dtype and name != "torch RMSNorm":  # one of each, parameters in x's dtype
                function = {"normjit LayerNorm": _functional._LayerNormFunction,
                            "normjit RMSNorm": _functional._RMSNormFunction,
                            "floor: Python autograd.Function (clone)": CloneFunction,
                            "floor, 3 gradients": Clone3Function}.get(name)
                timeline_cases.append((label, module, function))
            print("%-44s %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f%s" % (label, s, f, s - f, bwd, d, bwd - d, why))
    if cuda:
        print()
        for label, module, step in normjit_modules:
            print("%s: general-path calls in 20 steps (forward, backward): %s" % (label, general_path_calls(step)))
        if not opt.no_pieces:
            for label, module, step in normjit_modules:
                pieces(label, module, x, dy, opt.steps)

    if opt.timeline_steps:
        timeline(timeline_cases, x, dy, opt.timeline_steps)
    for label in ("normjit LayerNorm, %s params" % opt.dtype, "torch LayerNorm, %s params" % opt.dtype,
                  "normjit RMSNorm, %s params" % opt.dtype, "normjit LayerNorm, fp32 params"):
        if label in steps:
            print("\n== torch.profiler, %d steps of %s (self CPU time, every thread)" % (50, label))
            print(profile_table(steps[label], 50, opt.profile_rows, cuda))


if __name__ == "__main__":
    main()
