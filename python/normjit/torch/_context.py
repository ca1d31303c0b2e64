"""Making the device's primary CUDA context current before a normjit call.

libnormjit finds the device from the stream's context, or from the thread's current context
for the legacy default stream (and always for nj_workspace_size). PyTorch creates each device's
primary context but may never make it current on a thread in driver terms: the autograd engine's
worker threads, for instance, skip cudaSetDevice when the device already reads as 0. So each
call checks cuCtxGetCurrent (one cheap driver call) and pushes the primary context when it is
not the one current, popping it afterwards so the caller's thread is left as it was.
"""
import ctypes
import threading

_cuda = None
_primary = {}  # device ordinal -> CUcontext (int); retained once, never released (torch holds it too)
_lock = threading.Lock()
_tls = threading.local()  # .current: (c_void_p, byref of it) that cuCtxGetCurrent writes, per thread


def _driver():
    global _cuda
    if _cuda is None:
        try:
            lib = ctypes.CDLL("libcuda.so.1")
        except OSError as e:
            raise RuntimeError("normjit: cannot load the CUDA driver (libcuda.so.1: %s); normjit.torch needs "
                               "an NVIDIA GPU and its driver." % e)
        for name in ("cuCtxGetCurrent", "cuCtxPushCurrent_v2", "cuCtxPopCurrent_v2", "cuDeviceGet",
                     "cuDevicePrimaryCtxRetain", "cuInit", "cuStreamIsCapturing"):
            getattr(lib, name).restype = ctypes.c_int
        # Handles and out-pointers as c_void_p, so a handle goes in as a Python int (undeclared,
        # ctypes would pass an int as a 32-bit C int) and an out-pointer as a byref().
        for name, count in (("cuCtxGetCurrent", 1), ("cuCtxPushCurrent_v2", 1), ("cuCtxPopCurrent_v2", 1),
                            ("cuStreamIsCapturing", 2)):
            getattr(lib, name).argtypes = [ctypes.c_void_p] * count
        _cuda = lib
    return _cuda


def _check(result, call, device):
    if result != 0:
        raise RuntimeError("normjit: %s failed with CUresult %d for cuda:%d; is the device usable "
                           "(torch.cuda.is_available(), nvidia-smi)?" % (call, result, device))


def primary_context(device):
    ctx = _primary.get(device)
    if ctx is None:
        with _lock:
            cuda = _driver()
            _check(cuda.cuInit(0), "cuInit", device)
            dev = ctypes.c_int()
            _check(cuda.cuDeviceGet(ctypes.byref(dev), device), "cuDeviceGet", device)
            handle = ctypes.c_void_p()
            _check(cuda.cuDevicePrimaryCtxRetain(ctypes.byref(handle), dev), "cuDevicePrimaryCtxRetain", device)
            ctx = _primary[device] = handle.value
    return ctx


def push_context(device):
    """Makes cuda:device's primary context current if it is not; True when it pushed one, which
    the caller then pops with pop_context() once its driver calls are made."""
    ctx = _primary.get(device) or primary_context(device)
    try:  # built once per thread: a c_void_p and its byref cost more than the driver call
        out, ref = _tls.current
    except AttributeError:
        out = ctypes.c_void_p()
        ref = ctypes.byref(out)
        _tls.current = (out, ref)
    _cuda.cuCtxGetCurrent(ref)
    if out.value == ctx:
        return False
    _check(_cuda.cuCtxPushCurrent_v2(ctx), "cuCtxPushCurrent", device)
    return True


def is_capturing(stream, device):
    """True while `stream` (a CUstream as an int, not 0: the legacy stream cannot be captured) is
    being captured into a CUDA graph. Asked of the driver for this very stream, where
    torch.cuda.is_current_stream_capturing() asks about the current device's stream."""
    try:
        out, ref = _tls.capture
    except AttributeError:
        out = ctypes.c_int()
        ref = ctypes.byref(out)
        _tls.capture = (out, ref)
    _check(_driver().cuStreamIsCapturing(stream, ref), "cuStreamIsCapturing", device)
    return out.value != 0  # CU_STREAM_CAPTURE_STATUS_NONE is 0; ACTIVE and INVALIDATED are not


def pop_context():
    # The popped handle is not needed; it goes into the thread's cuCtxGetCurrent buffer, which
    # push_context has made by now (a fresh c_void_p and byref per call cost more than the call).
    _cuda.cuCtxPopCurrent_v2(_tls.current[1])


class current_context:
    """`with current_context(device):` makes cuda:device's primary context current for the block."""

    def __init__(self, device):
        self._device = device
        self._pushed = False

    def __enter__(self):
        self._pushed = push_context(self._device)
        return self

    def __exit__(self, *exc):
        if self._pushed:
            pop_context()
        return False
