"""Rewriting a kernel's control flow so that programs may disagree on it (see control.py).

Triton compiles a kernel from its syntax tree; we rewrite the tree once per kernel and run it
as Python.  Each `if`, `while` and `for` becomes a context from control.py that runs plain
Python control flow when every active program agrees, and masks otherwise, handing over the
variables the statement assigns so they can be merged.  `break`, `continue` and `return`
become calls that retire the active programs; `a if c else b`, `and`, `or`, `not` work on
blocks; `assert` is a device assert; a number literal, or a variable holding a number, used as
an object (`(1).to(...)`, `acc = 0; acc.dtype`) is a tensor.  Line numbers are kept, so
tracebacks point at the kernel's own source.
"""
from __future__ import annotations

import ast
import copy
import inspect
import itertools
import textwrap
import types
import warnings

from . import control, errors, fusion, hoisting, lanes, locks
from .hoisting import reads as _reads

_HELPER = "__mt"
_FUSION = "__mt_fusion"
_LANES = "__mt_lanes"
_LOCKS = "__mt_locks"


def _assigned(nodes) -> list[str]:
    """Names a statement list binds (not inside nested functions, lambdas or comprehensions)."""
    out = []

    class Visitor(ast.NodeVisitor):
        def visit_Name(self, node):
            if isinstance(node.ctx, ast.Store) and node.id not in out and not node.id.startswith(_HELPER):
                out.append(node.id)

        def visit_FunctionDef(self, node):
            if node.name not in out and not node.name.startswith(_HELPER):
                out.append(node.name)

        visit_AsyncFunctionDef = visit_FunctionDef

        def visit_Lambda(self, node):
            pass

        def visit_ListComp(self, node):
            pass

        visit_SetComp = visit_DictComp = visit_GeneratorExp = visit_ListComp

    for n in nodes:
        Visitor().visit(n)
    return out


def _binds(target, name) -> bool:
    if isinstance(target, ast.Name):
        return target.id == name
    if isinstance(target, (ast.Tuple, ast.List)):
        return any(_binds(t, name) for t in target.elts)
    return isinstance(target, ast.Starred) and _binds(target.value, name)


def _written_first(stmts, name) -> bool:
    """Whether every run of `stmts` binds `name` (at their top level) before reading it."""
    for s in stmts:
        if _reads(s, name):
            return False
        if isinstance(s, ast.Assign) and any(_binds(t, name) for t in s.targets) or \
                isinstance(s, ast.AnnAssign) and s.value is not None and _binds(s.target, name):
            return True
        if name in _assigned([s]):
            return False  # bound only on some paths
    return False


def _covered_reads(stmts, name) -> int:
    """Reads of `name` within `stmts` that always see a value bound in the same block (this one
    or a nested one) earlier on the same path."""
    if _written_first(stmts, name):
        return sum(_reads(s, name) for s in stmts)
    n = 0
    for s in stmts:
        if isinstance(s, ast.If):
            n += _covered_reads(s.body, name) + _covered_reads(s.orelse, name)
        elif isinstance(s, ast.While):
            n += _covered_reads(s.body, name)
        elif isinstance(s, ast.For):
            n += sum(_reads(x, name) for x in s.body) if _binds(s.target, name) else _covered_reads(s.body, name)
    return n


def load_counts(tree) -> dict:
    """How many times each name is read anywhere in `tree`."""
    loads = {}
    for x in ast.walk(tree):
        if isinstance(x, ast.Name) and isinstance(x.ctx, ast.Load) or isinstance(x, ast.AugAssign):
            n = x.id if isinstance(x, ast.Name) else getattr(x.target, "id", None)
            if n is not None:
                loads[n] = loads.get(n, 0) + 1
    return loads


def _call(fn: str, *args) -> ast.Call:
    return ast.Call(func=ast.Attribute(value=ast.Name(_HELPER, ast.Load()), attr=fn, ctx=ast.Load()),
                    args=list(args), keywords=[])


def _method(obj: str, fn: str, *args) -> ast.Call:
    return ast.Call(func=ast.Attribute(value=ast.Name(obj, ast.Load()), attr=fn, ctx=ast.Load()),
                    args=list(args), keywords=[])


