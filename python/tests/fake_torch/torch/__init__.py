"""A stand-in for torch, just large enough to run normjit.torch._launch's host-side logic on a
machine without torch or a GPU (python/tests/test_launch_fake_torch.py, in a child process whose
PYTHONPATH puts this folder first). Tensors are host buffers with torch's shape, stride, dtype,
device-index and data_ptr semantics; nothing computes. Not importable as torch anywhere else.
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

    def new_empty(self, shape, dtype=None):
        return Tensor(tuple(shape), self._dtype if dtype is None else dtype, self._dev)

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

    def float(self):
        return Tensor(self._shape, float32, self._dev)

    def is_floating_point(self):
        return self._dtype in (float32, float16, bfloat16, float64)

    def __getitem__(self, index):  # rows[a:b] of a 2-D tensor, enough for padded views
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
