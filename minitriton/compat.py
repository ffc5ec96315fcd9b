"""How much of Triton's language minitriton covers, measured rather than claimed.

`TRITON_LANGUAGE` records the public names of `triton.language` in Triton 3.x (its `__all__`,
plus the `tl.math` functions it re-exports), with the names its newest `__all__` added (2026:
`reduce_or`, `add`, `map_elementwise`, `bitonic_merge`, `async_task`, ...).  `coverage()` looks each one up in
`minitriton.language`: a name is *supported* when it resolves, and must otherwise raise
NotImplementedError naming itself (tests/test_language_ext.py holds both to that).
"""
from __future__ import annotations

from . import language as tl

# the Triton release whose language and runtime minitriton answers for: `minitriton.__version__`,
# so that library code choosing a path by Triton's version (`Version(triton.__version__) >=
# Version("3.0")`: libdevice from `tl.extra`, not `tl.math`) takes the one that runs here.  Every
# name of TRITON_LANGUAGE (which holds this release's `__all__` and later ones) resolves, and the
# older spellings libraries still write run too (docs/executor.md).
TRITON_VERSION = "3.5.0"

TRITON_LANGUAGE = (
    # types
    "dtype", "pointer_type", "block_type", "function_type", "const", "constexpr", "tensor", "void",
    "int1", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "bfloat16", "float32", "float64",
    "float8e4nv", "float8e5", "float8e4b8", "float8e5b16", "float8e4b15",
    # programs and ranges
    "program_id", "num_programs", "arange", "range", "static_range", "cdiv",
    # creation and shapes
    "full", "zeros", "zeros_like", "cast", "broadcast", "broadcast_to", "expand_dims", "reshape", "view",
    "ravel", "permute", "trans", "join", "split", "interleave", "cat", "flip", "gather", "where", "swizzle2d",
    # memory
    "load", "store", "make_block_ptr", "advance", "make_tensor_descriptor", "load_tensor_descriptor",
    "store_tensor_descriptor", "atomic_add", "atomic_and",
    "atomic_cas", "atomic_max", "atomic_min", "atomic_or", "atomic_xchg", "atomic_xor",
    # math
    "abs", "ceil", "clamp", "cos", "div_rn", "erf", "exp", "exp2", "fdiv", "floor", "fma", "log", "log2",
    "maximum", "minimum", "rsqrt", "sigmoid", "sin", "softmax", "sqrt", "sqrt_rn", "umulhi", "PropagateNan",
    "dot", "dot_scaled",
    # reductions and scans
    "reduce", "sum", "max", "min", "argmax", "argmin", "xor_sum", "associative_scan", "cumsum", "cumprod",
    "sort", "topk", "histogram",
    # random numbers
    "philox", "philox_impl", "randint", "randint4x", "rand", "rand4x", "randn", "randn4x",
    "uint_to_uniform_float", "pair_uniform_to_normal",
    # compiler hints and debugging
    "multiple_of", "max_contiguous", "max_constancy", "assume", "debug_barrier", "static_assert",
    "static_print", "device_print", "device_assert", "inline_asm_elementwise", "TRITON_MAX_TENSOR_NUMEL",
    # added by the newest __all__
    "tensor_descriptor", "add", "reduce_or", "map_elementwise", "pi32_t", "tuple", "extra", "math",
    "async_task", "bitonic_merge", "condition", "constexpr_type", "slice", "target_info",
    # added by Triton 3.7-3.9
    "squeeze", "unsqueeze", "atomic_load", "atomic_store", "atomic_poll", "expect_zero",
)


# names that run for part of what Triton accepts, and what the rest does
PARTLY = {"inline_asm_elementwise": "PTX arithmetic, bit, comparison and conversion instructions on registers, "
                                    "run by their meaning (minitriton/inline_asm.py); memory operands, branches and "
                                    "special registers raise NotImplementedError naming the assembly",
          "atomic_poll": "a value already stored, or a timeout; a poll with no timeout on a value a later program "
                         "would store raises NotImplementedError naming it (programs run in turn)"}


def coverage():
    """(supported names, names that raise NotImplementedError, names that fail otherwise)."""
    supported, refused, broken = [], [], []
    for name in TRITON_LANGUAGE:
        try:
            getattr(tl, name)
            supported.append(name)
        except NotImplementedError as e:
            (refused if name in str(e) else broken).append(name)
        except AttributeError:
            broken.append(name)
    return supported, refused, broken


def coverage_line() -> str:
    """The README's sentence on coverage, from coverage() and PARTLY."""
    supported, refused, broken = coverage()
    line = (f"Triton language coverage (minitriton/compat.py): {len(supported)} of {len(TRITON_LANGUAGE)} names "
            f"of `triton.language` run with Triton's semantics")
    partly = [n for n in supported if n in PARTLY]
    if partly:
        line += " (" + "; ".join(f"`{n}`: {PARTLY[n]}" for n in partly) + ")"
    if refused:
        line += (f"; {len(refused)} {'raises' if len(refused) == 1 else 'raise'} a clear NotImplementedError "
                 f"({', '.join(refused)})")
    if broken:
        line += f"; {len(broken)} are missing ({', '.join(broken)})"
    return line + "."
