# What Cython knows of ball.py when setup.py compiles it (see forward.pxd): nothing to type.
# Compiled, the bare balls' functions (a unary row's Arb method with its finiteness check, the
# sign, the rows written over Arb's operations) and the Real functions are C functions, so the
# certified sweeps call them without an interpreter frame. ball.py stays the one source;
# without Cython it runs as written.
