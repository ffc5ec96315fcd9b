"""Loop-invariant code motion: pure block expressions that do not change inside a loop are
computed once before it.

Triton's compiler hoists `a_ptr + offs_m[:, None] * stride_am` out of the K loop; the
executor interprets the kernel, so every operation left in a loop costs its Python overhead
on every trip.  This pass rewrites the syntax tree (before lowering.py) so that, inside each
`for` and `while` body, every largest expression that is pure and reads only names the loop
never binds is evaluated once, into a fresh name, just before the loop.

Only expressions evaluated on every trip are moved (those of the body's own simple statements,
not of nested `if`s or the right side of `and`/`or`), and only pure operations: arithmetic,
comparisons, indexing, attribute reads, and calls to the language's pure functions or a
block's conversion methods.  Loads, atomics, stores and any unknown call stay where they are.
Tensors are values (no operation changes its operands), so sharing one between trips is safe.
An expression that would fail now fails before the loop, as Triton reports such errors at
compile time whatever the trip count.
"""
from __future__ import annotations

import ast
import itertools

from . import creation, dtypes, language

# what a call may be for its result to be hoisted: the language's functions that read no memory
_PURE = {getattr(language, n) for n in (
    "arange", "full", "zeros", "cdiv", "where", "expand_dims", "reshape", "view", "broadcast_to", "broadcast",
    "permute", "trans", "maximum", "minimum", "multiple_of", "max_contiguous", "max_constancy", "cast",
    "pointer_type")} | {creation.cdiv, dtypes.pointer_type}
_PURE_METHODS = {"to", "cast", "reshape", "broadcast_to", "expand_dims", "trans", "permute", "view"}
PREFIX = "__hoisted"


def hoist_invariants(fdef: ast.FunctionDef, globals_: dict) -> None:
    """Rewrite `fdef` in place (see the module docstring)."""
    analyser(fdef, globals_).statements(fdef.body)


def analyser(fdef: ast.FunctionDef, globals_: dict) -> "_Hoister":
    """What names in `fdef` stand for (`resolve`) and which expressions are pure (`pure`)."""
    local = {a.arg for a in fdef.args.posonlyargs + fdef.args.args + fdef.args.kwonlyargs}
    for node in ast.walk(fdef):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            local.add(node.id)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            local.update(node.names)  # rebound elsewhere: never a known pure function
    return _Hoister(globals_, local)


def reads(node, name) -> int:
    """How many times `node` reads `name` (an augmented assignment reads its target)."""
    n = 0
    for x in ast.walk(node):
        if isinstance(x, ast.Name) and x.id == name and isinstance(x.ctx, ast.Load):
            n += 1
        elif isinstance(x, ast.AugAssign) and isinstance(x.target, ast.Name) and x.target.id == name:
            n += 1
    return n


