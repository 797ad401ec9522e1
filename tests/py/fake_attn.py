"""Functions shaped like (and unlike) attention variants, for tests/python.rs:
the bridge's import, signature and supports checks, with no torch."""

NOT_A_FUNCTION = 42


def attention(q, k, v, causal=False):
    return q


def no_causal(q, k, v):
    return q


def with_kwargs(q, k, v, **options):
    return q


def two_args(q, k):
    return q


def refuses_d256(q, k, v, causal=False):
    return q


refuses_d256.attnscope_supports = lambda p: "D 256 is not tiled" if p["d"] == 256 else None


def raising_supports(q, k, v):
    return q


def _boom(problem):
    raise ValueError("supports exploded")


raising_supports.attnscope_supports = _boom


def checked(q, k, v, causal=False):
    """Asserts what the bridge hands over (with tests/py/fake_torch)."""
    import torch

    assert q.shape == (1, 8, 16, 64) and k.shape == v.shape == (1, 2, 64, 64), (q.shape, k.shape)
    assert q.dtype == k.dtype == torch.bfloat16, q.dtype
    assert (q.ptr, k.ptr, v.ptr) == (0x1000, 0x2000, 0x3000)
    assert torch.cuda.current == ("stream", 0x77), torch.cuda.current
    assert causal, "causal=True on a causal shape"
    return torch.Tensor(q.shape, q.dtype, 0x9000)


def wrong_shape(q, k, v, causal=False):
    return k
