# What Cython knows of partials.py when setup.py compiles it (see symbolic/expr.pxd): the one
# loop over the rules with its indices as C integers. partials.py stays the one source; without
# Cython it runs as written.
import cython

@cython.locals(arg0=cython.int[:], arg1=cython.int[:], n=Py_ssize_t, base=Py_ssize_t,
               s=Py_ssize_t, k=Py_ssize_t, a=Py_ssize_t, b=Py_ssize_t, which=Py_ssize_t,
               target=Py_ssize_t, unit=bint, shifts=frozenset, first=list, second=list,
               active=bytearray, visit=cython.int[:], i=Py_ssize_t,
               known=dict, looked=Py_ssize_t, found=Py_ssize_t)
cpdef tuple local_partials(graph, values, m=*, order=*, slots=*, adjoint=*, active=*, each=*,
                           keep=*, spend=*)

# the bare balls' accumulation, called for every edge of their reverse sweep: a C call
cpdef object _accumulated(old, upstream, p)
