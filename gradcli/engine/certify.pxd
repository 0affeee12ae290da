# What Cython knows of certify.py when setup.py compiles it (see forward.pxd): the bare balls'
# forward sweep with its indices as C integers and the tape's argument columns as int32
# memoryviews, so the loop's bookkeeping is C and only Arb's operations are Python calls.
# certify.py stays the one source; without Cython it runs as written.
import cython

@cython.locals(arg0=cython.int[:], arg1=cython.int[:], k=Py_ssize_t, a=Py_ssize_t,
               b=Py_ssize_t, balls=list, exact=list, bare=dict, known=dict,
               base=Py_ssize_t, shared=bytearray)
cpdef tuple _bare_forward(graph, point)
