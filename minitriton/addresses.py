"""One address space for a launch: pointers cast from int64 addresses, pointers cast to them,
and `tl.where` choosing between pointers into different arrays.

An ordinary pointer is offsets into one argument (memory.py).  A pointer whose lanes may
address different arrays (the grouped-GEMM tutorial loads each group's matrix address from a
table and casts it with `.to(tl.pointer_type(tl.float16))`) uses a `MixedBuffer`: its offsets
are ``slot * 2**40 + element offset`` into the array of that slot, so pointer arithmetic,
broadcasting and `tl.where` work on it unchanged, and loads and stores split by slot.

An address names memory the launch can see: an array argument, or an array the host passed
through `minitriton.data_ptr(array)` (the counterpart of `torch.Tensor.data_ptr()`).  Stores
through addresses go to the launch's private copies like every other store, so a failed
launch still writes nothing.
"""
from __future__ import annotations

import weakref

import numpy as np

from . import context, fast_loops
from .host import reinterpret
from . import dtypes as D
from .storage import Buffer, OutOfBoundsError, Storage, flat_view, address_of, Window, Sources, window
from .tensor import FROM_ABOVE, tensor, to_tensor, round_to
from .shapes import broadcast_to

_SLOT = 1 << 40
_HALF = 1 << 39
_registered: dict[int, tuple] = {}  # id(array) -> (weakref, first byte, end byte)


