"""`triton.language.core`: the block language's names and meanings, by the module name Triton
code also imports them from (`import triton.language.core as core`, `tl.core.reshape(...)`);
`minitriton.language` re-exports them.  Besides the language: `get_int_dtype` and
`_unwrap_if_constexpr`, which such code reads from it."""
from ..dtypes import (dtype, pointer_type, block_type, int1, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
                     float16, bfloat16, float32, float64, float8e4nv, float8e5, float8e4b8, float8e5b16, float8e4b15, float8e8m0fnu,
                     const, pi32_t, void, function_type, constexpr_type)
from ..tensor import tensor, constexpr, to_tensor, TritonTuple as tuple, Slice as slice  # tl.tuple, tl.slice
from ..aggregates import aggregate_replace, constexpr_function
from ..aggregates import aggregate as _aggregate  # noqa: F401 (triton.language.core._aggregate, the decorator's older name)
from .. import tensor as _tensor
from ..creation import program_id, num_programs, arange, zeros, zeros_like, full_like, cdiv
from ..casts import cast, full
from ..shapes import expand_dims, reshape, view, broadcast_to, broadcast, permute, trans, ravel, item, squeeze, unsqueeze
from ..elementwise import (exp, exp2, log, log2, sqrt, rsqrt, sin, cos, floor, ceil, sigmoid, erf, abs, maximum,
                           minimum, clamp, fma, where, PropagateNan, umulhi, fdiv, div_rn, sqrt_rn, swizzle2d,
                           map_elementwise)
from ..reductions import sum, max, min, argmax, argmin, xor_sum, reduce_or, cumsum, softmax
from ..hints import (multiple_of, max_contiguous, max_constancy, assume, debug_barrier, static_assert, static_print,
                     async_task)
from ..debug import device_print, device_assert, expect_zero
from ..inline_asm import inline_asm_elementwise
from ..ranges import range, static_range, condition
from ..user_reductions import reduce, associative_scan, cumprod
from ..rearrange import flip, sort, topk, bitonic_merge, gather, histogram, join, split, interleave, cat
from ..random import (philox, philox_impl, randint, randint4x, rand, rand4x, randn, randn4x, uint_to_uniform_float,
                     pair_uniform_to_normal)
from ..memory import load, store
from ..block_ptr import make_block_ptr, advance
from ..descriptors import (make_tensor_descriptor, load_tensor_descriptor, store_tensor_descriptor,
                           tensor_descriptor, _experimental_descriptor_load, _experimental_descriptor_store,
                           _experimental_reinterpret_tensor_descriptor)
from ..descriptors import make_tensor_descriptor as _experimental_make_tensor_descriptor  # Triton 3.3's names
from ..descriptors import tensor_descriptor as _experimental_tensor_descriptor
from ..descriptors import nv_tma_desc_type
from ..dtypes import float8e4nv as float8e4  # Triton 2.1's name of float8e4nv, renamed in 2.2
from ..atomics import (atomic_add, atomic_max, atomic_min, atomic_xchg, atomic_cas, atomic_and, atomic_or, atomic_xor,
                       atomic_load, atomic_store, atomic_poll)
from ..dot import dot
from ..scaled_dot import dot_scaled
from . import math  # tl.math.exp etc.
from .. import random  # tl.random.uint_to_uniform_float etc.
from ..arithmetic import logical_and, logical_or, add, sub, mul
from . import extra
from .extra.cuda import libdevice  # Triton 2.0's `tl.libdevice`, which kernels of then call
from . import target_info

# Triton's tensor methods (x.sum(0), x.cast(...), x.sort(), ...): these functions, with the tensor
# first, looked up by the tensor class (tensor.FROM_ABOVE) since this layer is above it
TENSOR_METHODS = (
    "cast", "broadcast_to", "expand_dims", "view", "permute", "ravel", "trans", "split", "join", "interleave",
    "squeeze", "unsqueeze", "store", "cdiv", "atomic_add", "atomic_and", "atomic_cas", "atomic_max", "atomic_min",
    "atomic_or", "atomic_xchg", "atomic_xor", "atomic_load", "atomic_store", "atomic_poll",
    "sum", "max", "min", "argmax", "argmin", "xor_sum", "reduce_or", "cumsum", "cumprod", "reduce", "associative_scan",
    "sort", "flip", "topk", "gather", "histogram", "sigmoid", "softmax", "exp", "exp2", "log", "log2", "sqrt",
    "rsqrt", "sqrt_rn", "sin", "cos", "abs", "floor", "ceil", "erf", "fma", "umulhi", "item")
_tensor.FROM_ABOVE["methods"].update({name: globals()[name] for name in TENSOR_METHODS})
_tensor.FROM_ABOVE["methods"].update(logical_and=logical_and, logical_or=logical_or)

# Triton names not implemented yet: using one says so by name (issue 7), never a wrong result.
TRITON_MAX_TENSOR_NUMEL = 1 << 20
NOT_YET = ()     # every name runs (inline_asm_elementwise: the PTX instructions of inline_asm.py)



def __getattr__(name):
    if name in NOT_YET:
        raise NotImplementedError(f"tl.{name} is not supported by minitriton yet")
    raise AttributeError(f"module 'minitriton.language' has no attribute {name!r}")

_INTS = {(1, True): int1, (1, False): int1, (8, True): int8, (16, True): int16, (32, True): int32,
         (64, True): int64, (8, False): uint8, (16, False): uint16, (32, False): uint32,
         (64, False): uint64}


@constexpr_function
def get_int_dtype(bitwidth, signed):
    """The integer type of that width and signedness (bit-level tricks on floats use it to pick
    the same-width integer: `x.to(get_int_dtype(x.dtype.primitive_bitwidth, True), bitcast=True)`)."""
    found = _INTS.get((int(_unwrap_if_constexpr(bitwidth)), bool(_unwrap_if_constexpr(signed))))
    if found is None:
        raise ValueError(f"get_int_dtype: no integer type of bitwidth {bitwidth} (signed={signed}); "
                         f"the widths are 1, 8, 16, 32 and 64")
    return found


def _tensor_member_fn(fn):
    """Triton's decorator that makes a function a tensor method too (`x.cdiv(4)`): libraries
    put it on their own @jit functions.  The method has the function's name."""
    name = getattr(fn, "__name__", None)
    if not isinstance(name, str):
        raise TypeError(f"_tensor_member_fn: {fn!r} has no name to be a tensor method by")
    _tensor.FROM_ABOVE["methods"][name] = fn
    return fn


def _add_reduction_docstr(name, return_indices_arg=None, tie_break_arg=None, dtype_arg=None):
    """Triton's docstring decorators, which libraries copy with its reductions and scans: they
    only write a docstring, so here they give the function back unchanged."""
    return lambda fn: fn


def _add_scan_docstr(name, dtype_arg=None):
    return lambda fn: fn


def _promote_reduction_input(t, _builder=None, _semantic=None):
    """A bfloat16 block reduced or scanned in float32, as Triton does before a user combine
    function (the GPU has no bfloat16 max, min or compare); any other type as it is."""
    t = to_tensor(t)
    return t.to(float32) if t.dtype == bfloat16 else t


def _unwrap_if_constexpr(o):
    """A constexpr's value, anything else as it is (Triton's helper of that name)."""
    return o.value if isinstance(o, constexpr) else o
