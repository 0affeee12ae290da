# What Cython knows of graph.py when setup.py compiles it (see language/parser.pxd): the builder
# and the parser's callbacks that drive it as extension types, so a reduction's callback reads
# its builder's columns as fields and calls its _node directly, and the values on the parser's
# stack (_Value) are three C integers. graph.py stays the one source; without Cython it runs as
# written.
import cython

from gradcli.language.ast cimport Binary, Call, Node, Num, Var
from gradcli.language.parser cimport _Token

cdef class _Builder:
    cdef public object const_ids, const_values, input_ids
    cdef public object input_spans, env, versions, bindings, source, recipes, folds
    cdef public object shapes, arrays, tape, literals, calls
    cdef public list op
    cdef public tuple columns
    cdef public Py_ssize_t count, room, limit
    # the integer columns, typed views of the arrays in columns: a node is five C stores
    cdef long long[:] depth, a0, a1, starts, ends

    @cython.locals(da=Py_ssize_t, db=Py_ssize_t, tid=Py_ssize_t)
    cpdef object emit(self, prim, Py_ssize_t a, Py_ssize_t b, tuple span)
    @cython.locals(da=Py_ssize_t, db=Py_ssize_t, tid=Py_ssize_t)
    cdef Py_ssize_t _node(self, prim, Py_ssize_t a, Py_ssize_t b, Py_ssize_t start,
                          Py_ssize_t end) except -1

    @cython.locals(n=Py_ssize_t, m=Py_ssize_t, base=Py_ssize_t, op=list)
    cpdef object finish(self, str source, list outputs)

    # the lowering from the AST: a node's fields read directly (ast.pxd), its kind's variable
    @cython.locals(node=Node, var=Var, binary=Binary, call=Call, results=list, stack=list,
                   calls=dict)
    cpdef object expression(self, expr)
    @cython.locals(start=Py_ssize_t, end=Py_ssize_t, text=str)
    cpdef object number(self, Num node)

# a value on the parser's stack: an expression's id and span, three C integers
cdef class _Value:
    cdef public Py_ssize_t id, start, end

@cython.locals(value=_Value)
cpdef _Value _value(Py_ssize_t tid, Py_ssize_t start, Py_ssize_t end)

cdef class _Reductions:
    cdef public _Builder builder
    cdef public dict numbers, inputs, operators, unary_calls, binary_calls

    # the parser's callbacks, called by the driver with the rule's children; its tokens are
    # parser._Token's, read as fields
    @cython.locals(tok=_Token)
    cpdef object num(self, list children)
    @cython.locals(tok=_Token)
    cpdef object var(self, list children)
    @cython.locals(name=str, builder=_Builder)
    cpdef object read(self, _Token tok)
    @cython.locals(op=_Token, x=_Value, tid=Py_ssize_t, start=Py_ssize_t)
    cpdef object unary(self, list children)
    @cython.locals(x=_Value, op=_Token, y=_Value)
    cpdef object binary(self, list children)
    @cython.locals(x=_Value, y=_Value)
    cpdef object implicit(self, list children)
    @cython.locals(n=Py_ssize_t, tok=_Token, rpar=_Token, a=_Value, b=_Value, tid=Py_ssize_t)
    cpdef object call(self, list children)
    @cython.locals(name=str)
    cpdef object function(self, _Token tok, Py_ssize_t n_args)
    @cython.locals(tok=_Token, op=_Token, x=_Value, name=str)
    cpdef object assign(self, list children)

# the reverse sweep's order: liveness and a counting sort by depth, loops over C integers
@cython.locals(k=Py_ssize_t, a=Py_ssize_t, b=Py_ssize_t, live=bytearray)
cpdef bytearray _live(const int[:] arg0, const int[:] arg1, list outputs, Py_ssize_t base,
                      Py_ssize_t n)

@cython.locals(n=Py_ssize_t, top=Py_ssize_t, k=Py_ssize_t, d=Py_ssize_t, at=Py_ssize_t,
               count=cython.longlong[:], start=cython.longlong[:], put=cython.int[:])
cpdef object _deepest_first(const int[:] depth, const unsigned char[:] live, Py_ssize_t base)

@cython.locals(n=Py_ssize_t, i=Py_ssize_t, j=Py_ssize_t, k=Py_ssize_t, s=Py_ssize_t,
               a=Py_ssize_t, b=Py_ssize_t, t=Py_ssize_t, src=cython.int[:], tgt=cython.int[:],
               arg=cython.int[:], count=cython.int[:], order=cython.int[:])
cpdef tuple sweep_edges(const int[:] slots, const unsigned char[:] active, const int[:] arg0,
                        const int[:] arg1, Py_ssize_t base, Py_ssize_t n_slots)

# finish's slots: a counting sort by depth and the gathers by slot, loops over C integers
@cython.locals(k=Py_ssize_t, d=Py_ssize_t, at=Py_ssize_t, top=Py_ssize_t,
               start=cython.longlong[:], put=cython.longlong[:], where=cython.longlong[:])
cpdef tuple _by_depth(const long long[:] depth, Py_ssize_t n)

@cython.locals(m=Py_ssize_t, k=Py_ssize_t, tid=Py_ssize_t, ops=list, put_depth=cython.int[:],
               put_a0=cython.int[:], put_a1=cython.int[:], put_start=cython.longlong[:],
               put_end=cython.longlong[:])
cpdef tuple _permuted(const long long[:] order, const long long[:] slot, Py_ssize_t base,
                      list op, const long long[:] depth, const long long[:] a0,
                      const long long[:] a1, const long long[:] starts,
                      const long long[:] ends)
