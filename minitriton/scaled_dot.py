"""`tl.dot_scaled`: a matrix product of microscaling (OCP MX) operands.

Each operand is fp4 (e2m1, two values to a byte along K), fp8 (e4m3 or e5m2, as bytes or as a
float8 block) or bf16/fp16, optionally with one scale per block of consecutive values along K:
e8m0 bytes (a power of two, 2**(s - 127); 0xff is NaN) per 32 values for the MX formats, or
fp8 e4m3 values per 16 (NVIDIA's nvfp4); the block is K over the scales' last dimension.  As Triton's interpreter does, the operands are
decoded and scaled to float32, then multiplied as `tl.dot` multiplies (fp32 accumulation).
"""
from __future__ import annotations

import ml_dtypes
import numpy as np

from . import dtypes as D
from .tensor import tensor, to_tensor
from .arithmetic import constexpr_value
from .dot import dot

FORMATS = ("e2m1", "e4m3", "e5m2", "bf16", "fp16")
SCALE_BLOCK = 32
# the 16 values of an e2m1 nibble: sign, 2 exponent bits (bias 1), 1 mantissa bit
_E2M1 = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0], np.float32)
_FP8 = {"e4m3": ml_dtypes.float8_e4m3fn, "e5m2": ml_dtypes.float8_e5m2}


def _bits(x: tensor, fmt: str, what: str) -> np.ndarray:
    """The bytes of an fp4/fp8 operand, given as uint8/int8 or as a float8 block."""
    if x.dtype in (D.uint8, D.int8):
        return x.v.astype(np.int64).astype(np.uint8)
    if x.dtype.is_fp8() and fmt != "e2m1":
        return np.ascontiguousarray(x.dtype.encode(x.v)).view(np.uint8)
    raise TypeError(f"tl.dot_scaled: {what} in format {fmt!r} must be a uint8 block (or float8 for e4m3/e5m2), "
                    f"got {x.dtype}")


def _decoded(x: tensor, fmt, k_axis: int, what: str) -> np.ndarray:
    """The operand's values as float32 (rows, ...), fp4 unpacked (low nibble first) along K."""
    fmt = constexpr_value(fmt)
    if fmt not in FORMATS:
        raise ValueError(f"tl.dot_scaled: {what}_format must be one of {FORMATS}, got {fmt!r}")
    if fmt in ("bf16", "fp16"):
        want = D.bfloat16 if fmt == "bf16" else D.float16
        if x.dtype is not want:
            raise TypeError(f"tl.dot_scaled: {what} in format {fmt!r} must be a {want} block, got {x.dtype}")
        return x.v.astype(np.float32)
    bits = _bits(x, fmt, what)
    if fmt != "e2m1":
        return bits.view(_FP8[fmt]).astype(np.float32)
    low, high = _E2M1[bits & 0xF], _E2M1[bits >> 4]
    axis = k_axis % bits.ndim
    both = np.stack([low, high], axis=axis + 1)
    return both.reshape(bits.shape[:axis] + (2 * bits.shape[axis],) + bits.shape[axis + 1:])


def _scaled(vals: np.ndarray, scale, k_axis: int, what: str) -> np.ndarray:
    """Values times their scales; `scale` is (M or N, K // block) whatever K's axis."""
    if scale is None:
        return vals
    s = to_tensor(scale)
    k = vals.shape[k_axis]
    other = vals.shape[-1] if k_axis == -2 else vals.shape[-2]
    if len(s.shape) != 2 or s.shape[0] != other or not s.shape[1] or k % s.shape[1]:
        raise ValueError(f"tl.dot_scaled: {what}_scale has shape {list(s.shape)}, expected [{other}, K // block] "
                         f"(one scale per block of {SCALE_BLOCK} values along K, K = {k})")
    if s.dtype in (D.uint8, D.int8, D.float8e8m0fnu):
        e = (np.ascontiguousarray(s.v).view(np.uint8) if s.dtype is D.float8e8m0fnu
             else s.v.astype(np.int64).astype(np.uint8))
        factor = (e.astype(np.uint32) << 23).view(np.float32)       # 2**(e - 127); e = 0 gives 0
        factor = np.where(e == 0xFF, np.float32(np.nan), factor)
    elif s.dtype is D.float8e4nv:
        factor = s.v.astype(np.float32)
    else:
        raise TypeError(f"tl.dot_scaled: {what}_scale must be e8m0 exponents (uint8 or float8e8m0fnu) or float8e4nv, "
                        f"got {s.dtype}")
    factor = np.repeat(factor, k // s.shape[1], axis=-1)          # (rows, M or N, K)
    if k_axis == -2:
        factor = np.swapaxes(factor, -1, -2)                        # (rows, K, N)
    return vals * factor


def dot_scaled(lhs, lhs_scale, lhs_format, rhs, rhs_scale, rhs_format, acc=None, fast_math=False,
               lhs_k_pack=True, rhs_k_pack=True, out_dtype=D.float32):
    if not (constexpr_value(lhs_k_pack) and constexpr_value(rhs_k_pack)):
        raise NotImplementedError("tl.dot_scaled with fp4 packed along M or N (k_pack=False) is not supported "
                                  "by minitriton yet")
    a, b = to_tensor(lhs), to_tensor(rhs)
    if len(a.shape) != 2 or len(b.shape) != 2:
        raise ValueError(f"tl.dot_scaled needs two 2-D blocks, got shapes {list(a.shape)} and {list(b.shape)}")
    va = _scaled(_decoded(a, lhs_format, -1, "lhs"), lhs_scale, -1, "lhs")
    vb = _scaled(_decoded(b, rhs_format, -2, "rhs"), rhs_scale, -2, "rhs")
    ta = tensor(np.ascontiguousarray(va, np.float32), D.float32, tuple(va.shape[1:]))
    tb = tensor(np.ascontiguousarray(vb, np.float32), D.float32, tuple(vb.shape[1:]))
    return dot(ta, tb, acc, input_precision="ieee", out_dtype=out_dtype)
