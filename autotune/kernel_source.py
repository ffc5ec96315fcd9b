"""Finding a cached entry's kernel again, without running what a cache entry names.

`python -m autotune verify KEY` re-runs the kernel a cache entry was tuned for.  The entry says
where that kernel lives (a module, or the script that defined it), but a cache directory can be
written by others, so its word is not a reason to import anything: the file is located without
executing it, parsed, and loaded only if it defines the kernel with the very source that was
tuned (its SHA-256 is in the entry).  A script is never run whole: only its imports, its
definitions and its plain assignments are executed, so its tuning and printing do not happen.
"""
from __future__ import annotations

import ast
import hashlib
import importlib
import importlib.machinery
import inspect
import os
import sys
import types


class KernelNotFound(ValueError):
    """The kernel cannot be found, or the file found is not the kernel that was tuned."""


def source_of(fn) -> str:
    """A kernel's source through the wrappers around it (@heuristics, @autotune): what caches
    key on and what `verify` compares."""
    while not hasattr(fn, "src") and hasattr(fn, "fn"):
        fn = fn.fn
    return getattr(fn, "src", None) or inspect.getsource(getattr(fn, "fn", fn))


def source_digest(source: str) -> str:
    """The digest of a kernel's source that a cache entry keeps, to recognise that kernel later."""
    return hashlib.sha256(source.encode()).hexdigest()


def locate_module(name: str) -> str | None:
    """The source file of module `name`, found on sys.path without importing it or its packages."""
    search, spec = None, None
    parts = name.split(".")
    for i in range(len(parts)):
        spec = importlib.machinery.PathFinder.find_spec(".".join(parts[:i + 1]), search)
        if spec is None:
            return None
        search = spec.submodule_search_locations
        if i < len(parts) - 1 and search is None:
            return None
    origin = spec.origin if spec is not None else None
    return origin if origin and origin.endswith(".py") and os.path.isfile(origin) else None


def defined_source(path: str, qualname: str) -> str | None:
    """The text of function `qualname` in the file at `path`, decorators included (as
    inspect.getsource gives it), or None when the file does not define it at its top level."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        tree = ast.parse(text, path)
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError, RecursionError):
        return None
    body, node = tree.body, None
    for part in qualname.split("."):
        node = next((n for n in body if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name == part), None)
        if node is None:
            return None
        body = node.body
    if not isinstance(node, ast.FunctionDef):
        return None
    first = min([d.lineno for d in node.decorator_list] + [node.lineno])
    lines = text.splitlines(keepends=True)
    return "".join(lines[first - 1:node.end_lineno])


def _definitions_of(path: str, name: str) -> types.ModuleType:
    """The module a script would make, from its imports, definitions and plain assignments only."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    kept = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Assign,
            ast.AnnAssign)
    tree.body = [n for n in tree.body if isinstance(n, kept)]
    module = types.ModuleType(name)
    module.__file__ = path
    here = os.path.dirname(os.path.abspath(path))
    sys.path.insert(0, here)        # its own imports resolve as they would when it runs
    sys.modules[name] = module      # (a kernel's source is looked up through its module)
    try:
        exec(compile(tree, path, "exec"), module.__dict__)
    except Exception as e:
        raise KernelNotFound(f"{path}: its definitions failed to run: {type(e).__name__}: {e}") from None
    finally:
        sys.path.remove(here)
    return module


def find_kernel(call: dict, origin: str | None = None):
    """The jitted kernel of a cache entry's call record.

    `origin`: where the user says the kernel is (a script's path or a module's name); without it,
    the module the entry names.  Either way the file must define the kernel with the source that
    was tuned before anything in it runs."""
    if not isinstance(call, dict) or not isinstance(call.get("name"), str):
        raise KernelNotFound("this entry does not say which kernel it tuned (entries before call records)")
    qualname, module = call["name"], call.get("module")
    if "<locals>" in qualname:
        raise KernelNotFound(f"{qualname} was defined inside a function: it cannot be loaded again")
    script = origin is not None and (origin.endswith(".py") or os.sep in origin)
    if origin is None and (not isinstance(module, str) or module == "__main__"):
        where = call.get("file")
        raise KernelNotFound(f"{qualname} was defined in a script ({where or 'unknown file'}): name it with "
                             f"--from {where or 'SCRIPT.py'} to load its definitions (its other statements do not run)")
    path = os.path.abspath(origin) if script else locate_module(origin or module)
    if path is None or not os.path.isfile(path):
        raise KernelNotFound(f"cannot find the source of {origin or module!r}")
    text = defined_source(path, qualname)
    if text is None:
        raise KernelNotFound(f"{path} defines no function {qualname}: not loading it")
    want = call.get("source_sha256")
    if want is None and origin is None:
        raise KernelNotFound(f"this entry records no digest of {qualname}'s source, so {path} cannot be checked "
                             f"before it is imported: name it with --from to load it anyway")
    if want is not None and source_digest(text) != want:
        raise KernelNotFound(f"{qualname} in {path} is not the source that was tuned (edited since, or another "
                             f"kernel): not loading it; re-tune to refresh the entry")
    obj = _definitions_of(path, "__minitriton_verify__") if script else importlib.import_module(origin or module)
    for part in qualname.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            raise KernelNotFound(f"{path} did not define {qualname} when loaded")
    while hasattr(obj, "fn") and not hasattr(obj, "cache_key"):
        obj = obj.fn
    if not hasattr(obj, "cache_key"):
        raise KernelNotFound(f"{qualname} in {path} is not a @jit kernel")
    return obj
