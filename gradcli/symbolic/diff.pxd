# What Cython knows of diff.py when setup.py compiles it (see expr.pxd): the sweeps and the
# printer's walk as C functions with typed nodes and indices, calling expr's directly.
import cython
from .expr cimport (Node, add, apply, multiply, number, symbol, reachable, sealed,
                    local_derivatives)
from .printer cimport rope, flatten, name_rope

@cython.locals(k=Py_ssize_t, slot=Py_ssize_t, base=Py_ssize_t, expr=list, uses=list,
               family=list, pending=dict, parts=list, items=list, other=list, n=Node)
cpdef graph_expression(graph)

@cython.locals(items=list, n=Node, i=Py_ssize_t)
cpdef _built(list expr, dict pending, Py_ssize_t slot, list family)

cpdef list _local_derivatives(Node node)

@cython.locals(n=Node, b=Node, e=Node, k=Node, a=Node, bar=Node, one=Node, varies=bytearray,
               pending=list, found=dict, wanted=set)
cpdef dict gradient(root, names, order=*)

@cython.locals(s=Py_ssize_t)
cpdef _send(bytearray varies, list pending, Node node, bar, c=*)

@cython.locals(b=Node, e=Node, i=Py_ssize_t, others=list)
cpdef _product_adjoint(Node node, bar, bytearray varies, list pending, one)

@cython.locals(total=Py_ssize_t, s=Py_ssize_t, j=Py_ssize_t, parts=Py_ssize_t,
               z=Py_ssize_t, i=Py_ssize_t, node_at=list, kids=list, uses=list, size=list,
               found=list, stack=list, inner=list, bits=list, out=list, read=bytearray,
               named=bytearray, is_root=bytearray, n=Node, b=Node, e=Node, k=Node, root=Node)
cpdef list programs(list roots, reserved=*)
