# What Cython knows of parser.py when setup.py compiles it (see engine/forward.pxd): the driver's
# loop with its positions, states and stack indices as C integers and its tables as typed views
# of their integer arrays, so the loop's bookkeeping is C and only the lexer's matches and the
# builder's callbacks are Python's. parser.py stays the one source; without Cython it runs as
# written.
import cython

from gradcli.language.ast cimport Node

cpdef object _nesting(str kind, str text, Py_ssize_t depth)

# called per name the AST holds: a C call from the callbacks
cpdef str read_name(str text, Py_ssize_t start)

@cython.locals(kind=Py_ssize_t, begin=Py_ssize_t, stop=Py_ssize_t,
               after=Py_ssize_t, top=Py_ssize_t, state=Py_ssize_t, action=Py_ssize_t,
               reduction=Py_ssize_t, size=Py_ssize_t, call=Py_ssize_t, depth=Py_ssize_t,
               width=Py_ssize_t, end_kind=Py_ssize_t, start=Py_ssize_t, end=Py_ssize_t,
               kinds=cython.int[:], table=cython.int[:], sizes=cython.int[:],
               rules=cython.int[:], calls=cython.int[:], states=cython.int[:],
               values=list, callbacks=list, names=list, newlines=bint, text=str, tok=_Token)
cpdef object _drive(str source, builder, machine)

cdef class _Token:
    cdef public object type, value
    cdef public Py_ssize_t start_pos, end_pos

# the callbacks that build the AST, as an extension type: its fields and the nodes' spans read
# directly (ast.pxd). Lark's own loop calls them too (the tests), with Lark's tokens: tokens stay
# untyped here.
cdef class _ToAst:
    cdef object source, functions, notes
    cdef dict loose
    cpdef object num(self, list children)
    cpdef object var(self, list children)
    @cython.locals(operand=Node)
    cpdef object unary(self, list children)
    @cython.locals(left=Node, right=Node)
    cpdef object binary(self, list children)
    @cython.locals(left=Node, right=Node)
    cpdef object implicit(self, list children)
    cpdef object call(self, list children)
    cpdef object group(self, list children)
