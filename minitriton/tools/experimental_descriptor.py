"""`triton.tools.experimental_descriptor`: the TMA descriptors of Triton 3.1 to 3.3, built on
the host (`create_1d_tma_descriptor`, `create_2d_tma_descriptor`, `TmaDescKernelParam`) and read
in a kernel by `tl._experimental_descriptor_load` / `_experimental_descriptor_store`.  Kernels of
that time (the persistent-matmul tutorial's TMA variant, FBGEMM's fp8 GEMMs, TorchInductor's TMA
templates) pass them beside ordinary pointers.

On a GPU the descriptor is CUDA's opaque 128-byte `CUtensorMap`.  Here the same 128 bytes hold
sixteen little-endian int64 words that minitriton writes and reads itself:

    [MAGIC, global address, rank, element size in bytes, dims (outermost first, 5 slots),
     block dims (5 slots), 0]

so a descriptor is data like any other: copied into a device array (Triton 3.0's host code),
written by a kernel into a workspace (`tl.extra.cuda.experimental_device_tensormap_create2d`)
or passed as an argument, and read back by the kernel that loads through it.  The dims describe a
row-major array whose last dimension is contiguous, as TMA's tiled mode does; the block dims are
the block every load and store through it moves (CUDA clips the box's inner dimension to 128
bytes and the compiler issues several copies; the block is what a kernel sees, so it is kept).
"""
from __future__ import annotations

import numpy as np

__all__ = ["TmaDescKernelParam", "create_1d_tma_descriptor", "create_2d_tma_descriptor"]

TMA_DESC_SIZE = 128
MAGIC = 0x6D74746D61646573       # "sedamttm": marks the bytes as a descriptor minitriton wrote
MAX_RANK = 5
ELEMENT_SIZES = (1, 2, 4, 8)


def _int(name, value, what) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{what}: {name} must be an integer, got {value!r}")
    return int(value)


def words(address, dims, block_dims, element_size, what="a TMA descriptor") -> np.ndarray:
    """The descriptor's sixteen int64 words, the arguments checked as TMA checks them (1 to 5
    dimensions, positive sizes, a block no larger than 256 in any dimension, 1/2/4/8-byte
    elements, a 16-byte-aligned address)."""
    dims, block_dims = list(dims), list(block_dims)
    if not 1 <= len(dims) <= MAX_RANK:
        raise ValueError(f"{what}: expected 1 to {MAX_RANK} dimensions, got {len(dims)}")
    if len(block_dims) != len(dims):
        raise ValueError(f"{what}: {len(dims)} dims but {len(block_dims)} block dims")
    dims = [_int("a dim", d, what) for d in dims]
    block_dims = [_int("a block dim", b, what) for b in block_dims]
    if min(dims) <= 0 or min(block_dims) <= 0 or max(block_dims) > 256:
        raise ValueError(f"{what}: dims must be positive and block dims between 1 and 256, got dims {dims} and "
                         f"block dims {block_dims}")
    element_size = _int("element_size", element_size, what)
    if element_size not in ELEMENT_SIZES:
        raise ValueError(f"{what}: element_size must be 1, 2, 4 or 8 bytes, got {element_size}")
    address = _int("the address", address, what)
    if address % 16:
        raise ValueError(f"{what}: the global address {address:#x} is not 16-byte aligned, as TMA needs")
    out = np.zeros(TMA_DESC_SIZE // 8, np.int64)
    out[:4] = MAGIC, address, len(dims), element_size
    out[4:4 + len(dims)] = dims
    out[9:9 + len(dims)] = block_dims
    return out


def fill(desc: np.ndarray, address, dims, block_dims, element_size, what="a TMA descriptor"):
    """Write a descriptor into the first 128 bytes of `desc` (a numpy array of bytes)."""
    if not isinstance(desc, np.ndarray) or desc.dtype.itemsize != 1 or desc.size < TMA_DESC_SIZE \
            or not desc.flags.c_contiguous:
        raise TypeError(f"{what}: the descriptor must go into a contiguous numpy array of at least "
                        f"{TMA_DESC_SIZE} bytes (int8 or uint8), got {desc!r:.80}")
    desc.reshape(-1)[:TMA_DESC_SIZE] = words(address, dims, block_dims, element_size, what).view(desc.dtype)


def read(raw: np.ndarray) -> np.ndarray:
    """(rows x 16) int64 words from (rows x 128) bytes; ValueError if a row is not a descriptor."""
    w = np.ascontiguousarray(raw).view(np.uint8).view("<i8").reshape(raw.shape[0], -1)
    if not (w[:, 0] == MAGIC).all() or not ((w[:, 2] >= 1) & (w[:, 2] <= MAX_RANK)).all():
        raise ValueError("the bytes a TMA descriptor pointer points to are not a descriptor: make one with "
                         "triton.tools.experimental_descriptor.create_1d_tma_descriptor / create_2d_tma_descriptor, "
                         "triton.runtime.driver.active.utils.fill_1d_tma_descriptor / fill_2d_tma_descriptor, or "
                         "tl.extra.cuda.experimental_device_tensormap_create1d / create2d")
    return w


class TmaDescKernelParam:
    """A descriptor in host memory, passed to a kernel as an argument (Triton 3.1's kernel
    parameter of type nvTmaDesc).  `desc` holds its 128 bytes."""
    TMA_DESC_SIZE = TMA_DESC_SIZE

    def __init__(self, ptr, dims, block_dims, element_size):
        self.desc = np.zeros(TMA_DESC_SIZE, np.uint8)
        fill(self.desc, ptr, dims, block_dims, element_size, "TmaDescKernelParam")

    def tma_desc_cpu_ptr(self) -> int:
        """The address of the descriptor's bytes."""
        return int(self.desc.__array_interface__["data"][0])

    def __repr__(self):
        w = self.desc.view("<i8")
        rank = int(w[2])
        return (f"TmaDescKernelParam(dims={w[4:4 + rank].tolist()}, block_dims={w[9:9 + rank].tolist()}, "
                f"element_size={int(w[3])})")


def create_1d_tma_descriptor(ptr, dim, block_dim, element_size) -> TmaDescKernelParam:
    return TmaDescKernelParam(ptr, [dim], [block_dim], element_size)


def create_2d_tma_descriptor(ptr, dim1, dim0, block_dim1, block_dim0, element_size) -> TmaDescKernelParam:
    """`dim1` rows of `dim0` contiguous elements, moved in blocks of block_dim1 x block_dim0."""
    return TmaDescKernelParam(ptr, [dim1, dim0], [block_dim1, block_dim0], element_size)
