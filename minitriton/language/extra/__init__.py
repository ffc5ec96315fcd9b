"""`triton.language.extra`: vendor math libraries (`libdevice`, also as `cuda.libdevice` and
`hip.libdevice`)."""
from . import cuda, hip, libdevice

__all__ = ["libdevice", "cuda", "hip"]