def _attr(obj: str, name: str) -> ast.Attribute:
    return ast.Attribute(value=ast.Name(obj, ast.Load()), attr=name, ctx=ast.Load())


def _names_tuple(names, ctx):
    return ast.Tuple(elts=[ast.Name(n, ctx()) for n in names], ctx=ctx())


def _strs(names):
    return ast.Tuple(elts=[ast.Constant(n) for n in names], ctx=ast.Load())


def _get(names):
    """The named locals' values (UNDEF for an unbound one); `names` a list, or an expression giving them."""
    return _call("get", ast.Call(func=ast.Name("locals", ast.Load()), args=[], keywords=[]),
                 names if isinstance(names, ast.AST) else _strs(names))


def _defined(stmts) -> set:
    """The names a statement list leaves bound as Triton's front end scopes them: an `if` only
    what both its sides bind, a loop nothing its body binds (what a loop carries was bound before
    it).  Python leaves more bound; these are the names a later loop or `if` may carry in."""
    out = set()
    for s in stmts:
        if isinstance(s, ast.If):
            out |= _defined(s.body) & _defined(s.orelse)
        elif isinstance(s, (ast.For, ast.While, ast.AsyncFor)):
            continue
        elif isinstance(s, (ast.With, ast.AsyncWith)):
            out |= set(_assigned([ast.Expr(item.optional_vars) for item in s.items if item.optional_vars])) | \
                _defined(s.body)
        elif isinstance(s, ast.Try):
            out |= _defined(s.body) | _defined(s.finalbody)
        else:
            out |= set(_assigned([s]))
    return out


def _carry(loop, names, node) -> list:
    """The loop's carried variables as it starts (control.Loop.carry), so that a trip that changes
    one's type is refused, as Triton refuses it (an error said at the loop's line)."""
    return [ast.copy_location(ast.Expr(_method(loop, "carry", _strs(names), _get(names))), node)] if names else []


def _same_types(loop, names, node, tail=False) -> list:
    """The carried variables' types checked (the names carry kept: those defined as the loop starts)."""
    if not names:
        return []
    call = ast.Expr(_method(loop, "same_types", _get(_attr(loop, "carried"))))
    return [ast.copy_location(_if(_attr(loop, "carried" if tail else "types_due"), [call]), node)]


def _assign_back(names, value) -> ast.stmt:
    if not names:
        return ast.Expr(value)
    return ast.Assign(targets=[_names_tuple(names, ast.Store)], value=value)


def _if(test, body, orelse=()) -> ast.If:
    return ast.If(test=test, body=list(body) or [ast.Pass()], orelse=list(orelse))


