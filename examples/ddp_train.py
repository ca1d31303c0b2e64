"""Data-parallel training with normjit's norms: one process per GPU, NCCL, the example transformer.

    python3 examples/ddp_train.py [--gpus 2] [--layers 2] [--d 256] [--seq 64] [--batch 8]
    torchrun --nproc-per-node 2 examples/ddp_train.py          (the same, started by torchrun)

Every rank builds the same model (examples/pytorch_transformer.py's Transformer, with
normjit.torch.LayerNorm and RMSNorm) from one seed, wraps it in DistributedDataParallel and takes
one step on its share of one global batch. Rank 0 then computes the same step on one GPU over the
whole global batch twice, with normjit's norms and with torch's, and checks, parameter by
parameter:
  - the DDP gradients (averaged over the ranks by NCCL) against both single-GPU runs: a rank whose
    norms wrote a wrong dgamma/dbeta, or gradients missing from the all-reduce, would differ by
    far more than the tolerance;
  - every rank holds the very same gradients (bit for bit: they are one all-reduced result);
  - the parameters after one SGD step against the single-GPU step;
  - that normjit's backward ran: 2 norms per layer + the final one, each rank, each step.
Tolerance: normwise (max|ddp - single| / max|single|) <= 1e-4 per tensor, in fp32 with TF32 off
and the math attention kernel: the runs differ only in how sums over the batch are split and
ordered (two halves added by the all-reduce against one pass), a few fp32 roundings (~1e-6).
Prints PASS or FAIL; exits 0, 1 on a mismatch or a failed rank, 3 with fewer GPUs than asked for.
NVLink multicast (NCCL_NVLS_ENABLE) is switched off for the run; nothing is downloaded.
"""
import argparse
import datetime
import os
import socket
import sys

# Set before torch (and NCCL) start: NVLink SHARP / multicast stays off on the lent machines.
os.environ["NCCL_NVLS_ENABLE"] = "0"

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
sys.path.insert(0, HERE)

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import normjit.torch as njt  # noqa: E402
from normjit.torch import _launch  # noqa: E402
from pytorch_transformer import VOCAB, Transformer, make_data  # noqa: E402

TOLERANCE = 1e-4
NORMJIT_NORMS = (njt.LayerNorm, njt.RMSNorm)
TORCH_NORMS = (nn.LayerNorm, nn.RMSNorm)


def math_attention():
    """The math SDPA kernel, deterministic in fp32 (or nothing on a torch without the switch)."""
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel
        return sdpa_kernel(SDPBackend.MATH)
    except ImportError:  # older torch: whichever kernel it picks, within the tolerance
        import contextlib
        return contextlib.nullcontext()


class CountNormjitCalls:
    """Counts normjit backward calls where every one of them ends: a fast call's launch
    (_launch._run, which the functional entry and the modules' eager backward both take once a
    problem has a plan) or the general path (_launch._backward). A fast call that hands over to
    the general path (a larger workspace wanted) is counted there only."""

    def __init__(self):
        self.calls = 0
        self._originals = None

    def __enter__(self):
        run, general = self._originals = (_launch._run, _launch._backward)

        def counted_run(*args, **kwargs):
            out = run(*args, **kwargs)
            if out is not None:
                self.calls += 1
            return out

        def counted_general(*args, **kwargs):
            self.calls += 1
            return general(*args, **kwargs)
        _launch._run, _launch._backward = counted_run, counted_general
        return self

    def __exit__(self, *exc):
        _launch._run, _launch._backward = self._originals
        return False


def step(model, tokens, lr):
    """One training step: loss over tokens, backward, then SGD. Returns (grads, params after).
    SGD, not Adam: Adam's first step moves each weight by about lr * sign(grad), so a gradient
    element that rounds to zero differently in two runs would move its weight by 2 lr."""
    optim = torch.optim.SGD(model.parameters(), lr=lr)
    with math_attention():
        logits = model(tokens[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, VOCAB), tokens[:, 1:].reshape(-1))
    optim.zero_grad(set_to_none=True)
    loss.backward()
    grads = [p.grad.detach().clone() for p in model.parameters()]
    optim.step()
    return grads, [p.detach().clone() for p in model.parameters()]


def make_model(opt, norms, init_state, device):
    model = Transformer(opt.layers, opt.d, opt.heads, opt.seq, norms).to(device)
    model.load_state_dict(init_state)
    return model


def normwise(got, ref):
    scale = ref.abs().max().item()
    diff = (got.double() - ref.double()).abs().max().item()
    return diff / scale if scale > 0 else diff


def compare(names, got, ref, what):
    """(worst error, lines for the tensors over the tolerance) of got against ref."""
    worst, bad = 0.0, []
    for name, g, r in zip(names, got, ref):
        err = normwise(g, r) if torch.isfinite(g).all() else float("inf")
        worst = max(worst, err)
        if not err <= TOLERANCE:
            bad.append("  %s %s: normwise error %.3e > %.0e" % (what, name, err, TOLERANCE))
    return worst, bad


def worker(rank, world, opt):
    torch.cuda.set_device(rank)
    device = torch.device("cuda", rank)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dist.init_process_group("nccl", rank=rank, world_size=world, device_id=device,
                            timeout=datetime.timedelta(minutes=5))
    try:
        return run(rank, world, opt, device)
    finally:
        dist.destroy_process_group()


