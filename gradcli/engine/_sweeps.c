/* The sweeps' loops compiled: forward.py's primal loop, partials.py's reverse accumulation and
   certify.py's first sweep on bare balls, over whatever numbers the caller's lists hold
   (floats, python-flint balls).

   Nothing of the mathematics is written here: every value and every local partial comes from
   calling the rule table's own functions (a row's primal, its partials, the ball namespace's
   functions), passed in as lists, one entry per kind of node (the tape is packed: see pack),
   or, for a row whose form declares them (a sum's coefficients, a product's other factor), is
   what those functions return. What C saves is the interpreter's bookkeeping around the calls
   (indexing, unpacking, the loop), which costs the Python loops three to five times the calls
   themselves on a large tape (docs/performance.md).

   The arithmetic of the accumulation is Python's own: ``adjoint[a] += adjoint[s] * p`` is
   PyNumber_Multiply then PyNumber_InPlaceAdd, so a float gets the same IEEE operations and a
   ball the same Arb calls as in the Python loop (which takes the same exact shortcuts on bare
   balls: see accumulate). An exception of any call propagates with the
   node's slot (and, in the reverse sweep, which argument's partial) set on it as ``slot`` and
   ``which``, so the callers name the node as they always did. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <math.h>
#include <stdint.h>
#include <string.h>

/* The exception being raised gets ``slot`` (and ``which`` if >= 0); if that fails (an
   exception without a __dict__), it propagates unchanged. */
static void mark(Py_ssize_t slot, int which)
{
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    if (value != NULL) {
        PyObject *s = PyLong_FromSsize_t(slot);
        if (s == NULL || PyObject_SetAttrString(value, "slot", s) < 0)
            PyErr_Clear();
        Py_XDECREF(s);
        if (which >= 0) {
            PyObject *w = PyLong_FromLong(which);
            if (w == NULL || PyObject_SetAttrString(value, "which", w) < 0)
                PyErr_Clear();
            Py_XDECREF(w);
        }
    }
    if (tb != NULL && value != NULL)
        PyException_SetTraceback(value, tb);
    PyErr_Restore(type, value, tb);
}

static int exact_lists(PyObject *const *items, const char *const *names, Py_ssize_t count)
{
    for (Py_ssize_t i = 0; i < count; i++) {
        if (!PyList_CheckExact(items[i])) {
            PyErr_Format(PyExc_TypeError, "%s must be a list", names[i]);
            return -1;
        }
    }
    return 0;
}

/* The int32 column ``o`` (an array('i') or another int32 buffer, or a list of ints) into
   out[0..n). -1 with the exception set (a list's ints must fit 32 bits). */
static int int32_column(PyObject *o, Py_ssize_t n, int32_t *out)
{
    if (PyList_Check(o)) {
        if (PyList_GET_SIZE(o) != n) {
            PyErr_SetString(PyExc_ValueError, "columns of unequal lengths");
            return -1;
        }
        for (Py_ssize_t i = 0; i < n; i++) {
            long v = PyLong_AsLong(PyList_GET_ITEM(o, i));
            if (v == -1 && PyErr_Occurred())
                return -1;
            if (v < INT32_MIN || v > INT32_MAX) {
                PyErr_SetString(PyExc_OverflowError, "a slot out of 32-bit range");
                return -1;
            }
            out[i] = (int32_t)v;
        }
        return 0;
    }
    Py_buffer view;
    if (PyObject_GetBuffer(o, &view, PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) < 0)
        return -1;
    int ok = view.itemsize == 4 && view.format != NULL && strcmp(view.format, "i") == 0;
    if (ok && view.len == n * 4)
        memcpy(out, view.buf, (size_t)n * 4);
    PyBuffer_Release(&view);
    if (!ok)
        PyErr_SetString(PyExc_TypeError, "a column of int32 (array('i')) or a list of ints");
    else if (view.len != n * 4)
        PyErr_SetString(PyExc_ValueError, "columns of unequal lengths");
    return ok && view.len == n * 4 ? 0 : -1;
}

