# What Cython knows of forward.py when setup.py compiles it (see symbolic/expr.pxd): the primal
# loop with its indices as C integers. forward.py stays the one source; without Cython it runs
# as written.
import cython

@cython.locals(arg0=cython.int[:], arg1=cython.int[:], base=Py_ssize_t, k=Py_ssize_t, b=Py_ssize_t, values=list)
cpdef list forward(graph, point)