def data_ptr(array: np.ndarray) -> int:
    """The address of `array`'s element 0, usable inside kernels after a cast to a pointer type
    (store it in an int64 array argument, as Triton's grouped GEMM does with `data_ptr()`)."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"data_ptr: expected a numpy array, got {type(array).__name__}")
    flat, _ = flat_view("array", array)
    start = address_of(flat)
    for key in [k for k, (ref, _, _) in _registered.items() if ref() is None]:
        del _registered[key]
    _registered[id(array)] = (weakref.ref(array), start, start + flat.size * flat.itemsize)
    return int(array.__array_interface__["data"][0])


class TensorWrapper:
    """Triton's wrapper for memory seen as another element type (what its `reinterpret`
    returns, torch having no fp8 types then).  minitriton's `reinterpret` gives a numpy view
    instead; a TensorWrapper made by hand is launched as that view, and its `data_ptr()` is the
    view's address, so a kernel reads the memory at it as the wrapper's type."""

    def __init__(self, base: np.ndarray, dtype):
        self.view = reinterpret(base, dtype)
        self.base, self.dtype = base, dtype.value if isinstance(dtype, D.constexpr) else dtype
        self.shape = base.shape

    def data_ptr(self) -> int:
        return data_ptr(self.view)

    def __repr__(self):
        return f"TensorWrapper[{self.dtype}]({self.base!r})"


def registered_array(address: int) -> np.ndarray | None:
    """The bytes from `address` to the end of the array registered by data_ptr that holds it
    (host code that fills memory it was given only the address of), or None."""
    for ref, lo, hi in list(_registered.values()):
        a = ref()
        if a is not None and lo <= address < hi:
            flat, _ = flat_view("array", a)
            return flat.view(np.uint8)[address - lo:] if flat.flags.c_contiguous else None
    return None


class MixedBuffer:
    """The 'argument' of pointers that may address any array of the launch (see module doc)."""

    def __init__(self, space: "AddressSpace", dtype):
        self.space, self.dtype = space, dtype
        self.name = f"a pointer<{dtype}> built from an address"

    def check_writable(self):
        pass  # checked per array at the store

    @property
    def storage(self):
        raise NotImplementedError(f"atomics through {self.name} are not supported; pass the array as an "
                                  f"argument and use offsets")


class AddressSpace:
    """The arrays a launch can address, each given a slot once it is first addressed."""

    def __init__(self, buffers: dict, storages: list):
        self.arguments = list(buffers.values())
        self.storages = storages  # the launch's list: storages bound here are committed with it
        self.slots = [None]       # slot 0 addresses nothing
        self._slot_of = {}
        self._mixed = {}
        self._bound = {}
        self._cands = None
        self._orders = {}    # element type -> the candidates, those holding it first
        self._resolved = {}  # (address, element type) -> encoded offset: casts in loops resolve once
        self._checked = set()
        self._arg_ranges = None

    def slot(self, buf) -> int:
        s = self._slot_of.get(id(buf))
        if s is None:
            s = self._slot_of[id(buf)] = len(self.slots)
            self.slots.append(buf)
        return s

    def mixed(self, dtype) -> MixedBuffer:
        if dtype not in self._mixed:
            self._mixed[dtype] = MixedBuffer(self, dtype)
        return self._mixed[dtype]

    # -- addresses -> pointers ------------------------------------------------------------
    def _candidates(self):
        """(buffer or registered array, first byte, end byte, is_argument)."""
        for b in self.arguments:
            start = address_of(b.storage.flat)
            item = b.storage.flat.itemsize
            yield b, start + b.lo * item, start + b.hi * item, True
        for key, (ref, lo, hi) in list(_registered.items()):
            a = ref()
            if a is not None:
                yield a, lo, hi, False

    def _bind(self, array, start):
        buf = self._bound.get(id(array))
        if buf is None:  # on its own (it overlaps no argument: checked by the caller)
            name = f"<array at {start:#x}>"
            flat, origin = flat_view(name, array)
            buf = self._bound[id(array)] = Buffer(name, array, Storage(flat, D.from_numpy(array.dtype), [name]),
                                                  origin, 0, flat.size)
            self.storages.append(buf.storage)
        return buf

    def from_addresses(self, addr: np.ndarray, element_ty) -> np.ndarray:
        """Encoded offsets for byte addresses (0 where an address is in no known array)."""
        if addr.size == 1 or addr.size and _one_value(addr):  # one address (per program, or every lane)
            a = int(addr.reshape(-1)[0])
            key = (a, element_ty)
            enc = self._resolved.get(key)
            if enc is None:
                if self._cands is None:
                    self._cands = list(self._candidates())
                enc = self._resolved[key] = self._resolve_one(a, element_ty)
            return np.full(addr.shape, enc, np.int64)
        if addr.size > 1:  # a table holds few distinct addresses: resolve each once
            uniq, inverse = np.unique(addr, return_inverse=True)
            return self.from_addresses(uniq, element_ty)[inverse].reshape(addr.shape) if uniq.size < addr.size \
                else self._resolve(addr, element_ty)
        return self._resolve(addr, element_ty)

    def _ordered(self, element_ty) -> list:
        """The candidates, those holding `element_ty` first: memory registered twice (an array
        and a view of it as another type, `TensorWrapper`) resolves to the view of that type."""
        if self._cands is None:
            self._cands = list(self._candidates())
        if element_ty in self._orders:
            return self._orders[element_ty]

        def holds(cand):
            array = cand[0].storage.flat if cand[3] else cand[0]
            try:
                return D.from_numpy(array.dtype) is element_ty
            except TypeError:
                return False
        order = self._orders[element_ty] = sorted(self._cands, key=lambda cand: not holds(cand))
        return order

    def _resolve(self, addr, element_ty):
        if self._cands is None:
            self._cands = list(self._candidates())
        if addr.size <= 64:  # few addresses (a table's entries): a Python scan is cheaper than numpy per array
            return np.array([self._resolve_one(a, element_ty) for a in addr.reshape(-1).tolist()],
                            np.int64).reshape(addr.shape)
        out = np.zeros(addr.shape, np.int64)
        claimed = np.zeros(addr.shape, bool)
        for cand in self._ordered(element_ty):
            inside = (addr >= cand[1]) & (addr < cand[2]) & ~claimed
            if not inside.any():
                continue
            owner, start, item = self._owner(cand, element_ty)
            rel = addr[inside] - start
            if (rel % item).any():
                raise ValueError(f"an address into {owner.name} is not aligned to its {item}-byte elements")
            out[inside] = self.slot(owner) * _SLOT + rel // item - owner.origin
            claimed |= inside
        return out

    def _resolve_one(self, a: int, element_ty) -> int:
        for cand in self._ordered(element_ty):
            if cand[1] <= a < cand[2]:
                owner, start, item = self._owner(cand, element_ty)
                if (a - start) % item:
                    raise ValueError(f"an address into {owner.name} is not aligned to its {item}-byte elements")
                return self.slot(owner) * _SLOT + (a - start) // item - owner.origin
        return 0

    def _owner(self, cand, element_ty):
        """(buffer, its first byte, element size) of the array an address falls in, checked."""
        owner, lo, hi, is_arg = cand
        item = owner.storage.flat.itemsize if is_arg else owner.itemsize
        start = lo - owner.lo * item if is_arg else lo   # the first byte of the flat memory
        if not is_arg:
            if id(owner) not in self._checked:
                if self._arg_ranges is None:
                    self._arg_ranges = [(s, s + b.storage.flat.size * b.storage.flat.itemsize)
                                        for b in self.arguments for s in (address_of(b.storage.flat),)]
                for s, e in self._arg_ranges:
                    if lo < e and s < hi:
                        raise NotImplementedError("an array registered with data_ptr overlaps an argument of the "
                                                  "launch without containing it; pass one or the other")
                self._checked.add(id(owner))
            owner = self._bind(owner, lo)
        if owner.dtype is not element_ty:
            raise TypeError(f"an address points into {owner.name} of type {owner.dtype}, but is cast to "
                            f"pointer<{element_ty}>; reinterpreting memory is not supported")
        return owner, start, item

    # -- pointers -> addresses ------------------------------------------------------------
    def addresses(self, p: tensor) -> np.ndarray:
        """Byte addresses of a pointer's lanes."""
        off = np.asarray(p.v, np.int64)
        if not isinstance(p.buf, MixedBuffer):
            return _byte_address(p.buf, off)
        slot, elem = decode(off)
        out = np.zeros(off.shape, np.int64)
        for s in _distinct(slot):
            if s:
                sel = slot == s
                out[sel] = _byte_address(self.slots[s], elem[sel])
        return out

    def encoded(self, p: tensor) -> tensor:
        """A pointer in slot form (a MixedBuffer pointer is already one)."""
        if isinstance(p.buf, MixedBuffer):
            return p
        off = np.asarray(p.v, np.int64) + self.slot(p.buf) * _SLOT
        return tensor(off, p.dtype, p.shape, buf=self.mixed(p.dtype.element_ty))


