"""minitriton: a Triton-compatible block language executed on the CPU."""
from .jit import jit, JITFunction, cdiv, next_power_of_2, one_program_at_a_time, reinterpret
from .memory import OutOfBoundsError
from .addresses import data_ptr
from . import language

__all__ = ["jit", "JITFunction", "cdiv", "next_power_of_2", "one_program_at_a_time", "reinterpret", "OutOfBoundsError", "data_ptr", "language"]
