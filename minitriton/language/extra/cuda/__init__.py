"""`triton.language.extra.cuda`: CUDA's libdevice, and the launch's thread counts."""
from .... import context
from . import libdevice
from ....dtypes import constexpr

__all__ = ["libdevice", "num_threads", "num_warps", "gdc_wait", "gdc_launch_dependents"]


def num_warps():
    """The launch's `num_warps`, a compile-time constant as in Triton."""
    return constexpr(context.current().num_warps)


def num_threads():
    """Threads per program: `num_warps` warps of 32 (a compile-time constant)."""
    return constexpr(context.current().num_warps * 32)


def gdc_wait():
    """Programmatic dependent launch (Hopper and later): wait until every program of the kernel
    launched before this one has finished and its writes are visible.  Launches here run one
    after another, so that has always happened: nothing to wait for."""


def gdc_launch_dependents():
    """Programmatic dependent launch: let the next kernel start before this one ends.  Launches
    here run one after another, so the next one starts after this one either way."""
