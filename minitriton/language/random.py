"""`triton.language.random`, the module of Triton's Philox generator, by the name Triton code
imports it from (`from triton.language.random import philox, randint4x`): the same functions as
`tl.randint`, `tl.rand`, ... (minitriton/random.py), with the default round count Triton's
module exports."""
from ..random import (N_ROUNDS_DEFAULT, philox, philox_impl, randint, randint4x, rand, rand4x, randn, randn4x,  # noqa: F401
                      uint_to_uniform_float, pair_uniform_to_normal)
