"""`triton.language.extra.cuda`: CUDA's libdevice, the launch's thread counts and clock, and the
NVVM intrinsics Triton wraps (intrinsics.py)."""
import time

import numpy as np

from .... import context, descriptors
from . import libdevice
from .... import dtypes as D
from ....dtypes import constexpr, constexpr_value
from ....tensor import tensor

from .intrinsics import (round_f32_to_tf32, min_xorsign_abs_f32, max_xorsign_abs_f32, min_nan_xorsign_abs_f32,
                         max_nan_xorsign_abs_f32, exp2_ftz, convert_custom_float8, convert_custom_float8_sm70,
                         convert_custom_float8_sm80)

__all__ = ["libdevice", "num_threads", "num_warps", "gdc_wait", "gdc_launch_dependents", "globaltimer",
           "experimental_device_tensormap_create1d", "experimental_device_tensormap_create2d",
           "experimental_tensormap_fenceproxy_acquire",
           "round_f32_to_tf32", "min_xorsign_abs_f32", "max_xorsign_abs_f32", "min_nan_xorsign_abs_f32",
           "max_nan_xorsign_abs_f32", "exp2_ftz", "convert_custom_float8",
           "convert_custom_float8_sm70", "convert_custom_float8_sm80"]

# Triton's other names here, refused by name: the SM a program runs on (a CPU runs none), and the
# fp4 pair conversion (its result for a NaN is not pinned down here, so it is not guessed)
NOT_YET = ("smid", "f32_to_e2m1x2_satfinite", "f32_to_e2m1x2")     # (the latter: Triton 3.7's name)


def __getattr__(name):
    if name in NOT_YET:
        raise NotImplementedError(f"tl.extra.cuda.{name} is not supported by minitriton yet")
    raise AttributeError(f"module 'triton.language.extra.cuda' has no attribute {name!r}")


def globaltimer():
    """The GPU's global nanosecond clock (%globaltimer) as an int64 scalar: the host's monotonic
    clock, read once for the programs running together (they run in lockstep)."""
    return tensor(np.array([time.monotonic_ns()], np.int64), D.int64, ())


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


def experimental_device_tensormap_create1d(desc_ptr, global_address, load_size, global_size, element_ty):
    """Triton 3.1-3.3: write a 1-d TMA descriptor (global_size elements from global_address,
    blocks of load_size) into the 128 bytes at desc_ptr (minitriton.tools.experimental_descriptor)."""
    descriptors.write_descriptor(desc_ptr, global_address, [load_size], [global_size], element_ty,
                                 "tl.extra.cuda.experimental_device_tensormap_create1d")


def experimental_device_tensormap_create2d(desc_ptr, global_address, load_size, global_size, element_ty):
    """Triton 3.1-3.3: write a 2-d TMA descriptor (a row-major global_size[0] x global_size[1]
    array at global_address, blocks of load_size) into the 128 bytes at desc_ptr."""
    what = "tl.extra.cuda.experimental_device_tensormap_create2d"
    load_size, global_size = constexpr_value(load_size), constexpr_value(global_size)
    if len(load_size) != 2 or len(global_size) != 2:
        raise ValueError(f"{what}: load_size and global_size need two entries each, got {load_size} and {global_size}")
    descriptors.write_descriptor(desc_ptr, global_address, load_size, global_size, element_ty, what)


def experimental_tensormap_fenceproxy_acquire(desc_ptr):
    """Make a descriptor written by this kernel visible to the TMA unit before it is used.  The
    bytes are read at each use here, so there is nothing to order."""
    if not isinstance(desc_ptr, tensor) or desc_ptr.buf is None:
        raise TypeError(f"tl.extra.cuda.experimental_tensormap_fenceproxy_acquire: desc_ptr must be a pointer, "
                        f"got {desc_ptr!r}")
