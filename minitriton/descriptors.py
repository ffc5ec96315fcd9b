"""Tensor descriptors: `tl.make_tensor_descriptor` and the TMA-style block loads and stores
Triton's newer kernels and tutorials use (`desc.load(offsets)`, `desc.store(offsets, value)`,
`tl.load_tensor_descriptor`, `tl.store_tensor_descriptor`, `desc.atomic_add` and its kin).

A descriptor names an N-d array in global memory (base pointer, shape, strides, the last
stride 1) and the block shape every access moves.  An access at `offsets` covers the box
[offsets, offsets + block_shape): what lies outside the array reads as the padding (zero, or
NaN when asked) and is never written, in every dimension at once, as a GPU's tensor memory
accelerator does.  A descriptor is a block pointer whose every dimension is checked, so loads
and stores share block_ptr's and memory's paths (lockstep, strided views, masks).

A descriptor also comes from the host: `TensorDescriptor(array, shape, strides, block_shape)`
(minitriton.tools.tensor_descriptor) passed as a kernel argument arrives here as one.  Triton's
checks apply: 1 to 5 dimensions, block sizes powers of 2 with at least 16 bytes in the last
dimension, a contiguous last dimension, no NaN padding of integers.

Triton 3.1 to 3.3 had an older form, kept here for the kernels written against it: a descriptor
is 128 bytes in memory (made on the host by minitriton.tools.experimental_descriptor, or by a
kernel with `tl.extra.cuda.experimental_device_tensormap_create1d/2d`), and
`tl._experimental_descriptor_load(desc_pointer, offsets, shape, dtype)`,
`tl._experimental_descriptor_store(desc_pointer, value, offsets)` and
`tl._experimental_reinterpret_tensor_descriptor(desc_pointer, block_shape, dtype)` read those
bytes each time and act as the tensor descriptor they describe.
"""
from __future__ import annotations

import numpy as np

from .dtypes import constexpr_value
from . import addresses, atomics, block_ptr, memory
from . import dtypes as D
from .tensor import tensor, to_tensor
from .shapes import broadcast_to
from .creation import arange
from .tools import experimental_descriptor as tma

PADDINGS = ("zero", "nan")


