# What Cython knows of printer.py when setup.py compiles it (see parser.pxd): the walk's stack and
# output as lists, so printing a large program back (--json's source_read, the trace's "read as")
# is the spelling's calls and the list operations, not the interpreter's steps between them.
# printer.py stays the one source; without Cython it runs as written.
import cython

@cython.locals(out=list, stack=list, pieces=list, need=cython.int)
cpdef str walk(node, spelling)