class _Lower(ast.NodeTransformer):
    def __init__(self, frame: str, skip: set, loads: dict, local_names: set = frozenset(), fuse=None, first=1,
                 constexpr_names: set = frozenset()):
        self.frame, self.skip, self.loads, self.local_names = frame, skip, loads, local_names
        self.constexpr_names = constexpr_names
        self.first = first   # the file's line of the kernel's first line (a loop's line is named when it runs away)
        self.fuse = fuse  # fusion._Recogniser, or None
        self.loops: list[tuple[str, list[str]]] = []
        self.counter = itertools.count()
        # names bound by the statements before the one being lowered (and the parameters): the
        # variables an `if` or a loop may carry in, as Triton scopes them (carried.py)
        self.bound: set[str] = set()

    def fresh(self, kind):
        return f"{_HELPER}_{kind}{next(self.counter)}"

    def block(self, stmts):
        """Lower a statement list, dropping what follows a jump (unreachable in Python)."""
        out, outer = [], set(self.bound)
        for s in stmts:
            binds = _defined([s])
            r = self.visit(s)
            self.bound.update(binds)
            out.extend(r if isinstance(r, list) else [r])
            if isinstance(s, (ast.Return, ast.Break, ast.Continue, ast.Raise)):
                break
        self.bound = outer
        return out

    def body(self, stmts, bound=()):
        """A function's top level: as `block`, but a spin lock and everything after it run in
        rounds of the programs the lock admits at once (locks.py)."""
        self.bound = set(bound)
        for i, s in enumerate(stmts):
            pointer = locks.spin_pointer(s)
            if pointer is None or not locks.region_allowed(stmts[i:]):
                continue
            before = set(bound)
            for x in stmts[:i]:
                before.update(n.id for n in ast.walk(x) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store))
            hoisted, region = locks.invariants(stmts[i:], before - set(self.skip), lambda: self.fresh("inv"))
            stmts = stmts[:i] + hoisted + region
            i += len(hoisted)
            before.update(h.targets[0].id for h in hoisted)
            reads = []
            for x in stmts[i:]:
                for n in ast.walk(x):
                    if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in before \
                            and n.id not in self.skip and n.id not in reads:
                        reads.append(n.id)
            handle = self.fresh("lk")
            target = _names_tuple(reads, ast.Store) if reads else ast.Name(self.fresh("lk"), ast.Store())
            head = self.block(stmts[:i])
            self.bound = set(bound) | _defined(stmts[:i])
            return head + [
                ast.Assign(targets=[ast.Name(handle, ast.Store())], value=ast.Call(
                    func=ast.Attribute(value=ast.Name(_LOCKS, ast.Load()), attr="Rounds", ctx=ast.Load()),
                    args=[self.visit(copy.deepcopy(pointer)), _get(reads)], keywords=[])),
                ast.Try(body=[ast.For(target=target, iter=ast.Name(handle, ast.Load()),
                                      body=self.block(stmts[i:]), orelse=[])],
                        handlers=[], orelse=[], finalbody=[ast.Expr(_method(handle, "close"))]),
            ]
        return self.block(stmts)

    def names(self, nodes, blocks=(), fresh=()):
        """The names a statement assigns that must be merged between programs: not those local
        to its blocks (bound before any read on every path through a block, and read nowhere
        else in the kernel), whose values from other paths are never observed.  `fresh` names
        are bound at the start of the only block (a for loop's target)."""
        return [n for n in _assigned(nodes) if n not in self.skip and not self._local(n, blocks, fresh)]

    def _local(self, name, blocks, fresh):
        if not blocks:
            return False
        inside = sum(sum(_reads(s, name) for s in b) if name in fresh else _covered_reads(b, name) for b in blocks)
        return inside == self.loads.get(name, 0)

    # -- nested definitions keep their own semantics --------------------------------------
    def visit_FunctionDef(self, node):
        return node

    visit_AsyncFunctionDef = visit_Lambda = visit_ClassDef = visit_FunctionDef

    # -- statements ----------------------------------------------------------------------
    def visit_If(self, node):
        b = self.fresh("b")
        names = self.names(node.body + node.orelse, [node.body, node.orelse])
        test = self.visit(node.test)
        live = [n for n in names if n in self.bound]     # Triton types the variables the if carries in

        def checked(side):  # on a runtime condition, both sides
            return [_if(_attr(b, "typed"), [ast.Expr(_method(b, "check", _get(live), ast.Constant(side)))])] \
                if live else []
        return [
            ast.Assign(targets=[ast.Name(b, ast.Store())], value=_call("Branch", test)),
            _if(_attr(b, "split"), [ast.Assign(targets=[_attr_store(b, "before")], value=_get(names))]),
            *([_if(_attr(b, "typed"), [ast.Expr(_method(b, "note", _strs(live), _get(live)))])] if live else []),
            _if(_attr(b, "then"), self.block(node.body) + checked("then")),
            _if(_attr(b, "split"), [_assign_back(names, _method(b, "otherwise", _strs(names), _get(names)))]),
            _if(_attr(b, "orelse"), self.block(node.orelse) + (checked("else") if node.orelse else [])),
            _if(_attr(b, "split"), [_assign_back(names, _method(b, "merge", _get(names)))]),
            *self._one_sided(b, node),
        ]

    def _one_sided(self, b, node) -> list:
        """After an if on a runtime condition, a name that only one side binds (and that was not
        bound before) is gone, as in Triton, whose front end defines after the if only what both
        sides define: reading it is a NameError there and here."""
        then, orelse = set(_assigned(node.body)), set(_assigned(node.orelse))
        gone = sorted((then ^ orelse) - self.bound - set(self.skip))
        if not gone:
            return []
        forget = [ast.Try(body=[ast.Delete(targets=[ast.Name(n, ast.Del())])],
                          handlers=[ast.ExceptHandler(type=ast.Name("NameError", ast.Load()), name=None,
                                                      body=[ast.Pass()])], orelse=[], finalbody=[]) for n in gone]
        return [_if(_attr(b, "typed"), forget)]

    def _loop_tail(self, loop, names, reads):
        tail = [_if(_attr(loop, "sync"), [_assign_back(names, _method(loop, "close", _get(names)))],
                    [ast.Expr(_method(loop, "close"))])]
        if reads:
            tail.append(_if(_attr(loop, "narrowed"), [_assign_back(reads, _method(loop, "restore_reads"))]))
        return tail

    def _loop_start(self, loop, names, reads, narrowable, body, line):
        """The statement that makes the loop's context, and its body lowered inside it."""
        self.loops.append((loop, names))
        lowered = self.block(body)
        self.loops.pop()
        start = ast.Assign(targets=[ast.Name(loop, ast.Store())],
                           value=_call("Loop", _strs(names), _strs(reads), narrowable,
                                       ast.Constant(self.first + line - 1)))
        return start, lowered

    def _reads(self, nodes):
        """The kernel's own variables a loop reads but never assigns (narrowing moves them)."""
        assigned = set(_assigned(nodes))
        out = []
        for node in nodes:
            for x in ast.walk(node):
                if isinstance(x, ast.Name) and isinstance(x.ctx, ast.Load) and x.id in self.local_names \
                        and x.id not in assigned and x.id not in self.skip and x.id not in out:
                    out.append(x.id)
        return out

    @staticmethod
    def _narrowable(nodes):
        """A loop can narrow to the programs still in it unless it may leave the kernel."""
        return not any(isinstance(x, (ast.Return, ast.Yield, ast.YieldFrom, ast.Global, ast.Nonlocal))
                       for node in nodes for x in ast.walk(node))

    def _narrow(self, loop, names, reads, target=()):
        """Narrowing moves the reads and names (and a for loop's target, bound for this trip)."""
        both = reads + names + [t for t in target if t not in names]
        return _if(_attr(loop, "wants_narrow"), [_assign_back(both, _method(loop, "narrow", _get(both)))])

    def visit_While(self, node):
        if node.orelse:
            raise NotImplementedError("while ... else in a kernel is not supported")
        loop = self.fresh("l")
        names = self.names(node.body + [node.test], [[ast.Expr(node.test)] + node.body])
        reads = self._reads(node.body + [node.test])
        narrowable = ast.Constant(self._narrowable(node.body))
        test = self.visit(node.test)
        start, body = self._loop_start(loop, names, reads, narrowable, node.body, node.lineno)
        return [
            start,
            *_carry(loop, [n for n in names if n in self.bound], node),
            ast.While(test=ast.Constant(True), body=[
                _if(_attr(loop, "sync"), [_assign_back(names, _method(loop, "head", _get(names)))]),
                *_same_types(loop, names, node),
                _if(ast.UnaryOp(ast.Not(), _method(loop, "test", test)), [ast.Break()]),
                _if(_attr(loop, "sync"), [_assign_back(names, _method(loop, "after_test", _get(names)))]),
                self._narrow(loop, names, reads),
                *body], orelse=[]),
            *self._loop_tail(loop, names, reads),
            *_same_types(loop, names, node, tail=True),
        ]

    def visit_For(self, node):
        if node.orelse:
            raise NotImplementedError("for ... else in a kernel is not supported")
        side_by_side = None if self.loops else lanes.plan(node, self._reads(node.body), self.loads)
        if side_by_side is None:
            return self._loop(node)
        # both forms (lanes.py): the trips as rows when the run allows it, else trip by trip
        it, handle = self.fresh("r"), self.fresh("lanes")
        lanes_body = self.block(copy.deepcopy(node.body))
        p = side_by_side
        dead = [n for n in p.assigned if n not in self.skip]
        return [
            ast.Assign(targets=[ast.Name(it, ast.Store())], value=self.visit(node.iter)),
            ast.Assign(targets=[ast.Name(handle, ast.Store())], value=ast.Call(
                func=ast.Attribute(value=ast.Name(_LANES, ast.Load()), attr="start", ctx=ast.Load()),
                args=[ast.Name(it, ast.Load()), _names_tuple(p.reads, ast.Load), _names_tuple(p.loaded, ast.Load),
                      _names_tuple(p.stored, ast.Load)], keywords=[])),
            _if(ast.Compare(left=ast.Name(handle, ast.Load()), ops=[ast.IsNot()], comparators=[ast.Constant(None)]), [
                _assign_back(p.reads + [node.target.id], _attr(handle, "values")),
                ast.Try(body=lanes_body or [ast.Pass()], handlers=[], orelse=[],
                        finalbody=[_assign_back(p.reads, _method(handle, "close"))]),
                *([_assign_back(dead, ast.Tuple(elts=[_attr(_HELPER, "UNDEF")] * len(dead), ctx=ast.Load()))]
                  if dead else []),
            ], self._loop(node, ast.Name(it, ast.Load()))),
        ]

    def _loop(self, node, it=None):
        """The ordinary lowering of a for loop, over `it` (an expression already lowered) or
        its own iterable."""
        plan = self.fuse.plan(node) if self.fuse is not None else None
        before = fusion.prelude(node, plan, _FUSION) if plan is not None else []
        if it is None or plan is not None:
            it = self.visit(node.iter)        # (after a fused prelude: the trips it leaves)
        loop = self.fresh("l")
        fresh = _assigned([node.target])
        names = self.names([node.target] + node.body, [node.body], fresh)
        reads = [n for n in self._reads(node.body) if n not in fresh]
        narrowable = ast.Constant(self._narrowable(node.body) and isinstance(node.target, ast.Name))
        target = ast.Constant(node.target.id) if isinstance(node.target, ast.Name) else ast.Constant(None)
        start, body = self._loop_start(loop, names, reads, narrowable, node.body, node.lineno)
        carried = [n for n in names if n not in fresh and n in self.bound]
        return [
            *before,
            start,
            *_carry(loop, carried, node),
            ast.For(target=node.target, iter=_method(loop, "iterate", it, target), body=[
                _if(_attr(loop, "sync"), [_assign_back(names, _method(loop, "head", _get(names)))]),
                self._narrow(loop, names, reads, fresh),
                *_same_types(loop, carried, node),
                *body], orelse=[]),
            *self._loop_tail(loop, names, reads),
            *_same_types(loop, carried, node, tail=True),
        ]

    def visit_Break(self, node):
        loop, names = self.loops[-1]
        return _if(_method(loop, "brk", _get(names)), [ast.Break()])

    def visit_Continue(self, node):
        loop, names = self.loops[-1]
        return _if(_method(loop, "cont", _get(names)), [ast.Continue()])

    def visit_Return(self, node):
        value = self.visit(node.value) if node.value is not None else ast.Constant(None)
        return _if(_method(self.frame, "ret", value), [ast.Return(_method(self.frame, "result"))])

    def visit_Assert(self, node):
        args = [self.visit(node.test)] + ([self.visit(node.msg)] if node.msg is not None else [])
        return ast.Expr(_call("assert_", *args))

    # -- expressions ---------------------------------------------------------------------
    def visit_IfExp(self, node):
        lam = lambda e: ast.Lambda(args=_no_args(), body=self.visit(e))
        return _call("ifexp", self.visit(node.test), lam(node.body), lam(node.orelse))

    def visit_Compare(self, node):
        node = self.generic_visit(node)
        if len(node.ops) == 1:
            return node
        return _call("compare_chain", ast.Tuple(elts=[ast.Constant(type(op).__name__) for op in node.ops], ctx=ast.Load()),
                     node.left, *[ast.Lambda(args=_no_args(), body=c) for c in node.comparators])

    def visit_BoolOp(self, node):
        fn = "and_" if isinstance(node.op, ast.And) else "or_"
        values = [self.visit(v) for v in node.values]
        out = values[0]
        for v in values[1:]:
            out = _call(fn, out, ast.Lambda(args=_no_args(), body=v))
        return out

    def visit_UnaryOp(self, node):
        if isinstance(node.op, ast.Not):
            return _call("not_", self.visit(node.operand))
        return self.generic_visit(node)

    def visit_Attribute(self, node):
        if isinstance(node.value, ast.Constant) and type(node.value.value) in (int, float, bool):
            node.value = _call("literal", node.value)
            return node
        if isinstance(node.value, ast.Name) and node.value.id in self.constexpr_names and isinstance(node.ctx, ast.Load):
            node.value = _call("constexpr_if_value", node.value)     # `y: tl.constexpr` ... `y.type`
            return node
        if isinstance(node.value, ast.Name) and node.value.id in self.local_names and isinstance(node.ctx, ast.Load):
            # `acc = 0; acc.dtype`, a loop's `i.to(...)`: a number held in a variable is a tensor
            # when used as an object, as in Triton (and stays a number everywhere else)
            node.value = _call("literal_if_number", node.value)
            return node
        return self.generic_visit(node)


