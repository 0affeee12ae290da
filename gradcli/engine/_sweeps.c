/* The sweeps' loops compiled: forward.py's primal loop, partials.py's reverse accumulation and
   certify.py's first sweep on bare balls, over whatever numbers the caller's lists hold
   (floats, python-flint balls).

   Nothing of the mathematics is written here: every value and every local partial comes from
   calling the rule table's own functions (a row's primal, its partials, the ball namespace's
   functions), passed in as lists, one entry a node. What C saves is the interpreter's
   bookkeeping around those calls (indexing, unpacking, the loop), which costs the Python loops
   three to five times the calls themselves on a large tape (docs/performance.md).

   The arithmetic of the accumulation is Python's own: ``adjoint[a] += adjoint[s] * p`` is
   PyNumber_Multiply then PyNumber_InPlaceAdd, so a float gets the same IEEE operations and a
   ball the same Arb calls as in the Python loop. An exception of any call propagates with the
   node's slot (and, in the reverse sweep, which argument's partial) set on it as ``slot`` and
   ``which``, so the callers name the node as they always did. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>

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

/* A node's argument slot, checked against the slots made so far. */
static inline Py_ssize_t slot_of(PyObject *list, Py_ssize_t k, Py_ssize_t limit)
{
    Py_ssize_t v = PyLong_AsSsize_t(PyList_GET_ITEM(list, k));
    if (v == -1 && PyErr_Occurred())
        return -2;
    if (v >= limit) {
        PyErr_SetString(PyExc_ValueError, "an argument slot past its node");
        return -2;
    }
    return v;
}

/* Node k's argument slots (b = -1: one argument), both made before its slot s; -1 on error. */
static int node_args(PyObject *arg0, PyObject *arg1, Py_ssize_t k, Py_ssize_t s,
                     Py_ssize_t *a, Py_ssize_t *b)
{
    *a = slot_of(arg0, k, s);
    *b = slot_of(arg1, k, s);
    if (*a == -2 || *b == -2)
        return -1;
    if (*a < 0) {
        PyErr_SetString(PyExc_ValueError, "no argument");
        return -1;
    }
    return 0;
}

/* forward(primals, arg0, arg1, values, base): values[base + k] = primals[k](values[arg0[k]]
   [, values[arg1[k]]]) for every node k, in tape order. */
