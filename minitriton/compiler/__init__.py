"""Triton's `triton.compiler` names: the errors that code written for Triton catches (its tests
expect a refused kernel to raise `triton.compiler.errors.CompilationError`, the same class as
`minitriton.CompilationError`), and `compile(ASTSource(...))`, which checks a kernel for a
signature as Triton's compiler entry point would (source.py).  Nothing is compiled here."""
from . import errors, compiler
from .errors import CompilationError, CompileTimeAssertionFailure, UnsupportedLanguageConstruct
from .source import ASTSource, CompiledKernel, compile

__all__ = ["errors", "compiler", "CompilationError", "CompileTimeAssertionFailure", "UnsupportedLanguageConstruct",
           "ASTSource", "CompiledKernel", "compile"]
