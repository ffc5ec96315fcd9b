"""`triton.language.standard`, the module of Triton's library functions written in the language
(sum, max, sort, topk, softmax, ...), by the name Triton code imports them from
(`from triton.language.standard import _log2, sum, zeros_like`), with the two helpers of its
bitonic sort that such code takes along (`_log2`, `_is_power_of_two`)."""
import builtins

from .core import *  # noqa: F401,F403 (the library functions are the language's own here)
from ..aggregates import constexpr_function
from .core import _unwrap_if_constexpr


@constexpr_function
def _log2(i):
    """log2 of a power of two (of the largest power of two below any other positive number)."""
    n = int(_unwrap_if_constexpr(i))
    return builtins.max(n.bit_length() - 1, 0)   # (max is tl.max in this module)


@constexpr_function
def _is_power_of_two(i):
    n = int(_unwrap_if_constexpr(i))
    return n != 0 and n & (n - 1) == 0
