"""Element types of the block language.

Every type has a *storage* numpy dtype (how arrays hold it) and a *container* dtype (what
the executor computes in).  fp16 and bf16 live in float32 containers, rounded back to their
own precision after every operation: numpy has no fast half arithmetic, and IEEE float32
arithmetic followed by one rounding gives the same bits as native half arithmetic for
+, -, *, / (float32 carries more than twice the half mantissa plus two bits).
"""
from __future__ import annotations

import numpy as np
import ml_dtypes


class dtype:
    __slots__ = ("name", "np", "container", "kind", "bits")

    def __init__(self, name: str, np_dtype, container, kind: str, bits: int):
        self.name, self.np, self.container, self.kind, self.bits = name, np.dtype(np_dtype), np.dtype(container), kind, bits

    def is_floating(self):
        return self.kind == "f"

    def is_int(self):
        return self.kind in ("i", "u", "b")

    def is_bool(self):
        return self.kind == "b"

    def is_signed(self):
        return self.kind == "i"

    @property
    def primitive_bitwidth(self):
        return self.bits

    def __repr__(self):
        return self.name

    def __reduce__(self):
        return (_by_name, (self.name,))


class pointer_type:
    """The type of a pointer tensor: offsets (int64, in elements) into one argument's memory."""

    __slots__ = ("element_ty",)
    kind = "p"

    def __init__(self, element_ty: dtype):
        self.element_ty = element_ty

    def is_floating(self):
        return False

    def is_int(self):
        return False

    def __repr__(self):
        return f"pointer<{self.element_ty}>"

    def __eq__(self, other):
        return isinstance(other, pointer_type) and other.element_ty is self.element_ty

    def __hash__(self):
        return hash(("ptr", self.element_ty.name))


int1 = dtype("int1", np.bool_, np.bool_, "b", 1)
int8 = dtype("int8", np.int8, np.int8, "i", 8)
int16 = dtype("int16", np.int16, np.int16, "i", 16)
int32 = dtype("int32", np.int32, np.int32, "i", 32)
int64 = dtype("int64", np.int64, np.int64, "i", 64)
uint8 = dtype("uint8", np.uint8, np.uint8, "u", 8)
uint16 = dtype("uint16", np.uint16, np.uint16, "u", 16)
uint32 = dtype("uint32", np.uint32, np.uint32, "u", 32)
uint64 = dtype("uint64", np.uint64, np.uint64, "u", 64)
float16 = dtype("fp16", np.float16, np.float32, "f", 16)
bfloat16 = dtype("bf16", ml_dtypes.bfloat16, np.float32, "f", 16)
float32 = dtype("fp32", np.float32, np.float32, "f", 32)
float64 = dtype("fp64", np.float64, np.float64, "f", 64)

ALL = (int1, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float16, bfloat16, float32, float64)
_BY_NP = {d.np: d for d in ALL}
_BY_NAME = {d.name: d for d in ALL}


def _by_name(name):
    return _BY_NAME[name]


def from_numpy(np_dtype) -> dtype:
    """The block-language type of a numpy dtype, or a clear error."""
    try:
        return _BY_NP[np.dtype(np_dtype)]
    except (KeyError, TypeError):
        raise TypeError(f"unsupported element type {np_dtype!r}; minitriton supports "
                        + ", ".join(str(d.np) for d in ALL)) from None


def promote(a: dtype, b: dtype) -> dtype:
    """Triton's binary-operation type promotion (no implicit float64 from Python floats)."""
    if a is b:
        return a
    if a.is_floating() or b.is_floating():
        if not b.is_floating():
            return a
        if not a.is_floating():
            return b
        if a.bits != b.bits:
            return a if a.bits > b.bits else b
        return float32  # fp16 with bf16
    if a.is_bool():
        return b
    if b.is_bool():
        return a
    if a.bits != b.bits:
        return a if a.bits > b.bits else b
    return a if not a.is_signed() else b  # same width, mixed signedness: unsigned wins, as in C
