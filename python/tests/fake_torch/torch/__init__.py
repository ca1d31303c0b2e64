"""A stand-in for torch, just large enough to run normjit.torch._launch's host-side logic on a
machine without torch or a GPU (python/tests/test_launch_fake_torch.py, in a child process whose
PYTHONPATH puts this folder first). Tensors are host buffers with torch's shape, stride, dtype,
device-index and data_ptr semantics; nothing computes. Not importable as torch anywhere else.

Below the tensors, enough of torch.autograd.Function, torch.library's custom ops and the state
that decides eager against traced (compiling, dispatch modes, functorch, jit tracing, autocast,
grad mode) to import normjit.torch._ops and _functional and record which way each call goes:
`state` holds the switches, `calls` what ran (custom ops, autograd's C apply and the Python
Function.apply, torch.nn.functional's norms, autocast contexts).
"""
import ctypes
import sys
import types


class dtype:
    def __init__(self, name, itemsize):
        self.name, self.itemsize = name, itemsize

    def __repr__(self):
        return "torch." + self.name


float32, float16, bfloat16 = dtype("float32", 4), dtype("float16", 2), dtype("bfloat16", 2)
float64, uint8 = dtype("float64", 8), dtype("uint8", 1)
bool = dtype("bool", 1)  # noqa: A001 - torch's name
contiguous_format = object()


class Size(tuple):
    pass


class device:
    def __init__(self, index):
        self.index = index

    def __repr__(self):
        return "cuda:%d" % self.index if self.index >= 0 else "cpu"

    def __eq__(self, other):
        return isinstance(other, device) and other.index == self.index

    def __hash__(self):
        return hash(self.index)


def _contiguous_strides(shape):
    strides, step = [], 1
    for s in reversed(shape):
        strides.append(step)
        step *= s
    return tuple(reversed(strides))


allocations = []  # every tensor that got storage of its own, in order


class Tensor:
    """shape/stride/dtype over a host buffer; device index -1 is the CPU, as get_device() says."""

    requires_grad = False  # set per tensor by a test

    def __init__(self, shape, dt, dev=0, strides=None, storage=None, offset=0):
        self._shape = Size(shape)
        self._dtype = dt
        self._dev = dev
        self._strides = tuple(strides) if strides is not None else _contiguous_strides(shape)
        if storage is None:
            span = 1 + sum((s - 1) * st for s, st in zip(shape, self._strides)) if self.numel() else 0
            storage = ctypes.create_string_buffer(max(1, span * dt.itemsize))
            allocations.append(self)
        self._storage = storage
        self._offset = offset

    shape = property(lambda self: self._shape)
    dtype = property(lambda self: self._dtype)
    is_cuda = property(lambda self: self._dev >= 0)
    device = property(lambda self: device(self._dev))

    def get_device(self):
        return self._dev

    def numel(self):
        n = 1
        for s in self._shape:
            n *= s
        return n

    def dim(self):
        return len(self._shape)

    def size(self, i=None):
        return self._shape if i is None else self._shape[i]

    def stride(self, i=None):
        return self._strides if i is None else self._strides[i]

    def is_contiguous(self):
        want = _contiguous_strides(self._shape)
        return all(a == b for a, b, s in zip(self._strides, want, self._shape) if s != 1)

    def data_ptr(self):
        return ctypes.addressof(self._storage) + self._offset * self._dtype.itemsize if self.numel() else 0

    def new_empty(self, shape=None, dtype=None, size=None):
        # torch takes the shape positionally or as size= (what normjit passes: it parses faster)
        shape = size if shape is None else shape
        return Tensor((shape,) if isinstance(shape, int) else tuple(shape), self._dtype if dtype is None else dtype,
                      self._dev)

    def reshape(self, *shape):
        if len(shape) == 1 and isinstance(shape[0], tuple):
            shape = shape[0]
        shape = list(shape)
        if -1 in shape:
            rest = 1
            for s in shape:
                rest *= s if s != -1 else 1
            shape[shape.index(-1)] = self.numel() // rest
        if not self.is_contiguous():
            return self.contiguous().reshape(*shape)
        return Tensor(tuple(shape), self._dtype, self._dev, storage=self._storage, offset=self._offset)

    view = reshape

    def contiguous(self):
        return self if self.is_contiguous() else Tensor(self._shape, self._dtype, self._dev)

    def float(self):  # as torch: the tensor itself when already fp32, else a copy (differentiable)
        if self._dtype is float32:
            return self
        t = Tensor(self._shape, float32, self._dev)
        t.requires_grad = self.requires_grad
        return t

    def is_floating_point(self):
        return self._dtype in (float32, float16, bfloat16, float64)

    def __getitem__(self, index):  # t[i] (a view of one index of dim 0), rows[a:b] of a 2-D tensor
        if isinstance(index, int):
            return Tensor(self._shape[1:], self._dtype, self._dev, strides=self._strides[1:], storage=self._storage,
                          offset=self._offset + index * self._strides[0])
        rows, cols = index if isinstance(index, tuple) else (index, slice(None))
        r0, r1, _ = rows.indices(self._shape[0])
        c0, c1, _ = cols.indices(self._shape[1])
        return Tensor((r1 - r0, c1 - c0), self._dtype, self._dev, strides=self._strides, storage=self._storage,
                      offset=self._offset + r0 * self._strides[0] + c0 * self._strides[1])


