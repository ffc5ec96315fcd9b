"""`triton.tools`: host-side helpers of Triton's that kernels' callers use (tensor descriptors)."""
from . import tensor_descriptor

__all__ = ["tensor_descriptor"]
