"""normjit.torch on a GPU, against float64 torch autograd of F.layer_norm / F.rms_norm on the
same inputs (the forward: against a float64 reference of y, mean and rstd, ForwardTest). Skips,
saying why, without torch or without CUDA. A few minutes on an H100 (most of it NVRTC compiling
each problem once, and torch.compile; NORMJIT_CACHE_DIR keeps the kernels).

Errors are normwise: max|got - ref| / max|ref| per output, fp32 <= 1e-5, fp16/bf16 <= 1e-2;
NaN or inf never passes. Inputs are fresh random values (never zeros) with a per-row offset so
the mean matters.
"""
import math
import os
import sys
import threading
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

try:
    import torch
    import torch.nn.functional as F
    SKIP = None if torch.cuda.is_available() else "torch.cuda.is_available() is False (no GPU or no CUDA build)"
except ImportError as e:
    torch = None
    SKIP = "PyTorch is not installed (%s)" % e

if torch is not None:
    import normjit.torch as njt
    from normjit.torch import _launch

Ms = (1, 37, 199, 4096)
Ns = (1, 7, 33, 256, 1000, 1024, 4095, 4096, 5003, 8192, 16384, 65536, 262144)
SOME_Ns = (1, 7, 1000, 4095, 8192, 65536)  # for the less common dtype pairs
MAX_ELEMENTS = 1 << 26


def tolerance(dtype):
    return 1e-5 if dtype == torch.float32 else 1e-2


def rel_err(got, ref, scale=None):
    """max|got - ref| / max|ref| (or / scale when given); inf when got has NaN/inf or the shapes differ."""
    if got.shape != ref.shape or not torch.isfinite(got).all():
        return float("inf")
    scale = max(ref.abs().max().item() if ref.numel() else 0.0, scale or 0.0)
    diff = (got.double() - ref).abs().max().item() if got.numel() else 0.0
    return diff / scale if scale > 0 else diff


def rand(shape, dtype, offset=False, gen=None):
    t = torch.randn(shape, device="cuda", dtype=torch.float32, generator=gen)
    if offset and len(shape) > 0 and shape[-1] > 1:
        t = t * (0.5 + torch.rand(shape[:-1] + (1,), device="cuda", generator=gen)) + \
            torch.randn(shape[:-1] + (1,), device="cuda", generator=gen)
    return t.to(dtype)


def reference(kind, dy, x, weight, bias, eps, nd=1):
    """(dx, dweight, dbias) of torch's own norm in float64 on the same (rounded) inputs."""
    shape = x.shape[x.dim() - nd:]
    xd = x.detach().double().requires_grad_()
    wd = None if weight is None else weight.detach().double().requires_grad_()
    bd = None if bias is None else bias.detach().double().requires_grad_()
    if kind == "ln":
        y = F.layer_norm(xd, shape, wd, bd, eps)
    else:
        y = F.rms_norm(xd, shape, wd, eps)
    inputs = [t for t in (xd, wd, bd) if t is not None]
    grads = list(torch.autograd.grad(y, inputs, dy.double()))
    dx = grads.pop(0)
    dw = grads.pop(0) if wd is not None else None
    db = grads.pop(0) if bd is not None else None
    return dx, dw, db


def normalized64(kind, x, mean, rstd):
    """x̂ in float64 from the saved statistics: (x − mean)·rstd, RMSNorm x·rstd (mean unused)."""
    centred = x.double() - mean.double() if kind == "ln" else x.double()
    return centred * rstd.double()


def reduction_scale(terms, nd):
    """The largest, over a parameter gradient's columns, of the 2-norm of the M terms the column
    sums. A column's sum can cancel to almost nothing (N = 1: dβ = Σ dy over the rows) while
    fp32 rounding stays relative to its terms, so dγ and dβ are measured against this too, as
    tests/support/compare.cpp measures them against its term norms."""
    rows = tuple(range(terms.dim() - nd))
    return terms.double().pow(2).sum(rows).sqrt().max().item() if terms.numel() else 0.0


def stats(kind, x, weight, bias, eps, nd=1):
    """The fp32 row statistics the forward saves (as the modules get them)."""
    shape = list(x.shape[x.dim() - nd:])
    if kind == "ln":
        _, mean, rstd = torch.ops.aten.native_layer_norm(x, shape, None, None, eps)
        return mean, rstd
    dims = tuple(range(x.dim() - nd, x.dim()))
    return None, torch.rsqrt(x.float().pow(2).mean(dims, keepdim=True) + eps)


def normjit_backward(kind, dy, x, weight, bias, mean, rstd, nd=1):
    if kind == "ln":
        return njt.layer_norm_backward(dy, x, weight, bias, mean, rstd, normalized_ndim=nd)
    dx, dw = njt.rms_norm_backward(dy, x, weight, rstd, normalized_ndim=nd)
    return dx, dw, None


class WorstErrors:
    """compare(): one result against its reference by normwise relative error, its dtype and
    shape; the worst error per key is printed when the class is done. A subclass sets its own
    worst = {}."""

    @classmethod
    def tearDownClass(cls):
        for key in sorted(cls.worst):
            print("  worst normwise error %-34s %.2e" % (key, cls.worst[key]))

    def compare(self, label, key, name, got, ref, dtype, tol_dtype, scale=None):
        if ref is None:
            self.assertIsNone(got, "%s: %s should be None" % (label, name))
            return
        self.assertEqual(got.dtype, dtype, "%s: %s dtype" % (label, name))
        self.assertEqual(got.shape, ref.shape, "%s: %s shape" % (label, name))
        err = rel_err(got, ref, scale)
        key = "%s %s" % (key, name)
        self.worst[key] = max(self.worst.get(key, 0.0), err)
        self.assertLessEqual(err, tolerance(tol_dtype), "%s: %s normwise error %.3e" % (label, name, err))

    def run_matrix(self, kind, combos):
        """self.check(kind, m, n, x_dtype, w_dtype) over combos of (x_dtype, w_dtype, Ns) and
        every M of Ms, M*N capped at MAX_ELEMENTS; more than 100 cases."""
        count = 0
        for x_dtype, w_dtype, ns in combos:
            for n in ns:
                for m in Ms:
                    if m * n > MAX_ELEMENTS:
                        continue
                    with self.subTest(kind=kind, m=m, n=n, x=str(x_dtype), w=str(w_dtype)):
                        self.check(kind, m, n, x_dtype, w_dtype)
                    count += 1
        self.assertGreater(count, 100)


