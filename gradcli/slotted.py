"""Plain records that behave as slotted dataclasses, written out: ``@dataclass`` compiles its
methods when a module is imported (5 ms of every start-up for the AST's seven classes, 7 ms of
every ``--trace`` for the trace's records and the tables' sheets).

A record's fields are its ``__slots__``; ``==``, ``hash`` and ``repr`` read those named in
``__match_args__`` (all of them, unless the class names fewer: the AST leaves out its spans).
A subclass's ``__init__`` sets its fields; a :class:`Frozen` one with :data:`set_field`, past
its refusing ``__setattr__``."""

from dataclasses import FrozenInstanceError

set_field = object.__setattr__  # how a frozen record's __init__ writes its fields


class Record:
    """``==`` and ``repr`` over the fields; a mutable record is not hashable."""

    __slots__ = ()
    __match_args__: tuple[str, ...] = ()

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "__match_args__" not in cls.__dict__:  # every field, as a dataclass has them
            cls.__match_args__ = cls.__slots__

    def _key(self) -> tuple:
        return tuple([getattr(self, name) for name in self.__match_args__])

    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return self._key() == other._key()
        return NotImplemented

    __hash__ = None

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__match_args__)
        return f"{type(self).__qualname__}({fields})"


class Frozen(Record):
    """A record whose fields cannot be assigned, hashable by them."""

    __slots__ = ()

    def __hash__(self):
        return hash(self._key())

    def __setattr__(self, name, value):
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name):
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def __getstate__(self):  # copy and deepcopy, which __setattr__ would refuse otherwise
        return [getattr(self, name) for name in self.__slots__]

    def __setstate__(self, state):
        for name, value in zip(self.__slots__, state):
            set_field(self, name, value)