def empty(*shape, dtype=float32, device=None):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    return Tensor(tuple(shape), dtype, 0 if device is None else device.index)


def empty_like(t, memory_format=None):
    return Tensor(t.shape, t.dtype, t.get_device())


current_stream = [0]  # what _cuda_getCurrentRawStream returns, set by the test
_C = types.ModuleType("torch._C")
_C._cuda_getCurrentRawStream = lambda index: current_stream[0]
sys.modules["torch._C"] = _C


# ---- what normjit.torch._ops and _functional use beyond tensors --------------------------------

class Parameter(Tensor):
    requires_grad = True


class _State:
    """The switches _ops._plain_eager and _functional read, as torch would report them."""

    def reset(self):
        self.compiling = False       # torch.compiler.is_compiling()
        self.dispatch_modes = 0      # torch._C._len_torch_dispatch_stack(): fake tensors, make_fx
        self.functorch = False       # torch._C._are_functorch_transforms_active()
        self.jit_tracing = False     # torch._C._get_tracing_state() is not None
        self.autocast = False        # torch.is_autocast_enabled("cuda")
        self.autocast_dtype = bfloat16
        self.grad = True             # torch.is_grad_enabled()


state = _State()
state.reset()
calls = []  # ("op", name, args), ("C apply", class name), ("Function.apply", class name), ("F", name), ...
applied = []  # (Function class, ctx) of each forward autograd's C apply ran, for the test to run backward


def _module(name, **attrs):
    m = types.ModuleType(name)
    m.__dict__.update(attrs)
    sys.modules[name] = m
    return m


_C._len_torch_dispatch_stack = lambda: state.dispatch_modes
_C._are_functorch_transforms_active = lambda: state.functorch
_C._get_tracing_state = lambda: object() if state.jit_tracing else None
_C._functorch = _module("torch._C._functorch", unwrap_if_dead=lambda t: t)

compiler = _module("torch.compiler", is_compiling=lambda: state.compiling)


def is_autocast_enabled(device_type):
    assert device_type == "cuda"
    return state.autocast


def get_autocast_dtype(device_type):
    return state.autocast_dtype


def is_grad_enabled():
    return state.grad


class autocast:
    def __init__(self, device_type, dtype=None, enabled=True):
        self.enabled = enabled

    def __enter__(self):
        calls.append(("autocast", self.enabled))
        self.saved, state.autocast = state.autocast, self.enabled

    def __exit__(self, *exc):
        state.autocast = self.saved
        return False


class finfo:
    def __init__(self, dt):
        self.eps = {float32: 2.0 ** -23, float16: 2.0 ** -10, bfloat16: 2.0 ** -7}[dt]


class _Ctx:
    def save_for_backward(self, *tensors):
        self.saved_tensors = tensors


class _FunctionBase:
    @classmethod
    def apply(cls, *args):
        """autograd's C entry point: the forward with a fresh ctx (kept in `applied`)."""
        calls.append(("C apply", cls.__name__))
        ctx = _Ctx()
        applied.append((cls, ctx))
        return cls.forward(ctx, *args)


class Function(_FunctionBase):
    @classmethod
    def apply(cls, *args):
        """torch.autograd.Function.apply: Python-level work, then the C entry point."""
        calls.append(("Function.apply", cls.__name__))
        return super().apply(*args)


_C._FunctionBase = _FunctionBase
autograd = _module("torch.autograd", Function=Function)
autograd.forward_ad = _module("torch.autograd.forward_ad", _current_level=-1)
autograd.graph = _module("torch.autograd.graph")


class _CustomOp:
    """torch.library.custom_op's result: calling it records the op and runs the implementation
    (what the registered CUDA kernel does; a traced call would run the fake kernel instead)."""

    def __init__(self, name, impl):
        self.name, self.impl = name.split("::")[1], impl

    def register_fake(self, fn):
        self.fake = fn
        return fn

    def __call__(self, *args):
        calls.append(("op", self.name, args))
        return self.impl(*args)


class _Library:
    def __init__(self, ns, kind):
        pass

    def impl(self, name, fn, key):
        pass


library = _module("torch.library", custom_op=lambda name, mutates_args=(): lambda impl: _CustomOp(name, impl),
                  Library=_Library)
utils = _module("torch.utils")
utils._python_dispatch = _module("torch.utils._python_dispatch", _get_current_dispatch_mode=lambda: None)


def _F_norm(name):
    def norm(*args, **kwargs):
        calls.append(("F", name))
        return "torch's %s" % name
    return norm


nn = _module("torch.nn", Parameter=Parameter)
nn.functional = _module("torch.nn.functional", layer_norm=_F_norm("layer_norm"), rms_norm=_F_norm("rms_norm"))
