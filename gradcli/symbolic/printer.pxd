# What Cython knows of printer.py when setup.py compiles it (see expr.pxd): the ropes' builders
# as C functions with typed nodes, calling expr's directly; diff.py's programs call them so.
import cython
from .expr cimport Node, ONE_NODE, number, reachable

cpdef _grouped(tuple rope, int need)

cpdef _parenthesized(text)

cpdef tuple _joined(list pieces, int layer)

cpdef tuple _number_rope(str text)

cpdef tuple _rational_rope(v, bint exponent=*)

cpdef tuple _power_rope(tuple base, tuple exponent)

@cython.locals(texts=list, pieces=list)
cpdef tuple _chain(list ropes, str op)

@cython.locals(base=Node, e=Node, one=Node, minus_one=Node, top=list, bottom=list, later=list,
               trailing=list)
cpdef _product_rope(coeff, factors, list out, last=*)

cpdef _term_rope(Node node, c, list out, named, last=*)

@cython.locals(b=Node, e=Node)
cpdef Py_ssize_t _degree(Node node, Node x)

@cython.locals(terms=tuple, degrees=list, entries=list, ordered=list, first=Node, x=Node)
cpdef _textbook_order(Node node)

@cython.locals(t=Node, pieces=list, negative=list, ordered=list)
cpdef _sum_rope(Node node, list out, named, last=*)

@cython.locals(a=Node, i=Py_ssize_t)
cpdef rope(Node node, list out, named=*, last=*)

cpdef tuple name_rope(str name)

cpdef str flatten(rope)