@unittest.skipIf(SKIP, SKIP)
class BackwardMatrixTest(WorstErrors, unittest.TestCase):
    """The shape x dtype matrix against float64 autograd."""

    worst = {}

    def check(self, kind, m, n, x_dtype, w_dtype, weight=True, bias=True, x=None, dy=None, nd=1):
        eps = 1e-5
        if x is None:
            x = rand((m, n), x_dtype, offset=True)
            dy = rand((m, n), x_dtype)
        shape = x.shape[x.dim() - nd:]
        w = rand(tuple(shape), w_dtype) * 0.5 + 1 if weight else None
        b = rand(tuple(shape), w_dtype) if bias and kind == "ln" else None
        mean, rstd = stats(kind, x, w, b, eps, nd)
        got = normjit_backward(kind, dy, x, w, b, mean, rstd, nd)
        ref = reference(kind, dy, x, w, b, eps, nd)
        label = "%s M=%d N=%d x=%s w=%s" % (kind, m, n, str(x_dtype)[6:], str(w_dtype)[6:])
        # dx = rstd*(g - mean(g) - x^*mean(g*x^)) cancels terms of size rstd*|g|; where they
        # cancel almost exactly (RMSNorm at N = 1: dx = rstd*g*(1 - x^2) with x^2 = 1 - eps/x^2)
        # no fp32 kernel can do better than rounding relative to those terms, so dx's error is
        # measured against the larger of max|dx| and max|rstd*g|. For N > 1 with random inputs
        # the two are of the same order.
        g = dy.double() * (w.double() if w is not None else 1.0)
        dx_scale = (rstd.double() * g).abs().max().item() if g.numel() else 0.0
        xhat = normalized64(kind, x, mean, rstd)
        scales = {"dx": dx_scale, "dweight": reduction_scale(dy.double() * xhat, nd),
                  "dbias": reduction_scale(dy, nd)}
        self.assertEqual(got[0].dtype, x.dtype, label)
        self.assertEqual(got[0].shape, x.shape, label)
        for name, g, r, dt in (("dx", got[0], ref[0], x_dtype), ("dweight", got[1], ref[1], w_dtype),
                               ("dbias", got[2], ref[2], w_dtype)):
            if r is None:
                self.assertIsNone(g, "%s: %s should be None" % (label, name))
                continue
            self.assertEqual(g.dtype, dt, "%s: %s dtype" % (label, name))
            err = rel_err(g, r, scales[name])
            key = "%s %s %s/%s" % (kind, name, str(x_dtype)[6:], str(w_dtype)[6:])
            self.worst[key] = max(self.worst.get(key, 0.0), err)
            self.assertLessEqual(err, tolerance(x_dtype if name == "dx" else min_precision(x_dtype, dt)),
                                 "%s: %s normwise error %.3e" % (label, name, err))

    def matrix(self, kind):
        self.run_matrix(kind, [(torch.float32, torch.float32, Ns), (torch.bfloat16, torch.float32, Ns),
                               (torch.bfloat16, torch.bfloat16, SOME_Ns), (torch.float16, torch.float16, SOME_Ns),
                               (torch.float16, torch.float32, SOME_Ns)])

    def test_layer_norm_matrix(self):
        self.matrix("ln")

    def test_rms_norm_matrix(self):
        self.matrix("rms")

    def test_without_weight_or_bias(self):
        for kind in ("ln", "rms"):
            for weight, bias in ((False, False), (True, False), (False, True)):
                if kind == "rms" and bias:
                    continue
                for n in (7, 1024, 5003):
                    with self.subTest(kind=kind, weight=weight, bias=bias, n=n):
                        self.check(kind, 37, n, torch.bfloat16, torch.float32, weight=weight, bias=bias)

    def test_3d_and_multi_dim_normalized_shape(self):
        for kind in ("ln", "rms"):
            for dtype in (torch.float32, torch.bfloat16):
                x = rand((3, 67, 1024), dtype, offset=True)
                self.check(kind, 201, 1024, dtype, dtype, x=x, dy=rand((3, 67, 1024), dtype))
                x = rand((5, 9, 4, 96), dtype, offset=True)  # normalized_shape (4, 96): N = 384
                self.check(kind, 45, 384, dtype, torch.float32, x=x, dy=rand((5, 9, 4, 96), dtype), nd=2)

    def test_non_contiguous_inputs(self):
        n = 1000
        for kind in ("ln", "rms"):
            for dtype in (torch.float32, torch.float16):
                padded = rand((37, n + 24), dtype, offset=True)[:, :n]            # row stride n + 24: no copy
                strided = rand((37, 2 * n), dtype, offset=True)[:, ::2]            # inner stride 2: copied
                transposed = rand((9, 4, n), dtype, offset=True).transpose(0, 1)   # [4, 9, n] rows out of order
                odd_offset = rand((37 * n + 1,), dtype)[1:].view(37, n)            # 2-byte aligned rows
                for name, x in (("padded", padded), ("strided", strided), ("transposed", transposed),
                                ("odd_offset", odd_offset)):
                    rows = x.numel() // n
                    dy_cols = rand((n, rows), dtype).t().reshape(x.shape)  # column-major: copied
                    dy_padded = rand(tuple(x.shape[:-1]) + (n + 8,), dtype)[..., :n]
                    for dyv in (dy_cols, dy_padded):
                        with self.subTest(kind=kind, dtype=str(dtype), x=name):
                            self.check(kind, x.numel() // n, n, dtype, dtype, x=x, dy=dyv)

    def test_repeated_calls_take_the_fast_path(self):
        # A call's first run takes the general path and leaves a plan for its shapes and dtypes;
        # the next ones with contiguous tensors reuse it (a different way to the same C call),
        # and one of the same shapes with padded rows must not (its row stride is not N).
        cases = [("ln", (4096, 1024), torch.bfloat16, torch.float32),
                 ("rms", (4096, 1024), torch.bfloat16, torch.float32),
                 ("ln", (199, 4095), torch.float32, torch.float32),
                 ("rms", (1, 7), torch.float16, torch.float16),
                 ("ln", (3, 67, 1024), torch.bfloat16, torch.bfloat16)]
        for kind, shape, dtype, w_dtype in cases:
            m, n = shape[0] * (shape[1] if len(shape) == 3 else 1), shape[-1]
            with self.subTest(kind=kind, shape=shape, dtype=str(dtype)):
                x = rand(shape, dtype, offset=True)
                self.check(kind, m, n, dtype, w_dtype, x=x, dy=rand(shape, dtype))
                plans = [p for p in _launch._plans.values() if p.shape == x.shape and p.n == n]
                self.assertTrue(plans, "no plan was kept after the first call")
                for _ in range(2):
                    self.check(kind, m, n, dtype, w_dtype, x=rand(shape, dtype, offset=True), dy=rand(shape, dtype))
                padded = rand(shape[:-1] + (n + 16,), dtype, offset=True)[..., :n]
                self.check(kind, m, n, dtype, w_dtype, x=padded, dy=rand(shape, dtype))

    def test_padded_rows_are_not_copied(self):
        x = rand((37, 1024 + 64), torch.bfloat16)[:, :1024]
        view, stride = _launch._rows(x, 1024, "x")
        self.assertEqual(view.data_ptr(), x.data_ptr())
        self.assertEqual(stride, 1024 + 64)
        view, _ = _launch._rows(rand((37, 2048), torch.bfloat16)[:, ::2], 1024, "x")
        self.assertTrue(view.is_contiguous())

    def test_zero_rows_zero_the_parameter_gradients(self):
        for kind in ("ln", "rms"):
            x = torch.empty(0, 512, device="cuda", dtype=torch.bfloat16)
            w = rand((512,), torch.float32)
            b = rand((512,), torch.float32) if kind == "ln" else None
            mean = torch.empty(0, 1, device="cuda")
            dx, dw, db = normjit_backward(kind, x, x, w, b, mean if kind == "ln" else None, mean)
            torch.cuda.synchronize()
            self.assertEqual(dx.shape, x.shape)
            self.assertTrue(bool((dw == 0).all()))
            if kind == "ln":
                self.assertTrue(bool((db == 0).all()))

    def test_side_stream_and_other_thread(self):
        x = rand((199, 4096), torch.bfloat16, offset=True)
        dy = rand((199, 4096), torch.bfloat16)
        w = rand((4096,), torch.float32) + 1
        mean, rstd = stats("ln", x, w, None, 1e-5)
        ref = reference("ln", dy, x, w, None, 1e-5)
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            got = njt.layer_norm_backward(dy, x, w, None, mean, rstd)
        torch.cuda.current_stream().wait_stream(side)
        self.assertLessEqual(rel_err(got[0], ref[0]), 1e-2)
        out = {}

        def worker():  # a fresh thread: no CUDA context current until something makes one
            try:
                out["got"] = njt.layer_norm_backward(dy, x, w, None, mean, rstd)
                torch.cuda.synchronize()
            except Exception as e:  # surfaced below, in the test's thread
                out["error"] = e
        t = threading.Thread(target=worker)
        t.start()
        t.join()
        self.assertNotIn("error", out)
        self.assertLessEqual(rel_err(out["got"][1], ref[1]), 1e-2)

    def test_errors_say_what_to_do(self):
        x = torch.randn(4, 8)
        with self.assertRaisesRegex(ValueError, "CUDA"):
            njt.layer_norm_backward(x, x, None, None, x[:, 0], x[:, 0])
        xc = torch.randn(4, 8, device="cuda", dtype=torch.float64)
        with self.assertRaisesRegex(TypeError, "float32, float16 and bfloat16"):
            njt.rms_norm_backward(xc, xc, None, xc[:, 0].float())
        xh = xc.half()
        with self.assertRaisesRegex(TypeError, "float32 weight or one of x's"):
            njt.rms_norm_backward(xh, xh, torch.ones(8, device="cuda", dtype=torch.bfloat16), xc[:, 0].float())
        with self.assertRaisesRegex(ValueError, "3 values for 4 rows"):
            njt.rms_norm_backward(xh, xh, None, xc[:3, 0].float())


def min_precision(a, b):
    return a if a != torch.float32 else b


@unittest.skipIf(SKIP, SKIP)
class ModuleTest(unittest.TestCase):
    def pair(self, cls_nj, cls_torch, *args, **kwargs):
        torch.manual_seed(0)
        ours = cls_nj(*args, device="cuda", **kwargs)
        theirs = cls_torch(*args, device="cuda", **kwargs)
        with torch.no_grad():
            for p in theirs.parameters():
                p.copy_(torch.randn_like(p) * 0.3 + 1)
        ours.load_state_dict(theirs.state_dict())
        return ours, theirs

    def test_state_dict_parity(self):
        cases = [(njt.LayerNorm, torch.nn.LayerNorm, (64,), {}),
                 (njt.LayerNorm, torch.nn.LayerNorm, ((4, 64),), {"eps": 1e-6, "bias": False}),
                 (njt.LayerNorm, torch.nn.LayerNorm, (64,), {"elementwise_affine": False}),
                 (njt.RMSNorm, torch.nn.RMSNorm, (64,), {}),
                 (njt.RMSNorm, torch.nn.RMSNorm, ([4, 64],), {"eps": 1e-6, "elementwise_affine": False})]
        for a, b, args, kwargs in cases:
            ours, theirs = a(*args, **kwargs), b(*args, **kwargs)
            self.assertIsInstance(ours, b)
            self.assertEqual(list(ours.state_dict()), list(theirs.state_dict()))
            for k, v in theirs.state_dict().items():
                self.assertEqual(ours.state_dict()[k].shape, v.shape)
            ours.load_state_dict(theirs.state_dict())
            theirs.load_state_dict(ours.state_dict())
            self.assertEqual(repr(ours).split("(", 1)[1], repr(theirs).split("(", 1)[1])

    def grads_match(self, ours, theirs, x, tol, autocast=None):
        results = []
        for mod in (ours, theirs):
            xi = x.detach().clone().requires_grad_()
            mod.zero_grad()
            with torch.autocast("cuda", dtype=autocast, enabled=autocast is not None):
                y = mod(xi)
            g = torch.randn_like(y, generator=torch.Generator("cuda").manual_seed(1))
            y.backward(g)
            results.append((y, xi.grad, [p.grad for p in mod.parameters()]))
        (y1, dx1, dp1), (y2, dx2, dp2) = results
        self.assertEqual(y1.dtype, y2.dtype)
        # y is normjit's forward and torch's, each rounded once to its dtype: one rounding apart at most.
        self.assertLessEqual(rel_err(y1, y2.double()), tol if y1.dtype == torch.float32 else 1e-2)
        self.assertLessEqual(rel_err(dx1, dx2.double()), tol)
        for a, b in zip(dp1, dp2):
            self.assertLessEqual(rel_err(a, b.double()), tol)

    def test_modules_match_torch(self):
        for dtype, tol in ((torch.float32, 1e-5), (torch.bfloat16, 2e-2)):
            x = rand((6, 33, 768), dtype, offset=True)
            ours, theirs = self.pair(njt.LayerNorm, torch.nn.LayerNorm, 768, dtype=dtype)
            self.grads_match(ours, theirs, x, tol)
            ours, theirs = self.pair(njt.RMSNorm, torch.nn.RMSNorm, 768, dtype=dtype)
            self.grads_match(ours, theirs, x, tol)
            ours, theirs = self.pair(njt.LayerNorm, torch.nn.LayerNorm, (33, 768), dtype=dtype, bias=False)
            self.grads_match(ours, theirs, x, tol)
            # Small activations: eps=None must be torch's default (fp32's epsilon, even for bf16).
            ours, theirs = self.pair(njt.RMSNorm, torch.nn.RMSNorm, 768, dtype=dtype)
            self.grads_match(ours, theirs, x * 1e-2, tol)

    def test_modules_under_autocast(self):
        x = rand((8, 512), torch.float32, offset=True)
        for a, b in ((njt.LayerNorm, torch.nn.LayerNorm), (njt.RMSNorm, torch.nn.RMSNorm)):
            ours, theirs = self.pair(a, b, 512)
            self.grads_match(ours, theirs, x.bfloat16(), 1e-5, autocast=torch.bfloat16)
            self.grads_match(ours, theirs, x, 1e-5, autocast=torch.float16)

    def test_backward_goes_through_normjit(self):
        ours, _ = self.pair(njt.LayerNorm, torch.nn.LayerNorm, 256)
        y = ours(rand((4, 256), torch.float32, offset=True).requires_grad_())
        self.assertIn("LayerNormFunction", type(y.grad_fn).__name__)
        ours, _ = self.pair(njt.RMSNorm, torch.nn.RMSNorm, 256)
        y = ours(rand((4, 256), torch.float32).requires_grad_())
        self.assertIn("RMSNormFunction", type(y.grad_fn).__name__)


@unittest.skipIf(SKIP, SKIP)
class CompileAndGraphTest(unittest.TestCase):
    def model(self, dtype):
        torch.manual_seed(0)
        model = torch.nn.Sequential(njt.LayerNorm(1024), torch.nn.Linear(1024, 1024), torch.nn.GELU(),
                                    njt.RMSNorm(1024)).to("cuda", dtype)
        with torch.no_grad():  # not the ones/zeros init: those make some gradients vanish exactly
            for p in model.parameters():
                p.add_(torch.randn_like(p) * 0.2)
        return model

    projections = {}

    def loss(self, y):
        """A fixed random projection of y. Not mean(y^2): a norm's output has a fixed mean square,
        so that loss has a dx of exactly zero up to eps, and any error looks infinitely large.
        The projection is made once per shape, outside any CUDA-graph capture (the warm-ups)."""
        key = tuple(y.shape)
        if key not in self.projections:
            g = torch.Generator(device=y.device).manual_seed(7)
            self.projections[key] = torch.randn(key, device=y.device, generator=g)
        return (y.float() * self.projections[key]).sum()

    def test_torch_compile_fullgraph(self):
        backends = os.environ.get("NORMJIT_TEST_COMPILE_BACKENDS", "aot_eager,inductor").split(",")
        for backend in backends:
            for dtype in (torch.float32, torch.bfloat16):
                with self.subTest(backend=backend, dtype=str(dtype)):
                    torch._dynamo.reset()
                    model = self.model(dtype)
                    x = rand((4, 77, 1024), dtype, offset=True)
                    eager = self.run_model(model, x)
                    compiled = torch.compile(model, fullgraph=True, backend=backend)
                    start = time.time()
                    got = self.run_model(compiled, x)
                    print("  torch.compile(%s, %s): %.1f s" % (backend, dtype, time.time() - start))
                    tol = 1e-4 if dtype == torch.float32 else 3e-2
                    for a, b in zip(got, eager):
                        self.assertLessEqual(rel_err(a, b.double()), tol)

    def test_compiled_graph_calls_normjit(self):
        graphs = []

        def backend(gm, example_inputs):
            from torch._dynamo.backends.common import aot_autograd

            def keep(g, _):
                graphs.append(str(g.graph))
                return g
            return aot_autograd(fw_compiler=keep, bw_compiler=keep)(gm, example_inputs)
        torch._dynamo.reset()
        model = self.model(torch.bfloat16)
        self.run_model(torch.compile(model, fullgraph=True, backend=backend), rand((2, 5, 1024), torch.bfloat16))
        forward, backward = graphs[0], graphs[-1]
        self.assertIn("normjit.layer_norm_forward", forward)
        self.assertIn("normjit.rms_norm_forward", forward)
        self.assertIn("normjit.layer_norm_backward", backward)
        self.assertIn("normjit.rms_norm_backward", backward)

    def run_model(self, model, x):
        xi = x.detach().clone().requires_grad_()
        model.zero_grad()
        y = model(xi)
        self.loss(y).backward()
        return [y, xi.grad] + [p.grad for p in model.parameters()]

    def test_cuda_graph_capture_of_the_ops(self):
        m, n = 199, 4095
        x = rand((m, n), torch.bfloat16, offset=True)
        dy = rand((m, n), torch.bfloat16)
        w = rand((n,), torch.float32) + 1
        b = rand((n,), torch.float32)
        mean, rstd = stats("ln", x, None, None, 1e-5)
        _, rrstd = stats("rms", x, None, None, 1e-5)
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):  # warm-up: compiles and loads the kernels outside capture
            njt.layer_norm_backward(dy, x, w, b, mean, rstd)
            njt.rms_norm_backward(dy, x, w, rrstd)
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            ln = njt.layer_norm_backward(dy, x, w, b, mean, rstd)
            rms = njt.rms_norm_backward(dy, x, w, rrstd)
        for _ in range(2):  # new inputs in place, then replay
            x.copy_(rand((m, n), torch.bfloat16, offset=True))
            dy.copy_(rand((m, n), torch.bfloat16))
            mean.copy_(stats("ln", x, None, None, 1e-5)[0])
            rstd.copy_(stats("ln", x, None, None, 1e-5)[1])
            rrstd.copy_(stats("rms", x, None, None, 1e-5)[1])
            graph.replay()
            torch.cuda.synchronize()
            ref = reference("ln", dy, x, w, b, 1e-5)
            for g, r in zip(ln, ref):
                self.assertLessEqual(rel_err(g, r), 1e-2)
            ref = reference("rms", dy, x, w, None, 1e-5)
            for g, r in zip(rms, ref[:2]):
                self.assertLessEqual(rel_err(g, r), 1e-2)

    def test_cuda_graph_capture_of_forward_and_backward(self):
        model = self.model(torch.bfloat16)
        x = rand((8, 64, 1024), torch.bfloat16, offset=True).requires_grad_()
        params = list(model.parameters())
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(2):
                grads = torch.autograd.grad(self.loss(model(x)), [x] + params)
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            grads = torch.autograd.grad(self.loss(model(x)), [x] + params)
        with torch.no_grad():
            x.copy_(rand((8, 64, 1024), torch.bfloat16, offset=True))
        graph.replay()
        torch.cuda.synchronize()
        eager = torch.autograd.grad(self.loss(model(x)), [x] + params)
        for g, e in zip(grads, eager):
            self.assertLessEqual(rel_err(g, e.double()), 1e-2)


@unittest.skipIf(SKIP, SKIP)
class EagerPathTest(unittest.TestCase):
    """The eager calls (normjit's implementation called directly, the Functions through autograd's
    C entry point with packed statistics, the plans' fast calls) against the registered ops through
    the dispatcher (what torch.compile's graphs call): the same kernels on the same inputs, so the
    same bits."""

    def same(self, label, got, want):
        self.assertEqual(len(got), len(want), label)
        for i, (a, b) in enumerate(zip(got, want)):
            if b is None or b.numel() == 0:  # an absent gradient: None here, an empty marker from the op
                self.assertTrue(a is None or a.numel() == 0, "%s: output %d" % (label, i))
                continue
            self.assertEqual((a.shape, a.dtype), (b.shape, b.dtype), "%s: output %d" % (label, i))
            self.assertTrue(torch.equal(a, b), "%s: output %d differs" % (label, i))

    def test_functions_match_the_ops_bit_for_bit(self):
        ops = torch.ops.normjit
        for dtype, w_dtype in ((torch.bfloat16, torch.float32), (torch.float32, torch.float32),
                               (torch.float16, torch.float16)):
            for shape in ((4, 256), (3, 67, 1024), (4096, 1024)):
                n = shape[-1]
                x = rand(shape, dtype, offset=True)
                dy = rand(shape, dtype)
                w = rand((n,), w_dtype) + 1
                b = rand((n,), w_dtype)
                for rnd in ("general", "planned"):
                    label = "%s %s/%s %s" % (rnd, str(dtype)[6:], str(w_dtype)[6:], list(shape))
                    with self.subTest(label=label):
                        ln = njt.layer_norm_forward(x, w, b, 1e-5)
                        self.same("layer_norm_forward " + label, ln, ops.layer_norm_forward(x, w, b, 1e-5, 1))
                        rms = njt.rms_norm_forward(x, w, 1e-5)
                        self.same("rms_norm_forward " + label, rms, ops.rms_norm_forward(x, w, 1e-5, 1))
                        self.same("layer_norm_backward " + label, njt.layer_norm_backward(dy, x, w, b, ln[1], ln[2]),
                                  ops.layer_norm_backward(dy, x, w, b, ln[1], ln[2], 1))
                        self.same("rms_norm_backward " + label, njt.rms_norm_backward(dy, x, w, rms[1]),
                                  ops.rms_norm_backward(dy, x, w, rms[1], 1))

    def test_modules_match_the_ops_path_bit_for_bit(self):
        from unittest import mock
        from normjit.torch import _functional, _ops

        def traced(*tensors):  # every call takes the ops, as under tracing
            return False
        # (module, its kwargs, parameter dtype, x's dtype, autocast dtype or None)
        cases = [(cls, kwargs, dtype, dtype, None)
                 for cls, kwargs in ((njt.LayerNorm, {}), (njt.LayerNorm, dict(bias=False)), (njt.RMSNorm, {}))
                 for dtype in (torch.bfloat16, torch.float32)]
        # Under autocast x is cast to fp32 first; eager calls then enter no autocast block.
        cases += [(njt.LayerNorm, {}, torch.float32, torch.bfloat16, torch.bfloat16),
                  (njt.RMSNorm, {}, torch.float32, torch.float16, torch.float16)]
        for cls, kwargs, p_dtype, x_dtype, autocast in cases:
            label = "%s(%s) params %s x %s autocast %s" % (cls.__name__, kwargs, p_dtype, x_dtype, autocast)
            with self.subTest(label=label):
                torch.manual_seed(0)
                module = cls(1024, device="cuda", dtype=p_dtype, **kwargs)
                with torch.no_grad():
                    for p in module.parameters():
                        p.copy_(torch.randn_like(p) * 0.3 + 1)
                x = rand((8, 77, 1024), x_dtype, offset=True)
                g = rand((8, 77, 1024), torch.float32)

                def step():
                    xi = x.clone().requires_grad_()
                    module.zero_grad()
                    with torch.autocast("cuda", dtype=autocast or torch.bfloat16, enabled=autocast is not None):
                        y = module(xi)
                    y.backward(g.to(y.dtype))
                    return [y, xi.grad] + [p.grad for p in module.parameters()]
                eager = [step(), step()]  # the general path, then the plans' fast calls
                with mock.patch.object(_functional, "_plain_eager", traced), \
                        mock.patch.object(_ops, "_plain_eager", traced):
                    through_ops = step()
                self.same(label + " general", eager[0], through_ops)
                self.same(label + " planned", eager[1], through_ops)


# ---- several GPUs ------------------------------------------------------------------------------

MULTI_SKIP = SKIP or (None if torch.cuda.device_count() >= 2 else
                      "needs 2 CUDA devices, torch sees %d" % torch.cuda.device_count())


