"""A module that imports torch at the top, as the adapters and most user
code do: without torch it must fail with the one torch line."""

import torch  # noqa: F401


def attention(q, k, v, causal=False):
    return q