def _byte_address(buf, elem):
    return address_of(buf.storage.flat) + (elem + buf.origin) * buf.storage.flat.itemsize


def decode(off: np.ndarray):
    slot = (off + _HALF) >> 40
    return slot, off - slot * _SLOT


def space() -> AddressSpace:
    st = context.current()
    if st.space is None:
        raise RuntimeError("this launch has no address space")
    return st.space


# ---------------------------------------------------------------- loads and stores
def _lanes(pointer, m, what, rows=None):
    """(slot, element offset, mask) broadcast to (rows, *shape); every active lane checked."""
    off = np.asarray(pointer.v, np.int64)
    rows = max(off.shape[0], 1 if m is None else m.shape[0], rows or 1)
    off = np.broadcast_to(off, (rows,) + off.shape[1:])
    m = np.ones(off.shape, bool) if m is None else np.broadcast_to(m, off.shape)
    slot, elem = decode(off)
    for sel, buf in _by_slot(pointer, slot, m, what):
        e = elem[sel] + buf.origin
        if ((e < buf.lo) | (e >= buf.hi)).any():
            raise OutOfBoundsError(f"kernel '{context.current().name}': tl.{what} through {pointer.buf.name} is out "
                                   f"of bounds of {buf.name}; mask the access or fix the offsets. The launch "
                                   f"wrote nothing.")
    return slot, elem, m


def _one_value(values: np.ndarray) -> bool:
    lo, hi = fast_loops.bounds(values)
    return lo == hi


def _distinct(values: np.ndarray) -> np.ndarray:
    """np.unique for the usual case of a handful of programs that all address one array."""
    if values.size and _one_value(values):
        return values.reshape(-1)[:1]
    return np.unique(values)


def _by_slot(pointer, slot, on, what):
    """(lanes, array) for each array the running lanes address; an address in none is an error."""
    sp = pointer.buf.space
    for s in _distinct(slot[on]):
        sel = on & (slot == s)
        if s == 0:
            raise _unknown(pointer, sel, what)
        yield sel, sp.slots[s]


