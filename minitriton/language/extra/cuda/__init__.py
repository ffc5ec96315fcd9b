"""`triton.language.extra.cuda`: CUDA's libdevice."""
from .... import libdevice

__all__ = ["libdevice"]