static PyObject *forward(PyObject *self, PyObject *args)
{
    PyObject *primals, *arg0, *arg1, *values;
    Py_ssize_t base;
    if (!PyArg_ParseTuple(args, "OOOOn", &primals, &arg0, &arg1, &values, &base))
        return NULL;
    PyObject *lists[] = {primals, arg0, arg1, values};
    const char *names[] = {"primals", "arg0", "arg1", "values"};
    if (exact_lists(lists, names, 4) < 0)
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(primals);
    if (PyList_GET_SIZE(arg0) < n || PyList_GET_SIZE(arg1) < n || base < 0
            || PyList_GET_SIZE(values) < base + n) {
        PyErr_SetString(PyExc_ValueError, "lists of unequal lengths");
        return NULL;
    }
    for (Py_ssize_t k = 0; k < n; k++) {
        Py_ssize_t s = base + k;
        Py_ssize_t a, b;
        if (node_args(arg0, arg1, k, s, &a, &b) < 0)
            return NULL;
        PyObject *call[2] = {PyList_GET_ITEM(values, a), b >= 0 ? PyList_GET_ITEM(values, b) : NULL};
        PyObject *r = PyObject_Vectorcall(PyList_GET_ITEM(primals, k), call, b >= 0 ? 2 : 1, NULL);
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

/* adjoint[target] += upstream * p, as Python's ``+=`` does it. */
static inline int accumulate(PyObject *adjoint, Py_ssize_t target, PyObject *upstream, PyObject *p)
{
    PyObject *old = PyList_GET_ITEM(adjoint, target);
    PyObject *sum;
    if (PyFloat_CheckExact(upstream) && PyFloat_CheckExact(p) && PyFloat_CheckExact(old)) {
        /* the float operations Python's float type does, without two objects in between */
        double product = PyFloat_AS_DOUBLE(upstream) * PyFloat_AS_DOUBLE(p);
        sum = PyFloat_FromDouble(PyFloat_AS_DOUBLE(old) + product);
    } else {
        PyObject *product = PyNumber_Multiply(upstream, p);
        if (product == NULL)
            return -1;
        sum = PyNumber_InPlaceAdd(old, product);
        Py_DECREF(product);
    }
    if (sum == NULL)
        return -1;
    PyList_SET_ITEM(adjoint, target, sum);
    Py_DECREF(old);
    return 0;
}

/* reverse(partials, arg0, arg1, base, slots, values, adjoint, active, m, first, second): for
   each slot s of ``slots`` (the reverse sweep's order), each argument of node k = s - base that
   is active gets its partial p = partials[k][i](m, values[a] [, values[b]], values[s]): with
   ``adjoint`` (else None), adjoint[argument] += adjoint[s] * p; with ``first`` and ``second``
   (else None), p is kept as first[k] (the first argument's) or second[k]. */
static PyObject *reverse(PyObject *self, PyObject *args)
{
    PyObject *partials, *arg0, *arg1, *slots, *values, *adjoint, *active, *m, *first, *second;
    Py_ssize_t base;
    if (!PyArg_ParseTuple(args, "OOOnOOOOOOO", &partials, &arg0, &arg1, &base, &slots, &values,
                          &adjoint, &active, &m, &first, &second))
        return NULL;
    PyObject *lists[] = {partials, arg0, arg1, slots, values};
    const char *names[] = {"partials", "arg0", "arg1", "slots", "values"};
    if (exact_lists(lists, names, 5) < 0)
        return NULL;
    int accumulating = adjoint != Py_None, keeping = first != Py_None;
    if ((accumulating && !PyList_CheckExact(adjoint)) || (keeping && (!PyList_CheckExact(first)
            || !PyList_CheckExact(second))) || (!keeping && second != Py_None)) {
        PyErr_SetString(PyExc_TypeError, "adjoint, first and second must be lists or None");
        return NULL;
    }
    if (!PyByteArray_CheckExact(active)) {
        PyErr_SetString(PyExc_TypeError, "active must be a bytearray");
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(partials), n_slots = PyList_GET_SIZE(values);
    if (PyList_GET_SIZE(arg0) < n || PyList_GET_SIZE(arg1) < n || base < 0
            || (accumulating && PyList_GET_SIZE(adjoint) < n_slots)
            || (keeping && (PyList_GET_SIZE(first) < n || PyList_GET_SIZE(second) < n))
            || PyByteArray_GET_SIZE(active) < n_slots || n_slots < base + n) {
        PyErr_SetString(PyExc_ValueError, "lists of unequal lengths");
        return NULL;
    }
    const char *on = PyByteArray_AS_STRING(active);
    Py_ssize_t count = PyList_GET_SIZE(slots);
    for (Py_ssize_t i = 0; i < count; i++) {
        Py_ssize_t s = PyLong_AsSsize_t(PyList_GET_ITEM(slots, i));
        if (s == -1 && PyErr_Occurred())
            return NULL;
        Py_ssize_t k = s - base;
        if (k < 0 || k >= n) {
            PyErr_SetString(PyExc_ValueError, "a slot that is no node");
            return NULL;
        }
        Py_ssize_t a, b;
        if (node_args(arg0, arg1, k, s, &a, &b) < 0)
            return NULL;
        PyObject *rules = PyList_GET_ITEM(partials, k);
        if (!PyTuple_Check(rules) || PyTuple_GET_SIZE(rules) < (b >= 0 ? 2 : 1)) {
            PyErr_SetString(PyExc_TypeError, "a node's partials must be a tuple of its rules");
            return NULL;
        }
        /* held: accumulating into an argument never replaces it, but be safe */
        PyObject *upstream = accumulating ? PyList_GET_ITEM(adjoint, s) : NULL;
        Py_XINCREF(upstream);
        PyObject *call[4] = {m, PyList_GET_ITEM(values, a), NULL, NULL};
        Py_ssize_t nargs = 3;
        if (b < 0) {
            call[2] = PyList_GET_ITEM(values, s);
        } else {
            call[2] = PyList_GET_ITEM(values, b);
            call[3] = PyList_GET_ITEM(values, s);
            nargs = 4;
        }
        int bad = 0;
        for (int which = 0; which < nargs - 2 && !bad; which++) {
            Py_ssize_t target = which ? b : a;
            if (!on[target])
                continue;
            PyObject *p = PyObject_Vectorcall(PyTuple_GET_ITEM(rules, which), call, nargs, NULL);
            if (p == NULL || (accumulating && accumulate(adjoint, target, upstream, p) < 0)) {
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
    }
    Py_RETURN_NONE;
}

/* bare_forward(funcs, never, rational, arg0, arg1, balls, exact, make, height_cap, slow):
   certify._bare_forward's loop. For node k: where funcs[k] (the ball namespace's function) is
   given and an argument has no exact rational (or never[k], a function whose result never
   has one), its ball is funcs[k](balls...) and it has none; where rational[k] (+, -, * on
   rationals) is given and both arguments have one, it has their result while its
   height_bits() <= height_cap, its ball make(q), else the ball's result; any other node is
   slow(k)'s (which appends to both lists itself). */
static PyObject *bare_forward(PyObject *self, PyObject *args)
{
    PyObject *funcs, *never, *rational, *arg0, *arg1, *balls, *exact, *make, *slow;
    Py_ssize_t cap;
    if (!PyArg_ParseTuple(args, "OOOOOOOOnO", &funcs, &never, &rational, &arg0, &arg1, &balls,
                          &exact, &make, &cap, &slow))
        return NULL;
    PyObject *lists[] = {funcs, rational, arg0, arg1, balls, exact};
    const char *names[] = {"funcs", "rational", "arg0", "arg1", "balls", "exact"};
    if (exact_lists(lists, names, 6) < 0)
        return NULL;
    if (!PyBytes_CheckExact(never)) {
        PyErr_SetString(PyExc_TypeError, "never must be bytes");
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(funcs), base = PyList_GET_SIZE(balls);
    if (PyBytes_GET_SIZE(never) < n || PyList_GET_SIZE(rational) < n || PyList_GET_SIZE(arg0) < n
            || PyList_GET_SIZE(arg1) < n || PyList_GET_SIZE(exact) != base) {
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
        Py_ssize_t a, b;
        if (node_args(arg0, arg1, k, s, &a, &b) < 0)
            return NULL;
        PyObject *f = PyList_GET_ITEM(funcs, k);
        PyObject *qa = PyList_GET_ITEM(exact, a), *qb = b >= 0 ? PyList_GET_ITEM(exact, b) : NULL;
        PyObject *ball = NULL, *q = Py_None;
        PyObject *call[2] = {PyList_GET_ITEM(balls, a), b >= 0 ? PyList_GET_ITEM(balls, b) : NULL};
        Py_ssize_t nargs = b >= 0 ? 2 : 1;
        if (f != Py_None && (qa == Py_None || qb == Py_None || nev[k])) {  /* qb NULL: one argument */
            ball = PyObject_Vectorcall(f, call, nargs, NULL);
            if (ball == NULL)
                goto failed;
            Py_INCREF(q);
        } else if (b >= 0 && PyList_GET_ITEM(rational, k) != Py_None && f != Py_None) {
            PyObject *rq[2] = {qa, qb};
            q = PyObject_Vectorcall(PyList_GET_ITEM(rational, k), rq, 2, NULL);
            if (q == NULL)
                goto failed;
            PyObject *h = PyObject_CallMethod(q, "height_bits", NULL);
            if (h == NULL) {
                Py_DECREF(q);
                goto failed;
            }
            Py_ssize_t bits = PyLong_AsSsize_t(h);
            Py_DECREF(h);
            if (bits == -1 && PyErr_Occurred()) {
                Py_DECREF(q);
                goto failed;
            }
            if (bits <= cap) {
                ball = PyObject_Vectorcall(make, &q, 1, NULL);
            } else {
                Py_DECREF(q);
                q = Py_None;
                Py_INCREF(q);
                ball = PyObject_Vectorcall(f, call, nargs, NULL);
            }
            if (ball == NULL) {
                Py_DECREF(q);
                goto failed;
            }
        } else {
            PyObject *kk = PyLong_FromSsize_t(k);
            if (kk == NULL)
                return NULL;
            PyObject *r = PyObject_Vectorcall(slow, &kk, 1, NULL);
            Py_DECREF(kk);
            if (r == NULL)
                goto failed;
            Py_DECREF(r);
            continue;
        }
        if (PyList_Append(balls, ball) < 0 || PyList_Append(exact, q) < 0) {
            Py_DECREF(ball);
            Py_DECREF(q);
            return NULL;
        }
        Py_DECREF(ball);
        Py_DECREF(q);
        continue;
    failed:
        mark(s, -1);
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"forward", forward, METH_VARARGS, "forward.py's primal loop."},
    {"reverse", reverse, METH_VARARGS, "partials.py's reverse accumulation."},
    {"bare_forward", bare_forward, METH_VARARGS, "certify._bare_forward's loop."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_sweeps", NULL, -1, methods};

PyMODINIT_FUNC PyInit__sweeps(void)
{
    PyObject *m = PyModule_Create(&module);
    if (m != NULL && PyModule_AddIntConstant(m, "ABI", 1) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