@unittest.skipIf(MULTI_SKIP, MULTI_SKIP)
class MultiGpuTest(unittest.TestCase):
    """cuda:0 and cuda:1 in one process: the kernels are loaded per device (per CUDA context), and
    the plans, workspaces and context handling of normjit.torch are per device too."""

    def case(self, kind, device, m, n, dtype):
        """(args, reference) with every tensor on cuda:device."""
        with torch.cuda.device(device):
            x = rand((m, n), dtype, offset=True)
            dy = rand((m, n), dtype)
            w = rand((n,), torch.float32) + 1
            b = rand((n,), torch.float32) if kind == "ln" else None
            mean, rstd = stats(kind, x, w, b, 1e-5)
            return (kind, dy, x, w, b, mean, rstd), reference(kind, dy, x, w, b, 1e-5)

    def check(self, got, ref, device, dtype, label):
        for name, g, r in zip(("dx", "dweight", "dbias"), got, ref):
            if r is None:
                self.assertIsNone(g, label)
                continue
            self.assertEqual(g.device, torch.device("cuda", device), "%s: %s" % (label, name))
            err = rel_err(g, r)
            self.assertLessEqual(err, tolerance(dtype), "%s: %s normwise error %.3e" % (label, name, err))

    def test_two_devices_from_two_threads(self):
        shapes = ((1, 1000, torch.float32), (37, 4096, torch.bfloat16), (4096, 1024, torch.bfloat16),
                  (199, 8192, torch.float16))
        cases = {d: [self.case(kind, d, *shape) + (shape,) for kind in ("ln", "rms") for shape in shapes]
                 for d in (0, 1)}
        for d in (0, 1):
            torch.cuda.synchronize(d)
        results, errors = {}, {}
        start = threading.Barrier(2, timeout=120)

        def worker(d):
            try:
                torch.cuda.set_device(d)  # this thread's current device; the other thread has the other
                side = torch.cuda.Stream(d)
                side.wait_stream(torch.cuda.current_stream(d))
                out = []
                start.wait()
                # Rounds 0 and 1 on the default stream (the general path, then the fast one), round 2
                # on a side stream (a workspace of its own).
                for rnd in range(3):
                    with torch.cuda.stream(side if rnd == 2 else torch.cuda.current_stream(d)):
                        for args, ref, shape in cases[d]:
                            label = "cuda:%d round %d %s M=%d N=%d %s" % ((d, rnd, args[0]) + shape)
                            out.append((normjit_backward(*args), ref, shape[2], label))
                torch.cuda.synchronize(d)
                results[d] = out
            except Exception as e:  # surfaced in the test's thread
                errors[d] = e
                start.abort()
        threads = [threading.Thread(target=worker, args=(d,)) for d in (0, 1)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, {})
        for d in (0, 1):
            self.assertEqual(len(results[d]), 3 * len(cases[d]))
            for got, ref, dtype, label in results[d]:
                self.check(got, ref, d, dtype, label)

    def test_device_1_tensors_while_device_0_is_current(self):
        # torch's default stream is CUDA's legacy stream (handle 0) on every device: the device
        # then comes from the thread's current context, which normjit must make cuda:1's here.
        for kind in ("ln", "rms"):
            args, ref = self.case(kind, 1, 199, 4096, torch.bfloat16)
            torch.cuda.synchronize(1)
            with torch.cuda.device(0):
                for rnd in range(2):  # the general path, then the fast one
                    got = normjit_backward(*args)
                    torch.cuda.synchronize(1)
                    self.check(got, ref, 1, torch.bfloat16, "%s round %d" % (kind, rnd))

    def test_modules_on_device_1(self):
        # Autograd runs cuda:1's backward on a worker thread of its own.
        for ours_cls, theirs_cls in ((njt.LayerNorm, torch.nn.LayerNorm), (njt.RMSNorm, torch.nn.RMSNorm)):
            torch.manual_seed(0)
            theirs = theirs_cls(1024, device="cuda:1")
            with torch.no_grad():
                for p in theirs.parameters():
                    p.copy_(torch.randn_like(p) * 0.3 + 1)
            ours = ours_cls(1024, device="cuda:1")
            ours.load_state_dict(theirs.state_dict())
            x = torch.randn(8, 77, 1024, device="cuda:1")
            g = torch.randn(8, 77, 1024, device="cuda:1")
            grads = []
            for mod in (ours, theirs):
                xi = x.clone().requires_grad_()
                mod(xi).backward(g)
                grads.append([xi.grad] + [p.grad for p in mod.parameters()])
            for a, b in zip(*grads):
                self.assertEqual(a.device, torch.device("cuda", 1))
                self.assertLessEqual(rel_err(a, b.double()), 1e-5)


# ---- fused options (docs/FUSED.md) -------------------------------------------------------------

def fused_reference(kind, dy, h, x_in, weight, bias, eps, dresidual=None, rowscale=None, keep=None, p=0.0,
                    zero_centered=False):
    """(dx_in, dweight, dbias, dresidual_in) by float64 autograd of the fused forward

        a = x_in * keep / (1 - p) * rowscale[row];   h = a + residual;   y = norm(h), gamma (+ 1 if zero-centred)

    with the loss's gradients dy (of y) and dresidual (of h, from the residual stream: h is also an
    output). residual is taken as h - a in float64, so the forward rebuilds the very h the kernel
    is given (x's dtype) up to float64 rounding; dresidual_in is the gradient of residual (= dh)."""
    n = h.shape[-1]
    xd = x_in.detach().double().requires_grad_()
    a = xd
    if keep is not None:
        a = a * keep.double() / (1 - p)
    if rowscale is not None:
        a = a * rowscale.detach().double().reshape(-1, 1)
    residual = (h.detach().double() - a.detach()).requires_grad_()
    hd = a + residual
    wd = None if weight is None else weight.detach().double().requires_grad_()
    bd = None if bias is None else bias.detach().double().requires_grad_()
    w_used = wd + 1 if zero_centered and wd is not None else wd
    if kind == "ln":
        y = F.layer_norm(hd, (n,), w_used, bd, eps)
    else:
        y = F.rms_norm(hd, (n,), w_used, eps)
    outputs, grads = [y], [dy.double()]
    if dresidual is not None:
        outputs.append(hd)
        grads.append(dresidual.double())
    inputs = [t for t in (xd, residual, wd, bd) if t is not None]
    got = list(torch.autograd.grad(outputs, inputs, grads))
    dx, dres_in = got.pop(0), got.pop(0)
    dw = got.pop(0) if wd is not None else None
    db = got.pop(0) if bd is not None else None
    return dx, dw, db, dres_in


def pack_bits(keep):
    """keep [M, N] bool -> [M, ceil(N/8)] uint8, bit j of byte k = element 8k + j. The bits past N
    are set (the kernel must ignore them)."""
    m, n = keep.shape
    nb = (n + 7) // 8
    padded = torch.ones(m, nb * 8, dtype=torch.int64, device=keep.device)
    padded[:, :n] = keep.to(torch.int64)
    weights = torch.tensor([1, 2, 4, 8, 16, 32, 64, 128], dtype=torch.int64, device=keep.device)
    return (padded.view(m, nb, 8) * weights).sum(-1).to(torch.uint8)


def poison_allocator(*likes):
    """NaN-filled blocks of the outputs' sizes, freed back into PyTorch's caching allocator, so the
    outputs normjit allocates next most likely start as NaN: an element the kernel never writes
    then fails the comparison (NaN never passes) instead of holding a stale plausible value."""
    blocks = [torch.full_like(t, float("nan"), memory_format=torch.contiguous_format) for t in likes for _ in (0, 1)]
    del blocks


# (kind, M, N, x dtype, weight dtype, options). Options: residual, inplace (dx written into
# dresidual, a padded view), zc (zero-centred weight), rowscale, dropout ("bool", "uint8" bytes
# or "bits"), p, dh (return_dresidual_in). A sample: every option, both norms, both dtypes,
# M in {1, 37, 4096} and N in {33, 4096} each appear, without the whole product (compile time).
FUSED_CASES = [
    ("ln", 37, 4096, "bf16", "fp32", dict(residual=True)),
    ("rms", 4096, 33, "fp32", "fp32", dict(residual=True, dh=True)),  # dh is dx itself here
    ("ln", 1, 33, "fp32", "fp32", dict(zc=True)),
    ("rms", 37, 4096, "bf16", "bf16", dict(zc=True)),
    ("ln", 4096, 33, "bf16", "bf16", dict(rowscale=True, dh=True)),
    ("rms", 1, 4096, "bf16", "fp32", dict(rowscale=True)),
    ("ln", 37, 4096, "fp32", "fp32", dict(dropout="bool", dh=True)),
    ("rms", 37, 33, "bf16", "fp32", dict(dropout="uint8", p=0.5)),
    ("ln", 37, 33, "bf16", "fp32", dict(dropout="bits", dh=True)),
    ("rms", 4096, 4096, "fp32", "fp32", dict(dropout="bits", dh=True)),
    ("ln", 37, 33, "fp32", "fp32", dict(residual=True, rowscale=True, dh=True)),
    ("ln", 4096, 4096, "bf16", "fp32", dict(residual=True, zc=True, rowscale=True, dropout="bits", dh=True)),
    ("rms", 37, 4096, "bf16", "bf16", dict(residual=True, zc=True, rowscale=True, dropout="bool", dh=True)),
    ("ln", 1, 4096, "fp32", "fp32", dict(residual=True, zc=True, rowscale=True, dropout="uint8")),
    ("rms", 4096, 33, "bf16", "fp32", dict(residual=True, zc=True, rowscale=True, dropout="bits", dh=True)),
    # In place: dx accumulated into dresidual.
    ("ln", 37, 4096, "bf16", "fp32", dict(residual=True, inplace=True, rowscale=True, dh=True)),
    ("rms", 4096, 33, "fp32", "fp32", dict(residual=True, inplace=True)),
    ("ln", 1, 33, "bf16", "bf16", dict(residual=True, inplace=True, zc=True, rowscale=True, dropout="bits")),
    ("rms", 37, 4096, "bf16", "fp32", dict(residual=True, inplace=True, dropout="bool", p=0.1, dh=True)),
    ("ln", 4096, 4096, "fp32", "fp32", dict(residual=True, inplace=True, dropout="uint8", dh=True)),
]

if torch is not None:
    DTYPES = {"bf16": torch.bfloat16, "fp32": torch.float32, "fp16": torch.float16}


def fused_inputs(kind, m, n, x_dtype, w_dtype, opts, eps=1e-5):
    """Fresh random inputs of one case: the tensors the kernel gets (h as x, its statistics, the
    options' tensors) and x_in, which only the reference sees."""
    zc = opts.get("zc", False)
    t = {"h": rand((m, n), x_dtype, offset=True), "x_in": rand((m, n), x_dtype), "dy": rand((m, n), x_dtype)}
    # Zero-centred: the stored weight is gamma - 1, so small values around 0 (gamma around 1).
    t["w"] = rand((n,), w_dtype) * 0.5 + (0.0 if zc else 1.0)
    t["b"] = rand((n,), w_dtype) if kind == "ln" else None
    t["mean"], t["rstd"] = stats(kind, t["h"], None, None, eps)
    t["dres"] = rand((m, n), x_dtype) if opts.get("residual") else None
    t["rowscale"] = torch.rand(m, device="cuda") + 0.5 if opts.get("rowscale") else None
    t["p"] = opts.get("p", 0.25) if opts.get("dropout") else 0.0
    t["keep"] = torch.rand((m, n), device="cuda") >= t["p"] if opts.get("dropout") else None
    return t


def fused_kwargs(t, opts):
    kwargs = {"zero_centered_weight": opts.get("zc", False), "return_dresidual_in": opts.get("dh", False)}
    if t["dres"] is not None:
        kwargs["dresidual"] = t["dres"]
        kwargs["inplace_residual"] = opts.get("inplace", False)
    if t["rowscale"] is not None:
        kwargs["rowscale"] = t["rowscale"]
    form = opts.get("dropout")
    if form == "bool":
        kwargs["dropout_mask"] = t["keep"]
    elif form == "uint8":  # nonzero = kept: any nonzero byte, not only 1
        kwargs["dropout_mask"] = t["keep"].to(torch.uint8) * torch.randint(1, 256, t["keep"].shape, device="cuda",
                                                                           dtype=torch.uint8)
    elif form == "bits":
        kwargs["dropout_mask_bits"] = pack_bits(t["keep"])
    if form:
        kwargs["dropout_p"] = t["p"]
    return kwargs


def split_outputs(kind, got, want_dh):
    """{dx, dweight, dbias, dh} from the returned tuple (its order: dx, dweight[, dbias][, dh])."""
    got = list(got)
    expected = (3 if kind == "ln" else 2) + (1 if want_dh else 0)
    assert len(got) == expected, "%s returned %d outputs, expected %d" % (kind, len(got), expected)
    out = {"dx": got.pop(0), "dweight": got.pop(0)}
    out["dbias"] = got.pop(0) if kind == "ln" else None
    out["dh"] = got.pop(0) if want_dh else None
    return out