class tensor_descriptor:
    """What `tl.make_tensor_descriptor` returns: shape and strides as the kernel gave them
    (integers or scalar blocks), the block shape as ints."""

    def __init__(self, base, shape, strides, block_shape, padding="zero"):
        self.base, self.shape, self.strides = base, list(shape), list(strides)
        self.block_shape, self.padding = list(block_shape), padding

    @property
    def dtype(self):
        """The element type (Triton's `desc.dtype`)."""
        return self.base.dtype.element_ty

    def __repr__(self):
        return f"tensor_descriptor({self.dtype}, block_shape={self.block_shape})"

    def _box(self, offsets, what):
        offsets = block_ptr.integer_list(offsets, len(self.block_shape), "offsets", what)
        dims = range(len(self.block_shape))
        box = block_ptr.block_pointer(self.base, self.shape, self.strides, offsets,
                                      self.block_shape, list(dims)[::-1])
        return block_ptr.pointers_and_mask(box, dims, what)      # every dimension checked

    def load(self, offsets, cache_modifier="", eviction_policy=""):
        pointers, mask = self._box(offsets, "tensor descriptor load")
        if mask is None:
            return memory.load(pointers, cache_modifier=cache_modifier, eviction_policy=eviction_policy)
        other = float("nan") if self.padding == "nan" else 0
        return memory.load(pointers, mask=mask, other=other, cache_modifier=cache_modifier,
                           eviction_policy=eviction_policy)

    def _value(self, value, what):
        value = to_tensor(value)
        if list(value.shape) != self.block_shape:
            if value.shape:
                raise ValueError(f"{what}: value of shape {list(value.shape)} is not the descriptor's block shape "
                                 f"{self.block_shape}")
            value = broadcast_to(value, tuple(self.block_shape))
        return value

    def store(self, offsets, value):
        value = self._value(value, "tensor descriptor store").to(self.dtype)   # cast to the descriptor's type
        pointers, mask = self._box(offsets, "tensor descriptor store")
        memory.store(pointers, value, mask=mask)

    def _reduce(self, op, allowed, offsets, value):
        what = f"tensor descriptor atomic_{op}"
        if self.dtype not in allowed:
            raise TypeError(f"{what}: the descriptor's type {self.dtype} is not supported (as in Triton)")
        value = self._value(value, what)
        pointers, mask = self._box(offsets, what)
        getattr(atomics, f"atomic_{op}")(pointers, value, mask=mask)

    # the element types Triton reduces into through a descriptor where the GPU has no TMA
    # reductions (its fallback, which a CPU is): min and max of half floats are refused there
    def atomic_add(self, offsets, value):
        self._reduce("add", (D.uint32, D.int32, D.uint64, D.float32, D.float16, D.bfloat16), offsets, value)

    def atomic_min(self, offsets, value):
        self._reduce("min", (D.uint32, D.int32, D.uint64, D.int64), offsets, value)

    def atomic_max(self, offsets, value):
        self._reduce("max", (D.uint32, D.int32, D.uint64, D.int64), offsets, value)

    def atomic_and(self, offsets, value):
        self._reduce("and", (D.uint32, D.int32, D.uint64, D.int64), offsets, value)

    def atomic_or(self, offsets, value):
        self._reduce("or", (D.uint32, D.int32, D.uint64, D.int64), offsets, value)

    def atomic_xor(self, offsets, value):
        self._reduce("xor", (D.uint32, D.int32, D.uint64, D.int64), offsets, value)


    # -- gather and scatter of rows (TMA's row gather: a 2-d descriptor whose block is one row)
    def _rows(self, x_offsets, y_offset, what):
        if len(self.block_shape) != 2 or self.block_shape[0] != 1:
            raise ValueError(f"{what}: needs a 2-d descriptor whose block is one row ([1, N]), got block shape "
                             f"{self.block_shape}")
        rows = to_tensor(x_offsets)
        if len(rows.shape) != 1 or not rows.dtype.is_int():
            raise TypeError(f"{what}: x_offsets must be a 1-d block of integers, got {rows!r}")
        y = block_ptr.integer_list(y_offset, 1, "y_offset", what)[0]
        cols = y + arange(0, self.block_shape[1])
        pointers = self.base + rows[:, None] * self.strides[0] + cols[None, :] * self.strides[1]
        inside = ((rows >= 0) & (rows < self.shape[0]))[:, None] & ((cols >= 0) & (cols < self.shape[1]))[None, :]
        return pointers, inside

    def gather(self, x_offsets, y_offset):
        """The rows `x_offsets` of the array, columns [y_offset, y_offset + N): a block of
        len(x_offsets) x N (what lies outside the array reads as the padding)."""
        pointers, inside = self._rows(x_offsets, y_offset, "tensor descriptor gather")
        return memory.load(pointers, mask=inside, other=float("nan") if self.padding == "nan" else 0)

    def scatter(self, value, x_offsets, y_offset):
        """Store a len(x_offsets) x N block to those rows (what lies outside is not written)."""
        pointers, inside = self._rows(x_offsets, y_offset, "tensor descriptor scatter")
        value = to_tensor(value)
        if list(value.shape) != list(pointers.shape):
            raise ValueError(f"tensor descriptor scatter: value of shape {list(value.shape)} is not "
                             f"{list(pointers.shape)} (one row per x offset)")
        memory.store(pointers, value.to(self.dtype), mask=inside)