def run(rank, world, opt, device):
    torch.manual_seed(opt.seed)
    init_state = Transformer(opt.layers, opt.d, opt.heads, opt.seq, TORCH_NORMS).state_dict()
    data = make_data(opt.seq, 256, opt.seed).to(device)  # the same pool on every rank (seeded, CPU-drawn)
    tokens = data[: opt.batch]                           # the global batch
    share = opt.batch // world
    local = tokens[rank * share:(rank + 1) * share]

    ddp = nn.parallel.DistributedDataParallel(make_model(opt, NORMJIT_NORMS, init_state, device),
                                              device_ids=[rank])
    with CountNormjitCalls() as counter:
        grads, params = step(ddp, local, opt.lr)
    torch.cuda.synchronize()
    expected_calls = 2 * opt.layers + 1

    # Every rank's all-reduced gradients, flattened, and its count of normjit calls, to every rank.
    flat = torch.cat([g.reshape(-1) for g in grads])
    gathered = [torch.empty_like(flat) for _ in range(world)]
    dist.all_gather(gathered, flat)
    calls = torch.tensor([counter.calls], device=device)
    all_calls = [torch.empty_like(calls) for _ in range(world)]
    dist.all_gather(all_calls, calls)

    ok = True
    if rank == 0:
        names = [n for n, _ in ddp.module.named_parameters()]
        single_nj = step(make_model(opt, NORMJIT_NORMS, init_state, device), tokens, opt.lr)
        single_torch = step(make_model(opt, TORCH_NORMS, init_state, device), tokens, opt.lr)
        lines = []
        print("ddp_train: %d ranks on %s, %d layers, d=%d, seq %d, global batch %d (%d a rank), fp32, torch %s"
              % (world, torch.cuda.get_device_name(device), opt.layers, opt.d, opt.seq, opt.batch, share,
                 torch.__version__))
        for r, c in enumerate(all_calls):
            if c.item() != expected_calls:
                lines.append("  rank %d ran normjit's backward %d times, expected %d (2 norms a layer + the final "
                             "one)" % (r, c.item(), expected_calls))
        for r in range(1, world):
            if not torch.equal(gathered[r], gathered[0]):
                lines.append("  rank %d's gradients differ from rank 0's (max |diff| %.3e): the all-reduce did not "
                             "leave one result" % (r, (gathered[r] - gathered[0]).abs().max().item()))
        for label, (ref_grads, ref_params) in (("single-GPU normjit", single_nj), ("single-GPU torch", single_torch)):
            g_worst, g_bad = compare(names, grads, ref_grads, "gradient of")
            p_worst, p_bad = compare(names, params, ref_params, "parameter after the step,")
            print("  DDP against %-18s: worst normwise error, gradients %.2e, parameters after the step %.2e"
                  % (label, g_worst, p_worst))
            if g_bad or p_bad:
                lines += ["  (against %s)" % label] + g_bad + p_bad
        print("  normjit backward calls a rank: %s (expected %d)" % ([c.item() for c in all_calls], expected_calls))
        ok = not lines
        for line in lines:
            print(line)
        print("ddp_train: %s" % ("PASS" if ok else "FAIL"))
    verdict = torch.tensor([int(ok)], device=device)
    dist.broadcast(verdict, src=0)
    return bool(verdict.item())


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def spawned(rank, world, opt):
    if not worker(rank, world, opt):
        sys.exit(1)


def main():
    ap = argparse.ArgumentParser(description="DDP with normjit's norms against a single-GPU step")
    ap.add_argument("--gpus", type=int, default=2)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--d", type=int, default=256)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--seq", type=int, default=64)
    ap.add_argument("--batch", type=int, default=8, help="the global batch, split evenly over the ranks")
    ap.add_argument("--lr", type=float, default=0.1)
    ap.add_argument("--seed", type=int, default=1234)
    opt = ap.parse_args()

    if "LOCAL_RANK" in os.environ:  # started by torchrun: this process is one rank
        world = int(os.environ["WORLD_SIZE"])
        if opt.batch % world:
            print("ddp_train: the global batch %d does not split over %d ranks" % (opt.batch, world))
            return 1
        return 0 if worker(int(os.environ["LOCAL_RANK"]), world, opt) else 1

    if not torch.cuda.is_available() or torch.cuda.device_count() < opt.gpus:
        print("ddp_train: needs %d CUDA GPUs, torch sees %d" % (opt.gpus, torch.cuda.device_count()
                                                                 if torch.cuda.is_available() else 0))
        return 3
    if opt.batch % opt.gpus:
        print("ddp_train: the global batch %d does not split over %d GPUs" % (opt.batch, opt.gpus))
        return 1
    os.environ["MASTER_ADDR"] = "127.0.0.1"  # one machine, no network beyond it
    os.environ["MASTER_PORT"] = str(free_port())
    try:
        mp.spawn(spawned, args=(opt.gpus, opt), nprocs=opt.gpus, join=True)
    except Exception as e:  # a rank that failed its check (exit 1) or raised
        print("ddp_train: FAIL (%s: %s)" % (type(e).__name__, e))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
