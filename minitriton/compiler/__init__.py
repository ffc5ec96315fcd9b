"""Triton's `triton.compiler` names that code written for Triton catches: its tests expect a
refused kernel to raise `triton.compiler.errors.CompilationError` (or `triton.compiler.CompilationError`),
the same class as `minitriton.CompilationError`.  Nothing is compiled here."""
from . import errors
from .errors import CompilationError, CompileTimeAssertionFailure, UnsupportedLanguageConstruct

__all__ = ["errors", "CompilationError", "CompileTimeAssertionFailure", "UnsupportedLanguageConstruct"]
