"""`triton.compiler.errors`: the exception classes of minitriton.errors under Triton's names.

Triton raises CompileTimeAssertionFailure for a failed `tl.static_assert` and
UnsupportedLanguageConstruct for Python its front end does not take, both CompilationErrors.
minitriton raises CompilationError for both (with the cause's own type mixed in, errors.py), so
the two names are that class: code that catches either, as Triton's tests do, catches them."""
from ..errors import CompilationError, TritonError

CompileTimeAssertionFailure = CompilationError
UnsupportedLanguageConstruct = CompilationError

__all__ = ["CompilationError", "CompileTimeAssertionFailure", "TritonError", "UnsupportedLanguageConstruct"]
