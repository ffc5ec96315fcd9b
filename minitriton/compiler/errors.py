"""`triton.compiler.errors`: the exception classes of minitriton.errors under Triton's names.

Triton raises CompileTimeAssertionFailure for a failed `tl.static_assert` (here the same class,
raised as it is) and UnsupportedLanguageConstruct for Python its front end does not take, a
CompilationError; minitriton raises CompilationError for that (with the cause's own type mixed
in, errors.py), so code that catches either name, as Triton's tests do, catches it."""
from ..errors import CompilationError, StaticAssertionError, TritonError

CompileTimeAssertionFailure = StaticAssertionError
UnsupportedLanguageConstruct = CompilationError

__all__ = ["CompilationError", "CompileTimeAssertionFailure", "TritonError", "UnsupportedLanguageConstruct"]
