"""`import minitriton.language as tl`: the block language, Triton's names and meanings.  The names
live in language/core.py (Triton's `triton.language.core`), the library functions Triton writes in
the language are also reachable as language/standard.py (`triton.language.standard`), its random
numbers as language/random.py (`triton.language.random`)."""
from .core import *  # noqa: F401,F403
from .core import TENSOR_METHODS, TRITON_MAX_TENSOR_NUMEL, NOT_YET, __getattr__  # noqa: F401
from .core import (_experimental_descriptor_load, _experimental_descriptor_store,  # noqa: F401 (Triton 3.1-3.3)
                   _experimental_reinterpret_tensor_descriptor, _experimental_make_tensor_descriptor,
                   _experimental_tensor_descriptor)
from . import core, standard, extra, target_info, random  # noqa: F401