/* The tape as the loops read it (see pack): a code per node naming its row in a list of the
   distinct rows (kinds), and its argument slots as native 32-bit integers. Reading a Python
   int per argument per sweep cost each loop a cache miss an argument on a large tape. */
typedef struct {
    Py_ssize_t n;          /* nodes */
    const uint16_t *code;  /* node k's kind */
    const int32_t *a0, *a1;  /* its argument slots (a1 = -1: one argument) */
    Py_ssize_t kinds;
} Tape;

/* The argument columns alone (t->code and t->kinds unset): int32 bytes of equal lengths. */
static int read_args(PyObject *a0, PyObject *a1, Tape *t)
{
    if (!PyBytes_CheckExact(a0) || !PyBytes_CheckExact(a1)) {
        PyErr_SetString(PyExc_TypeError, "arg0 and arg1 must be bytes (see pack)");
        return -1;
    }
    t->n = PyBytes_GET_SIZE(a0) / 4;
    if (PyBytes_GET_SIZE(a0) != 4 * t->n || PyBytes_GET_SIZE(a1) != 4 * t->n) {
        PyErr_SetString(PyExc_ValueError, "arguments of unequal lengths");
        return -1;
    }
    t->a0 = (const int32_t *)PyBytes_AS_STRING(a0);
    t->a1 = (const int32_t *)PyBytes_AS_STRING(a1);
    return 0;
}

static int read_tape(PyObject *codes, PyObject *a0, PyObject *a1, Py_ssize_t kinds, Tape *t)
{
    if (read_args(a0, a1, t) < 0)
        return -1;
    if (!PyBytes_CheckExact(codes)) {
        PyErr_SetString(PyExc_TypeError, "codes must be bytes (see pack)");
        return -1;
    }
    if (PyBytes_GET_SIZE(codes) != 2 * t->n) {
        PyErr_SetString(PyExc_ValueError, "codes and arguments of unequal lengths");
        return -1;
    }
    t->code = (const uint16_t *)PyBytes_AS_STRING(codes);
    t->kinds = kinds;
    return 0;
}

/* Node k (slot s) of the tape's argument slots, both made before s; -1 on error (s no node
   of the tape, or an argument past it). */
static int args_at(const Tape *t, Py_ssize_t k, Py_ssize_t s, Py_ssize_t *a, Py_ssize_t *b)
{
    if (k < 0 || k >= t->n) {
        PyErr_SetString(PyExc_ValueError, "a slot that is no node");
        return -1;
    }
    *a = t->a0[k];
    *b = t->a1[k];
    if (*a < 0 || *a >= s || *b >= s || *b < -1) {
        PyErr_SetString(PyExc_ValueError, "an argument slot past its node");
        return -1;
    }
    return 0;
}

/* Node k (slot s): its kind and argument slots (args_at); -1 on error. */
static int node_at(const Tape *t, Py_ssize_t k, Py_ssize_t s, Py_ssize_t *kind, Py_ssize_t *a,
                   Py_ssize_t *b)
{
    if (args_at(t, k, s, a, b) < 0)
        return -1;
    *kind = t->code[k];
    if (*kind >= t->kinds) {
        PyErr_SetString(PyExc_ValueError, "a node of no kind");
        return -1;
    }
    return 0;
}

/* pack(ops, arg0, arg1): (kinds, codes, a0, a1): the distinct rows of ``ops`` in order of first
   use, each node's index among them (uint16), and the argument columns (a graph's int32
   arrays, or lists of ints) as int32, all bytes.
   Rows are told apart by identity (a row is one object of the table). */
