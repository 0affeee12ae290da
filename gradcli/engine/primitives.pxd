# What Cython knows of primitives.py when setup.py compiles it (see forward.pxd): nothing to
# type. Compiled, the table's rules are C functions, so each call a sweep makes of a row's rule
# (every node's partials, on floats and on balls) runs no interpreter frame; the rows are
# the same objects, read by every mode. primitives.py stays the one source; without Cython it
# runs as written.
