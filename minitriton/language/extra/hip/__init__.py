"""`triton.language.extra.hip`: AMD's device library, for kernels written for Triton's AMD backend
(`from triton.language.extra.hip import libdevice`): the same functions, with the same meanings,
as CUDA's (extra/libdevice.py)."""
from . import libdevice

__all__ = ["libdevice"]
