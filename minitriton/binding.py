"""A launch's arguments and programs: tuple arguments and host tensor descriptors taken apart
into the scalars and arrays that are bound (and put together again inside the kernel), and the
program ids of a grid."""
from __future__ import annotations

import builtins
import functools

import numpy as np

from . import addresses, descriptors
from .tools.tensor_descriptor import TensorDescriptor
from .tools.experimental_descriptor import TmaDescKernelParam


def flat(bound: dict, constexprs) -> dict:
    """The arguments with every tuple argument (not a constexpr one) replaced by its members,
    named `name[i]` (nested: `name[i][j]`), and a host tensor descriptor by its array, shape and
    strides (`name.base`, `name.shape[i]`, ...), and a TMA descriptor of Triton 3.1 by the array of
its bytes, so that each is bound as an argument is."""
    out = {}

    def add(name, a):
        if isinstance(a, builtins.tuple):
            for i, x in enumerate(a):
                add(f"{name}[{i}]", x)
        elif isinstance(a, TensorDescriptor):
            out[f"{name}.base"] = a.base
            for what in ("shape", "strides"):
                for i, x in enumerate(getattr(a, what)):
                    out[f"{name}.{what}[{i}]"] = int(x)
        elif isinstance(a, TmaDescKernelParam) or callable(getattr(a, "tma_desc_cpu_ptr", None)):
            out[name] = tma_bytes(name, a)   # Triton 3.1's nvTmaDesc: a pointer to its bytes here
        elif isinstance(a, addresses.TensorWrapper):
            out[name] = a.view
        else:
            out[name] = a
    for name, a in bound.items():
        if name in constexprs:
            out[name] = a
        else:
            add(name, a)
    return out


def tma_bytes(name, param) -> np.ndarray:
    """The bytes of a TMA descriptor argument: TmaDescKernelParam's, or those of any object with
    Triton's `tma_desc_cpu_ptr()` (libraries wrap their own buffers so), found by its address."""
    desc = getattr(param, "desc", None)
    if isinstance(desc, np.ndarray):
        return desc
    found = addresses.registered_array(int(param.tma_desc_cpu_ptr()))
    if found is None:
        raise TypeError(f"argument '{name}': its tma_desc_cpu_ptr() is the address of no array minitriton knows; "
                        f"take the descriptor buffer's address with minitriton.data_ptr(buffer)")
    return found


def unflat(bound: dict, values: dict, constexprs) -> dict:
    """The bound arguments again, each tuple rebuilt from its members' kernel values (a named
    tuple as its own class), each host tensor descriptor made a kernel's one."""
    def build(name, a):
        if isinstance(a, TensorDescriptor):
            return descriptors.make_tensor_descriptor(
                values[f"{name}.base"], [values[f"{name}.shape[{i}]"] for i in range(len(a.shape))],
                [values[f"{name}.strides[{i}]"] for i in range(len(a.strides))], a.block_shape, a.padding)
        if not isinstance(a, builtins.tuple):
            return values[name]
        items = [build(f"{name}[{i}]", x) for i, x in enumerate(a)]
        return type(a)(*items) if hasattr(a, "_fields") else builtins.tuple(items)
    return {name: (values[name] if name in constexprs else build(name, a)) for name, a in bound.items()}


@functools.lru_cache(maxsize=64)
def program_ids(grid) -> np.ndarray:
    """(programs x 3) ids of a grid, x fastest (read-only: shared by every launch on it)."""
    gx, gy, gz = grid
    z, y, x = np.meshgrid(np.arange(gz), np.arange(gy), np.arange(gx), indexing="ij")
    pids = np.stack([x.reshape(-1), y.reshape(-1), z.reshape(-1)], axis=1).astype(np.int32)
    pids.flags.writeable = False
    return pids
