"""`triton.language.extra.libdevice` as a module of its own, so that code written for Triton can
import a function from it (`from triton.language.extra.libdevice import fast_dividef`): every
function of minitriton.libdevice."""
from ...libdevice import *  # noqa: F401,F403
from ...libdevice import __all__, __getattr__  # noqa: F401 (names libdevice does not run: refused by name)
