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
"""
from __future__ import annotations

from .dtypes import constexpr_value
from . import atomics, block_ptr, memory
from . import dtypes as D
from .tensor import tensor, to_tensor
from .shapes import broadcast_to
from .creation import arange

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