def _bound(nodes) -> set:
    """Every name a statement list may bind, however deeply (walrus and nested functions too)."""
    out = set()
    for n in nodes:
        for x in ast.walk(n):
            if isinstance(x, ast.Name) and isinstance(x.ctx, (ast.Store, ast.Del)):
                out.add(x.id)
            elif isinstance(x, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                out.add(x.name)
            elif isinstance(x, (ast.Global, ast.Nonlocal)):
                out.update(x.names)
            elif isinstance(x, (ast.Import, ast.ImportFrom)):
                out.update((a.asname or a.name).split(".")[0] for a in x.names)
    return out


class _Hoister:
    def __init__(self, globals_, local):
        self.globals, self.local = globals_, local
        self.counter = itertools.count()

    def statements(self, stmts: list) -> None:
        """Hoist out of every loop in `stmts` (innermost first), inserting before each loop."""
        i = 0
        while i < len(stmts):
            s = stmts[i]
            for field in ("body", "orelse", "finalbody"):
                inner = getattr(s, field, None)
                if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt) \
                        and not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    self.statements(inner)
            for h in getattr(s, "handlers", ()):
                self.statements(h.body)
            if isinstance(s, (ast.For, ast.While)) and not s.orelse:
                before = self.loop(s)
                stmts[i:i] = before
                i += len(before)
            i += 1

    def loop(self, loop) -> list:
        variant = _bound(loop.body) | (_bound([loop.target]) if isinstance(loop, ast.For) else set())
        temps: dict[str, str] = {}
        out = []

        def take(expr):
            key = ast.dump(expr)
            if key not in temps:
                temps[key] = name = f"{PREFIX}{next(self.counter)}"
                out.append(ast.copy_location(ast.Assign(targets=[ast.Name(name, ast.Store())], value=expr), expr))
            return ast.copy_location(ast.Name(temps[key], ast.Load()), expr)

        for s in loop.body:
            if isinstance(s, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr)) and s.value is not None:
                s.value = self.replace(s.value, variant, take)
        return out

    def replace(self, expr, variant, take):
        """`expr` with its largest invariant pure parts (those that compute something) taken out."""
        pure, work = self.pure(expr, variant)
        if pure:
            return take(expr) if work else expr
        if isinstance(expr, (ast.BoolOp, ast.IfExp, ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp,
                             ast.GeneratorExp, ast.NamedExpr)):
            return expr  # parts evaluated only sometimes (or binding names) stay
        for field, value in ast.iter_fields(expr):
            if isinstance(expr, ast.Call) and field == "func":
                if isinstance(value, ast.Attribute):  # a method call: its receiver is evaluated every time
                    value.value = self.replace(value.value, variant, take)
            elif isinstance(value, ast.expr):
                setattr(expr, field, self.replace(value, variant, take))
            elif isinstance(value, list):
                setattr(expr, field, [self.replace(v, variant, take) if isinstance(v, ast.expr) else
                                      self._keyword(v, variant, take) for v in value])
        return expr

    def _keyword(self, kw, variant, take):
        if isinstance(kw, ast.keyword):
            kw.value = self.replace(kw.value, variant, take)
        return kw

    def pure(self, e, variant) -> tuple[bool, bool]:
        """(whether `e` is pure and loop-invariant, whether it computes anything)."""
        if isinstance(e, ast.Constant):
            return True, False
        if isinstance(e, ast.Name):
            return isinstance(e.ctx, ast.Load) and e.id not in variant and not e.id.startswith("__mt"), False
        if isinstance(e, (ast.Tuple, ast.List)):
            return self._all(e.elts, variant, False)
        if isinstance(e, ast.Slice):
            return self._all([x for x in (e.lower, e.upper, e.step) if x is not None], variant, False)
        if isinstance(e, ast.BinOp):
            return self._all([e.left, e.right], variant, True)
        if isinstance(e, ast.UnaryOp):
            return self._all([e.operand], variant, True)
        if isinstance(e, ast.Compare) and len(e.ops) == 1:
            return self._all([e.left] + e.comparators, variant, True)
        if isinstance(e, ast.Subscript):
            return self._all([e.value, e.slice], variant, True)
        if isinstance(e, ast.Attribute):
            if self.resolve(e) is not None:
                return True, False  # tl.float16 and the like
            return self._all([e.value], variant, True)
        if isinstance(e, ast.Call) and not any(isinstance(a, ast.Starred) for a in e.args) \
                and all(k.arg is not None for k in e.keywords):
            args = e.args + [k.value for k in e.keywords]
            f = e.func
            if self._pure_function(f):
                return self._all(args, variant, True)
            if isinstance(f, ast.Attribute) and f.attr in _PURE_METHODS:
                return self._all([f.value] + args, variant, True)
        return False, False

    def _all(self, nodes, variant, work):
        for n in nodes:
            p, w = self.pure(n, variant)
            if not p:
                return False, False
            work = work or w
        return True, work

    def _pure_function(self, f) -> bool:
        obj = self.resolve(f)
        try:
            return obj in _PURE
        except TypeError:  # unhashable
            return False

    def resolve(self, e):
        """The object a dotted name of the kernel's globals stands for, or None."""
        if isinstance(e, ast.Name):
            if e.id in self.local:
                return None
            return self.globals.get(e.id)
        if isinstance(e, ast.Attribute):
            base = self.resolve(e.value)
            if base is not None and type(base).__name__ == "module":
                try:
                    return getattr(base, e.attr, None)
                except NotImplementedError:  # a Triton name we do not have: the call says so where it is
                    return None
        return None