static PyObject *pack(PyObject *self, PyObject *args)
{
    PyObject *ops, *arg0, *arg1;
    if (!PyArg_ParseTuple(args, "OOO", &ops, &arg0, &arg1))
        return NULL;
    PyObject *lists[] = {ops};
    const char *names[] = {"ops"};
    if (exact_lists(lists, names, 1) < 0)
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(ops);
    PyObject *kinds = PyList_New(0);
    PyObject *codes = PyBytes_FromStringAndSize(NULL, 2 * n);
    PyObject *c0 = PyBytes_FromStringAndSize(NULL, 4 * n);
    PyObject *c1 = PyBytes_FromStringAndSize(NULL, 4 * n);
    if (kinds == NULL || codes == NULL || c0 == NULL || c1 == NULL)
        goto failed;
    uint16_t *code = (uint16_t *)PyBytes_AS_STRING(codes);
    int32_t *a0 = (int32_t *)PyBytes_AS_STRING(c0), *a1 = (int32_t *)PyBytes_AS_STRING(c1);
    if (int32_column(arg0, n, a0) < 0 || int32_column(arg1, n, a1) < 0)
        goto failed;
    PyObject *last = NULL;
    Py_ssize_t last_kind = 0;
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *op = PyList_GET_ITEM(ops, k);
        if (op != last) {  /* runs of one row are common; else a scan of the few rows seen */
            Py_ssize_t count = PyList_GET_SIZE(kinds), j = 0;
            while (j < count && PyList_GET_ITEM(kinds, j) != op)
                j++;
            if (j == count) {
                if (count == 65535) {
                    PyErr_SetString(PyExc_OverflowError, "more than 65535 kinds of node");
                    goto failed;
                }
                if (PyList_Append(kinds, op) < 0)
                    goto failed;
            }
            last = op;
            last_kind = j;
        }
        code[k] = (uint16_t)last_kind;
        if (a0[k] < 0 || a1[k] < -1) {
            PyErr_SetString(PyExc_ValueError, "an argument slot below 0");
            goto failed;
        }
    }
    return Py_BuildValue("(NNNN)", kinds, codes, c0, c1);
failed:
    Py_XDECREF(kinds);
    Py_XDECREF(codes);
    Py_XDECREF(c0);
    Py_XDECREF(c1);
    return NULL;
}

/* forward(primals, codes, a0, a1, values, base): values[base + k] = primals[code[k]](values[a0[k]]
   [, values[a1[k]]]) for every node k, in tape order. */
static PyObject *forward(PyObject *self, PyObject *args)
{
    PyObject *primals, *codes, *arg0, *arg1, *values;
    Py_ssize_t base;
    if (!PyArg_ParseTuple(args, "OOOOOn", &primals, &codes, &arg0, &arg1, &values, &base))
        return NULL;
    PyObject *lists[] = {primals, values};
    const char *names[] = {"primals", "values"};
    Tape t;
    if (exact_lists(lists, names, 2) < 0
            || read_tape(codes, arg0, arg1, PyList_GET_SIZE(primals), &t) < 0)
        return NULL;
    Py_ssize_t n = t.n;
    if (base < 0 || PyList_GET_SIZE(values) < base + n) {
        PyErr_SetString(PyExc_ValueError, "lists of unequal lengths");
        return NULL;
    }
    for (Py_ssize_t k = 0; k < n; k++) {
        Py_ssize_t s = base + k;
        Py_ssize_t kind, a, b;
        if (node_at(&t, k, s, &kind, &a, &b) < 0)
            return NULL;
        PyObject *call[2] = {PyList_GET_ITEM(values, a),
                             b >= 0 ? PyList_GET_ITEM(values, b) : NULL};
        PyObject *r = PyObject_Vectorcall(PyList_GET_ITEM(primals, kind), call, b >= 0 ? 2 : 1,
                                          NULL);
        if (r == NULL) {
            mark(s, -1);
            return NULL;
        }
        PyObject *old = PyList_GET_ITEM(values, s);
        PyList_SET_ITEM(values, s, r);
        Py_DECREF(old);
    }
    Py_RETURN_NONE;
}

/* adjoint[target] += upstream * p, as Python's ``+=`` does it. With ``unit`` (a namespace whose
   numbers are exact under ×±1 and 0 +: bare balls), a partial that is the float 1.0 or -1.0
   gives upstream or -upstream itself, and a product added to the float 0.0 is kept as it is
   (partials.py's _accumulated: Arb's rounding of the radius would widen the ball). */