def _unknown(pointer, sel, what):
    return OutOfBoundsError(f"kernel '{context.current().name}': tl.{what} through {pointer.buf.name}: the address "
                            f"is in no array argument of the launch and no array passed through "
                            f"minitriton.data_ptr(); mask the access or fix the address. The launch wrote nothing.")


def _strided(pointer, m):
    """(per-program offsets, steps, span of a block) of a pointer that is one strided block per
    program with a row-only mask, else None: the shape both block paths below start from."""
    if pointer.aff is None or (m is not None and any(n != 1 for n in m.shape[1:])):
        return None
    c, steps = pointer.aff
    shape = pointer.shape
    if any(s < 0 for s, n in zip(steps, shape) if n > 1):
        return None
    steps = tuple(s if n > 1 else 0 for s, n in zip(steps, shape))
    return c, steps, sum(s * (k - 1) for s, k in zip(steps, shape))


def _row_blocks(pointer, m, what, rows=1):
    """For a pointer that is one strided block per program (affine offsets, row-only mask):
    (rows that run, their slots, their storage bases, steps), else None."""
    strided = _strided(pointer, m)
    if strided is None:
        return None
    c, steps, span = strided
    n = max(c.shape[0], rows, 1 if m is None else m.shape[0])
    on = np.ones(n, bool) if m is None else np.broadcast_to(m.reshape(-1), (n,))
    slot, base = decode(np.broadcast_to(c, (n,)))
    for sel, buf in _by_slot(pointer, slot, on, what):
        b = base[sel] + buf.origin
        lo, hi = fast_loops.bounds(b)
        if lo < buf.lo or hi + span >= buf.hi:
            return None  # some lane is out of bounds: the lane-by-lane path says which
    return on, slot, base, steps


def load(pointer, m, other, user_mask=True):
    """`user_mask`: whether lanes may be off by the kernel's own mask (else only programs that
    are not running are off, and they may read any block)."""
    buf = pointer.buf
    fill = None
    if other is not None:
        fill = broadcast_to(to_tensor(other, tensor(None, buf.dtype, ())).to(buf.dtype), pointer.shape).v
    if not user_mask and pointer.shape:
        one = _one_array_window(buf, pointer, m)
        if one is not None:
            return one
    blocks = _row_blocks(pointer, m, "load")
    if blocks is not None and not user_mask and pointer.shape:
        windowed = _windowed(buf, *blocks, pointer.shape)
        if windowed is not None:
            return windowed
    if blocks is not None:
        on, slot, base, steps = blocks
        out = np.zeros((on.shape[0],) + tuple(pointer.shape), buf.dtype.container)
        if fill is not None and not on.all():
            out[...] = fill
        for s in _distinct(slot[on]):
            target = buf.space.slots[s]
            sel = on & (slot == s)
            src = target.storage.data()
            out[sel] = window(src, steps, pointer.shape)[base[sel] + target.origin] if pointer.shape else \
                src[base[sel] + target.origin]
        return tensor(out, buf.dtype, pointer.shape)
    slot, elem, m = _lanes(pointer, m, "load")
    out = np.zeros(slot.shape, buf.dtype.container)
    if fill is not None:
        out[...] = np.broadcast_to(fill, out.shape)
    for s in _distinct(slot[m]):
        target = buf.space.slots[s]
        sel = m & (slot == s)
        out[sel] = target.storage.data()[elem[sel] + target.origin]
    return tensor(out, buf.dtype, pointer.shape)


def _one_array_window(buf, pointer, m):
    """The usual case of a pointer built from an address, done in a few array operations: every
    running program's block lies whole inside one array, which is not written in this launch;
    the blocks are left in place as windows (programs not running borrow a running one's).
    None otherwise (the general paths below decide, and say what is wrong)."""
    strided = _strided(pointer, m)
    if strided is None:
        return None
    c, steps, span = strided
    on = None if m is None else m.reshape(-1)
    if on is not None and on.shape[0] != c.shape[0]:
        if not on.any() or (c.shape[0] != 1 and on.shape[0] != 1):
            return None
        on = None                          # one side the same for every program: nothing to pick
    live = c if on is None else c[on]
    if live.size == 0:
        return None
    first, last = (int(live[0]),) * 2 if live.size == 1 else fast_loops.bounds(live)
    s = (first + _HALF) >> 40
    if s == 0 or (last + _HALF) >> 40 != s:     # an unknown address, or blocks in several arrays
        return None
    target = buf.space.slots[s]
    shift = target.origin - s * _SLOT
    if target.storage.dirty or first + shift < target.lo or last + shift + span >= target.hi:
        return None
    elem = c + shift
    if on is not None and not on.all():
        elem = np.where(on, elem, elem[int(np.argmax(on))])
    out = tensor(None, buf.dtype, pointer.shape)
    out.win = (target.storage.data(), elem, steps)
    target.storage.exported = True
    return out