@unittest.skipIf(SKIP, SKIP)
class FusedOptionsTest(WorstErrors, unittest.TestCase):
    """The fused keyword arguments against float64 autograd of the fused forward (fused_reference).
    A few seconds: FUSED_CASES is a sample, one kernel compile each."""

    worst = {}

    def check_case(self, kind, m, n, x_name, w_name, opts):
        eps = 1e-5
        x_dtype, w_dtype = DTYPES[x_name], DTYPES[w_name]
        t = fused_inputs(kind, m, n, x_dtype, w_dtype, opts, eps)
        kwargs = fused_kwargs(t, opts)
        dres_value = None if t["dres"] is None else t["dres"].clone()  # the call may overwrite it (in place)
        pad = None
        if opts.get("inplace"):
            # A padded view (row stride n + 8): dx is written with dresidual's stride, the padding untouched.
            pad = torch.full((m, n + 8), 3.0, device="cuda", dtype=x_dtype)
            view = pad[:, :n]
            view.copy_(t["dres"])
            kwargs["dresidual"] = view
        want_dh = opts.get("dh", False)
        poison_allocator(t["h"], t["h"], t["w"], t["w"])  # dx, dh, dweight, dbias
        if kind == "ln":
            got = njt.layer_norm_backward(t["dy"], t["h"], t["w"], t["b"], t["mean"], t["rstd"], **kwargs)
        else:
            got = njt.rms_norm_backward(t["dy"], t["h"], t["w"], t["rstd"], **kwargs)
        torch.cuda.synchronize()
        got = split_outputs(kind, got, want_dh)
        ref_dx, ref_dw, ref_db, ref_dh = fused_reference(kind, t["dy"], t["h"], t["x_in"], t["w"], t["b"], eps,
                                                         dres_value, t["rowscale"], t["keep"], t["p"],
                                                         opts.get("zc", False))
        label = "%s M=%d N=%d x=%s w=%s %s" % (kind, m, n, x_name, w_name, sorted(opts.items()))
        if opts.get("inplace"):
            self.assertIs(got["dx"], kwargs["dresidual"], "%s: dx should be dresidual itself" % label)
            self.assertTrue(bool((pad[:, n:] == 3.0).all()), "%s: the padding of dresidual's rows changed" % label)
        if want_dh and not (opts.get("rowscale") or opts.get("dropout")):
            self.assertIs(got["dh"], got["dx"], "%s: without rowscale and dropout dh is dx" % label)
        for name, g, r, dt in (("dx", got["dx"], ref_dx, x_dtype), ("dweight", got["dweight"], ref_dw, w_dtype),
                               ("dbias", got["dbias"], ref_db, w_dtype),
                               ("dh", got["dh"], ref_dh if want_dh else None, x_dtype)):
            if r is None:
                self.assertIsNone(g, "%s: %s should be None" % (label, name))
                continue
            self.assertEqual(g.dtype, dt, "%s: %s dtype" % (label, name))
            self.assertEqual(g.shape, r.shape, "%s: %s shape" % (label, name))
            err = rel_err(g, r)
            key = "%s %s %s/%s" % (kind, name, x_name, w_name)
            self.worst[key] = max(self.worst.get(key, 0.0), err)
            tol = tolerance(x_dtype if name in ("dx", "dh") else min_precision(x_dtype, dt))
            self.assertLessEqual(err, tol, "%s: %s normwise error %.3e" % (label, name, err))

    def test_fused_options(self):
        for case in FUSED_CASES:
            with self.subTest(case=str(case)):
                self.check_case(*case)

    def test_no_options_is_the_plain_call(self):
        # Every keyword at its default: the option-free path, same results as before.
        t = fused_inputs("ln", 37, 33, torch.float32, torch.float32, {})
        a = njt.layer_norm_backward(t["dy"], t["h"], t["w"], t["b"], t["mean"], t["rstd"], dresidual=None,
                                    inplace_residual=False, zero_centered_weight=False, rowscale=None,
                                    dropout_mask=None, dropout_mask_bits=None, dropout_p=0.0,
                                    return_dresidual_in=False)
        b = njt.layer_norm_backward(t["dy"], t["h"], t["w"], t["b"], t["mean"], t["rstd"])
        self.assertEqual(len(a), 3)
        for x, y in zip(a, b):
            self.assertLessEqual(rel_err(x, y.double()), 1e-6)

    def test_fused_errors_say_what_to_do(self):
        m, n = 4, 40
        x = rand((m, n), torch.bfloat16, offset=True)
        w = torch.ones(n, device="cuda")
        _, rstd = stats("rms", x, None, None, 1e-5)
        keep = torch.rand(m, n, device="cuda") > 0.5

        def call(**kwargs):
            return njt.rms_norm_backward(x, x, w, rstd, **kwargs)
        # Python's own checks: what the C API cannot see.
        with self.assertRaisesRegex(TypeError, r"dresidual is torch.float32 but dx is torch.bfloat16"):
            call(dresidual=x.float())
        with self.assertRaisesRegex(ValueError, r"dresidual has shape \(4, 39\)"):
            call(dresidual=x[:, :39])
        with self.assertRaisesRegex(ValueError, "dresidual is on cpu"):
            call(dresidual=x.cpu())
        with self.assertRaisesRegex(ValueError, "inplace_residual=True but dresidual is None"):
            call(inplace_residual=True)
        with self.assertRaisesRegex(ValueError, "no row layout normjit can write in place"):
            call(dresidual=x.t().contiguous().t(), inplace_residual=True)  # column-major: inner stride 4
        with self.assertRaisesRegex(ValueError, "rowscale has 3 values for 4 rows"):
            call(rowscale=torch.ones(3, device="cuda"))
        with self.assertRaisesRegex(TypeError, "rowscale is torch.int64"):
            call(rowscale=torch.ones(4, device="cuda", dtype=torch.int64))
        with self.assertRaisesRegex(TypeError, "dropout_mask is torch.float32"):
            call(dropout_mask=keep.float(), dropout_p=0.5)
        with self.assertRaisesRegex(ValueError, "dropout_mask_bits has shape"):
            call(dropout_mask_bits=keep.to(torch.uint8), dropout_p=0.5)
        with self.assertRaisesRegex(ValueError, "both dropout_mask and dropout_mask_bits"):
            call(dropout_mask=keep, dropout_mask_bits=pack_bits(keep), dropout_p=0.5)
        with self.assertRaisesRegex(ValueError, "dropout_p = 0.5 but no keep-mask"):
            call(dropout_p=0.5)
        # The C API's checks, raised as NormjitError with its message.
        import normjit
        with self.assertRaisesRegex(normjit.NormjitError, r"dropout_p = 1\.0+ is not in \[0, 1\)"):
            call(dropout_mask=keep, dropout_p=1.0)
        with self.assertRaisesRegex(normjit.NormjitError, "zero_centered_weight is set but has_weight is false"):
            njt.rms_norm_backward(x, x, None, rstd, zero_centered_weight=True)

    def test_fused_under_torch_compile_fullgraph(self):
        backends = os.environ.get("NORMJIT_TEST_COMPILE_BACKENDS", "aot_eager,inductor").split(",")
        m, n, dtype = 37, 4096, torch.bfloat16

        def ln_step(dy, x, w, b, mean, rstd, dres, rs, keep):
            return njt.layer_norm_backward(dy, x, w, b, mean, rstd, dresidual=dres, rowscale=rs, dropout_mask=keep,
                                           dropout_p=0.25, return_dresidual_in=True)

        def rms_step_inplace(dy, x, w, rstd, dres, bits):
            _, dw, dh = njt.rms_norm_backward(dy, x, w, rstd, dresidual=dres, inplace_residual=True,
                                              zero_centered_weight=True, dropout_mask_bits=bits, dropout_p=0.25,
                                              return_dresidual_in=True)
            return dw, dh
        for backend in backends:
            with self.subTest(backend=backend):
                torch._dynamo.reset()
                opts = dict(residual=True, rowscale=True, dropout="bool", dh=True)
                t = fused_inputs("ln", m, n, dtype, torch.float32, opts)
                got = torch.compile(ln_step, fullgraph=True, backend=backend)(
                    t["dy"], t["h"], t["w"], t["b"], t["mean"], t["rstd"], t["dres"], t["rowscale"], t["keep"])
                ref = fused_reference("ln", t["dy"], t["h"], t["x_in"], t["w"], t["b"], 1e-5, t["dres"],
                                      t["rowscale"], t["keep"], t["p"])
                self.assertEqual(len(got), 4)
                for name, g, r in zip(("dx", "dweight", "dbias", "dh"), got, ref):
                    self.assertLessEqual(rel_err(g, r), 1e-2, "%s: %s" % (backend, name))

                opts = dict(residual=True, zc=True, dropout="bits", dh=True)
                t = fused_inputs("rms", m, n, dtype, torch.float32, opts)
                dres = t["dres"].clone()
                dw, dh = torch.compile(rms_step_inplace, fullgraph=True, backend=backend)(
                    t["dy"], t["h"], t["w"], t["rstd"], dres, pack_bits(t["keep"]))
                ref = fused_reference("rms", t["dy"], t["h"], t["x_in"], t["w"], None, 1e-5, t["dres"], None,
                                      t["keep"], t["p"], zero_centered=True)
                self.assertLessEqual(rel_err(dres, ref[0]), 1e-2, "%s: dx written into dresidual" % backend)
                self.assertLessEqual(rel_err(dw, ref[1]), 1e-2, "%s: dweight" % backend)
                self.assertLessEqual(rel_err(dh, ref[3]), 1e-2, "%s: dh" % backend)

    def test_compiled_graph_calls_the_fused_ops(self):
        graphs = []

        def backend(gm, example_inputs):
            graphs.append(str(gm.graph))
            return gm.forward

        def step(dy, x, w, rstd, dres, rs):
            a = njt.rms_norm_backward(dy, x, w, rstd, dresidual=dres, rowscale=rs, return_dresidual_in=True)
            b = njt.rms_norm_backward(dy, x, w, rstd, dresidual=dres.clone(), inplace_residual=True)
            return a + b
        torch._dynamo.reset()
        t = fused_inputs("rms", 4, 33, torch.float32, torch.float32, dict(residual=True, rowscale=True))
        torch.compile(step, fullgraph=True, backend=backend)(t["dy"], t["h"], t["w"], t["rstd"], t["dres"],
                                                             t["rowscale"])
        self.assertIn("normjit.rms_norm_backward_fused", graphs[-1])
        self.assertIn("normjit.rms_norm_backward_fused_inplace", graphs[-1])



# ---- gated RMSNorm and parallel norms (docs/FUSED.md) ------------------------------------------

GATE_PARALLEL_Ms = (1, 37, 199)
GATE_PARALLEL_Ns = (1, 33, 4096, 8192)


def silu_grad(z):
    s = torch.sigmoid(z)
    return s * (1 + z * (1 - s))


def gated_reference(gate, dy, x, z, weight, eps):
    """(dx, dweight, dz) by float64 autograd of Mamba-2's gated RMSNorm:
        after_norm:  y = rms_norm(x) * weight * silu(z)      (rstd of x)
        before_norm: y = rms_norm(x * silu(z)) * weight      (rstd of x * silu(z))"""
    n = x.shape[-1]
    xd = x.detach().double().requires_grad_()
    zd = z.detach().double().requires_grad_()
    wd = weight.detach().double().requires_grad_()
    if gate == "after_norm":
        y = F.rms_norm(xd, (n,), wd, eps) * F.silu(zd)
    else:
        y = F.rms_norm(xd * F.silu(zd), (n,), wd, eps)
    return torch.autograd.grad(y, (xd, wd, zd), dy.double())


def gated_inputs(gate, m, n, x_dtype, w_dtype, eps=1e-5):
    """x, z, dy, weight, and the fp32 rstd the forward saves: of x after the norm, of x * silu(z)
    before it."""
    t = {"x": rand((m, n), x_dtype, offset=True), "z": rand((m, n), x_dtype), "dy": rand((m, n), x_dtype),
         "w": rand((n,), w_dtype) * 0.5 + 1}
    normed = t["x"].double()
    if gate == "before_norm":
        normed = normed * F.silu(t["z"].double())
    t["rstd"] = torch.rsqrt(normed.pow(2).mean(-1, keepdim=True) + eps).float()
    return t


def gated_scales(gate, t):
    """The terms dx and dz cancel down from (see BackwardMatrixTest.check): at N = 1 the exact dx
    (and, before the norm, dz) is ~eps while the kernel rounds terms of size rstd * |g|; and
    dweight's over the rows (reduction_scale): (dx, dz, dweight) scales."""
    x, z, dy, w, rstd = (t[k].double() for k in ("x", "z", "dy", "w", "rstd"))
    # dweight's terms, both orders: dy·x·silu(z)·rstd (after the norm x̂·silu(z), before it x̂ of x·silu(z)).
    dw_scale = reduction_scale(dy * x * F.silu(z) * rstd, 1)
    if gate == "after_norm":
        g = rstd * dy * F.silu(z) * w
        return g.abs().max().item(), None, dw_scale
    g = rstd * dy * w
    return (g * F.silu(z)).abs().max().item(), (g * x * silu_grad(z)).abs().max().item(), dw_scale


def parallel_reference(kind, dy, dy1, x, w, b, w1, b1, eps):
    """(dx, dweight, dbias, dweight1, dbias1) by float64 autograd of y = norm(x; w, b) and
    y1 = norm(x; w1, b1), loss = (y * dy).sum() + (y1 * dy1).sum(); None for an absent parameter."""
    n = x.shape[-1]
    xd = x.detach().double().requires_grad_()
    params = [None if p is None else p.detach().double().requires_grad_() for p in (w, b, w1, b1)]
    if kind == "ln":
        ys = (F.layer_norm(xd, (n,), params[0], params[1], eps), F.layer_norm(xd, (n,), params[2], params[3], eps))
    else:
        ys = (F.rms_norm(xd, (n,), params[0], eps), F.rms_norm(xd, (n,), params[2], eps))
    inputs = [xd] + [p for p in params if p is not None]
    got = list(torch.autograd.grad(ys, inputs, (dy.double(), dy1.double())))
    return [got.pop(0)] + [None if p is None else got.pop(0) for p in params]


@unittest.skipIf(SKIP, SKIP)
class GateAndParallelTest(WorstErrors, unittest.TestCase):
    """rms_norm_backward(z=, gate=) and the parallel-norm keywords (dy1=, weight1=, bias1=) against
    float64 autograd; M x N x dtype as GATE_PARALLEL_Ms x GATE_PARALLEL_Ns x (bf16, fp32)."""

    worst = {}

    def cases(self):
        for x_dtype in (torch.bfloat16, torch.float32):
            for n in GATE_PARALLEL_Ns:
                # bf16 x: the weight in x's dtype at some N, fp32 at the others.
                w_dtype = torch.bfloat16 if x_dtype == torch.bfloat16 and n in (33, 8192) else torch.float32
                for m in GATE_PARALLEL_Ms:
                    yield m, n, x_dtype, w_dtype

    def check_gated(self, gate, m, n, x_dtype, w_dtype):
        eps = 1e-5
        t = gated_inputs(gate, m, n, x_dtype, w_dtype, eps)
        poison_allocator(t["x"], t["x"], t["w"])  # dx, dz, dweight
        got = njt.rms_norm_backward(t["dy"], t["x"], t["w"], t["rstd"], z=t["z"], gate=gate)
        torch.cuda.synchronize()
        self.assertEqual(len(got), 3, "(dx, dweight, dz)")
        ref = gated_reference(gate, t["dy"], t["x"], t["z"], t["w"], eps)
        dx_scale, dz_scale, dw_scale = gated_scales(gate, t)
        label = "%s M=%d N=%d x=%s w=%s" % (gate, m, n, str(x_dtype)[6:], str(w_dtype)[6:])
        key = "%s %s/%s" % (gate, str(x_dtype)[6:], str(w_dtype)[6:])
        self.compare(label, key, "dx", got[0], ref[0], x_dtype, x_dtype, dx_scale)
        self.compare(label, key, "dweight", got[1], ref[1], w_dtype, min_precision(x_dtype, w_dtype), dw_scale)
        self.compare(label, key, "dz", got[2], ref[2], x_dtype, x_dtype, dz_scale)

    def check_parallel(self, kind, m, n, x_dtype, w_dtype, weight=True, bias=True):
        eps = 1e-5
        x, dy, dy1 = rand((m, n), x_dtype, offset=True), rand((m, n), x_dtype), rand((m, n), x_dtype)
        w, w1 = (rand((n,), w_dtype) * 0.5 + 1 if weight else None for _ in (0, 1))
        b, b1 = (rand((n,), w_dtype) if bias and kind == "ln" else None for _ in (0, 1))
        mean, rstd = stats(kind, x, None, None, eps)
        poison_allocator(x, w if w is not None else x, w if w is not None else x)
        if kind == "ln":
            got = njt.layer_norm_backward(dy, x, w, b, mean, rstd, dy1=dy1, weight1=w1, bias1=b1)
            self.assertEqual(len(got), 5, "(dx, dweight, dbias, dweight1, dbias1)")
        else:
            got = njt.rms_norm_backward(dy, x, w, rstd, dy1=dy1, weight1=w1)
            self.assertEqual(len(got), 3, "(dx, dweight, dweight1)")
            got = (got[0], got[1], None, got[2], None)
        torch.cuda.synchronize()
        ref = parallel_reference(kind, dy, dy1, x, w, b, w1, b1, eps)
        g = dy.double() * (1.0 if w is None else w.double()) + dy1.double() * (1.0 if w1 is None else w1.double())
        dx_scale = (rstd.double() * g).abs().max().item()
        # Each parameter gradient's column sums its rows' terms, which can cancel (N = 1: x̂ = ±1):
        # measured against the terms' norm too (reduction_scale), as BackwardMatrixTest does.
        xhat = normalized64(kind, x, mean, rstd)
        terms = (dy.double() * xhat, dy, dy1.double() * xhat, dy1)
        label = "parallel %s M=%d N=%d x=%s w=%s" % (kind, m, n, str(x_dtype)[6:], str(w_dtype)[6:])
        key = "parallel %s %s/%s" % (kind, str(x_dtype)[6:], str(w_dtype)[6:])
        self.compare(label, key, "dx", got[0], ref[0], x_dtype, x_dtype, dx_scale)
        for name, i in (("dweight", 1), ("dbias", 2), ("dweight1", 3), ("dbias1", 4)):
            self.compare(label, key, name, got[i], ref[i], w_dtype, min_precision(x_dtype, w_dtype),
                         reduction_scale(terms[i - 1], 1))

    def test_gated_rms_norm(self):
        for gate in ("after_norm", "before_norm"):
            for case in self.cases():
                with self.subTest(gate=gate, case=str(case)):
                    self.check_gated(gate, *case)

    def test_parallel_norms(self):
        for kind in ("ln", "rms"):
            for case in self.cases():
                with self.subTest(kind=kind, case=str(case)):
                    self.check_parallel(kind, *case)

    def test_parallel_without_weight_or_bias(self):
        self.check_parallel("ln", 37, 33, torch.float32, torch.float32, weight=False, bias=False)
        self.check_parallel("ln", 37, 4096, torch.bfloat16, torch.float32, weight=False)
        self.check_parallel("rms", 37, 4096, torch.bfloat16, torch.float32, weight=False)

    def test_gate_with_residual_and_dh(self):
        # The gate acts on the norm's own gradient; dresidual is added after it (docs/FUSED.md).
        m, n, eps = 37, 4096, 1e-5
        for gate in ("after_norm", "before_norm"):
            with self.subTest(gate=gate):
                t = gated_inputs(gate, m, n, torch.float32, torch.float32, eps)
                dres = rand((m, n), torch.float32)
                rs = torch.rand(m, device="cuda") + 0.5
                dx, dw, dz, dh = njt.rms_norm_backward(t["dy"], t["x"], t["w"], t["rstd"], z=t["z"], gate=gate,
                                                       dresidual=dres, rowscale=rs, return_dresidual_in=True)
                ref = gated_reference(gate, t["dy"], t["x"], t["z"], t["w"], eps)
                ref_dh = ref[0] + dres.double()
                self.assertLessEqual(rel_err(dh, ref_dh), 1e-5, "%s: dh" % gate)
                self.assertLessEqual(rel_err(dx, ref_dh * rs.double().reshape(-1, 1)), 1e-5, "%s: dx" % gate)
                self.assertLessEqual(rel_err(dw, ref[1]), 1e-5, "%s: dweight" % gate)
                self.assertLessEqual(rel_err(dz, ref[2]), 1e-5, "%s: dz" % gate)

    def test_gate_and_parallel_errors_say_what_to_do(self):
        m, n = 4, 40
        x = rand((m, n), torch.bfloat16, offset=True)
        w = torch.ones(n, device="cuda")
        _, rstd = stats("rms", x, None, None, 1e-5)
        with self.assertRaisesRegex(ValueError, "z is on cpu"):
            njt.rms_norm_backward(x, x, w, rstd, z=x.cpu(), gate="after_norm")
        with self.assertRaisesRegex(TypeError, "z is torch.float32 but x is torch.bfloat16"):
            njt.rms_norm_backward(x, x, w, rstd, z=x.float(), gate="after_norm")
        with self.assertRaisesRegex(ValueError, "z is given but gate is None"):
            njt.rms_norm_backward(x, x, w, rstd, z=x)
        with self.assertRaisesRegex(ValueError, "is not a gate"):
            njt.rms_norm_backward(x, x, w, rstd, z=x, gate=True)
        with self.assertRaisesRegex(ValueError, r"dy1 has shape \(4, 39\)"):
            njt.rms_norm_backward(x, x, w, rstd, dy1=x[:, :39], weight1=w)
        with self.assertRaisesRegex(ValueError, "weight1 is None but weight is given"):
            njt.rms_norm_backward(x, x, w, rstd, dy1=x)
        import normjit
        with self.assertRaisesRegex(normjit.NormjitError, "parallel and gate are both set"):
            njt.rms_norm_backward(x, x, w, rstd, z=x, gate="after_norm", dy1=x, weight1=w)

    def test_gate_and_parallel_under_torch_compile_fullgraph(self):
        backends = os.environ.get("NORMJIT_TEST_COMPILE_BACKENDS", "aot_eager,inductor").split(",")
        m, n, eps = 37, 4096, 1e-5

        def gated(dy, x, w, rstd, z):
            return njt.rms_norm_backward(dy, x, w, rstd, z=z, gate="before_norm")

        def parallel(dy, x, w, b, mean, rstd, dy1, w1, b1):
            return njt.layer_norm_backward(dy, x, w, b, mean, rstd, dy1=dy1, weight1=w1, bias1=b1)
        for backend in backends:
            with self.subTest(backend=backend):
                torch._dynamo.reset()
                t = gated_inputs("before_norm", m, n, torch.bfloat16, torch.float32, eps)
                got = torch.compile(gated, fullgraph=True, backend=backend)(t["dy"], t["x"], t["w"], t["rstd"],
                                                                           t["z"])
                ref = gated_reference("before_norm", t["dy"], t["x"], t["z"], t["w"], eps)
                self.assertEqual(len(got), 3)
                for name, g, r in zip(("dx", "dweight", "dz"), got, ref):
                    self.assertLessEqual(rel_err(g, r), 1e-2, "%s gated: %s" % (backend, name))

                x, dy, dy1 = rand((m, n), torch.bfloat16, offset=True), rand((m, n), torch.bfloat16), \
                    rand((m, n), torch.bfloat16)
                w, b, w1, b1 = (rand((n,), torch.float32) for _ in range(4))
                mean, rstd = stats("ln", x, None, None, eps)
                got = torch.compile(parallel, fullgraph=True, backend=backend)(dy, x, w, b, mean, rstd, dy1, w1, b1)
                ref = parallel_reference("ln", dy, dy1, x, w, b, w1, b1, eps)
                self.assertEqual(len(got), 5)
                for name, g, r in zip(("dx", "dweight", "dbias", "dweight1", "dbias1"), got, ref):
                    self.assertLessEqual(rel_err(g, r), 1e-2, "%s parallel: %s" % (backend, name))


