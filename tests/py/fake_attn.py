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
