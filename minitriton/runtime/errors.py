"""`triton.runtime.errors`: where code written for Triton catches the launch's errors from
(`except OutOfResources` around a config that asks for more shared memory than the GPU has)."""
from ..errors import InterpreterError
from ..hypogpu import OutOfResources

__all__ = ["OutOfResources", "InterpreterError"]
