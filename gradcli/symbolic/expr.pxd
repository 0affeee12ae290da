# What Cython knows of expr.py when setup.py compiles it: the nodes as extension types, and the
# hot functions as C functions (cpdef: callable from Python too) whose node variables are typed,
# so they read a node's fields and call each other directly, not through Python's attribute
# look-ups and calls. expr.py stays the one source: without Cython it runs as written, and
# tests/test_symbolic_build.py checks that both give the same derivatives. A function declared
# here may hold no closure (generator, lambda); a parameter may not be named as a C keyword.
import cython

cdef class Node:
    # every kind's fields on the base: a variable typed Node reads any of them directly
    cdef public object serial, key, hash, value, name, args, const, terms, _tail
    cdef public object coeff, factors, _unit, _pairs

cdef class Number(Node):
    pass

cdef class Symbol(Node):
    pass

cdef class Apply(Node):
    pass

cdef class Sum(Node):
    pass

cdef class Product(Node):
    pass

cdef class Context:
    cdef public dict table, crc, small, memo
    cdef public Py_ssize_t serial

cdef Context _context

cdef class Sym:
    cdef public object node

# -- constructors

@cython.locals(node=Node)
cpdef _new(cls, tuple key, int rank, str name, tuple child_hashes, int sub=*)

@cython.locals(ctx=Context, node=Node)
cpdef _interned(tuple key, made)

@cython.locals(ctx=Context)
cpdef _numbered(Node node, int rank, str name, tuple child_hashes, int sub=*)

cpdef _tidy(value)

@cython.locals(node=Node)
cpdef number(value)

@cython.locals(node=Node)
cpdef _number(v)

@cython.locals(node=Node)
cpdef symbol(str name)

cpdef _value(Node node)

@cython.locals(a=Node, inner=Node, made=Node, node=Node)
cpdef apply(str name, args)

cpdef bint _negative(Node node)

@cython.locals(made=Node, node=Node, t=Node)
cpdef _sum_node(constant, tuple terms)

cpdef tuple _ratio(v)

@cython.locals(made=Node, node=Node, b=Node, e=Node)
cpdef _product_node(coeff, tuple factors, pairs=*)

cpdef unit(Node node)

@cython.locals(term=Node)
cpdef tail(Node node)

@cython.locals(node=Node, term=Node, n=Node, acc=dict, terms=list)
cpdef add(pairs, constant=*)

@cython.locals(node=Node)
cpdef _term_key(tuple pair)

cpdef _collect(dict acc, Node node, c)

cpdef ONE_NODE()

cpdef _int(v)

@cython.locals(base=Node, e=Node, b=Node, m=Node, combined=Node, powers=dict, stack=list,
               factors=list, exp_args=list)
cpdef multiply(items, coeff=*, bint loose=*)

cpdef _made(bint loose, coeff, tuple factors, pairs=*)

@cython.locals(node=Node, b=Node, e=Node)
cpdef _loose(coeff, tuple factors, pairs=*)

cpdef sealed(node)

@cython.locals(one=Node, p=Node, q=Node, ep=Node, eq=Node, x=Node)
cpdef _scaled(items, coeff, bint loose=*)

@cython.locals(one=Node, p=Node, q=Node, ep=Node, eq=Node, b=Node, x=Node, owner=Node,
               i=Py_ssize_t, merged=list, hashes=list)
cpdef _join_two(items, bint loose=*)

@cython.locals(lo=Py_ssize_t, hi=Py_ssize_t, mid=Py_ssize_t, b=Node, e=Node, fb=Node, fe=Node,
               left=bint)
cpdef Py_ssize_t _insertion(list factors, tuple pair, bint right)

@cython.locals(j=Py_ssize_t, f=Node)
cpdef bint _holds(list factors, Py_ssize_t i, Node base)

cpdef _as_factors(Node node, e)

@cython.locals(b=Node, e=Node)
cpdef _factor_key(tuple pair)

cpdef _scale(e, k)

# -- Sym, and the rules' namespace

cpdef _node(x)

@cython.locals(s=Sym)
cpdef Sym _sym(node)

cpdef divide(a, b)


cpdef list local_derivatives(prim, args, value=*)

# -- parts

@cython.locals(n=Node, b=Node, e=Node, k=Node, seen=dict, stack=list)
cpdef list reachable(Node root)