static inline int accumulate(PyObject *adjoint, Py_ssize_t target, PyObject *upstream, PyObject *p,
                             int unit)
{
    PyObject *old = PyList_GET_ITEM(adjoint, target);
    PyObject *sum;
    if (PyFloat_CheckExact(upstream) && PyFloat_CheckExact(p) && PyFloat_CheckExact(old)) {
        /* the float operations Python's float type does, without two objects in between */
        double product = PyFloat_AS_DOUBLE(upstream) * PyFloat_AS_DOUBLE(p);
        sum = PyFloat_FromDouble(PyFloat_AS_DOUBLE(old) + product);
    } else {
        PyObject *product;
        double c = unit && PyFloat_CheckExact(p) ? PyFloat_AS_DOUBLE(p) : 0.0;
        if (c == 1.0) {
            product = upstream;
            Py_INCREF(product);
        } else if (c == -1.0) {
            product = PyNumber_Negative(upstream);
        } else {
            product = PyNumber_Multiply(upstream, p);
        }
        if (product == NULL)
            return -1;
        if (unit && PyFloat_CheckExact(old) && PyFloat_AS_DOUBLE(old) == 0.0
                && !PyFloat_CheckExact(product)) {
            sum = product;
        } else {
            sum = PyNumber_InPlaceAdd(old, product);
            Py_DECREF(product);
        }
    }
    if (sum == NULL)
        return -1;
    PyList_SET_ITEM(adjoint, target, sum);
    Py_DECREF(old);
    return 0;
}

/* The reverse sweep's shortcut for a kind whose partials the table's row declares by its form
   (primitives.py, ``form``): a sum's partials are its constant coefficients, a product of two
   arguments' partial by one is the other. The row's functions return exactly these objects
   (tests/test_sweeps.py checks every such row), so only their calls are saved. */
enum { CALL = 0, CONSTANT = 1, OTHER = 2 };

/* reverse(partials, how, constants, codes, a0, a1, base, slots, values, adjoint, active, m,
   unit, first, second[, spend]): for each slot s of ``slots`` (the reverse sweep's order, int32
   bytes), each argument of node k = s - base that is active gets its partial p: by
   ``how[kind]``, the rule partials[kind][i](m, values[a] [, values[b]], values[s]) (CALL), the
   object constants[kind][i] (CONSTANT), or the other argument's value (OTHER). With
   ``adjoint`` (else None), adjoint[argument] += adjoint[s] * p (see accumulate for ``unit``);
   with ``first`` and ``second`` (else None), p is kept as first[k] (the first argument's) or
   second[k]. With ``spend``, adjoint[s] becomes None once s has passed it on: no later node
   reads it (the order visits a node after every node that reads it), so the sweep holds the
   adjoints still to be passed on, not one a node. */