def _windowed(buf, on, slot, base, steps, shape):
    """The blocks of a load that every running program makes whole, left in place: a window per
    program into its own array (programs not running borrow a running one's), or None when
    some array is being written in this launch (then blocks are copied, as memory.load does)."""
    first = int(np.argmax(on))
    slot, base = np.where(on, slot, slot[first]), np.where(on, base, base[first])
    kinds = _distinct(slot)
    targets = [buf.space.slots[s] for s in kinds]
    if any(t.storage.dirty for t in targets):
        return None
    arrays = []
    for t in targets:
        arrays.append(t.storage.data())
        t.storage.exported = True
    which = np.searchsorted(kinds, slot)
    origins = np.array([t.origin for t in targets], np.int64)[which]
    out = tensor(None, buf.dtype, shape)
    out.win = (Sources(arrays, which), base + origins, steps)
    return out


def store(pointer, vals, m):
    """`vals` may be fp32 values not yet rounded to a half-precision element type (memory.store
    passes them so): a storage that only logs its stores rounds them as it converts them at
    commit, any other gets them rounded here."""
    blocks = _row_blocks(pointer, m, "store", vals.shape[0])
    if blocks is not None:
        on, slot, base, steps = blocks
        vals = np.broadcast_to(vals, (on.shape[0],) + tuple(pointer.shape))
        for s in _distinct(slot[on]):
            target = pointer.buf.space.slots[s]
            target.check_writable()
            sel = on & (slot == s)
            target.storage.put(Window(base[sel] + target.origin, steps, pointer.shape),
                               _rounded(target, vals[sel], pointer.buf.dtype))
        return
    slot, elem, m = _lanes(pointer, m, "store", vals.shape[0])
    vals = np.broadcast_to(vals, slot.shape)
    for s in _distinct(slot[m]):
        target = pointer.buf.space.slots[s]
        target.check_writable()
        sel = m & (slot == s)
        target.storage.put(elem[sel] + target.origin, _rounded(target, vals[sel], pointer.buf.dtype))


def _rounded(target, vals, dtype):
    if not (dtype.is_floating() and dtype.bits <= 16) or target.storage.logging and target.storage.dtype is dtype:
        return vals
    return round_to(vals, dtype)


def cast_to_pointer(x: tensor, ptr_type) -> tensor:
    if not x.dtype.is_int() or x.dtype.bits != 64:
        raise TypeError(f"only 64-bit integers (addresses) can be cast to {ptr_type}, got {x.dtype}")
    sp = space()
    off = sp.from_addresses(np.asarray(x.v, np.int64), ptr_type.element_ty)
    if not x.shape:  # one address per program: an affine pointer, so blocks built from it load as strided views
        return tensor(None, ptr_type, (), aff=(off.reshape(-1), ()), buf=sp.mixed(ptr_type.element_ty))
    return tensor(off, ptr_type, x.shape, buf=sp.mixed(ptr_type.element_ty))


def cast_from_pointer(p: tensor, dtype) -> tensor:
    if isinstance(dtype, D.pointer_type):
        if dtype == p.dtype:
            return p
        raise NotImplementedError(f"casting {p.dtype} to {dtype} (reinterpreting memory) is not supported")
    if not dtype.is_int() or dtype.bits != 64:
        raise TypeError(f"a pointer can only be cast to a 64-bit integer (its address), not {dtype}")
    return tensor(space().addresses(p).astype(dtype.np), dtype, p.shape)


FROM_ABOVE.update(cast_from_pointer=cast_from_pointer, cast_to_pointer=cast_to_pointer)   # for casts.cast
