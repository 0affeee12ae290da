# What Cython knows of ast.py when setup.py compiles it (see parser.pxd): the nodes as extension
# types, so the compiled code that builds them (the parser's callbacks), prints them (printer.py)
# and lowers them (engine/graph.py) reads and stores their fields directly, not through Python's
# attribute look-ups. ast.py stays the one source; without Cython its slotted classes run.

cdef class Node:
    cdef public object span

cdef class Num(Node):
    cdef public object value

cdef class Var(Node):
    cdef public object name

cdef class Unary(Node):
    cdef public object op, operand

cdef class Binary(Node):
    cdef public object op, left, right

cdef class Call(Node):
    cdef public object name, args, name_span

cdef class ArrayLit(Node):
    cdef public object items

cdef class Index(Node):
    cdef public object target, indices

cdef class Slice(Node):
    cdef public object start, stop

cdef class Keyword(Node):
    cdef public object name, value

cdef class Assign(Node):
    cdef public object name, op, value

cdef class Program(Node):
    cdef public object statements
