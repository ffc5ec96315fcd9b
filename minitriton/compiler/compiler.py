"""`triton.compiler.compiler`, the module Triton's compiler entry point lives in, by the name
code written for Triton imports it from (`from triton.compiler.compiler import ASTSource,
CompiledKernel`): the names of source.py."""
from .source import ASTSource, CompiledKernel, compile  # noqa: F401

__all__ = ["ASTSource", "CompiledKernel", "compile"]
