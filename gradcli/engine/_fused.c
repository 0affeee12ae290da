/* The one pass (gradcli/engine/fused.py) compiled: source text -> tape, for ASCII text.

   The same machine as fused.py's loop, from the same data: the parser's LALR tables (Lark's,
   as language/tables.py writes them, with fused._Machine's codes for the reductions) and the
   grammar's terminals as automata over ASCII (tables.py's _automaton, built from the grammar's
   own regular expressions). Nothing of the language is written here: the terminals, the
   states and which reduction makes which node all come in as data.

   The common reductions (an operator, a name, a number, a one-argument call, parentheses, a
   unit rule) are done here, appending to the builder's lists as fused.py's loop does; the
   others call back into Python: unary minus and assignments (builder.emit, builder.assign)
   and calls of several arguments (fused._call, after Lark's child filter here). Any exception of a
   callback propagates; a syntax error, a character no terminal matches or a literal too large
   returns None, and the caller parses the text to say what is wrong.

   The caller only passes ASCII text without backslashes (a name written \uXXXX and a line
   continuation go through the Python loop).

   Why C: in Python, the loop's bookkeeping (a regular expression match object per token, a
   list per state, the stack's slices) costs two to three microseconds a node; here about a
   tenth of that, leaving the builder's own lists (docs/performance.md). */

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>
#include <string.h>

#define DEAD 255

enum { K_BOTTOM, K_TOK, K_EXPR, K_OBJ };

static PyObject *MINUS_ONE;  /* "no second argument", kept for the module's life */

/* A column of machine integers that grows: graph._Builder's depths, arguments and spans for a
   large source (a list holds a pointer to an int object, 8 + 32 bytes a node where this holds
   8, and the objects are made, read back and freed one by one). Python appends to it, reads an
   item and its length; run() and columns() read and write the numbers themselves. */
typedef struct {
    PyObject_HEAD
    int64_t *v;
    Py_ssize_t n, cap;
} Column;

static PyTypeObject ColumnType;