def make_tensor_descriptor(base, shape, strides, block_shape, padding_option="zero"):
    if not isinstance(base, tensor) or base.buf is None or base.shape:
        raise TypeError(f"tl.make_tensor_descriptor: base must be a scalar pointer (an array argument), got {base!r}")
    shape_list = constexpr_value(shape)
    ndim = len(shape_list) if isinstance(shape_list, (tuple, list)) else 0
    if not 1 <= ndim <= 5:
        raise ValueError(f"tl.make_tensor_descriptor: expected 1 <= ndim <= 5 but got {ndim} dimensions")
    shape = block_ptr.integer_list(shape, ndim, "shape", "tl.make_tensor_descriptor")
    strides = block_ptr.integer_list(strides, ndim, "strides", "tl.make_tensor_descriptor")
    blocks = constexpr_value(block_shape)
    if not isinstance(blocks, (tuple, list)) or len(blocks) != ndim:
        raise ValueError(f"tl.make_tensor_descriptor: expected block_shape to have {ndim} dimensions, got {blocks!r}")
    blocks = [constexpr_value(b) for b in blocks]
    if not all(isinstance(b, int) and not isinstance(b, bool) for b in blocks):
        raise TypeError(f"tl.make_tensor_descriptor: block_shape must be compile-time integers, got {blocks!r}")
    for b in blocks:
        if b <= 0 or b & (b - 1):
            raise ValueError(f"tl.make_tensor_descriptor: block_shape must be powers of 2, got {blocks}")
    dtype = base.dtype.element_ty
    size = max(dtype.bits // 8, 1)
    if blocks[-1] * size < 16:
        raise ValueError(f"tl.make_tensor_descriptor: Descriptor block shape must have at least 16 bytes in the "
                         f"last dimension, but got {blocks[-1]} * {size} = {blocks[-1] * size} bytes")
    last = strides[-1]
    if isinstance(last, tensor):
        last = int(last.v.reshape(-1)[0]) if (last.v.reshape(-1) == last.v.reshape(-1)[0]).all() else None
    if last != 1:
        raise ValueError(f"tl.make_tensor_descriptor: the last dimension must be contiguous (stride 1), got {strides[-1]!r}")
    padding = constexpr_value(padding_option) or "zero"
    if padding not in PADDINGS:
        raise ValueError(f"tl.make_tensor_descriptor: padding_option must be 'zero' or 'nan', got {padding!r}")
    if padding == "nan" and not dtype.is_floating():
        raise ValueError("tl.make_tensor_descriptor: padding option 'nan' is not supported for integer blocks")
    return tensor_descriptor(base, shape, strides, blocks, padding)


def load_tensor_descriptor(desc, offsets, cache_modifier="", eviction_policy=""):
    if not isinstance(desc, tensor_descriptor):
        raise TypeError(f"tl.load_tensor_descriptor needs a tensor descriptor, got {desc!r}")
    return desc.load(offsets, cache_modifier, eviction_policy)


def store_tensor_descriptor(desc, offsets, value):
    if not isinstance(desc, tensor_descriptor):
        raise TypeError(f"tl.store_tensor_descriptor needs a tensor descriptor, got {desc!r}")
    return desc.store(offsets, value)


# -- Triton 3.1-3.3's descriptors in memory (module doc) ------------------------------------
class nv_tma_desc_type(D.pointer_type):
    """The type of a TMA descriptor argument in Triton 3.1-3.3 (a const pointer to its bytes);
    libraries test for the name to learn that descriptors can be passed by value."""
    __slots__ = ()

    def __init__(self, const=True, address_space=0):
        super().__init__(D.uint8, address_space=address_space, const=const)

    def __repr__(self):
        return "nv_tma_desc_type"


def _scalar(values: np.ndarray):
    """A Python int when every program has the same value, else an integer scalar per program."""
    if (values == values[0]).all():
        return int(values[0])
    dtype = D.int32 if (np.abs(values) < 2 ** 31).all() else D.int64
    return tensor(values.astype(dtype.np), dtype, ())


def _byte_pointer(p) -> bool:
    return isinstance(p, tensor) and p.buf is not None and not p.shape and p.dtype.element_ty in (D.int8, D.uint8)


def _desc_bytes(desc_pointer, what) -> np.ndarray:
    if not _byte_pointer(desc_pointer):
        raise TypeError(f"{what}: desc_pointer must be a scalar pointer to the descriptor's bytes (a TMA descriptor "
                        f"argument, or an int8/uint8 array), got {desc_pointer!r}")
    return np.asarray(memory.load(desc_pointer + arange(0, tma.TMA_DESC_SIZE)).v)


def _experimental_reinterpret_tensor_descriptor(desc_ptr, block_shape, dtype):
    """The tensor descriptor the 128 bytes at `desc_ptr` describe, moving `block_shape` blocks of
    `dtype`.  The block must be the one the descriptor was made for, and the element size its."""
    return _described(desc_ptr, block_shape, dtype, "tl._experimental_reinterpret_tensor_descriptor")


def _described(desc_ptr, block_shape, dtype, what):
    dtype = constexpr_value(dtype)
    if not isinstance(dtype, D.dtype) or isinstance(dtype, D.pointer_type):
        raise TypeError(f"{what}: dtype must be an element type (tl.float16, ...), got {dtype!r}")
    blocks = constexpr_value(block_shape)
    blocks = [constexpr_value(b) for b in (blocks if isinstance(blocks, (list, tuple)) else [blocks])]
    try:
        w = tma.read(_desc_bytes(desc_ptr, what))
    except ValueError as e:
        raise ValueError(f"{what}: {e}") from None
    rank, size = int(w[0, 2]), int(w[0, 3])
    if not ((w[:, 2] == rank) & (w[:, 3] == size)).all() or not (w[:, 9:9 + rank] == w[0, 9:9 + rank]).all():
        raise NotImplementedError(f"{what}: programs running together read descriptors of different ranks, element "
                                  f"sizes or blocks")
    made_for = w[0, 9:9 + rank].tolist()
    if blocks != made_for:
        raise ValueError(f"{what}: the block shape {blocks} is not the descriptor's {made_for}")
    if max(dtype.bits // 8, 1) != size:
        raise ValueError(f"{what}: {dtype} has {max(dtype.bits // 8, 1)}-byte elements, the descriptor {size}-byte ones")
    address = tensor(w[:, 1].copy(), D.int64, ())
    base = addresses.cast_to_pointer(address, D.pointer_type(dtype))
    if not np.asarray(base.v).all():
        raise ValueError(f"{what}: the descriptor's global address is in no array this launch can see: pass the array "
                         f"as an argument too, or take its address with minitriton.data_ptr(array)")
    dims = [_scalar(w[:, 4 + i]) for i in range(rank)]
    strides = [1] * rank
    for i in range(rank - 2, -1, -1):
        strides[i] = strides[i + 1] * dims[i + 1]
    return tensor_descriptor(base, dims, strides, made_for)


def _experimental_descriptor_load(desc_pointer, offsets, shape, dtype):
    return _described(desc_pointer, shape, dtype, "tl._experimental_descriptor_load").load(offsets)


def _experimental_descriptor_store(desc_pointer, value, offsets):
    value = to_tensor(value)
    return _described(desc_pointer, list(value.shape), value.dtype, "tl._experimental_descriptor_store").store(
        offsets, value)


def write_descriptor(desc_ptr, global_address, load_size, global_size, element_ty, what):
    """Write the 128 bytes of a descriptor at `desc_ptr` in each program (the device-side
    creation of `tl.extra.cuda.experimental_device_tensormap_create1d/2d`)."""
    if not _byte_pointer(desc_ptr):
        raise TypeError(f"{what}: desc_ptr must be a scalar pointer to int8/uint8 memory of at least "
                        f"{tma.TMA_DESC_SIZE} bytes, got {desc_ptr!r}")
    if not isinstance(global_address, tensor) or global_address.buf is None or global_address.shape:
        raise TypeError(f"{what}: global_address must be a scalar pointer, got {global_address!r}")
    element_ty = constexpr_value(element_ty)
    if not isinstance(element_ty, D.dtype) or isinstance(element_ty, D.pointer_type):
        raise TypeError(f"{what}: element_ty must be an element type, got {element_ty!r}")
    sizes = [np.asarray(to_tensor(constexpr_value(s)).v, np.int64).reshape(-1) for s in global_size]
    blocks = [constexpr_value(b) for b in load_size]
    addr = np.asarray(addresses.space().addresses(global_address), np.int64).reshape(-1)
    rows = max([addr.size] + [s.size for s in sizes])
    per_row = [tma.words(a, [int(s[r % s.size]) for s in sizes], blocks, max(element_ty.bits // 8, 1), what)
               for r, a in enumerate(np.broadcast_to(addr, (rows,)).tolist())]
    raw = np.stack(per_row).view(desc_ptr.dtype.element_ty.np)
    memory.store(desc_ptr + arange(0, tma.TMA_DESC_SIZE), tensor(raw, desc_ptr.dtype.element_ty, (tma.TMA_DESC_SIZE,)))
