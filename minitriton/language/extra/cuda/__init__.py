"""`triton.language.extra.cuda`: CUDA's libdevice, and the launch's thread counts."""
from .... import context
from . import libdevice
from ....dtypes import constexpr

__all__ = ["libdevice", "num_threads", "num_warps"]


def num_warps():
    """The launch's `num_warps`, a compile-time constant as in Triton."""
    return constexpr(context.current().num_warps)


def num_threads():
    """Threads per program: `num_warps` warps of 32 (a compile-time constant)."""
    return constexpr(context.current().num_warps * 32)
