"""Plain records: ``==`` and ``repr`` over their fields (their ``__slots__``, in order), as a
slotted dataclass has them. Written out once for the trace's records and the tables' sheets:
``@dataclass`` compiles its methods when a module is imported, 7 ms of every ``--trace`` for
their thirteen classes."""


class Record:
    __slots__ = ()

    def _key(self) -> tuple:
        return tuple([getattr(self, name) for name in self.__slots__])

    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return self._key() == other._key()
        return NotImplemented

    __hash__ = None  # a mutable record (a frozen one hashes its fields)

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"{type(self).__qualname__}({fields})"
