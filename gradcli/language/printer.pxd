# What Cython knows of printer.py when setup.py compiles it (see parser.pxd): the walk's stack and
# output as lists, and the spelling an extension type whose methods the walk calls directly (a
# notation's subclass, LaTeX's, overrides them as Python methods), reading the nodes' fields
# directly (ast.pxd), so printing a large program back (--json's source_read, the trace's
# "read as") is the pieces' lists, not the interpreter's steps between them.
# printer.py stays the one source; without Cython it runs as written.
import cython

from gradcli.language.ast cimport Binary, Call, Num, Unary, Var

@cython.locals(num=Num)
cpdef bint _negative_number(node)

cdef class Spelling:
    cpdef str number(self, value)
    cpdef str name(self, name)
    @cython.locals(binary=Binary)
    cpdef int precedence(self, node)
    @cython.locals(var=Var, num=Num, unary=Unary)
    cpdef list pieces(self, expr)
    @cython.locals(p=int)
    cpdef list binary(self, Binary expr)
    cpdef list call(self, Call expr)

@cython.locals(out=list, stack=list, pieces=list, need=cython.int, size=Py_ssize_t)
cpdef str walk(node, Spelling spelling, Py_ssize_t limit=*)