static PyObject *reverse(PyObject *self, PyObject *args)
{
    PyObject *partials, *how, *constants, *codes, *arg0, *arg1, *slots, *values, *adjoint,
             *active, *m, *first, *second;
    Py_ssize_t base;
    int unit, spend = 0;
    if (!PyArg_ParseTuple(args, "OOOOOOnOOOOOpOO|p", &partials, &how, &constants, &codes, &arg0,
                          &arg1, &base, &slots, &values, &adjoint, &active, &m, &unit, &first,
                          &second, &spend))
        return NULL;
    PyObject *lists[] = {partials, constants, values};
    const char *names[] = {"partials", "constants", "values"};
    Tape t;
    if (exact_lists(lists, names, 3) < 0
            || read_tape(codes, arg0, arg1, PyList_GET_SIZE(partials), &t) < 0)
        return NULL;
    int accumulating = adjoint != Py_None, keeping = first != Py_None;
    if ((accumulating && !PyList_CheckExact(adjoint)) || (keeping && (!PyList_CheckExact(first)
            || !PyList_CheckExact(second))) || (!keeping && second != Py_None)) {
        PyErr_SetString(PyExc_TypeError, "adjoint, first and second must be lists or None");
        return NULL;
    }
    if (!PyByteArray_CheckExact(active) || !PyBytes_CheckExact(how)
            || !PyBytes_CheckExact(slots)) {
        PyErr_SetString(PyExc_TypeError, "active must be a bytearray, how and slots bytes");
        return NULL;
    }
    Py_ssize_t n = t.n, n_slots = PyList_GET_SIZE(values);
    if (base < 0 || PyBytes_GET_SIZE(how) < t.kinds || PyList_GET_SIZE(constants) < t.kinds
            || (accumulating && PyList_GET_SIZE(adjoint) < n_slots)
            || (keeping && (PyList_GET_SIZE(first) < n || PyList_GET_SIZE(second) < n))
            || PyByteArray_GET_SIZE(active) < n_slots || n_slots < base + n
            || PyBytes_GET_SIZE(slots) % 4) {
        PyErr_SetString(PyExc_ValueError, "lists of unequal lengths");
        return NULL;
    }
    const char *on = PyByteArray_AS_STRING(active), *shortcut = PyBytes_AS_STRING(how);
    const int32_t *visit = (const int32_t *)PyBytes_AS_STRING(slots);
    Py_ssize_t count = PyBytes_GET_SIZE(slots) / 4;
    for (Py_ssize_t i = 0; i < count; i++) {
        Py_ssize_t s = visit[i], k = s - base;
        Py_ssize_t kind, a, b;
        if (node_at(&t, k, s, &kind, &a, &b) < 0)
            return NULL;
        int arity = b >= 0 ? 2 : 1;
        int by = shortcut[kind];
        PyObject *rules = by == CONSTANT ? PyList_GET_ITEM(constants, kind)
                                         : PyList_GET_ITEM(partials, kind);
        if (!PyTuple_Check(rules) || PyTuple_GET_SIZE(rules) < arity || (by == OTHER && arity < 2)
                || by > OTHER) {
            PyErr_SetString(PyExc_TypeError, "a node's partials must be a tuple of its rules");
            return NULL;
        }
        /* held: accumulating into an argument never replaces it, but be safe */
        PyObject *upstream = accumulating ? PyList_GET_ITEM(adjoint, s) : NULL;
        Py_XINCREF(upstream);
        PyObject *call[4] = {m, PyList_GET_ITEM(values, a), NULL, NULL};
        Py_ssize_t nargs = arity + 2;
        if (b < 0) {
            call[2] = PyList_GET_ITEM(values, s);
        } else {
            call[2] = PyList_GET_ITEM(values, b);
            call[3] = PyList_GET_ITEM(values, s);
        }
        int bad = 0;
        for (int which = 0; which < arity && !bad; which++) {
            Py_ssize_t target = which ? b : a;
            if (!on[target])
                continue;
            PyObject *p;
            if (by == CALL) {
                p = PyObject_Vectorcall(PyTuple_GET_ITEM(rules, which), call, nargs, NULL);
            } else {
                p = by == CONSTANT ? PyTuple_GET_ITEM(rules, which) : call[2 - which];
                Py_INCREF(p);
            }
            if (p == NULL || (accumulating && accumulate(adjoint, target, upstream, p, unit) < 0)) {
                mark(s, which);
                bad = 1;
            } else if (keeping) {
                PyObject *kept = which ? second : first;
                Py_INCREF(p);
                if (PyList_SetItem(kept, k, p) < 0)
                    bad = 1;
            }
            Py_XDECREF(p);
        }
        Py_XDECREF(upstream);
        if (bad)
            return NULL;
        if (spend && accumulating) {
            Py_INCREF(Py_None);
            if (PyList_SetItem(adjoint, s, Py_None) < 0)
                return NULL;
        }
    }
    Py_RETURN_NONE;
}