# ---- recompute from the output (docs/FUSED.md) -------------------------------------------------

def recompute_inputs(kind, m, n, x_dtype, w_dtype, weight=True, bias=True, eps=1e-5, zero_columns=()):
    """x, dy, weight, bias (None where absent), the fp32 mean/rstd the forward saves, and its output
    y = x_hat * weight + bias computed in float64 from them and rounded to x's dtype; weight 0 in
    zero_columns. The reference is autograd at x, so the error includes y's rounding, amplified by
    |bias / weight| in x-hat = (y - bias) / weight: the weight is kept in [0.75, 1.25] and the bias
    is a value of x's dtype (at x_hat = 0, LayerNorm with N = 1, y is then bias exactly)."""
    t = {"x": rand((m, n), x_dtype, offset=True), "dy": rand((m, n), x_dtype),
         "w": (torch.rand(n, device="cuda") * 0.5 + 0.75).to(w_dtype) if weight else None,
         "b": (rand((n,), torch.float32) * 0.5).to(x_dtype).to(w_dtype) if bias and kind == "ln" else None}
    if zero_columns:
        t["w"][list(zero_columns)] = 0
    t["mean"], t["rstd"] = stats(kind, t["x"], None, None, eps)
    xhat = normalized64(kind, t["x"], t["mean"], t["rstd"])
    y = xhat * (1.0 if t["w"] is None else t["w"].double()) + (0.0 if t["b"] is None else t["b"].double())
    t["y"] = y.to(x_dtype)
    return t


