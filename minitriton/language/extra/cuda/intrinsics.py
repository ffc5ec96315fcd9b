"""The GPU instructions `triton.language.extra.cuda` wraps, computed by their definition: TF32
rounding, the xorsign minimum and maximum of magnitudes, `ex2.approx.ftz`, and the software fp8
conversions of GPUs before Hopper (`convert_custom_float8_sm80` / `_sm70`).

The fp8 conversions are Triton's PTX sequences for float8e4b15 (exponent bias 15, 3 mantissa
bits), written here as the bit arithmetic they do, so a kernel gets the GPU's bits: up, the byte's
sign and 7 low bits move to an fp16's sign and bits 7-13 (0x7f is 1.875; there is no NaN); down,
an fp16's magnitude is clamped to 1.75 (a NaN or infinity becomes 1.75), doubled, rounded half up
at its high byte, and given the fp16's sign.  An fp32 goes to fp16 by truncation first, as in
Triton.  This differs from `x.to(tl.float8e4b15)`, the standard cast, which rounds to nearest
even and keeps NaN.
"""
from __future__ import annotations

import numpy as np

from .... import dtypes as D, ptx
from ....arithmetic import rows_aligned
from ....dot import round_to_tf32
from ....casts import cast
from ....dtypes import constexpr_value
from ....tensor import broadcast_shape, tensor, to_tensor

PROPAGATE_NONE, PROPAGATE_ALL = 0, 0xFFFF      # tl.PropagateNan's values
EX2_FTZ = ptx.decode("ex2.approx.ftz.f32")[2]   # the instruction exp2_ftz wraps, as inline assembly runs it


def _fp32(name, *xs):
    ts = [to_tensor(x, tensor(None, D.float32, ())) for x in xs]
    for t in ts:
        if t.dtype is not D.float32:
            raise TypeError(f"tl.extra.cuda.{name} takes fp32 blocks (as in Triton), got {t.dtype}")
    shape = ts[0].shape
    for t in ts[1:]:
        shape = broadcast_shape(shape, t.shape)
    return [rows_aligned(t, len(shape), D.float32) for t in ts], shape


def round_f32_to_tf32(x, rounding):
    """fp32 rounded to TF32's 10 mantissa bits (the 13 low bits cleared), ties to even ("rn") or
    away from zero ("rna"); NaN and infinity stay as they are."""
    rounding = constexpr_value(rounding)
    if rounding not in ("rn", "rna"):
        raise AssertionError('rounding must be "rn" or "rna"')
    (v,), shape = _fp32("round_f32_to_tf32", x)
    return tensor(round_to_tf32(v, rounding), D.float32, shape)


def _xorsign(name, pick_nan, pick_number):
    def op(a, b, propagate_nan=PROPAGATE_NONE):
        propagate = constexpr_value(propagate_nan)
        propagate = getattr(propagate, "value", propagate)
        if propagate not in (PROPAGATE_NONE, PROPAGATE_ALL):
            raise ValueError(f"Unexpected propagate_nan {propagate_nan}")
        (va, vb), shape = _fp32(name, a, b)
        with np.errstate(invalid="ignore"):
            mag = (pick_nan if propagate == PROPAGATE_ALL else pick_number)(np.abs(va), np.abs(vb))
        negative = np.signbit(va) != np.signbit(vb)
        out = np.where(np.isnan(mag), np.float32(np.nan), np.where(negative, -mag, mag)).astype(np.float32)
        return tensor(out, D.float32, shape)
    op.__name__ = name
    op.__doc__ = (f"The {'smaller' if 'min' in name else 'larger'} magnitude of a and b, negative when exactly one "
                  f"of them is (sign of a xor sign of b); a NaN loses to a number unless propagate_nan is ALL.")
    return op


min_xorsign_abs_f32 = _xorsign("min_xorsign_abs_f32", np.minimum, np.fmin)
max_xorsign_abs_f32 = _xorsign("max_xorsign_abs_f32", np.maximum, np.fmax)


def min_nan_xorsign_abs_f32(a, b):
    """Triton 3.7's name of PTX's min.NaN.xorsign.abs.f32: min_xorsign_abs_f32 with NaNs propagated."""
    return min_xorsign_abs_f32(a, b, propagate_nan=PROPAGATE_ALL)


def max_nan_xorsign_abs_f32(a, b):
    """max.NaN.xorsign.abs.f32: max_xorsign_abs_f32 with NaNs propagated."""
    return max_xorsign_abs_f32(a, b, propagate_nan=PROPAGATE_ALL)


def exp2_ftz(x):
    """2**x in fp32, subnormal inputs and results flushed to zero (ex2.approx.ftz.f32; computed
    exactly here, within the instruction's error)."""
    (v,), shape = _fp32("exp2_ftz", x)
    return tensor(EX2_FTZ(v), D.float32, shape)


def _bits(t: tensor, width: int) -> np.ndarray:
    kind = {8: D.uint8, 16: D.uint16}[width]
    return rows_aligned(cast(t, kind, bitcast=True), len(t.shape), kind).astype(np.uint32)


def convert_fp8e4b15_to_float16(arg):
    t = to_tensor(arg)
    b = _bits(t, 8)
    half = ((b & 0x80) << 8) | ((b & 0x7F) << 7)
    return cast(tensor(half.astype(np.uint16), D.uint16, t.shape), D.float16, bitcast=True)


def convert_float16_to_fp8e4b15(arg, has_minx2=True):
    t = to_tensor(arg)
    h = _bits(t, 16)
    mag = h & 0x7FFF
    mag = np.where(mag > 0x3F00, 0x3F00, mag)        # min with 1.75; a NaN also gives 1.75
    byte = (((2 * mag + 0x80) >> 8) & 0x7F) | ((h & 0x8000) >> 8)
    return cast(tensor(byte.astype(np.uint8), D.uint8, t.shape), D.float8e4b15, bitcast=True)


def convert_custom_float8(arg, dst_ty, fp_downcast_rounding=None, has_minx2=True):
    t = to_tensor(arg)
    dst = constexpr_value(dst_ty)
    dst = getattr(dst, "element_ty", dst)
    if t.dtype is D.float8e4b15:
        up = convert_fp8e4b15_to_float16(t)
        return cast(up, D.float32) if dst is D.float32 else up
    if t.dtype not in (D.float16, D.float32):
        raise TypeError(f"tl.extra.cuda.convert_custom_float8 converts fp8e4b15 to fp16/fp32 and fp16/fp32 to "
                        f"fp8e4b15, got {t.dtype}")
    if t.dtype is D.float32:
        t = cast(t, D.float16, fp_downcast_rounding="rtz")
    return convert_float16_to_fp8e4b15(t, has_minx2)


def convert_custom_float8_sm80(arg, dst_ty, fp_downcast_rounding=None):
    return convert_custom_float8(arg, dst_ty, fp_downcast_rounding, has_minx2=True)


def convert_custom_float8_sm70(arg, dst_ty, fp_downcast_rounding=None):
    return convert_custom_float8(arg, dst_ty, fp_downcast_rounding, has_minx2=False)