/* edges(a0, a1, slots, active, base): a recorded sweep's edges (reverse.Recorded.edges), in the
   sweep's order: for each slot s of ``slots``, its node's first argument, then its second,
   each where active: (sources, targets, which, by_target), four columns of int32 bytes (as
   the arguments and slots are), the last the edges' positions sorted stably by target (a
   counting sort: targets are slots). A trace reads a few dozen of them: no int objects. */
static PyObject *edges(PyObject *self, PyObject *args)
{
    PyObject *arg0, *arg1, *slots, *active;
    Py_ssize_t base;
    if (!PyArg_ParseTuple(args, "OOOOn", &arg0, &arg1, &slots, &active, &base))
        return NULL;
    Tape t;
    if (read_args(arg0, arg1, &t) < 0)
        return NULL;
    if (!PyBytes_CheckExact(slots) || PyBytes_GET_SIZE(slots) % 4
            || !PyByteArray_CheckExact(active)) {
        PyErr_SetString(PyExc_TypeError, "slots must be int32 bytes, active a bytearray");
        return NULL;
    }
    const int32_t *visit = (const int32_t *)PyBytes_AS_STRING(slots);
    const char *on = PyByteArray_AS_STRING(active);
    Py_ssize_t count = PyBytes_GET_SIZE(slots) / 4, n_slots = PyByteArray_GET_SIZE(active);
    Py_ssize_t m = 0;  /* the edges: counted first, so the columns are made at their size */
    for (Py_ssize_t i = 0; i < count; i++) {
        Py_ssize_t s = visit[i], a, b;
        if (args_at(&t, s - base, s, &a, &b) < 0)
            return NULL;
        if (s >= n_slots) {
            PyErr_SetString(PyExc_ValueError, "a slot past active");
            return NULL;
        }
        m += on[a] != 0;
        m += b >= 0 && on[b];
    }
    PyObject *columns[4] = {NULL, NULL, NULL, NULL}, *result = NULL;
    Py_ssize_t *start = PyMem_Calloc(n_slots + 1, sizeof(Py_ssize_t));
    if (start == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (int c = 0; c < 4; c++)
        if ((columns[c] = PyBytes_FromStringAndSize(NULL, 4 * m)) == NULL)
            goto done;
    int32_t *sources = (int32_t *)PyBytes_AS_STRING(columns[0]);
    int32_t *targets = (int32_t *)PyBytes_AS_STRING(columns[1]);
    int32_t *which = (int32_t *)PyBytes_AS_STRING(columns[2]);
    int32_t *by_target = (int32_t *)PyBytes_AS_STRING(columns[3]);
    Py_ssize_t e = 0;
    for (Py_ssize_t i = 0; i < count; i++) {
        Py_ssize_t s = visit[i], k = s - base;
        for (int j = 0; j < 2; j++) {
            Py_ssize_t a = j ? t.a1[k] : t.a0[k];
            if (a < 0 || !on[a])  /* no second argument, or not differentiated */
                continue;
            sources[e] = (int32_t)s;
            targets[e] = (int32_t)a;
            which[e] = j;
            start[a + 1]++;
            e++;
        }
    }
    for (Py_ssize_t a = 0; a < n_slots; a++)
        start[a + 1] += start[a];
    for (e = 0; e < m; e++)  /* in the sweep's order, each edge to its target's next place */
        by_target[start[targets[e]]++] = (int32_t)e;
    result = PyTuple_Pack(4, columns[0], columns[1], columns[2], columns[3]);
done:
    PyMem_Free(start);
    for (int c = 0; c < 4; c++)
        Py_XDECREF(columns[c]);
    return result;
}

static PyObject *HEIGHT_BITS;  /* the method's name, interned once: a rational's size */

/* q.height_bits(), a rational's size; -1 with the exception set. */
static Py_ssize_t height_bits(PyObject *q)
{
    PyObject *h = PyObject_VectorcallMethod(HEIGHT_BITS, &q, 1, NULL);
    if (h == NULL)
        return -1;
    Py_ssize_t bits = PyLong_AsSsize_t(h);
    Py_DECREF(h);
    return bits;
}

/* bare_forward(funcs, never, rational, codes, a0, a1, balls, exact, make, height_cap, slow):
   certify._bare_forward's loop; funcs, never and rational have an entry per kind (see pack).
   For node k of kind j: where funcs[j] (the ball namespace's function) is given and an argument
   has no exact rational (or never[j], a function whose result never has one), its ball is
   funcs[j](balls...) and it has none; where rational[j] (the row on rationals) is given and
   every argument has one, it has their result while its height_bits() <= height_cap, its ball
   make(q), else the ball's result where funcs[j] is given; any other node is slow(k)'s (which
   appends to both lists itself). */
static PyObject *bare_forward(PyObject *self, PyObject *args)
{
    PyObject *funcs, *never, *rational, *codes, *arg0, *arg1, *balls, *exact, *make, *slow;
    Py_ssize_t cap;
    if (!PyArg_ParseTuple(args, "OOOOOOOOOnO", &funcs, &never, &rational, &codes, &arg0, &arg1,
                          &balls, &exact, &make, &cap, &slow))
        return NULL;
    PyObject *lists[] = {funcs, rational, balls, exact};
    const char *names[] = {"funcs", "rational", "balls", "exact"};
    Tape t;
    if (exact_lists(lists, names, 4) < 0
            || read_tape(codes, arg0, arg1, PyList_GET_SIZE(funcs), &t) < 0)
        return NULL;
    if (!PyBytes_CheckExact(never)) {
        PyErr_SetString(PyExc_TypeError, "never must be bytes");
        return NULL;
    }
    Py_ssize_t n = t.n, base = PyList_GET_SIZE(balls);
    if (PyBytes_GET_SIZE(never) < t.kinds || PyList_GET_SIZE(rational) < t.kinds
            || PyList_GET_SIZE(exact) != base) {
        PyErr_SetString(PyExc_ValueError, "lists of unequal lengths");
        return NULL;
    }
    const char *nev = PyBytes_AS_STRING(never);
    for (Py_ssize_t k = 0; k < n; k++) {
        Py_ssize_t s = base + k;
        if (PyList_GET_SIZE(balls) != s || PyList_GET_SIZE(exact) != s) {
            PyErr_SetString(PyExc_RuntimeError, "a node did not append its ball and rational");
            return NULL;
        }
        Py_ssize_t kind, a, b;
        if (node_at(&t, k, s, &kind, &a, &b) < 0)
            return NULL;
        PyObject *f = PyList_GET_ITEM(funcs, kind), *r = PyList_GET_ITEM(rational, kind);
        PyObject *qa = PyList_GET_ITEM(exact, a), *qb = b >= 0 ? PyList_GET_ITEM(exact, b) : NULL;
        PyObject *ball = NULL, *q = NULL;  /* made here (q NULL: no rational), or by slow(k) */
        PyObject *call[2] = {PyList_GET_ITEM(balls, a), b >= 0 ? PyList_GET_ITEM(balls, b) : NULL};
        Py_ssize_t nargs = b >= 0 ? 2 : 1;
        /* (qb is NULL for one argument) */
        if (f != Py_None && (qa == Py_None || qb == Py_None || nev[kind])) {
            ball = PyObject_Vectorcall(f, call, nargs, NULL);
        } else if (r != Py_None && qa != Py_None && qb != Py_None) {
            PyObject *rq[2] = {qa, qb};
            q = PyObject_Vectorcall(r, rq, nargs, NULL);
            Py_ssize_t bits = q == NULL ? -1 : height_bits(q);
            if (bits >= 0 && bits <= cap) {
                ball = PyObject_Vectorcall(make, &q, 1, NULL);
            } else if (bits > cap) {  /* too tall: the ball's result, or the Real function's */
                Py_CLEAR(q);
                if (f != Py_None)
                    ball = PyObject_Vectorcall(f, call, nargs, NULL);
            }
        }
        if (PyErr_Occurred()) {
            Py_XDECREF(ball);
            Py_XDECREF(q);
            goto failed;
        }
        if (ball == NULL) {  /* the node's Real function: slow(k) appends both itself */
            PyObject *kk = PyLong_FromSsize_t(k);
            if (kk == NULL)
                return NULL;
            PyObject *done = PyObject_Vectorcall(slow, &kk, 1, NULL);
            Py_DECREF(kk);
            if (done == NULL)
                goto failed;
            Py_DECREF(done);
            continue;
        }
        if (PyList_Append(balls, ball) < 0 || PyList_Append(exact, q != NULL ? q : Py_None) < 0) {
            Py_DECREF(ball);
            Py_XDECREF(q);
            return NULL;
        }
        Py_DECREF(ball);
        Py_XDECREF(q);
        continue;
    failed:
        mark(s, -1);
        return NULL;
    }
    Py_RETURN_NONE;
}

/* magnitudes(codes, classes, values, adjoint, base): interval.hopeless's two sums over the
   packed tape's nodes k (codes, uint16 bytes): |adjoint[base + k] * values[base + k]| added
   up by classes[codes[k]], 1 a rounded row (a product, a quotient), 2 a function, 0 an exact
   row (not added), in tape order and in doubles, as Python's sum() adds floats. (rounded,
   functions). */
static PyObject *magnitudes(PyObject *self, PyObject *args)
{
    PyObject *codes, *classes, *values, *adjoint;
    Py_ssize_t base;
    if (!PyArg_ParseTuple(args, "SSOOn", &codes, &classes, &values, &adjoint, &base))
        return NULL;
    PyObject *lists[] = {values, adjoint};
    const char *names[] = {"values", "adjoint"};
    if (exact_lists(lists, names, 2) < 0)
        return NULL;
    Py_ssize_t n = PyBytes_GET_SIZE(codes) / 2, kinds = PyBytes_GET_SIZE(classes);
    if (PyBytes_GET_SIZE(codes) % 2 || base < 0 || PyList_GET_SIZE(values) < base + n
            || PyList_GET_SIZE(adjoint) < base + n) {
        PyErr_SetString(PyExc_ValueError, "lists of unequal lengths");
        return NULL;
    }
    const uint16_t *code = (const uint16_t *)PyBytes_AS_STRING(codes);
    const char *cls = PyBytes_AS_STRING(classes);
    double sums[3] = {0.0, 0.0, 0.0};
    for (Py_ssize_t k = 0; k < n; k++) {
        if (code[k] >= kinds) {
            PyErr_SetString(PyExc_ValueError, "a node of no kind");
            return NULL;
        }
        int c = cls[code[k]];
        if (c != 1 && c != 2)
            continue;
        double a = PyFloat_AsDouble(PyList_GET_ITEM(adjoint, base + k));
        double v = PyFloat_AsDouble(PyList_GET_ITEM(values, base + k));
        if ((a == -1.0 || v == -1.0) && PyErr_Occurred())
            return NULL;
        sums[c] += fabs(a * v);
    }
    return Py_BuildValue("(dd)", sums[1], sums[2]);
}

static PyMethodDef methods[] = {
    {"pack", pack, METH_VARARGS, "The tape as the loops read it: (kinds, codes, a0, a1)."},
    {"edges", edges, METH_VARARGS, "A recorded sweep's edges, and their order by target."},
    {"magnitudes", magnitudes, METH_VARARGS, "interval.hopeless's sums of |adjoint * value|."},
    {"forward", forward, METH_VARARGS, "forward.py's primal loop."},
    {"reverse", reverse, METH_VARARGS, "partials.py's reverse accumulation."},
    {"bare_forward", bare_forward, METH_VARARGS, "certify._bare_forward's loop."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_sweeps", NULL, -1, methods};

PyMODINIT_FUNC PyInit__sweeps(void)
{
    if (HEIGHT_BITS == NULL && (HEIGHT_BITS = PyUnicode_InternFromString("height_bits")) == NULL)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m != NULL && PyModule_AddIntConstant(m, "ABI", 6) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
