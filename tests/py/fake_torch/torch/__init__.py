"""Just enough of torch's surface for the bridge's call path to run without
a GPU (tests/python_call.rs): tensors are (shape, dtype, pointer) records,
streams are numbers, and the current stream is remembered."""

import contextlib

__version__ = "0.0+fake"
float16 = "float16"
bfloat16 = "bfloat16"
int16 = "int16"


class Tensor:
    def __init__(self, shape, dtype, ptr):
        self.shape, self.dtype, self.ptr = tuple(shape), dtype, ptr

    def view(self, dtype):
        assert self.dtype == int16, "a view of the int16 buffer"
        return Tensor(self.shape, dtype, self.ptr)

    def copy_(self, other):
        copies.append((self.ptr, other.ptr))
        return self


def device(kind, index):
    return (kind, index)


def as_tensor(obj, device=None):
    cai = obj.__cuda_array_interface__
    assert cai["version"] == 3 and cai["stream"] is None, cai
    assert cai["typestr"] == "<i2" and cai["strides"] is None, cai
    assert device == ("cuda", 0), device
    return Tensor(cai["shape"], int16, cai["data"][0])


copies = []


class _Cuda:
    current = None

    def ExternalStream(self, ptr, device=None):
        return ("stream", ptr)

    def default_stream(self, device=None):
        return ("stream", 0)

    @contextlib.contextmanager
    def stream(self, s):
        before, self.current = self.current, s
        try:
            yield
        finally:
            self.current = before


cuda = _Cuda()