static int column_push(Column *c, int64_t x)
{
    if (c->n == c->cap) {
        Py_ssize_t cap = c->cap < 64 ? 64 : c->cap + (c->cap >> 1);
        int64_t *v = PyMem_Realloc(c->v, (size_t)cap * sizeof(int64_t));
        if (v == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        c->v = v;
        c->cap = cap;
    }
    c->v[c->n++] = x;
    return 0;
}

static PyObject *column_append(PyObject *self, PyObject *x)
{
    long long v = PyLong_AsLongLong(x);
    if (v == -1 && PyErr_Occurred())
        return NULL;
    if (column_push((Column *)self, v) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static Py_ssize_t column_len(PyObject *self)
{
    return ((Column *)self)->n;
}

static PyObject *column_item(PyObject *self, Py_ssize_t i)
{
    Column *c = (Column *)self;
    if (i < 0 || i >= c->n) {
        PyErr_SetString(PyExc_IndexError, "Column index out of range");
        return NULL;
    }
    return PyLong_FromLongLong(c->v[i]);
}

static void column_dealloc(PyObject *self)
{
    PyMem_Free(((Column *)self)->v);
    Py_TYPE(self)->tp_free(self);
}

static PyMethodDef column_methods[] = {
    {"append", column_append, METH_O, "Append an integer."},
    {NULL, NULL, 0, NULL},
};

static PySequenceMethods column_sequence = {.sq_length = column_len, .sq_item = column_item};

static PyTypeObject ColumnType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "gradcli.engine._fused.Column",
    .tp_basicsize = sizeof(Column),
    .tp_dealloc = column_dealloc,
    .tp_as_sequence = &column_sequence,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A growing column of 64-bit integers (graph._Builder's, for a large source).",
    .tp_methods = column_methods,
    .tp_new = PyType_GenericNew,
};

/* The builder's integer columns are lists of int objects, or Columns. */
static inline int is_column(PyObject *o)
{
    return Py_IS_TYPE(o, &ColumnType);
}

static inline int column_like(PyObject *o)
{
    return is_column(o) || PyList_Check(o);
}

static inline Py_ssize_t col_len(PyObject *o)
{
    return is_column(o) ? ((Column *)o)->n : PyList_GET_SIZE(o);
}

/* *out = o[i], for 0 <= i < col_len(o). -1 with the exception set. */
static inline int col_get(PyObject *o, Py_ssize_t i, Py_ssize_t *out)
{
    if (is_column(o)) {
        *out = (Py_ssize_t)((Column *)o)->v[i];
        return 0;
    }
    *out = PyLong_AsSsize_t(PyList_GET_ITEM(o, i));
    return (*out == -1 && PyErr_Occurred()) ? -1 : 0;
}

/* Append x to o; a list gets ``obj`` (x as an int object) where given, else a new int. */
static int col_push(PyObject *o, Py_ssize_t x, PyObject *obj)
{
    if (is_column(o))
        return column_push((Column *)o, x);
    if (obj != NULL)
        return PyList_Append(o, obj);
    obj = PyLong_FromSsize_t(x);
    if (obj == NULL)
        return -1;
    int r = PyList_Append(o, obj);
    Py_DECREF(obj);
    return r;
}

typedef struct {
    int state;          /* the state after this entry */
    int kind;
    int t;              /* K_TOK: its terminal */
    Py_ssize_t tid;     /* K_EXPR: its node id */
    Py_ssize_t s0, e1;  /* its span in the source */
    PyObject *obj;      /* K_EXPR: the id as an int object (shared with the lists); K_OBJ: the value */
} Entry;

typedef struct {
    Entry *v;
    Py_ssize_t top, cap;  /* v[top] is the top entry */
} Stack;

/* The machine, unpacked from fused._Machine.compiled (see fused.py). */
typedef struct {
    const uint8_t *next, *accept;
    Py_ssize_t n_lex;
    int lex_start[64], lex_kind[64];
    const int32_t *table;
    Py_ssize_t width, n_states;
    int start;
    Py_ssize_t binary_end, var_end, num_end, call_end, group_end, unary_end, assign_end, unit_end;
    int sep_t, end_t, lpar_t, rpar_t;
    PyObject *operators, *unary, *generic;  /* borrowed: lists by terminal, dict offset -> size */
    /* per first character, the terminals that may start there, in the lexer's order */
    int first[128][16];
    int n_first[128];
} Machine;

/* The builder's columns and methods (borrowed or owned as marked in run()). */
typedef struct {
    PyObject *depth, *ops, *a0, *a1, *starts, *ends;
    PyObject *env, *inputs, *versions, *bindings;
    PyObject *emit, *read, *literal, *assign;
    Py_ssize_t limit;
} Builder;

static void entry_clear(Entry *e)
{
    Py_CLEAR(e->obj);
}

static int stack_push(Stack *s)
{
    if (s->top + 1 >= s->cap) {
        Py_ssize_t cap = s->cap * 2;
        Entry *v = PyMem_Realloc(s->v, cap * sizeof(Entry));
        if (v == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        s->v = v;
        s->cap = cap;
    }
    s->top++;
    s->v[s->top].obj = NULL;
    return 0;
}

/* Pop k entries (dropping their references). */
static void stack_pop(Stack *s, Py_ssize_t k)
{
    for (Py_ssize_t i = 0; i < k; i++)
        entry_clear(&s->v[s->top - i]);
    s->top -= k;
}

/* A value of the Python side (a call's (id, start, end)) read as an expression entry. */
static int as_expr(Entry *e)
{
    if (e->kind == K_EXPR)
        return 0;
    if (e->kind != K_OBJ || !PyTuple_Check(e->obj) || PyTuple_GET_SIZE(e->obj) != 3) {
        PyErr_SetString(PyExc_TypeError, "one pass: an expression was expected");
        return -1;
    }
    PyObject *t = e->obj;
    Py_ssize_t tid = PyLong_AsSsize_t(PyTuple_GET_ITEM(t, 0));
    Py_ssize_t s0 = PyLong_AsSsize_t(PyTuple_GET_ITEM(t, 1));
    Py_ssize_t e1 = PyLong_AsSsize_t(PyTuple_GET_ITEM(t, 2));
    if (PyErr_Occurred())
        return -1;
    PyObject *id = PyTuple_GET_ITEM(t, 0);
    Py_INCREF(id);
    e->obj = id;
    Py_DECREF(t);
    e->kind = K_EXPR;
    e->tid = tid;
    e->s0 = s0;
    e->e1 = e1;
    return 0;
}

/* An entry as the Python side sees it: (id, start, end), slice(start, end) for a token, or
   the value itself. A new reference. */
static PyObject *as_value(Entry *e)
{
    if (e->kind == K_EXPR)
        return Py_BuildValue("(Onn)", e->obj, e->s0, e->e1);
    if (e->kind == K_TOK) {
        PyObject *a = PyLong_FromSsize_t(e->s0), *b = PyLong_FromSsize_t(e->e1);
        PyObject *sl = (a && b) ? PySlice_New(a, b, NULL) : NULL;
        Py_XDECREF(a);
        Py_XDECREF(b);
        return sl;
    }
    if (e->obj == NULL) {
        PyErr_SetString(PyExc_TypeError, "one pass: an empty entry");
        return NULL;
    }
    Py_INCREF(e->obj);
    return e->obj;
}

/* *out, the expression whose node id is ``id`` (a reference it takes; NULL: a call failed),
   over [s0, e1). -1 with the exception set. */
static int expression(Entry *out, PyObject *id, Py_ssize_t s0, Py_ssize_t e1)
{
    if (id == NULL)
        return -1;
    Py_ssize_t tid = PyLong_AsSsize_t(id);
    if (tid == -1 && PyErr_Occurred()) {
        Py_DECREF(id);
        return -1;
    }
    out->kind = K_EXPR;
    out->obj = id;
    out->tid = tid;
    out->s0 = s0;
    out->e1 = e1;
    return 0;
}

static int depth_of(Builder *b, Py_ssize_t tid, Py_ssize_t *out)
{
    if (tid < 0 || tid >= col_len(b->depth)) {
        PyErr_SetString(PyExc_IndexError, "one pass: a node id out of range");
        return -1;
    }
    return col_get(b->depth, tid, out);
}

/* The node prim(x[, y]) over [s0, e1) into *out (an expression entry): builder.emit for
   constants (folded there) and at the node limit (it raises), else the columns' appends, as
   fused.py's loop writes them inline. */
static int make_node(Builder *b, PyObject *prim, Entry *x, Entry *y, Py_ssize_t s0,
                     Py_ssize_t e1, Entry *out)
{
    Py_ssize_t dx, dy = -1;
    if (depth_of(b, x->tid, &dx) < 0 || (y != NULL && depth_of(b, y->tid, &dy) < 0))
        return -1;
    Py_ssize_t n = col_len(b->depth);
    if ((dx < 0 && dy < 0) || n >= b->limit)
        return expression(out, PyObject_CallFunction(b->emit, "OOO(nn)", prim, x->obj,
                                                     y != NULL ? y->obj : MINUS_ONE, s0, e1),
                          s0, e1);
    PyObject *id = PyLong_FromSsize_t(n);
    int bad = id == NULL || col_push(b->depth, 1 + (dx > dy ? dx : dy), NULL) < 0
              || PyList_Append(b->ops, prim) < 0 || col_push(b->a0, x->tid, x->obj) < 0
              || col_push(b->a1, y != NULL ? y->tid : -1, y != NULL ? y->obj : MINUS_ONE) < 0
              || col_push(b->starts, s0, NULL) < 0 || col_push(b->ends, e1, NULL) < 0;
    if (bad) {
        Py_XDECREF(id);
        return -1;
    }
    return expression(out, id, s0, e1);
}

/* The next token from pos: its lexer terminal and end, or -1 where no terminal matches. */
static int lex(const Machine *m, const uint8_t *src, Py_ssize_t n, Py_ssize_t pos,
               Py_ssize_t *end)
{
    uint8_t c = src[pos];
    if (c >= 128)
        return -1;
    for (int k = 0; k < m->n_first[c]; k++) {
        int term = m->first[c][k];
        int s = m->lex_start[term];
        Py_ssize_t p = pos, last = -1;
        while (p < n) {
            uint8_t ch = src[p];
            if (ch >= 128)
                break;
            int next = m->next[128 * s + ch];
            if (next == DEAD)
                break;
            s = next;
            p++;
            if (m->accept[s])
                last = p;
        }
        if (last > pos) {
            *end = last;
            return term;
        }
    }
    return -1;
}

static Py_ssize_t item_ssize(PyObject *seq, Py_ssize_t i)
{
    PyObject *o = PySequence_GetItem(seq, i);
    if (o == NULL)
        return -1;
    Py_ssize_t v = PyLong_AsSsize_t(o);
    Py_DECREF(o);
    return v;
}

/* compiled = (next, accept, lex_start, lex_kind, table, width, start, ends, terminals,
               operators, unary, generic), as fused._Machine.compiled makes it. */
static int unpack_machine(PyObject *c, Machine *m, Py_buffer *views)
{
    PyObject *next, *accept, *lex_start, *lex_kind, *table, *ends, *terms;
    Py_ssize_t width;
    int start;
    if (!PyArg_ParseTuple(c, "OOOOOniOOOOO", &next, &accept, &lex_start, &lex_kind, &table,
                          &width, &start, &ends, &terms, &m->operators, &m->unary,
                          &m->generic))
        return -1;
    if (PyObject_GetBuffer(next, &views[0], PyBUF_SIMPLE) < 0)
        return -1;
    if (PyObject_GetBuffer(accept, &views[1], PyBUF_SIMPLE) < 0) {
        PyBuffer_Release(&views[0]);
        return -1;
    }
    if (PyObject_GetBuffer(table, &views[2], PyBUF_SIMPLE) < 0) {
        PyBuffer_Release(&views[0]);
        PyBuffer_Release(&views[1]);
        return -1;
    }
    m->next = views[0].buf;
    m->accept = views[1].buf;
    m->table = views[2].buf;
    m->width = width;
    m->start = start;
    Py_ssize_t n_states_lex = views[1].len;
    m->n_states = width > 0 ? (views[2].len / (Py_ssize_t)sizeof(int32_t)) / width : 0;
    if (m->n_states <= 0 || start < 0 || start >= m->n_states
        || views[2].len != m->n_states * width * (Py_ssize_t)sizeof(int32_t)) {
        PyErr_SetString(PyExc_ValueError, "one pass: a malformed machine");
        goto fail;
    }
    m->n_lex = PySequence_Size(lex_start);
    if (m->n_lex < 0 || m->n_lex > 64 || PySequence_Size(lex_kind) != m->n_lex
        || views[0].len != 128 * n_states_lex || !PyDict_Check(m->generic)
        || !PyList_Check(m->operators) || !PyList_Check(m->unary)
        || PyList_GET_SIZE(m->operators) != PyList_GET_SIZE(m->unary)) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "one pass: a malformed machine");
        goto fail;
    }
    for (Py_ssize_t i = 0; i < m->n_lex; i++) {
        m->lex_start[i] = (int)item_ssize(lex_start, i);
        m->lex_kind[i] = (int)item_ssize(lex_kind, i);
        if (m->lex_start[i] < 0 || m->lex_start[i] >= n_states_lex)
            goto bad;
    }
    Py_ssize_t *ranges[] = {&m->binary_end, &m->var_end, &m->num_end, &m->call_end,
                            &m->group_end, &m->unary_end, &m->assign_end, &m->unit_end};
    if (PySequence_Size(ends) != 8)
        goto bad;
    for (int i = 0; i < 8; i++)
        *ranges[i] = item_ssize(ends, i);
    if (PySequence_Size(terms) != 4)
        goto bad;
    m->sep_t = (int)item_ssize(terms, 0);
    m->end_t = (int)item_ssize(terms, 1);
    m->lpar_t = (int)item_ssize(terms, 2);
    m->rpar_t = (int)item_ssize(terms, 3);
    if (PyErr_Occurred())
        goto fail;
    for (int c = 0; c < 128; c++) {
        m->n_first[c] = 0;
        for (Py_ssize_t i = 0; i < m->n_lex; i++)
            if (m->next[128 * m->lex_start[i] + c] != DEAD && m->n_first[c] < 16)
                m->first[c][m->n_first[c]++] = (int)i;
    }
    return 0;
bad:
    if (!PyErr_Occurred())
        PyErr_SetString(PyExc_ValueError, "one pass: a malformed machine");
fail:
    PyBuffer_Release(&views[0]);
    PyBuffer_Release(&views[1]);
    PyBuffer_Release(&views[2]);
    return -1;
}

static int builder_unpack(PyObject *builder, Builder *b)
{
    const char *names[] = {"depth", "op", "a0", "a1", "starts", "ends", "env", "input_ids",
                           "emit", "read", "literal", "assign", "versions", "bindings"};
    PyObject **slots[] = {&b->depth, &b->ops, &b->a0, &b->a1, &b->starts, &b->ends, &b->env,
                          &b->inputs, &b->emit, &b->read, &b->literal, &b->assign,
                          &b->versions, &b->bindings};
    for (int i = 0; i < 14; i++)
        *slots[i] = NULL;
    for (int i = 0; i < 14; i++) {
        *slots[i] = PyObject_GetAttrString(builder, names[i]);
        if (*slots[i] == NULL)
            return -1;
    }
    for (int i = 0; i < 6; i++)
        if (i == 1 ? !PyList_Check(*slots[i]) : !column_like(*slots[i])) {
            PyErr_SetString(PyExc_TypeError,
                            "one pass: the builder's columns are lists (or Columns)");
            return -1;
        }
    if (!PyDict_Check(b->env) || !PyDict_Check(b->inputs) || !PyDict_Check(b->versions)
        || !PyList_Check(b->bindings)) {
        PyErr_SetString(PyExc_TypeError, "one pass: the builder's names are dicts");
        return -1;
    }
    PyObject *limit = PyObject_GetAttrString(builder, "limit");
    if (limit == NULL)
        return -1;
    b->limit = PyLong_AsSsize_t(limit);
    Py_DECREF(limit);
    return (b->limit == -1 && PyErr_Occurred()) ? -1 : 0;
}

static void builder_release(Builder *b)
{
    PyObject **slots[] = {&b->depth, &b->ops, &b->a0, &b->a1, &b->starts, &b->ends, &b->env,
                          &b->inputs, &b->emit, &b->read, &b->literal, &b->assign,
                          &b->versions, &b->bindings};
    for (int i = 0; i < 14; i++)
        Py_CLEAR(*slots[i]);
}

/* What the other reductions do with their filtered children (fused._Machine.generic). */
enum { M_LIST, M_CALL, M_GROUP };

/* Lark's child filter (fused._filtered): of the k entries from e, the kept ones in a list,
   a helper rule's own list spliced in (extended in place, as the Python loop does). ``kept``
   holds (index, splice) pairs. A new list. */
static PyObject *filtered(Entry *e, Py_ssize_t k, PyObject *kept)
{
    PyObject *out = NULL;
    for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(kept); j++) {
        Py_ssize_t i;
        int splice;
        if (!PyArg_ParseTuple(PyTuple_GET_ITEM(kept, j), "np", &i, &splice))
            goto fail;
        if (i < 0 || i >= k) {
            PyErr_SetString(PyExc_ValueError, "one pass: a kept child out of range");
            goto fail;
        }
        PyObject *child = as_value(&e[i]);
        if (child == NULL)
            goto fail;
        int bad = 0;
        if (splice) {
            if (!PyList_Check(child)) {
                Py_DECREF(child);
                PyErr_SetString(PyExc_TypeError, "one pass: a helper rule's list expected");
                goto fail;
            }
            if (out == NULL) {
                out = child;
                continue;
            }
            bad = PyList_SetSlice(out, PY_SSIZE_T_MAX, PY_SSIZE_T_MAX, child) < 0;
        }
        else if (out == NULL) {
            out = PyList_New(0);
            bad = out == NULL || PyList_Append(out, child) < 0;
        }
        else
            bad = PyList_Append(out, child) < 0;
        Py_DECREF(child);
        if (bad)
            goto fail;
    }
    return out != NULL ? out : PyList_New(0);
fail:
    Py_XDECREF(out);
    return NULL;
}

/* name bound to the node id ``value`` (builder.bind, for a name its checks have passed): its
   new version and binding. The statement's value (the id), a new reference. */
static PyObject *bind(Builder *b, PyObject *name, PyObject *value)
{
    PyObject *old = PyDict_GetItemWithError(b->versions, name);
    if (old == NULL && PyErr_Occurred())
        return NULL;
    long n = old == NULL ? 0 : PyLong_AsLong(old);
    if (n == -1 && PyErr_Occurred())
        return NULL;
    PyObject *version = PyLong_FromLong(n + 1);
    PyObject *binding = version ? PyTuple_Pack(3, value, name, version) : NULL;
    int bad = binding == NULL || PyDict_SetItem(b->env, name, value) < 0
              || PyDict_SetItem(b->versions, name, version) < 0
              || PyList_Append(b->bindings, binding) < 0;
    Py_XDECREF(version);
    Py_XDECREF(binding);
    if (bad)
        return NULL;
    Py_INCREF(value);
    return value;
}

/* name ( a , b ), a call's children as the child filter gives them (the name and the ")" as
   slices, the arguments as (id, start, end)): its node, made here as a one-argument call's is
   (make_node: builder.emit for constants and at the limit). 1 with *out the node's expression;
   0 where the children have another shape (fused._call makes the node); -1 with the exception
   set, fused._function's where the name is no function of two arguments (the caller gives up
   and the parser says why). */
static int two_argument_call(Builder *b, PyObject *source, PyObject *functions,
                             PyObject *function_cb, PyObject *children, Entry *out)
{
    if (PyList_GET_SIZE(children) != 6)
        return 0;
    PyObject *name = PyList_GET_ITEM(children, 0), *rpar = PyList_GET_ITEM(children, 5);
    PyObject *xa = PyList_GET_ITEM(children, 2), *ya = PyList_GET_ITEM(children, 4);
    if (!PySlice_Check(name) || !PySlice_Check(rpar) || !PyTuple_Check(xa)
            || PyTuple_GET_SIZE(xa) != 3 || !PyTuple_Check(ya) || PyTuple_GET_SIZE(ya) != 3)
        return 0;
    Py_ssize_t s0, s1, r0, r1, step;
    if (PySlice_Unpack(name, &s0, &s1, &step) < 0 || PySlice_Unpack(rpar, &r0, &r1, &step) < 0)
        return -1;
    if (s0 < 0 || s1 < s0 || s1 > PyUnicode_GET_LENGTH(source)) {
        PyErr_SetString(PyExc_ValueError, "one pass: a name out of the source");
        return -1;
    }
    PyObject *text = PyUnicode_Substring(source, s0, s1);
    if (text == NULL)
        return -1;
    PyObject *prim = PyDict_GetItemWithError(functions, text);
    if (prim != NULL)
        Py_INCREF(prim);
    else if (!PyErr_Occurred())
        prim = PyObject_CallFunction(function_cb, "OOni", functions, text, s0, 2);
    Py_DECREF(text);
    if (prim == NULL)
        return -1;
    Entry x = {0, K_OBJ, 0, 0, 0, 0, xa}, y = {0, K_OBJ, 0, 0, 0, 0, ya};
    Py_INCREF(xa);
    Py_INCREF(ya);
    int bad = as_expr(&x) < 0 || as_expr(&y) < 0
              || make_node(b, prim, &x, &y, s0, r0 + 1, out) < 0;
    entry_clear(&x);
    entry_clear(&y);
    Py_DECREF(prim);
    return bad ? -1 : 1;
}

/* The state the state below goes to after a reduction at offset a, lookahead t; -1: none. */
static inline int goto_state(const Machine *m, int below, Py_ssize_t a, int t)
{
    int32_t v = m->table[(Py_ssize_t)below * m->width + a + t];
    return v <= -2 ? -2 - v : -1;
}

/* run(source, compiled, builder, functions, function, other, called, functions2):
   the statements' list at acceptance (fused._finish makes the graph of it), or None. */
static PyObject *run(PyObject *self, PyObject *args)
{
    PyObject *source, *compiled, *builder, *functions, *function_cb, *call_cb, *called;
    PyObject *functions2;
    if (!PyArg_ParseTuple(args, "UOOO!OOO!O!", &source, &compiled, &builder, &PyDict_Type,
                          &functions, &function_cb, &call_cb, &PyFrozenSet_Type, &called,
                          &PyDict_Type, &functions2))
        return NULL;
    if (!PyUnicode_IS_ASCII(source)) {
        PyErr_SetString(PyExc_ValueError, "one pass: the compiled loop reads ASCII text");
        return NULL;
    }
    const uint8_t *src = PyUnicode_1BYTE_DATA(source);
    Py_ssize_t n = PyUnicode_GET_LENGTH(source);

    Machine m;
    Py_buffer views[3];
    if (unpack_machine(compiled, &m, views) < 0)
        return NULL;
    Builder b;
    memset(&b, 0, sizeof b);  /* released at done:, whatever was unpacked */
    PyObject *result = NULL, *numbers = PyDict_New();
    Stack s = {NULL, 0, 64};
    s.v = PyMem_Malloc(s.cap * sizeof(Entry));
    if (numbers == NULL || s.v == NULL || builder_unpack(builder, &b) < 0) {
        if (s.v == NULL)
            PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t n_terms = PyList_GET_SIZE(m.operators);
    s.v[0].state = m.start;
    s.v[0].kind = K_BOTTOM;
    s.v[0].obj = NULL;
    s.top = 0;

    Py_ssize_t pos = 0;
    int parens = 0;
    for (;;) {
        int t;
        Py_ssize_t ts = pos, te = pos;
        if (pos >= n) {
            t = m.end_t;
        }
        else {
            int lt = lex(&m, src, n, pos, &te);
            if (lt < 0) {  /* a character no terminal matches */
                result = Py_None;
                Py_INCREF(result);
                goto done;
            }
            pos = te;
            t = m.lex_kind[lt];
            if (t == -1)  /* a comment, blanks */
                continue;
            if (t == -2) {  /* a separator: dropped when a new line inside parentheses */
                if (parens > 0 && src[ts] != ';')
                    continue;
                t = m.sep_t;
            }
        }
        if (t < 0 || t >= n_terms) {
            PyErr_SetString(PyExc_ValueError, "one pass: a terminal out of range");
            goto done;
        }
        for (;;) {
            Entry *v = s.v;
            Py_ssize_t top = s.top;
            int32_t a = m.table[(Py_ssize_t)v[top].state * m.width + t];
            if (a <= -2) {  /* shift */
                if (t == m.end_t)
                    goto syntax;
                if (stack_push(&s) < 0)
                    goto done;
                Entry *e = &s.v[s.top];
                e->state = -2 - a;
                e->kind = K_TOK;
                e->t = t;
                e->s0 = ts;
                e->e1 = te;
                if (t == m.lpar_t)
                    parens++;
                else if (t == m.rpar_t)
                    parens--;
                break;
            }
            if (a == 0)
                goto syntax;
            if (a == -1) {  /* accept: the program's statements */
                result = as_value(&v[top]);
                goto done;
            }
            Py_ssize_t k;  /* entries reduced */
            Entry out = {0, K_OBJ, 0, 0, 0, 0, NULL};
            if (a < m.binary_end) {  /* x op y */
                Entry *x = &v[top - 2], *op = &v[top - 1], *y = &v[top];
                if (as_expr(x) < 0 || as_expr(y) < 0)
                    goto done;
                PyObject *prim = PyList_GET_ITEM(m.operators, op->t);
                if (prim == Py_None) {
                    PyErr_SetString(PyExc_ValueError, "one pass: no operator");
                    goto done;
                }
                if (make_node(&b, prim, x, y, x->s0, y->e1, &out) < 0)
                    goto done;
                k = 3;
            }
            else if (a < m.var_end) {  /* a name: an assigned value, an input, or new */
                Entry *tok = &v[top];
                PyObject *name = PyUnicode_Substring(source, tok->s0, tok->e1);
                if (name == NULL)
                    goto done;
                PyObject *id = PyDict_GetItemWithError(b.env, name);
                if (id == NULL && !PyErr_Occurred())
                    id = PyDict_GetItemWithError(b.inputs, name);
                if (id != NULL)
                    Py_INCREF(id);
                else if (!PyErr_Occurred())
                    id = PyObject_CallFunction(b.read, "O(nn)", name, tok->s0, tok->e1);
                Py_DECREF(name);
                if (expression(&out, id, tok->s0, tok->e1) < 0)
                    goto done;
                k = 1;
            }
            else if (a < m.num_end) {  /* a literal: one constant per spelling */
                Entry *tok = &v[top];
                PyObject *text = PyUnicode_Substring(source, tok->s0, tok->e1);
                if (text == NULL)
                    goto done;
                PyObject *id = PyDict_GetItemWithError(numbers, text);
                if (id != NULL)
                    Py_INCREF(id);
                else if (!PyErr_Occurred()) {
                    PyObject *value = PyFloat_FromString(text);
                    if (value != NULL && Py_IS_INFINITY(PyFloat_AS_DOUBLE(value))) {
                        Py_DECREF(value);
                        Py_DECREF(text);
                        goto syntax;  /* too large: the parser says so */
                    }
                    if (value != NULL) {
                        id = PyObject_CallFunctionObjArgs(b.literal, text, value, NULL);
                        Py_DECREF(value);
                        if (id != NULL && PyDict_SetItem(numbers, text, id) < 0)
                            Py_CLEAR(id);
                    }
                }
                Py_DECREF(text);
                if (expression(&out, id, tok->s0, tok->e1) < 0)
                    goto done;
                k = 1;
            }
            else if (a < m.call_end) {  /* name ( argument ) */
                Entry *tok = &v[top - 3], *x = &v[top - 1], *rpar = &v[top];
                if (as_expr(x) < 0)
                    goto done;
                PyObject *text = PyUnicode_Substring(source, tok->s0, tok->e1);
                if (text == NULL)
                    goto done;
                PyObject *prim = PyDict_GetItemWithError(functions, text);
                if (prim != NULL)
                    Py_INCREF(prim);
                else if (!PyErr_Occurred())
                    prim = PyObject_CallFunction(function_cb, "OOn", functions, text, tok->s0);
                Py_DECREF(text);
                if (prim == NULL)
                    goto done;
                int bad = make_node(&b, prim, x, NULL, tok->s0, rpar->s0 + 1, &out);
                Py_DECREF(prim);
                if (bad < 0)
                    goto done;
                k = 4;
            }
            else if (a < m.group_end) {  /* ( sum ): the value inside, moved */
                out = v[top - 1];
                v[top - 1].obj = NULL;
                k = 3;
            }
            else if (a < m.unary_end) {  /* - x, + x */
                Entry *tok = &v[top - 1], *x = &v[top];
                if (as_expr(x) < 0)
                    goto done;
                PyObject *prim = PyList_GET_ITEM(m.unary, tok->t);
                Py_ssize_t s0 = tok->s0, e1 = x->e1;
                if (prim == Py_None) {  /* unary plus: the operand itself */
                    out = *x;
                    x->obj = NULL;
                }
                else {
                    PyObject *id = PyObject_CallFunction(b.emit, "OOi(nn)", prim, x->obj, -1,
                                                         s0, e1);
                    if (expression(&out, id, s0, e1) < 0)
                        goto done;
                }
                out.s0 = s0;
                out.e1 = e1;
                k = 2;
            }
            else if (a < m.assign_end) {  /* name = value, name += value, ...: a statement */
                Entry *tok = &v[top - 2], *op = &v[top - 1], *x = &v[top];
                if (as_expr(x) < 0)
                    goto done;
                PyObject *name = PyUnicode_Substring(source, tok->s0, tok->e1);
                PyObject *text = PyUnicode_Substring(source, op->s0, op->e1);
                PyObject *value = NULL;
                int plain = name != NULL && text != NULL
                            && PyUnicode_CompareWithASCIIString(text, "=") == 0;
                if (plain) {  /* name = value: bound here when the builder's checks pass */
                    plain = PyDict_Contains(b.versions, name);  /* assigned before: checked */
                    if (plain == 0) {  /* new: neither a function's name nor an input */
                        int f = PySet_Contains(called, name);
                        int i = f == 0 ? PyDict_Contains(b.inputs, name) : 0;
                        plain = (f < 0 || i < 0) ? -1 : (f == 0 && i == 0);
                    }
                    if (plain > 0)
                        value = bind(&b, name, x->obj);
                }
                if (plain == 0 && name != NULL && text != NULL)
                    value = PyObject_CallFunction(b.assign, "OO(nn)On", name, text, tok->s0,
                                                  tok->e1, x->obj, x->e1);
                Py_XDECREF(name);
                Py_XDECREF(text);
                if (value == NULL)
                    goto done;
                out.kind = K_OBJ;
                out.obj = value;
                k = 3;
            }
            else if (a < m.unit_end) {  /* a unit reduction: the same value, the state after */
                int state = goto_state(&m, v[top - 1].state, a, t);
                if (state < 0)
                    goto syntax;
                v[top].state = state;
                continue;
            }
            else {  /* the others: Lark's child filter, then a list, a group or a call */
                PyObject *key = PyLong_FromSsize_t(a);
                PyObject *rule = key ? PyDict_GetItemWithError(m.generic, key) : NULL;
                Py_XDECREF(key);
                int method;
                PyObject *kept;
                if (rule == NULL || !PyArg_ParseTuple(rule, "niO!", &k, &method, &PyTuple_Type,
                                                      &kept)) {
                    if (!PyErr_Occurred())
                        PyErr_SetString(PyExc_ValueError, "one pass: an unknown reduction");
                    goto done;
                }
                if (k < 0 || k > top) {
                    PyErr_SetString(PyExc_ValueError, "one pass: a reduction too large");
                    goto done;
                }
                PyObject *value = filtered(&v[top - k + 1], k, kept);
                if (value == NULL)
                    goto done;
                if (method == M_GROUP) {
                    PyObject *inner = PyList_GET_SIZE(value) > 1 ? PyList_GET_ITEM(value, 1) : NULL;
                    Py_XINCREF(inner);
                    Py_DECREF(value);
                    value = inner;
                    if (value == NULL) {
                        PyErr_SetString(PyExc_ValueError, "one pass: an empty group");
                        goto done;
                    }
                }
                else if (method == M_CALL) {
                    int two = two_argument_call(&b, source, functions2, function_cb, value,
                                                &out);
                    PyObject *call = two == 0 ? PyObject_CallFunctionObjArgs(call_cb, value,
                                                                             NULL) : NULL;
                    Py_DECREF(value);
                    value = call;
                    if (two < 0 || (two == 0 && value == NULL))
                        goto done;
                }
                if (value != NULL) {  /* else out is the call's node */
                    out.kind = K_OBJ;
                    out.obj = value;
                }
            }
            /* replace the k entries by out, in the state the state below goes to */
            int state = goto_state(&m, v[top - k].state, a, t);
            if (state < 0) {
                entry_clear(&out);
                goto syntax;
            }
            stack_pop(&s, k);
            if (stack_push(&s) < 0) {
                entry_clear(&out);
                goto done;
            }
            out.state = state;
            s.v[s.top] = out;
        }
    }
syntax:
    result = Py_None;
    Py_INCREF(result);
done:
    if (s.v != NULL) {
        stack_pop(&s, s.top);
        PyMem_Free(s.v);
    }
    Py_XDECREF(numbers);
    builder_release(&b);
    PyBuffer_Release(&views[0]);
    PyBuffer_Release(&views[1]);
    PyBuffer_Release(&views[2]);
    return result;
}

/* tokens(source, compiled): the compiled lexer's tokens, [(lexer terminal, start, end)], or
   None where no terminal matches (for the tests: the same as the regular expression's). */
static PyObject *tokens(PyObject *self, PyObject *args)
{
    PyObject *source, *compiled;
    if (!PyArg_ParseTuple(args, "UO", &source, &compiled))
        return NULL;
    if (!PyUnicode_IS_ASCII(source)) {
        PyErr_SetString(PyExc_ValueError, "one pass: the compiled lexer reads ASCII text");
        return NULL;
    }
    Machine m;
    Py_buffer views[3];
    if (unpack_machine(compiled, &m, views) < 0)
        return NULL;
    const uint8_t *src = PyUnicode_1BYTE_DATA(source);
    Py_ssize_t n = PyUnicode_GET_LENGTH(source), pos = 0;
    PyObject *out = PyList_New(0);
    while (out != NULL && pos < n) {
        Py_ssize_t end;
        int lt = lex(&m, src, n, pos, &end);
        if (lt < 0) {
            Py_DECREF(out);
            out = Py_None;
            Py_INCREF(out);
            break;
        }
        PyObject *item = Py_BuildValue("(inn)", lt, pos, end);
        if (item == NULL || PyList_Append(out, item) < 0)
            Py_CLEAR(out);
        Py_XDECREF(item);
        pos = end;
    }
    PyBuffer_Release(&views[0]);
    PyBuffer_Release(&views[1]);
    PyBuffer_Release(&views[2]);
    return out;
}

/* columns(depth, op, a0, a1, starts, ends, base): graph.finish's columns (op a list, the others
   lists or Columns), as its Python code
   computes them (see there): the ids sorted stably by depth (a counting sort: depths are small
   integers), slot[id] their places (and -1 after the last, for an absent argument), then of
   the ids from place ``base`` on (the operations): their primitives, arguments as slots,
   depths, and span starts and ends as int64 bytes. (slot, ops, arg0, arg1, depth, starts,
   ends). */
static PyObject *columns(PyObject *self, PyObject *args)
{
    PyObject *depth, *op, *a0, *a1, *starts, *ends;
    Py_ssize_t base;
    if (!PyArg_ParseTuple(args, "OO!OOOOn", &depth, &PyList_Type, &op, &a0, &a1, &starts,
                          &ends, &base))
        return NULL;
    if (!column_like(depth) || !column_like(a0) || !column_like(a1) || !column_like(starts)
        || !column_like(ends)) {
        PyErr_SetString(PyExc_TypeError, "columns: lists or Columns");
        return NULL;
    }
    Py_ssize_t n = col_len(depth);
    if (PyList_GET_SIZE(op) != n || col_len(a0) != n || col_len(a1) != n
        || col_len(starts) != n || col_len(ends) != n || base < 0 || base > n) {
        PyErr_SetString(PyExc_ValueError, "columns: lists of different lengths");
        return NULL;
    }
    PyObject *result = NULL, *slot = NULL, *ops = NULL, *arg0 = NULL, *arg1 = NULL;
    PyObject *dep = NULL, *st = NULL, *en = NULL;
    Py_ssize_t *d = PyMem_Malloc((n + 1) * sizeof(Py_ssize_t));
    Py_ssize_t *order = PyMem_Malloc((n + 1) * sizeof(Py_ssize_t));
    Py_ssize_t *place = PyMem_Malloc((n + 1) * sizeof(Py_ssize_t));
    Py_ssize_t *count = NULL;
    if (d == NULL || order == NULL || place == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t top = -1;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (col_get(depth, i, &d[i]) < 0)
            goto done;
        if (d[i] < -1) {
            PyErr_SetString(PyExc_ValueError, "columns: a depth below -1");
            goto done;
        }
        if (d[i] > top)
            top = d[i];
    }
    count = PyMem_Calloc(top + 3, sizeof(Py_ssize_t));
    if (count == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++)
        count[d[i] + 2]++;
    for (Py_ssize_t k = 1; k < top + 3; k++)
        count[k] += count[k - 1];
    for (Py_ssize_t i = 0; i < n; i++) {  /* stable: ids in creation order within a depth */
        Py_ssize_t k = count[d[i] + 1]++;
        order[k] = i;
        place[i] = k;
    }
    slot = PyList_New(n + 1);
    if (slot == NULL)
        goto done;
    for (Py_ssize_t i = 0; i <= n; i++) {
        PyObject *v = PyLong_FromSsize_t(i < n ? place[i] : -1);
        if (v == NULL)
            goto done;
        PyList_SET_ITEM(slot, i, v);
    }
    Py_ssize_t m = n - base;
    ops = PyList_New(m);
    arg0 = PyList_New(m);
    arg1 = PyList_New(m);
    dep = PyList_New(m);
    st = PyBytes_FromStringAndSize(NULL, m * 8);
    en = PyBytes_FromStringAndSize(NULL, m * 8);
    if (ops == NULL || arg0 == NULL || arg1 == NULL || dep == NULL || st == NULL || en == NULL)
        goto done;
    int64_t *sv = (int64_t *)PyBytes_AS_STRING(st), *ev = (int64_t *)PyBytes_AS_STRING(en);
    PyObject *lists[2] = {a0, a1}, *outs[2] = {arg0, arg1};
    for (Py_ssize_t k = 0; k < m; k++) {
        Py_ssize_t i = order[base + k];
        PyObject *o = PyList_GET_ITEM(op, i);
        Py_INCREF(o);
        PyList_SET_ITEM(ops, k, o);
        o = PyLong_FromSsize_t(d[i]);
        if (o == NULL)
            goto done;
        PyList_SET_ITEM(dep, k, o);
        for (int j = 0; j < 2; j++) {
            Py_ssize_t a;
            if (col_get(lists[j], i, &a) < 0)
                goto done;
            if (a < -1 || a >= n) {
                PyErr_SetString(PyExc_ValueError, "columns: an argument out of range");
                goto done;
            }
            o = PyList_GET_ITEM(slot, a < 0 ? n : a);
            Py_INCREF(o);
            PyList_SET_ITEM(outs[j], k, o);
        }
        Py_ssize_t s0, e1;
        if (col_get(starts, i, &s0) < 0 || col_get(ends, i, &e1) < 0)
            goto done;
        sv[k] = s0;
        ev[k] = e1;
    }
    result = PyTuple_Pack(7, slot, ops, arg0, arg1, dep, st, en);
done:
    Py_XDECREF(slot);
    Py_XDECREF(ops);
    Py_XDECREF(arg0);
    Py_XDECREF(arg1);
    Py_XDECREF(dep);
    Py_XDECREF(st);
    Py_XDECREF(en);
    PyMem_Free(d);
    PyMem_Free(order);
    PyMem_Free(place);
    PyMem_Free(count);
    return result;
}

/* descending(depth, base[, packed]): the slots base + k of the nodes, deepest level first and
   left to right within a level (Graph.visit_order's sort, for a depth column that never
   decreases: a graph's, whose nodes are in depth order), as a list, or with ``packed`` as
   native int32 bytes (the compiled sweeps' form: no int object a node). None if the column
   ever decreases. */
static PyObject *descending(PyObject *self, PyObject *args)
{
    PyObject *depth;
    Py_ssize_t base;
    int packed = 0;
    if (!PyArg_ParseTuple(args, "O!n|p", &PyList_Type, &depth, &base, &packed))
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(depth);
    Py_ssize_t *d = PyMem_Malloc((n + 1) * sizeof(Py_ssize_t));
    if (d == NULL)
        return PyErr_NoMemory();
    for (Py_ssize_t k = 0; k < n; k++) {
        d[k] = PyLong_AsSsize_t(PyList_GET_ITEM(depth, k));
        if ((d[k] == -1 && PyErr_Occurred()) || (k > 0 && d[k] < d[k - 1])) {
            PyMem_Free(d);
            if (PyErr_Occurred())
                return NULL;
            Py_RETURN_NONE;
        }
    }
    if (packed && base + n > INT32_MAX) {
        PyMem_Free(d);
        PyErr_SetString(PyExc_OverflowError, "descending: slots past 32 bits");
        return NULL;
    }
    PyObject *out = packed ? PyBytes_FromStringAndSize(NULL, 4 * n) : PyList_New(n);
    if (out == NULL) {
        PyMem_Free(d);
        return NULL;
    }
    int32_t *slots = packed ? (int32_t *)PyBytes_AS_STRING(out) : NULL;
    Py_ssize_t at = 0, end = n;  /* the level [start, end) goes next, from the last down */
    while (end > 0) {
        Py_ssize_t start = end - 1;
        while (start > 0 && d[start - 1] == d[end - 1])
            start--;
        for (Py_ssize_t k = start; k < end; k++) {
            if (packed) {
                slots[at++] = (int32_t)(base + k);
                continue;
            }
            PyObject *v = PyLong_FromSsize_t(base + k);
            if (v == NULL) {
                Py_DECREF(out);
                PyMem_Free(d);
                return NULL;
            }
            PyList_SET_ITEM(out, at++, v);
        }
        end = start;
    }
    PyMem_Free(d);
    return out;
}

/* live(arg0, arg1, outputs, base): Graph.live_nodes (see there): per node whether an output
   depends on it, as a list of bools; None when every node does (the common case). */
static PyObject *live(PyObject *self, PyObject *args)
{
    PyObject *arg0, *arg1, *outputs;
    Py_ssize_t base;
    if (!PyArg_ParseTuple(args, "O!O!On", &PyList_Type, &arg0, &PyList_Type, &arg1, &outputs,
                          &base))
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(arg0);
    if (PyList_GET_SIZE(arg1) != n) {
        PyErr_SetString(PyExc_ValueError, "live: columns of different lengths");
        return NULL;
    }
    PyObject *outs = PySequence_Fast(outputs, "live: outputs");
    if (outs == NULL)
        return NULL;
    Py_ssize_t *a = PyMem_Malloc((2 * n + 1) * sizeof(Py_ssize_t));
    uint8_t *flag = PyMem_Calloc(n + 1, 1);
    PyObject *result = NULL;
    if (a == NULL || flag == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t k = 0; k < n; k++) {  /* the arguments as node indexes (< 0: not a node) */
        Py_ssize_t x = PyLong_AsSsize_t(PyList_GET_ITEM(arg0, k));
        Py_ssize_t y = PyLong_AsSsize_t(PyList_GET_ITEM(arg1, k));
        if (PyErr_Occurred())
            goto done;
        a[2 * k] = x - base;
        a[2 * k + 1] = y < 0 ? -1 : y - base;
        if (a[2 * k] >= k || a[2 * k + 1] >= k) {
            PyErr_SetString(PyExc_ValueError, "live: an argument after its user");
            goto done;
        }
    }
    Py_ssize_t live_count = 0;
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(outs); i++) {
        Py_ssize_t o = PyLong_AsSsize_t(PySequence_Fast_GET_ITEM(outs, i));
        if (o == -1 && PyErr_Occurred())
            goto done;
        if (o >= base && o - base < n && !flag[o - base]) {
            flag[o - base] = 1;
            live_count++;
        }
    }
    for (Py_ssize_t k = n - 1; k >= 0; k--) {  /* users before their arguments */
        if (!flag[k])
            continue;
        for (int j = 0; j < 2; j++) {
            Py_ssize_t x = a[2 * k + j];
            if (x >= 0 && !flag[x]) {
                flag[x] = 1;
                live_count++;
            }
        }
    }
    if (live_count == n) {
        result = Py_None;
        Py_INCREF(result);
        goto done;
    }
    result = PyList_New(n);
    if (result == NULL)
        goto done;
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *v = flag[k] ? Py_True : Py_False;
        Py_INCREF(v);
        PyList_SET_ITEM(result, k, v);
    }
done:
    Py_DECREF(outs);
    PyMem_Free(a);
    PyMem_Free(flag);
    return result;
}

static PyMethodDef methods[] = {
    {"live", live, METH_VARARGS, "Graph.live_nodes (see graph.py)."},
    {"descending", descending, METH_VARARGS, "Graph.visit_order's order (see graph.py)."},
    {"columns", columns, METH_VARARGS, "graph.finish's columns (see graph.py)."},
    {"run", run, METH_VARARGS, "The one pass over ASCII source text (see fused.py)."},
    {"tokens", tokens, METH_VARARGS, "The compiled lexer's tokens (for the tests)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_fused", NULL, -1, methods};

PyMODINIT_FUNC PyInit__fused(void)
{
    MINUS_ONE = PyLong_FromLong(-1);
    if (MINUS_ONE == NULL)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    /* the calling convention's version: fused.py uses a build only of its own (a stale build
       left in a source tree is ignored, not called with the wrong arguments) */
    if (m != NULL && PyModule_AddIntConstant(m, "ABI", 5) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    if (m != NULL && (PyType_Ready(&ColumnType) < 0
                      || PyModule_AddObjectRef(m, "Column", (PyObject *)&ColumnType) < 0)) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