def _names_constexpr(annotation) -> bool:
    """`tl.constexpr`, `triton.language.constexpr`, `constexpr` (or its string) as an annotation."""
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        return annotation.value.rsplit(".", 1)[-1] == "constexpr"
    return (isinstance(annotation, ast.Attribute) and annotation.attr == "constexpr") or \
        (isinstance(annotation, ast.Name) and annotation.id == "constexpr")


def _attr_store(obj, name):
    return ast.Attribute(value=ast.Name(obj, ast.Load()), attr=name, ctx=ast.Store())


def _no_args():
    return ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[])


def refuse_what_triton_refuses(fdef: ast.FunctionDef):
    """Python that Triton's front end does not compile, refused here too rather than given a
    meaning Triton's kernels cannot have: a `return` inside a loop, a starred assignment target,
    an assignment to two targets (`a = b = 0`), `in` / `not in`.  A chained comparison runs, as
    Triton 3.9 runs it, but `a < M & b < K`, where `&` binds first (Python reads `a < (M & b) < K`),
    is warned about: it is rarely what was meant."""
    def visit(node, loops):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                continue
            if isinstance(child, ast.Compare) and len(child.ops) > 1 and any(
                    isinstance(c, ast.BinOp) and isinstance(c.op, (ast.BitAnd, ast.BitOr)) for c in child.comparators[:-1]):
                warnings.warn(f"line {child.lineno - 1} of the kernel: `{ast.unparse(child)}` is a chained comparison, "
                              f"since & and | bind tighter than comparisons; parenthesise each comparison if they "
                              f"are meant to be joined", SyntaxWarning, stacklevel=2)
            if isinstance(child, ast.Compare) and isinstance(child.ops[0], (ast.In, ast.NotIn)):
                raise errors.CompilationError(f"AST comparison operator '{type(child.ops[0]).__name__}' is not "
                                              f"(currently) implemented (line {child.lineno - 1} of the kernel: "
                                              f"`{ast.unparse(child)}`; as in Triton: compare with == joined by `or`)")
            if isinstance(child, ast.Return) and loops:
                raise errors.CompilationError("Cannot have `return` statements inside `while` or `for` statements "
                                              f"in triton (line {child.lineno - 1} of the kernel)")
            if isinstance(child, ast.Assign) and len(child.targets) > 1:
                raise TypeError(f"Simultaneous multiple assignment is not supported. (line {child.lineno - 1} of the "
                                f"kernel: `{ast.unparse(child)}`; as in Triton: one target per assignment)")
            targets = child.targets if isinstance(child, ast.Assign) else \
                [child.target] if isinstance(child, (ast.For, ast.comprehension)) else []
            if any(isinstance(t, ast.Starred) for target in targets for t in ast.walk(target)):
                raise errors.CompilationError("starred assignment targets are not supported (as in Triton): unpack "
                                              "into names")
            visit(child, loops + (1 if isinstance(child, (ast.For, ast.While)) else 0))
    visit(fdef, 0)


