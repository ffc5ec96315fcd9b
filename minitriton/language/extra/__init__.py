"""`triton.language.extra`: vendor math libraries (`libdevice`, also as `cuda.libdevice`)."""
from . import cuda, libdevice

__all__ = ["libdevice", "cuda"]
