"""`triton.language.extra`: vendor math libraries (`libdevice`, also as `cuda.libdevice`)."""
from ... import libdevice
from . import cuda

__all__ = ["libdevice", "cuda"]