def check_discarded_advances(fdef: ast.FunctionDef):
    """`tl.advance(p, ...)` or `p.advance(...)` as a statement of its own: its result goes to
    control.discarded, which refuses a discarded block pointer (the name alone could be an
    aggregate's method, which may have effects)."""
    for node in ast.walk(fdef):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            func = node.value.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if name == "advance":
                node.value = _call("discarded", node.value, ast.Constant(ast.unparse(func)))


def lower(fn) -> types.CodeType | None:
    """The code object of `fn` with its control flow lowered, or None when its source is not
    available (the kernel then runs unlowered: divergence falls back to one program at a time)."""
    try:
        src = textwrap.dedent(inspect.getsource(fn))
        filename = inspect.getsourcefile(fn) or "<kernel>"
        first = fn.__code__.co_firstlineno
    except (OSError, TypeError):
        return None
    tree = ast.parse(src)
    fdef = tree.body[0]
    if not isinstance(fdef, ast.FunctionDef):
        return None
    fdef.decorator_list = []
    refuse_what_triton_refuses(fdef)
    check_discarded_advances(fdef)
    analysis = hoisting.analyser(fdef, fn.__globals__)
    analysis.statements(fdef.body)  # loop-invariant code motion
    skip = set()
    for node in ast.walk(fdef):
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            skip.update(node.names)
    frame = f"{_HELPER}_frame"
    params = [a.arg for a in fdef.args.posonlyargs + fdef.args.args + fdef.args.kwonlyargs]
    params += [a.arg for a in (fdef.args.vararg, fdef.args.kwarg) if a is not None]
    local_names = (set(params) | set(_assigned(fdef.body))) - skip
    loads = load_counts(fdef)
    fuse = fusion._Recogniser(analysis.resolve, analysis.local.__contains__, lambda e: analysis.pure(e, set())[0],
                              lambda name, loop: loads.get(name, 0) > sum(_reads(s, name) for s in loop.body))
    returns_value = _returns_value(fdef)
    constexpr_names = {node.target.id for node in ast.walk(fdef) if isinstance(node, ast.AnnAssign)
                       and isinstance(node.target, ast.Name) and _names_constexpr(node.annotation)}
    # a parameter annotated tl.constexpr is a constexpr too (`BLOCK.value`, `BLOCK.type`), unless
    # a plain assignment rebinds it (Triton then lifts the number to a tensor)
    plain = _assigned([s for s in fdef.body if not (isinstance(s, ast.AnnAssign) and _names_constexpr(s.annotation))])
    constexpr_names |= {a.arg for a in fdef.args.posonlyargs + fdef.args.args + fdef.args.kwonlyargs
                        if a.annotation is not None and _names_constexpr(a.annotation)} - set(plain)
    lowered = _Lower(frame, skip, loads, local_names, fuse, first, constexpr_names).body(fdef.body, params)
    fdef.body = [
        ast.Assign(targets=[ast.Name(frame, ast.Store())],
                   value=_call("Frame", ast.Constant(returns_value))),
        ast.Try(body=lowered or [ast.Pass()], handlers=[], orelse=[],
                finalbody=[ast.Expr(_method(frame, "close"))]),
        ast.Return(_method(frame, "result")),
    ]
    # compile inside a function that binds the free variables, so closures still work
    free = list(fn.__code__.co_freevars)
    outer = ast.FunctionDef(name=f"{_HELPER}_outer", args=_no_args(), body=[
        *[ast.Assign(targets=[ast.Name(n, ast.Store())], value=ast.Constant(None)) for n in free],
        fdef, ast.Return(ast.Name(fdef.name, ast.Load()))], decorator_list=[], returns=None, type_params=[])
    module = ast.Module(body=[outer], type_ignores=[])
    ast.fix_missing_locations(module)
    ast.increment_lineno(module, first - 1)
    code = compile(module, filename, "exec")
    outer_code = next(c for c in code.co_consts if isinstance(c, types.CodeType))
    return next(c for c in outer_code.co_consts if isinstance(c, types.CodeType) and c.co_name == fdef.name)


def _returns_value(fdef: ast.FunctionDef) -> bool:
    """Whether the function has a `return value` (not in a nested function)."""
    todo = list(fdef.body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Return) and node.value is not None and not (
                isinstance(node.value, ast.Constant) and node.value.value is None):
            return True
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            todo.extend(ast.iter_child_nodes(node))
    return False


def namespace(globals_: dict) -> dict:
    """What lowered code needs besides the kernel's own globals."""
    globals_[_HELPER] = control
    globals_[_FUSION] = fusion
    globals_[_LANES] = lanes
    globals_[_LOCKS] = locks
    return globals_
