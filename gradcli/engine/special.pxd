# What Cython knows of special.py when setup.py compiles it (see forward.pxd): nothing to type.
# Compiled, the float primals the table names from there (sigmoid, relu, min, digamma, ...) are
# C functions, as primitives.py's are, so a sweep calls them without an interpreter frame.
# special.py stays the one source: gradcli.code.helpers prints generated code's helpers from
# its text, and without Cython it runs as written.