@unittest.skipIf(SKIP, SKIP)
class RecomputeTest(WorstErrors, unittest.TestCase):
    """layer_norm_backward(y=) / rms_norm_backward(y=): x-hat recovered from the forward's output,
    against float64 autograd of the norm at x (the error includes y's rounding to x's dtype, which
    is what this mode gives up); M x N as the gate's tests, bf16, fp16 and fp32, with and without
    x as the fallback where the weight is 0, and such zero columns."""

    worst = {}

    def run_case(self, kind, t, with_x):
        x = t["x"] if with_x else None
        poison_allocator(t["x"], t["w"] if t["w"] is not None else t["x"],
                         t["b"] if t["b"] is not None else t["x"])
        if kind == "ln":
            got = njt.layer_norm_backward(t["dy"], x, t["w"], t["b"], t["mean"] if with_x else None, t["rstd"],
                                          y=t["y"])
            self.assertEqual(len(got), 3, "(dx, dweight, dbias)")
        else:
            got = njt.rms_norm_backward(t["dy"], x, t["w"], t["rstd"], y=t["y"])
            self.assertEqual(len(got), 2, "(dx, dweight)")
            got = (got[0], got[1], None)
        torch.cuda.synchronize()
        return got

    def check(self, kind, m, n, x_dtype, w_dtype, with_x=False, weight=True, bias=True):
        eps = 1e-5
        t = recompute_inputs(kind, m, n, x_dtype, w_dtype, weight, bias, eps)
        got = self.run_case(kind, t, with_x)
        ref = reference(kind, t["dy"], t["x"], t["w"], t["b"], eps)
        g = t["dy"].double() * (1.0 if t["w"] is None else t["w"].double())
        dx_scale = (t["rstd"].double() * g).abs().max().item()
        label = "recompute %s M=%d N=%d x=%s w=%s%s" % (kind, m, n, str(x_dtype)[6:], str(w_dtype)[6:],
                                                        " with x" if with_x else "")
        key = "recompute %s %s/%s" % (kind, str(x_dtype)[6:], str(w_dtype)[6:])
        # Against the terms' norm too (reduction_scale: RMSNorm at N = 1 sums ±dy over the rows).
        xhat = normalized64(kind, t["x"], t["mean"], t["rstd"])
        self.compare(label, key, "dx", got[0], ref[0], x_dtype, x_dtype, dx_scale)
        self.compare(label, key, "dweight", got[1], ref[1], w_dtype, min_precision(x_dtype, w_dtype),
                     reduction_scale(t["dy"].double() * xhat, 1))
        self.compare(label, key, "dbias", got[2], ref[2], w_dtype, min_precision(x_dtype, w_dtype),
                     reduction_scale(t["dy"], 1))

    def cases(self):
        for x_dtype in (torch.bfloat16, torch.float16, torch.float32):
            for n in GATE_PARALLEL_Ns:
                w_dtype = x_dtype if x_dtype != torch.float32 and n in (33, 8192) else torch.float32
                for m in GATE_PARALLEL_Ms:
                    yield m, n, x_dtype, w_dtype

    def test_recompute_from_output(self):
        for kind in ("ln", "rms"):
            for i, case in enumerate(self.cases()):
                with self.subTest(kind=kind, case=str(case)):
                    self.check(kind, *case, with_x=i % 3 == 1)

    def test_recompute_without_weight_or_bias(self):
        self.check("ln", 37, 33, torch.float32, torch.float32, weight=False, bias=False)
        self.check("ln", 37, 4096, torch.bfloat16, torch.float32, weight=False)
        self.check("ln", 37, 4096, torch.bfloat16, torch.float32, bias=False)
        self.check("rms", 37, 4096, torch.bfloat16, torch.float32, weight=False)

    def test_columns_where_the_weight_is_zero(self):
        eps = 1e-5
        for kind in ("ln", "rms"):
            for m, n, x_dtype in ((37, 33, torch.float32), (199, 4096, torch.bfloat16), (1, 8192, torch.float32)):
                zero = (0, n // 3, n - 1)
                for with_x in (True, False):
                    with self.subTest(kind=kind, m=m, n=n, with_x=with_x):
                        t = recompute_inputs(kind, m, n, x_dtype, torch.float32, eps=eps, zero_columns=zero)
                        got = self.run_case(kind, t, with_x)
                        ref = reference(kind, t["dy"], t["x"], t["w"], t["b"], eps)
                        keep = torch.ones(n, dtype=torch.bool, device="cuda")
                        keep[list(zero)] = with_x  # with x every column is exact
                        tol = tolerance(x_dtype)
                        label = "%s M=%d N=%d %s" % (kind, m, n, "with x" if with_x else "without x")
                        for name, g, r in (("dx", got[0], ref[0]), ("dweight", got[1], ref[1]),
                                           ("dbias", got[2], ref[2])):
                            if r is None:
                                continue
                            # Only dx and dweight of the zero columns are NaN without x; dbias never.
                            nan_columns = ~keep if name != "dbias" else torch.zeros_like(keep)
                            nan = torch.isnan(g.double())
                            self.assertTrue(torch.equal(nan.any(0) if g.dim() > 1 else nan, nan_columns),
                                            "%s: %s NaN in the wrong columns" % (label, name))
                            if g.dim() > 1:
                                self.assertTrue(torch.equal(nan.all(0), nan_columns), "%s: %s NaN rows" % (label, name))
                            finite = ~nan_columns
                            self.assertLessEqual(rel_err(g[..., finite], r[..., finite]), tol, "%s: %s" % (label, name))

    def test_recompute_errors_say_what_to_do(self):
        m, n = 4, 40
        t = recompute_inputs("ln", m, n, torch.bfloat16, torch.float32)
        with self.assertRaisesRegex(ValueError, "x is None; pass x, or the forward's output as y="):
            njt.layer_norm_backward(t["dy"], None, t["w"], t["b"], None, t["rstd"])
        with self.assertRaisesRegex(TypeError, "y is torch.float32 but x is torch.bfloat16"):
            njt.layer_norm_backward(t["dy"], t["x"], t["w"], t["b"], t["mean"], t["rstd"], y=t["y"].float())
        with self.assertRaisesRegex(ValueError, "y is on cpu"):
            njt.layer_norm_backward(t["dy"], t["x"], t["w"], t["b"], t["mean"], t["rstd"], y=t["y"].cpu())
        import normjit
        with self.assertRaisesRegex(normjit.NormjitError, "mean is NULL but x is given with recompute_from_output"):
            njt.layer_norm_backward(t["dy"], t["x"], t["w"], t["b"], None, t["rstd"], y=t["y"])
        with self.assertRaisesRegex(normjit.NormjitError, "recompute_from_output and parallel are both set"):
            njt.layer_norm_backward(t["dy"], None, t["w"], t["b"], None, t["rstd"], y=t["y"], dy1=t["dy"],
                                    weight1=t["w"], bias1=t["b"])
        r = recompute_inputs("rms", m, n, torch.bfloat16, torch.float32)
        with self.assertRaisesRegex(normjit.NormjitError, "recompute_from_output and gate after-norm are both set"):
            njt.rms_norm_backward(r["dy"], None, r["w"], r["rstd"], y=r["y"], z=r["x"], gate="after_norm")

    def test_recompute_under_torch_compile_fullgraph(self):
        backends = os.environ.get("NORMJIT_TEST_COMPILE_BACKENDS", "aot_eager,inductor").split(",")
        m, n, eps = 37, 4096, 1e-5

        def layer_norm(dy, w, b, rstd, y):
            return njt.layer_norm_backward(dy, None, w, b, None, rstd, y=y)

        def rms_norm(dy, x, w, rstd, y):
            return njt.rms_norm_backward(dy, x, w, rstd, y=y)
        for backend in backends:
            with self.subTest(backend=backend):
                torch._dynamo.reset()
                t = recompute_inputs("ln", m, n, torch.bfloat16, torch.float32, eps=eps)
                got = torch.compile(layer_norm, fullgraph=True, backend=backend)(t["dy"], t["w"], t["b"], t["rstd"],
                                                                                 t["y"])
                ref = reference("ln", t["dy"], t["x"], t["w"], t["b"], eps)
                self.assertEqual(len(got), 3)
                for name, g, r in zip(("dx", "dweight", "dbias"), got, ref):
                    self.assertLessEqual(rel_err(g, r), 1e-2, "%s ln: %s" % (backend, name))
                t = recompute_inputs("rms", m, n, torch.float32, torch.float32, eps=eps)
                got = torch.compile(rms_norm, fullgraph=True, backend=backend)(t["dy"], t["x"], t["w"], t["rstd"],
                                                                               t["y"])
                ref = reference("rms", t["dy"], t["x"], t["w"], None, eps)
                self.assertEqual(len(got), 2)
                for name, g, r in zip(("dx", "dweight"), got, ref):
                    self.assertLessEqual(rel_err(g, r), 1e-5, "%s rms: %s" % (backend, name))


# ---- normjit's forward (docs/FORWARD.md) -------------------------------------------------------

FORWARD_Ns = (1, 33, 1000, 4096, 8192, 65536)
STATS_TOL = 1e-5  # mean and rstd are fp32 results of exact inputs, whatever x's dtype


def forward_reference(kind, x, weight, bias, eps, nd=1):
    """(y, mean, rstd, y_scale, rms) in float64 on the same (rounded) inputs: mean (None for RMSNorm)
    and rstd in the forward's shape (leading dims, then ones); y_scale, max |x_hat * weight| + |bias|,
    what y's error is measured against (y itself may cancel); rms, each row's root mean square,
    the floor the mean's error is measured against (a mean-free row's mean is ~0, its rounding
    is that of the values summed)."""
    dims = tuple(range(x.dim() - nd, x.dim()))
    xd = x.detach().double()
    square_mean = xd.square().mean(dims, keepdim=True)
    if kind == "ln":
        mean = xd.mean(dims, keepdim=True)
        rstd = ((xd - mean).square().mean(dims, keepdim=True) + eps).rsqrt()
        xhat = (xd - mean) * rstd
    else:
        mean = None
        rstd = (square_mean + eps).rsqrt()
        xhat = xd * rstd
    term = xhat if weight is None else xhat * weight.detach().double()
    y = term if bias is None else term + bias.detach().double()
    size = term.abs() if bias is None else term.abs() + bias.detach().double().abs()
    return y, mean, rstd, size.max().item() if size.numel() else 0.0, square_mean.sqrt()


def stat_shape(x, nd=1):
    return tuple(x.shape[:x.dim() - nd]) + (1,) * nd


def normjit_forward(kind, x, weight, bias, eps, nd=1):
    """(y, mean or None, rstd) by normjit.torch's forward functions."""
    if kind == "ln":
        return njt.layer_norm_forward(x, weight, bias, eps, normalized_ndim=nd)
    y, rstd = njt.rms_norm_forward(x, weight, eps, normalized_ndim=nd)
    return y, None, rstd


def float64_copy(model):
    """The model in float64: normjit's modules then run torch's own norms (float64 is not a kernel
    dtype), so it is the float64 torch reference of the very same parameters."""
    import copy
    return copy.deepcopy(model).double()


@unittest.skipIf(SKIP, SKIP)
class ForwardTest(WorstErrors, unittest.TestCase):
    """normjit's forward (layer_norm_forward, rms_norm_forward and the modules, which now use it)
    against float64 references: y, mean and rstd, the shape x dtype matrix, strides, absent
    parameters, the saved statistics driving normjit's backward, modules through autograd,
    torch.compile(fullgraph=True) and CUDA graphs. Outputs are poisoned (NaN) first."""

    worst = {}

    def check_stats(self, label, key, name, got, ref, floor=None):
        self.assertIsNotNone(got, "%s: %s is None" % (label, name))
        self.assertEqual(got.dtype, torch.float32, "%s: %s dtype" % (label, name))
        self.assertEqual(tuple(got.shape), tuple(ref.shape), "%s: %s shape" % (label, name))
        if not bool(torch.isfinite(got).all()):
            err = float("inf")
        elif got.numel() == 0:
            err = 0.0
        else:
            bound = ref.abs() if floor is None else torch.maximum(ref.abs(), floor)
            err = ((got.double() - ref).abs() / bound).max().item()
        key = "%s %s" % (key, name)
        self.worst[key] = max(self.worst.get(key, 0.0), err)
        self.assertLessEqual(err, STATS_TOL, "%s: %s worst per-row relative error %.3e" % (label, name, err))

    def check(self, kind, m, n, x_dtype, w_dtype, weight=True, bias=True, x=None, nd=1, eps=1e-5, w=None):
        if x is None:
            x = rand((m, n), x_dtype, offset=True)
        shape = tuple(x.shape[x.dim() - nd:])
        if w is None and weight:
            w = rand(shape, w_dtype) * 0.5 + 1
        b = rand(shape, w_dtype) if bias and kind == "ln" else None
        stats_like = torch.empty(stat_shape(x, nd), device="cuda")
        poison_allocator(x, stats_like, stats_like)  # y, mean, rstd
        got = normjit_forward(kind, x, w, b, eps, nd)
        torch.cuda.synchronize()
        ref_y, ref_mean, ref_rstd, y_scale, rms = forward_reference(kind, x, w, b, eps, nd)
        label = "forward %s x%s N=%d x=%s w=%s%s%s" % (kind, list(x.shape), n, str(x_dtype)[6:],
                                                      str(w.dtype)[6:] if w is not None else "-",
                                                      "" if w is not None else " no weight",
                                                      "" if b is not None or kind == "rms" else " no bias")
        key = "forward %s %s/%s" % (kind, str(x_dtype)[6:], str(w_dtype)[6:])
        self.compare(label, key, "y", got[0], ref_y, x.dtype, x.dtype, y_scale)
        self.assertTrue(got[0].is_contiguous(), "%s: y is contiguous" % label)
        self.check_stats(label, key, "rstd", got[2], ref_rstd)
        if kind == "ln":
            self.check_stats(label, key, "mean", got[1], ref_mean, rms)
        else:
            self.assertIsNone(got[1], "%s: RMSNorm has no mean" % label)
        return x, w, b, got

    def matrix(self, kind):
        self.run_matrix(kind, [(x, w, FORWARD_Ns) for x, w in
                               ((torch.float32, torch.float32), (torch.bfloat16, torch.float32),
                                (torch.bfloat16, torch.bfloat16), (torch.float16, torch.float16),
                                (torch.float16, torch.float32))])

    def test_layer_norm_forward_matrix(self):
        self.matrix("ln")

    def test_rms_norm_forward_matrix(self):
        self.matrix("rms")

    def test_without_weight_or_bias(self):
        for kind in ("ln", "rms"):
            for weight, bias in ((False, False), (True, False), (False, True)):
                if kind == "rms" and bias:
                    continue
                for n in (1, 1000, 65536):
                    for x_dtype in (torch.bfloat16, torch.float32):
                        with self.subTest(kind=kind, weight=weight, bias=bias, n=n, x=str(x_dtype)):
                            self.check(kind, 37, n, x_dtype, torch.float32, weight=weight, bias=bias)

    def test_3d_and_multi_dim_normalized_shape(self):
        for kind in ("ln", "rms"):
            for dtype in (torch.float32, torch.bfloat16, torch.float16):
                with self.subTest(kind=kind, dtype=str(dtype)):
                    self.check(kind, 201, 1024, dtype, dtype, x=rand((3, 67, 1024), dtype, offset=True))
                    # normalized_shape (4, 96): N = 384, statistics [5, 9, 1, 1]
                    self.check(kind, 45, 384, dtype, torch.float32, x=rand((5, 9, 4, 96), dtype, offset=True), nd=2)

    def test_non_contiguous_inputs(self):
        n = 1000
        for kind in ("ln", "rms"):
            for dtype in (torch.float32, torch.float16, torch.bfloat16):
                padded = rand((37, n + 24), dtype, offset=True)[:, :n]            # row stride n + 24: no copy
                strided = rand((37, 2 * n), dtype, offset=True)[:, ::2]            # inner stride 2: copied
                transposed = rand((9, 4, n), dtype, offset=True).transpose(0, 1)   # [4, 9, n] rows out of order
                odd_offset = rand((37 * n + 1,), dtype)[1:].view(37, n)            # rows aligned to one element
                for name, x in (("padded", padded), ("strided", strided), ("transposed", transposed),
                                ("odd_offset", odd_offset)):
                    with self.subTest(kind=kind, dtype=str(dtype), x=name):
                        self.check(kind, x.numel() // n, n, dtype, dtype, x=x)
                with self.subTest(kind=kind, dtype=str(dtype), weight="strided"):
                    self.check(kind, 37, n, dtype, torch.float32, w=(rand((2 * n,), torch.float32) + 1)[::2])

    def test_eps(self):
        x = rand((37, 4096), torch.bfloat16) * 1e-3  # small values: eps shows
        for kind in ("ln", "rms"):
            for eps in (0.0, 1e-2):
                with self.subTest(kind=kind, eps=eps):
                    self.check(kind, 37, 4096, torch.bfloat16, torch.float32, x=x, eps=eps)
        # eps None: torch's RMSNorm default, fp32's machine epsilon (also for 16-bit x).
        y, rstd = njt.rms_norm_forward(x, None, None)
        ref = forward_reference("rms", x, None, None, torch.finfo(torch.float32).eps)
        self.assertLessEqual(rel_err(rstd, ref[2]), STATS_TOL)
        self.assertLessEqual(rel_err(y, ref[0]), 1e-2)

    def test_zero_rows(self):
        for kind in ("ln", "rms"):
            x = torch.empty(0, 512, device="cuda", dtype=torch.bfloat16)
            y, mean, rstd = normjit_forward(kind, x, rand((512,), torch.float32), None, 1e-5)
            self.assertEqual((y.shape, rstd.shape), ((0, 512), (0, 1)))
            self.assertEqual(mean is None, kind == "rms")

    def test_saved_statistics_drive_normjits_backward(self):
        # The raw round trip: what layer_norm_forward saves is what layer_norm_backward takes.
        for kind in ("ln", "rms"):
            for shape, dtype, w_dtype in (((37, 4096), torch.bfloat16, torch.float32),
                                          ((3, 67, 1024), torch.float32, torch.float32),
                                          ((199, 1), torch.float16, torch.float16),
                                          ((1, 65536), torch.bfloat16, torch.bfloat16)):
                with self.subTest(kind=kind, shape=shape, dtype=str(dtype)):
                    n = shape[-1]
                    x = rand(shape, dtype, offset=True)
                    x, w, b, (_, mean, rstd) = self.check(kind, x.numel() // n, n, dtype, w_dtype, x=x)
                    dy = rand(shape, dtype)
                    got = normjit_backward(kind, dy, x, w, b, mean, rstd)
                    ref = reference(kind, dy, x, w, b, 1e-5)
                    g = dy.double() * w.double()
                    dx_scale = (rstd.double() * g).abs().max().item()
                    label = "round trip %s %s %s" % (kind, list(shape), dtype)
                    key = "round trip %s %s/%s" % (kind, str(dtype)[6:], str(w_dtype)[6:])
                    self.compare(label, key, "dx", got[0], ref[0], dtype, dtype, dx_scale)
                    self.compare(label, key, "dweight", got[1], ref[1], w_dtype, min_precision(dtype, w_dtype))
                    self.compare(label, key, "dbias", got[2], ref[2], w_dtype, min_precision(dtype, w_dtype))

    # ---- the modules: normjit's forward, then normjit's backward through autograd -------------

    def module_round_trip(self, module, x, label):
        """Runs module on x (forward and backward through autograd) and checks y, dx and the
        parameters' gradients against float64 autograd of torch's norm with the same values."""
        reference_module = float64_copy(module)
        xi = x.detach().clone().requires_grad_()
        module.zero_grad()
        poison_allocator(x, x)  # y, dx
        y = module(xi)
        g = rand(tuple(y.shape), y.dtype)
        y.backward(g)
        torch.cuda.synchronize()
        xd = x.detach().double().requires_grad_()
        yd = reference_module(xd)
        yd.backward(g.double())
        key = "module %s %s" % (type(module).__name__, str(x.dtype)[6:])
        self.compare(label, key, "y", y, yd.detach(), x.dtype, x.dtype)  # y in x's dtype, as the forward stores it
        self.compare(label, key, "dx", xi.grad, xd.grad, x.dtype, x.dtype)
        for (name, p), (_, pd) in zip(module.named_parameters(), reference_module.named_parameters()):
            self.compare(label, key, "d" + name, p.grad, pd.grad, p.dtype, min_precision(x.dtype, p.dtype))

    def test_modules_round_trip(self):
        from unittest import mock
        from normjit.torch import _launch_forward
        cases = [(njt.LayerNorm, dict()), (njt.LayerNorm, dict(bias=False)),
                 (njt.LayerNorm, dict(elementwise_affine=False)), (njt.RMSNorm, dict()),
                 (njt.RMSNorm, dict(elementwise_affine=False)), (njt.RMSNorm, dict(eps=1e-6))]
        for cls, kwargs in cases:
            for x_dtype, p_dtype in ((torch.float32, torch.float32), (torch.bfloat16, torch.bfloat16),
                                     (torch.float16, torch.float16), (torch.bfloat16, torch.float32)):
                for shape in ((6, 33, 768), (4096, 1024), (1, 8192)):
                    label = "%s(%s) x=%s params=%s %s" % (cls.__name__, kwargs, x_dtype, p_dtype, shape)
                    with self.subTest(label=label):
                        torch.manual_seed(0)
                        module = cls(shape[-1], device="cuda", dtype=p_dtype, **kwargs)
                        with torch.no_grad():  # not the ones/zeros init: those hide a swapped weight and bias
                            for p in module.parameters():
                                p.copy_(torch.randn_like(p) * 0.3 + 1)
                        x = rand(shape, x_dtype, offset=True)
                        # Each launch goes through one of these: the general path or a plan's fast call.
                        with mock.patch.object(_launch_forward, "_forward", wraps=_launch_forward._forward) as fwd, \
                                mock.patch.object(_launch_forward, "_run", wraps=_launch_forward._run) as fwd_fast, \
                                mock.patch.object(_launch, "_backward", wraps=_launch._backward) as bwd, \
                                mock.patch.object(_launch, "_run", wraps=_launch._run) as bwd_fast:
                            self.module_round_trip(module, x, label)
                        self.assertEqual((fwd.call_count + fwd_fast.call_count, bwd.call_count + bwd_fast.call_count),
                                         (1, 1), "%s: normjit's forward and backward each ran once" % label)
        # Rows out of order (a transposed batch): the forward copies them, dx comes back in x's shape.
        module = njt.LayerNorm(1000, device="cuda")
        self.module_round_trip(module, rand((9, 4, 1000), torch.float32, offset=True).transpose(0, 1),
                               "LayerNorm transposed x")

    def test_functional_forms_fall_back_to_torch_where_normjit_cannot_run(self):
        # CPU tensors, float64 and parameters of a dtype the kernels do not take: torch's own norm,
        # forward and backward (no normjit Function in the graph).
        for x, w in ((torch.randn(4, 64), torch.randn(64)),
                     (torch.randn(4, 64, device="cuda", dtype=torch.float64), torch.randn(64, device="cuda",
                                                                                           dtype=torch.float64)),
                     (torch.randn(4, 64, device="cuda", dtype=torch.float16), torch.randn(64, device="cuda",
                                                                                           dtype=torch.bfloat16))):
            with self.subTest(device=str(x.device), x=str(x.dtype), w=str(w.dtype)):
                xi = x.clone().requires_grad_()
                try:
                    want = F.rms_norm(x, (64,), w)
                except RuntimeError as e:  # torch's answer, whatever it is, is what the caller gets
                    with self.assertRaises(type(e)):
                        njt.rms_norm(xi, (64,), w)
                    continue
                got = njt.rms_norm(xi, (64,), w)
                self.assertNotIn("RMSNormFunction", type(got.grad_fn).__name__)
                self.assertTrue(torch.equal(got.detach(), want))
        x = torch.randn(4, 64, device="cuda", requires_grad=True)
        self.assertNotIn("LayerNormFunction", type(njt.layer_norm(x.double(), (64,)).grad_fn).__name__)
        self.assertIn("LayerNormFunction", type(njt.layer_norm(x, (64,)).grad_fn).__name__)

    def test_errors_say_what_to_do(self):
        import normjit
        x = rand((4, 40), torch.bfloat16)
        w = torch.ones(40, device="cuda")
        with self.assertRaisesRegex(ValueError, "CUDA"):
            njt.layer_norm_forward(x.cpu(), None, None, 1e-5)
        with self.assertRaisesRegex(TypeError, "float32, float16 and bfloat16"):
            njt.rms_norm_forward(x.double(), None, 1e-5)
        with self.assertRaisesRegex(TypeError, "float32 weight or one of x's"):
            njt.rms_norm_forward(x, w.half(), 1e-5)
        with self.assertRaisesRegex(TypeError, "bias is torch.bfloat16 but the weight is torch.float32"):
            njt.layer_norm_forward(x, w, w.bfloat16(), 1e-5)
        with self.assertRaisesRegex(ValueError, "weight has 39 elements"):
            njt.layer_norm_forward(x, w[:39], None, 1e-5)
        with self.assertRaisesRegex(ValueError, "weight is on cpu but x is on cuda:0"):
            njt.layer_norm_forward(x, w.cpu(), None, 1e-5)
        with self.assertRaisesRegex(TypeError, "layer_norm_forward got eps = None"):
            njt.layer_norm_forward(x, w, None, None)
        with self.assertRaisesRegex(normjit.NormjitError, "eps = -1"):
            njt.layer_norm_forward(x, w, None, -1.0)
        with self.assertRaisesRegex(ValueError, r"normalized_shape=\[40\] for an input of shape \[4, 39\]"):
            njt.LayerNorm(40, device="cuda")(x[:, :39])

    # ---- torch.compile and CUDA graphs ------------------------------------------------------

    def test_forward_under_torch_compile_fullgraph(self):
        backends = os.environ.get("NORMJIT_TEST_COMPILE_BACKENDS", "aot_eager,inductor").split(",")

        def layer_norm(x, w, b):
            return njt.layer_norm_forward(x, w, b, 1e-5)

        def rms_norm(x, w):
            return njt.rms_norm_forward(x, w, None)
        for backend in backends:
            with self.subTest(backend=backend):
                torch._dynamo.reset()
                x = rand((4, 77, 1024), torch.bfloat16, offset=True)
                w = rand((1024,), torch.float32) + 1
                b = rand((1024,), torch.float32)
                y, mean, rstd = torch.compile(layer_norm, fullgraph=True, backend=backend)(x, w, b)
                ref = forward_reference("ln", x, w, b, 1e-5)
                self.assertLessEqual(rel_err(y, ref[0], ref[3]), 1e-2, backend)
                self.assertEqual(mean.shape, (4, 77, 1))
                self.assertLessEqual(rel_err(mean, ref[1], ref[4].max().item()), STATS_TOL, backend)
                self.assertLessEqual(rel_err(rstd, ref[2]), STATS_TOL, backend)
                y, rstd = torch.compile(rms_norm, fullgraph=True, backend=backend)(x, w)
                ref = forward_reference("rms", x, w, None, torch.finfo(torch.float32).eps)
                self.assertLessEqual(rel_err(y, ref[0], ref[3]), 1e-2, backend)
                self.assertLessEqual(rel_err(rstd, ref[2]), STATS_TOL, backend)

    def model(self):
        torch.manual_seed(0)
        model = torch.nn.Sequential(njt.LayerNorm(1024), torch.nn.Linear(1024, 1024), torch.nn.GELU(),
                                    njt.RMSNorm(1024), njt.LayerNorm(1024, bias=False)).to("cuda")
        with torch.no_grad():
            for p in model.parameters():
                p.add_(torch.randn_like(p) * 0.2)
        return model

    def step(self, model, x, g):
        """y and the gradients of x and every parameter of sum(y * g)."""
        xi = x.detach().clone().requires_grad_()
        y = model(xi)
        grads = torch.autograd.grad((y * g).sum(), [xi] + list(model.parameters()))
        return [y] + list(grads)

    def check_model(self, label, got, model, x, g, tol):
        want = self.step(float64_copy(model), x.double(), g.double())
        names = ["y", "dx"] + ["d" + name for name, _ in model.named_parameters()]
        for name, a, b in zip(names, got, want):
            err = rel_err(a, b)
            self.assertLessEqual(err, tol, "%s: %s normwise error %.3e" % (label, name, err))

    def test_modules_under_torch_compile_fullgraph(self):
        # fp32 throughout (torch's fp32 matmuls do not use TF32 by default): against float64.
        backends = os.environ.get("NORMJIT_TEST_COMPILE_BACKENDS", "aot_eager,inductor").split(",")
        x = rand((4, 77, 1024), torch.float32, offset=True)
        g = rand((4, 77, 1024), torch.float32)
        for backend in backends:
            with self.subTest(backend=backend):
                torch._dynamo.reset()
                model = self.model()
                got = self.step(torch.compile(model, fullgraph=True, backend=backend), x, g)
                self.check_model("compiled (%s)" % backend, got, model, x, g, 1e-4)

    def test_modules_under_cuda_graph_capture(self):
        model = self.model()
        x = rand((8, 64, 1024), torch.float32, offset=True)
        g = rand((8, 64, 1024), torch.float32)
        static_x = x.clone().requires_grad_()
        params = list(model.parameters())
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):  # warm-up: every kernel compiled and loaded before capture
            for _ in range(2):
                torch.autograd.grad((model(static_x) * g).sum(), [static_x] + params)
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            y = model(static_x)
            grads = torch.autograd.grad((y * g).sum(), [static_x] + params)
        for i in range(2):  # new inputs in place, then replay
            x = rand((8, 64, 1024), torch.float32, offset=True)
            with torch.no_grad():
                static_x.copy_(x)
            graph.replay()
            torch.cuda.synchronize()
            self.check_model("CUDA graph replay %d" % i, [y] + list(grads), model, x, g, 1e-4)

    def test_cuda_graph_capture_of_the_forward_ops(self):
        m, n = 199, 4095
        x = rand((m, n), torch.bfloat16, offset=True)
        w = rand((n,), torch.float32) + 1
        b = rand((n,), torch.float32)
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):  # warm-up: compiles and loads the kernels outside capture
            njt.layer_norm_forward(x, w, b, 1e-5)
            njt.rms_norm_forward(x, w, 1e-5)
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            ln = njt.layer_norm_forward(x, w, b, 1e-5)
            rms = njt.rms_norm_forward(x, w, 1e-5)
        for i in range(2):
            x.copy_(rand((m, n), torch.bfloat16, offset=True))
            graph.replay()
            torch.cuda.synchronize()
            ref = forward_reference("ln", x, w, b, 1e-5)
            self.assertLessEqual(rel_err(ln[0], ref[0], ref[3]), 1e-2)
            self.assertLessEqual(rel_err(ln[1], ref[1], ref[4].max().item()), STATS_TOL)
            self.assertLessEqual(rel_err(ln[2], ref[2]), STATS_TOL)
            ref = forward_reference("rms", x, w, None, 1e-5)
            self.assertLessEqual(rel_err(rms[0], ref[0], ref[3]), 1e-2)
            self.assertLessEqual(rel_err(rms[1], ref[2]), STATS_TOL)


# ---- the forward's fused options (docs/FORWARD.md, "Fused options"; docs/PYTHON.md) -----------

def philox4x32_10(c0, c1, c2, c3, k0, k1):
    """Philox4x32-10 (Salmon et al., SC 2011) of a 128-bit counter and a 64-bit key, as templates/philox.cuh
    computes it: the four 32-bit words."""
    m32 = 0xFFFFFFFF
    for _ in range(10):
        p0, p1 = 0xD2511F53 * c0, 0xCD9E8D57 * c2
        c0, c1, c2, c3 = (p1 >> 32) ^ c1 ^ k0, p1 & m32, (p0 >> 32) ^ c3 ^ k1, p0 & m32
        k0, k1 = (k0 + 0x9E3779B9) & m32, (k1 + 0xBB67AE85) & m32
    return c0, c1, c2, c3


def philox_keep(seed, offset, rows, n, p):
    """The keep-mask of `rows` x n on the host (templates/philox.cuh): element (row, col) is kept when
    word col % 4 of Philox4x32-10 of counter (col // 4, row, offset lo, offset hi) and key (seed lo,
    seed hi) is at least floor(p * 2^32). A list of rows of bools."""
    m32 = 0xFFFFFFFF
    drop_below = min(int(math.floor(p * 4294967296.0)), m32)
    out = []
    for row in range(rows):
        keep = []
        for q in range((n + 3) // 4):
            words = philox4x32_10(q, row & m32, offset & m32, offset >> 32 & m32, seed & m32, seed >> 32 & m32)
            keep += [w >= drop_below for w in words]
        out.append(keep[:n])
    return out


def keep_of(mask, form, n):
    """The keep-mask (bool, [..., N]) of a mask the forward returned, and, for bits, the bits past N
    (which must be 0)."""
    if form == "bytes":
        return mask != 0, None
    bits = ((mask.long().unsqueeze(-1) >> torch.arange(8, device=mask.device)) & 1).flatten(-2)
    return bits[..., :n].bool(), bits[..., n:]


def pre_norm_sum(x, keep=None, p=0.0, rowscale=None, residual=None):
    """h as the forward forms it: fp32, one rounded operation at a time (x * (kept ? (float)(1 / (1 -
    p)) : 0), then * rowscale[row], then + residual), rounded to x's dtype at the end."""
    h = x.float()
    if keep is not None:
        scale = torch.tensor(1.0 / (1.0 - p), dtype=torch.float32, device=x.device)
        h = h * torch.where(keep, scale, torch.zeros_like(scale))
    if rowscale is not None:
        h = h * rowscale.float().reshape(-1, 1)
    if residual is not None:
        h = h + residual.float()
    return h.to(x.dtype)


def fused_forward_reference(kind, h, w, b, eps, z=None, gate=None, parallel=False, w1=None, b1=None,
                            zero_centered=False):
    """float64, from h (the kernel's, exactly): y and, with parallel, y1 by F.layer_norm / F.rms_norm
    (gated with F.silu(z): after the norm y * silu(z), before it the norm of h * silu(z)), each with
    the scale its error is measured against (max |x_hat * gamma (* silu(z))| + |beta|); mean
    (LayerNorm) and rstd, [M, 1]; each row's RMS of what is normalised (the mean's error floor)."""
    n = h.shape[-1]
    zs = None if z is None else F.silu(z.double())
    normed = h.double() * zs if gate == "before_norm" else h.double()
    rms = normed.square().mean(-1, keepdim=True).sqrt()
    if kind == "ln":
        mean = normed.mean(-1, keepdim=True)
        rstd = ((normed - mean).square().mean(-1, keepdim=True) + eps).rsqrt()
        xhat = (normed - mean) * rstd
    else:
        mean = None
        rstd = (rms.square() + eps).rsqrt()
        xhat = normed * rstd

    def output(weight, bias):
        gamma = None if weight is None else weight.double() + (1.0 if zero_centered else 0.0)
        beta = None if bias is None else bias.double()
        y = F.layer_norm(normed, (n,), gamma, beta, eps) if kind == "ln" else F.rms_norm(normed, (n,), gamma, eps)
        term = xhat if gamma is None else xhat * gamma
        if gate == "after_norm":
            y, term = y * zs, term * zs
        size = term.abs() if beta is None else term.abs() + beta.abs()
        return y, size.max().item() if size.numel() else 0.0
    return {"y": output(w, b), "y1": output(w1, b1) if parallel else (None, 0.0), "mean": mean, "rstd": rstd,
            "rms": rms}


def fused_forward(kind, x, w, b, eps, **kwargs):
    if kind == "ln":
        return njt.layer_norm_forward(x, w, b, eps, **kwargs)
    return njt.rms_norm_forward(x, w, eps, **kwargs)


# (kind, M, N, x dtype, weight dtype, options). Options: residual, rowscale, p (dropout_p), mask
# ("bytes" or "bits": dropout_mask), gate, parallel, zc (zero_centered_weight), y (y_dtype). Dropout
# is on with p > 0 or a mask. A sample: every option alone and with others, both norms, M in
# {1, 37, 4096}, N in {1, 33, 1000, 4096} and the three dtypes each appear (one compile a case).
FORWARD_FUSED_CASES = [
    ("ln", 37, 1000, "bf16", "fp32", dict(residual=True)),
    ("rms", 4096, 4096, "bf16", "bf16", dict(residual=True)),
    ("ln", 1, 33, "fp32", "fp32", dict(rowscale=True)),
    ("rms", 37, 1, "fp16", "fp16", dict(residual=True, rowscale=True)),
    ("ln", 4096, 33, "fp16", "fp32", dict(p=0.25, mask="bytes")),
    ("rms", 37, 4096, "fp32", "fp32", dict(p=0.5, mask="bits")),
    ("ln", 37, 1, "bf16", "bf16", dict(p=0.1, mask="bits")),
    ("rms", 1, 1000, "bf16", "fp32", dict(p=0.25)),  # no mask written: h only
    ("ln", 37, 33, "fp32", "fp32", dict(mask="bytes")),  # p = 0: every element kept, a mask of ones
    ("ln", 4096, 1000, "bf16", "fp32", dict(residual=True, rowscale=True, p=0.2, mask="bytes")),
    ("rms", 37, 33, "fp16", "fp32", dict(residual=True, rowscale=True, p=0.3, mask="bits", zc=True)),
    ("rms", 4096, 1000, "fp16", "fp16", dict(residual=True, p=0.5, mask="bits")),
    ("ln", 1, 1, "fp32", "fp32", dict(residual=True, rowscale=True, p=0.5, mask="bytes")),
    ("rms", 37, 1000, "bf16", "fp32", dict(gate="after_norm")),
    ("rms", 4096, 4096, "bf16", "bf16", dict(gate="before_norm", residual=True)),
    ("rms", 1, 33, "fp32", "fp32", dict(gate="before_norm", rowscale=True, p=0.25, mask="bytes")),
    ("rms", 37, 1, "fp16", "fp16", dict(gate="after_norm", zc=True, residual=True)),
    ("ln", 37, 1000, "bf16", "bf16", dict(parallel=True)),
    ("rms", 4096, 33, "fp32", "fp32", dict(parallel=True, residual=True)),
    ("ln", 1, 4096, "fp16", "fp32", dict(parallel=True, zc=True, y="fp32")),
    ("ln", 37, 4096, "fp32", "fp32", dict(parallel=True, residual=True, p=0.5, mask="bits", zc=True)),
    ("ln", 4096, 4096, "bf16", "fp32", dict(zc=True)),
    ("rms", 37, 4096, "bf16", "fp32", dict(y="fp32")),
    ("ln", 37, 33, "fp32", "fp32", dict(y="bf16", residual=True)),
    ("ln", 37, 4096, "bf16", "fp32", dict(residual=True, rowscale=True, p=0.1, mask="bytes", parallel=True, y="fp32")),
]


@unittest.skipIf(SKIP, SKIP)
class ForwardFusedTest(WorstErrors, unittest.TestCase):
    """layer_norm_forward / rms_norm_forward with the fused option keywords against torch in float64:
    h recomputed from x, the returned mask, rowscale and residual in fp32 steps and compared bit for
    bit; y (and y1) against F.layer_norm / F.rms_norm of h (gated with F.silu); mean and rstd per row;
    the kept fraction; the mask a function of (seed, offset, row, col) (host Philox4x32-10); the
    round trip through normjit's backward against float64 autograd of the whole block;
    torch.compile(fullgraph=True) and CUDA graphs. Outputs are poisoned (NaN) first. Most of its time
    is one kernel compile per case (about 40, each ~0.5 s on an H100) and torch.compile."""

    worst = {}

    def inputs(self, kind, m, n, x_dtype, w_dtype, y_dtype, opts, seed, offset):
        """x, weight, bias and the keyword arguments of one case."""
        zc = opts.get("zc", False)
        x = rand((m, n), x_dtype, offset=True)
        w = rand((n,), w_dtype) * 0.5 + (0.0 if zc else 1.0)  # zero-centred: gamma - 1 around 0
        b = rand((n,), w_dtype) if kind == "ln" else None
        kwargs = {}
        if opts.get("residual"):
            kwargs["residual"] = rand((m, n), x_dtype)
        if opts.get("rowscale"):
            kwargs["rowscale"] = torch.rand(m, device="cuda") + 0.5
        if opts.get("p"):
            kwargs["dropout_p"] = opts["p"]
        if opts.get("mask"):
            kwargs["dropout_mask"] = opts["mask"]
        if opts.get("p") or opts.get("mask"):
            kwargs["dropout_seed"], kwargs["dropout_offset"] = seed, offset
        if opts.get("gate"):
            kwargs["z"], kwargs["gate"] = rand((m, n), x_dtype), opts["gate"]
        if opts.get("parallel"):
            kwargs["weight1"] = rand((n,), w_dtype) * 0.5 + (0.0 if zc else 1.0)
            if kind == "ln":
                kwargs["bias1"] = rand((n,), w_dtype)
        if zc:
            kwargs["zero_centered_weight"] = True
        if "y" in opts:
            kwargs["y_dtype"] = y_dtype
        return x, w, b, kwargs

    def check_case(self, kind, m, n, x_name, w_name, opts, seed=0x9E3779B97F4A7C15, offset=0):
        eps = 1e-5
        x_dtype, w_dtype = DTYPES[x_name], DTYPES[w_name]
        y_dtype = DTYPES[opts["y"]] if "y" in opts else x_dtype
        x, w, b, kwargs = self.inputs(kind, m, n, x_dtype, w_dtype, y_dtype, opts, seed, offset)
        y_like = torch.empty((m, n), device="cuda", dtype=y_dtype)
        stats_like = torch.empty((m, 1), device="cuda")
        poison_allocator(y_like, y_like, x, x, stats_like, stats_like)  # y, y1, h, mask, mean, rstd
        out = fused_forward(kind, x, w, b, eps, **kwargs)
        torch.cuda.synchronize()
        label = "%s M=%d N=%d x=%s w=%s %s" % (kind, m, n, x_name, w_name, sorted(opts.items()))
        key = "%s %s/%s" % (kind, x_name, w_name)
        self.assertIsInstance(out, njt.LayerNormForwardResult if kind == "ln" else njt.RMSNormForwardResult, label)
        p = opts.get("p", 0.0)
        dropout = bool(p or opts.get("mask"))
        keep = None
        if opts.get("mask"):
            self.assertEqual((out.mask.dtype, out.mask.shape), (torch.uint8, (m, n) if opts["mask"] == "bytes" else
                                                                (m, (n + 7) // 8)), "%s: mask" % label)
            keep, past_n = keep_of(out.mask, opts["mask"], n)
            if opts["mask"] == "bytes":
                self.assertTrue(bool(((out.mask == 0) | (out.mask == 1)).all()), "%s: mask bytes are 0 or 1" % label)
            else:
                self.assertTrue(bool((past_n == 0).all()), "%s: the bits past N are 0" % label)
        else:
            self.assertIsNone(out.mask, "%s: no mask asked for" % label)
            if dropout:  # the same draws with a mask written: h bit for bit, and the mask to check it with
                again = fused_forward(kind, x, w, b, eps, dropout_mask="bytes", **kwargs)
                self.assertTrue(torch.equal(again.h, out.h), "%s: h with and without a mask written" % label)
                keep, _ = keep_of(again.mask, "bytes", n)
        if dropout:
            count = keep.numel()
            kept = keep.double().mean().item()
            sigma = math.sqrt(p * (1 - p) / count)
            self.assertLessEqual(abs(kept - (1 - p)), 6 * sigma + 1.0 / count,
                                 "%s: kept fraction %.4f for p = %g" % (label, kept, p))
        formed = opts.get("residual") or opts.get("rowscale") or dropout
        if formed:
            h = pre_norm_sum(x, keep, p, kwargs.get("rowscale"), kwargs.get("residual"))
            self.assertEqual((out.h.dtype, out.h.shape), (x_dtype, (m, n)), "%s: h" % label)
            self.assertTrue(torch.equal(out.h, h), "%s: h bit for bit (max diff %.3e)" %
                            (label, (out.h.double() - h.double()).abs().max().item()))
        else:
            self.assertIs(out.h, x, "%s: h is x itself when nothing forms it" % label)
            h = x
        ref = fused_forward_reference(kind, h, w, b, eps, kwargs.get("z"), opts.get("gate"),
                                      opts.get("parallel", False), kwargs.get("weight1"), kwargs.get("bias1"),
                                      opts.get("zc", False))
        self.compare(label, key, "y", out.y, ref["y"][0], y_dtype, y_dtype, ref["y"][1])
        self.assertTrue(out.y.is_contiguous(), "%s: y contiguous" % label)
        if opts.get("parallel"):
            self.compare(label, key, "y1", out.y1, ref["y1"][0], y_dtype, y_dtype, ref["y1"][1])
        else:
            self.assertIsNone(out.y1, "%s: y1 without parallel norms" % label)
        ForwardTest.check_stats(self, label, key, "rstd", out.rstd, ref["rstd"])
        if kind == "ln":
            # A row of zeros (N = 1, its element dropped) has mean 0 exactly: a floor above 0.
            ForwardTest.check_stats(self, label, key, "mean", out.mean, ref["mean"], ref["rms"].clamp_min(1e-30))

    def test_fused_forward(self):
        for i, case in enumerate(FORWARD_FUSED_CASES):
            with self.subTest(case=str(case)):
                # Seeds above 2^63 too (an int64 in the ops' schema), offsets past 2^32.
                self.check_case(*case, seed=0x9E3779B97F4A7C15 ^ i, offset=i * 0x100000007)

    def test_the_mask_is_a_function_of_seed_offset_row_and_column(self):
        # The host's Philox4x32-10 first (Random123's known answers, as tests/cpu/philox_test.cpp).
        self.assertEqual(philox4x32_10(0, 0, 0, 0, 0, 0), (0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8))
        self.assertEqual(philox4x32_10(0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0),
                         (0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1))
        seed, offset, p = 2 ** 64 - 3, 2 ** 40 + 7, 0.375
        x = rand((3, 33), torch.float32)
        want = torch.tensor(philox_keep(seed, offset, 3, 33, p), device="cuda")
        for form in ("bytes", "bits"):
            with self.subTest(form=form):
                out = njt.rms_norm_forward(x, None, 1e-5, dropout_p=p, dropout_mask=form, dropout_seed=seed,
                                           dropout_offset=offset)
                self.assertTrue(torch.equal(keep_of(out.mask, form, 33)[0], want), "the host's Philox4x32-10")
        m, n = 4096, 1000
        x = rand((m, n), torch.bfloat16)
        w = rand((n,), torch.float32)

        def mask(x, form="bytes", **seeds):
            kwargs = dict(dropout_seed=seed, dropout_offset=offset)
            kwargs.update(seeds)
            return njt.layer_norm_forward(x, w, None, 1e-5, dropout_p=0.25, dropout_mask=form, **kwargs).mask
        first = mask(x)
        self.assertTrue(torch.equal(mask(x), first), "the same seed and offset: the same mask")
        self.assertTrue(torch.equal(mask(rand((m, n), torch.bfloat16)), first), "whatever x holds")
        self.assertTrue(torch.equal(mask(x[:37]), first[:37]), "row r's keeps whatever M")
        padded = rand((m, n + 24), torch.bfloat16)[:, :n]
        self.assertTrue(torch.equal(mask(padded), first), "whatever x's row stride")
        self.assertTrue(torch.equal(keep_of(mask(x, "bits"), "bits", n)[0], first != 0), "bits and bytes agree")
        for change in (dict(dropout_offset=offset + 1), dict(dropout_seed=seed - 1)):
            other = mask(x, **change)
            self.assertGreater((other != first).double().mean().item(), 0.3, "%s: another mask" % change)

    def test_round_trip_through_the_backward(self):
        # The forward's h, mask and statistics into normjit's backward (x = h, dropout_mask= or
        # dropout_mask_bits=, dropout_p, dresidual), against float64 autograd of the whole block
        #   h = dropout(x, p) * rowscale + residual,  y = norm(h)
        # whose residual is h - dropout(x) * rowscale in float64, so it rebuilds the very h the kernel
        # normalised (fused_reference).
        eps, p = 1e-5, 0.25
        for kind, m, n, x_name, w_name, form, with_rowscale in (
                ("ln", 37, 1000, "bf16", "fp32", "bytes", False),
                ("rms", 4096, 4096, "fp16", "fp16", "bytes", False),
                ("ln", 1, 4096, "fp32", "fp32", "bytes", True),
                ("rms", 37, 1000, "bf16", "fp32", "bits", True)):
            label = "round trip %s M=%d N=%d x=%s w=%s %s%s" % (kind, m, n, x_name, w_name, form,
                                                               " rowscale" if with_rowscale else "")
            with self.subTest(label=label):
                x_dtype, w_dtype = DTYPES[x_name], DTYPES[w_name]
                x, res, dy, dres = (rand((m, n), x_dtype, offset=i == 0) for i in range(4))
                w = rand((n,), w_dtype) * 0.5 + 1
                b = rand((n,), w_dtype) if kind == "ln" else None
                rs = torch.rand(m, device="cuda") + 0.5 if with_rowscale else None
                out = fused_forward(kind, x, w, b, eps, residual=res, rowscale=rs, dropout_p=p, dropout_mask=form,
                                    dropout_seed=1234, dropout_offset=m)
                keep, _ = keep_of(out.mask, form, n)
                self.assertTrue(torch.equal(out.h, pre_norm_sum(x, keep, p, rs, res)), "%s: h" % label)
                back = dict(dresidual=dres, rowscale=rs, dropout_p=p, return_dresidual_in=True)
                back["dropout_mask" if form == "bytes" else "dropout_mask_bits"] = out.mask
                if kind == "ln":
                    dx, dw, db, dh = njt.layer_norm_backward(dy, out.h, w, b, out.mean, out.rstd, **back)
                else:
                    dx, dw, dh = njt.rms_norm_backward(dy, out.h, w, out.rstd, **back)
                    db = None
                torch.cuda.synchronize()
                ref = fused_reference(kind, dy, out.h, x, w, b, eps, dres, rs, keep, p)
                key = "round trip %s %s/%s" % (kind, x_name, w_name)
                self.compare(label, key, "dx", dx, ref[0], x_dtype, x_dtype)
                self.compare(label, key, "dweight", dw, ref[1], w_dtype, min_precision(x_dtype, w_dtype))
                self.compare(label, key, "dbias", db, ref[2], w_dtype, min_precision(x_dtype, w_dtype))
                self.compare(label, key, "dresidual", dh, ref[3], x_dtype, x_dtype)

    def test_option_keywords_without_options_and_zero_rows(self):
        x = rand((37, 1000), torch.bfloat16, offset=True)
        w = rand((1000,), torch.float32) + 1
        plain = njt.rms_norm_forward(x, w, 1e-5)
        self.assertIs(type(plain), tuple)
        out = njt.rms_norm_forward(x, w, 1e-5, residual=None, dropout_p=0.0, y_dtype=torch.bfloat16)
        self.assertIsInstance(out, njt.RMSNormForwardResult)
        self.assertTrue(torch.equal(out.y, plain[0]) and torch.equal(out.rstd, plain[1]))
        self.assertIs(out.h, x)
        self.assertEqual((out.mask, out.y1), (None, None))
        x0 = torch.empty(0, 40, device="cuda", dtype=torch.bfloat16)
        w0 = torch.ones(40, device="cuda")
        out = njt.layer_norm_forward(x0, w0, w0, 1e-5, residual=x0.clone(), dropout_p=0.5, dropout_mask="bits",
                                     weight1=w0, bias1=w0)
        self.assertEqual([tuple(t.shape) for t in out], [(0, 40), (0, 1), (0, 1), (0, 40), (0, 5), (0, 40)])

    def test_fused_forward_errors_say_what_to_do(self):
        x = rand((4, 40), torch.bfloat16)
        w = torch.ones(40, device="cuda")
        with self.assertRaisesRegex(ValueError, r"dropout_p = 1.0 is not in \[0, 1\)"):
            njt.layer_norm_forward(x, w, None, 1e-5, dropout_p=1.0)
        with self.assertRaisesRegex(ValueError, "dropout_mask = 'bit' is not a mask form"):
            njt.layer_norm_forward(x, w, None, 1e-5, dropout_mask="bit")
        with self.assertRaisesRegex(ValueError, r"dropout_seed = -1 is outside \[0, 2\^64\)"):
            njt.layer_norm_forward(x, w, None, 1e-5, dropout_p=0.5, dropout_seed=-1)
        with self.assertRaisesRegex(TypeError, "residual is torch.float32 but x is torch.bfloat16"):
            njt.layer_norm_forward(x, w, None, 1e-5, residual=x.float())
        with self.assertRaisesRegex(ValueError, "residual is on cpu"):
            njt.rms_norm_forward(x, w, 1e-5, residual=x.cpu())
        with self.assertRaisesRegex(ValueError, "rowscale has 3 values for 4 rows"):
            njt.rms_norm_forward(x, w, 1e-5, rowscale=torch.ones(3, device="cuda"))
        with self.assertRaisesRegex(TypeError, r"layer_norm_forward\(\) got an unexpected keyword argument 'z'"):
            njt.layer_norm_forward(x, w, None, 1e-5, z=x, gate="after_norm")
        with self.assertRaisesRegex(ValueError, "z is given but gate is None"):
            njt.rms_norm_forward(x, w, 1e-5, z=x)
        with self.assertRaisesRegex(ValueError, "parallel norms and a gate"):
            njt.rms_norm_forward(x, w, 1e-5, z=x, gate="after_norm", weight1=w)
        with self.assertRaisesRegex(ValueError, "weight1 is None but weight is given"):
            njt.rms_norm_forward(x, w, 1e-5, parallel=True)
        with self.assertRaisesRegex(ValueError, "zero_centered_weight=True but weight is None"):
            njt.rms_norm_forward(x, None, 1e-5, zero_centered_weight=True)
        with self.assertRaisesRegex(TypeError, "y_dtype = torch.float64"):
            njt.rms_norm_forward(x, w, 1e-5, y_dtype=torch.float64)

    def test_fused_forward_under_torch_compile_fullgraph(self):
        # Compiled, the calls are the fused ops (fake kernels for tracing): results bit for bit those of
        # the eager calls (the same kernels on the same inputs, the same seeds).
        backends = os.environ.get("NORMJIT_TEST_COMPILE_BACKENDS", "aot_eager,inductor").split(",")
        m, n = 37, 1000

        def ln_block(x, res, rs, w, b, w1, b1):
            return njt.layer_norm_forward(x, w, b, 1e-5, residual=res, rowscale=rs, dropout_p=0.25,
                                          dropout_mask="bits", dropout_seed=2 ** 64 - 7, dropout_offset=11,
                                          weight1=w1, bias1=b1)

        def rms_block(x, z, w):
            return njt.rms_norm_forward(x, w, 1e-5, z=z, gate="before_norm", dropout_p=0.1, dropout_mask="bytes",
                                        dropout_seed=5, y_dtype=torch.float32)
        x, res, z = (rand((m, n), torch.bfloat16, offset=True) for _ in range(3))
        rs = torch.rand(m, device="cuda") + 0.5
        w, b, w1, b1 = (rand((n,), torch.float32) for _ in range(4))
        cases = ((ln_block, (x, res, rs, w, b, w1, b1), njt.LayerNormForwardResult, "layer_norm_forward_fused"),
                 (rms_block, (x, z, w), njt.RMSNormForwardResult, "rms_norm_forward_fused"))
        for backend in backends:
            for fn, args, cls, op in cases:
                with self.subTest(backend=backend, fn=fn.__name__):
                    torch._dynamo.reset()
                    want = fn(*args)
                    got = torch.compile(fn, fullgraph=True, backend=backend)(*args)
                    self.assertIsInstance(got, cls)
                    for name in cls._fields:
                        g, r = getattr(got, name), getattr(want, name)
                        if r is None:
                            self.assertIsNone(g, "%s: %s" % (backend, name))
                        else:
                            self.assertTrue(torch.equal(g, r), "%s %s: %s" % (backend, fn.__name__, name))
        graphs = []

        def capture(gm, example_inputs):
            graphs.append(str(gm.graph))
            return gm.forward
        for fn, args, cls, op in cases:
            torch._dynamo.reset()
            torch.compile(fn, fullgraph=True, backend=capture)(*args)
            self.assertIn("normjit.%s" % op, graphs[-1])

    def test_cuda_graph_capture_of_the_fused_forward(self):
        # A graph replays its launches' arguments, the seed and offset among them: each replay draws
        # the mask it captured (pass a new offset per step outside graphs).
        m, n = 199, 1000
        x, res = rand((m, n), torch.bfloat16, offset=True), rand((m, n), torch.bfloat16)
        rs = torch.rand(m, device="cuda") + 0.5
        w, b, w1, b1 = (rand((n,), torch.float32) for _ in range(4))
        kwargs = dict(residual=res, rowscale=rs, dropout_p=0.2, dropout_mask="bytes", dropout_seed=99,
                      dropout_offset=1, weight1=w1, bias1=b1)
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):  # warm-up: compiles and loads the kernel outside capture
            njt.layer_norm_forward(x, w, b, 1e-5, **kwargs)
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            out = njt.layer_norm_forward(x, w, b, 1e-5, **kwargs)
        for i in range(2):
            x.copy_(rand((m, n), torch.bfloat16, offset=True))
            res.copy_(rand((m, n), torch.bfloat16))
            graph.replay()
            want = njt.layer_norm_forward(x, w, b, 1e-5, **kwargs)
            torch.cuda.synchronize()
            for name in njt.LayerNormForwardResult._fields:
                self.assertTrue(torch.equal(getattr(out, name), getattr(want, name)), "replay %d: %s" % (i, name))


if __name__ == "__main__":
    unittest.main()
