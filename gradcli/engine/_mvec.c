/* Sine and cosine of a float64 column, vectorised by the C library's vector math (glibc's
   libmvec): the batch engine's fast path for sin and cos (gradcli/engine/trig.py).

   NumPy computes float64 sin and cos one element at a time; libmvec's _ZGV*v_sin/_cos compute
   2, 4 or 8 at once (SSE2, AVX2, AVX-512), chosen when the module loads (VARIANT says which).
   They are called directly: no -ffast-math, whose start-up code would flush subnormals for the
   whole process. libmvec's error is under 4 ulp (glibc's manual); tests/test_trig.py measures
   it against mpmath. x86-64 with glibc 2.22 or later.

   Optional: where this does not build (no compiler, no libmvec), trig.py uses NumPy. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <string.h>
#include <immintrin.h>

/* glibc's vector variants (the x86-64 vector function ABI): 2, 4 or 8 lanes. Called directly,
   not through an auto-vectorised loop, so that every element goes through the same variant:
   a loop's scalar remainder would use the scalar sin, whose last bit can differ, and a row's
   result would depend on its position in the block. */
__m128d _ZGVbN2v_sin(__m128d);
__m128d _ZGVbN2v_cos(__m128d);
__m256d _ZGVdN4v_sin(__m256d);
__m256d _ZGVdN4v_cos(__m256d);
__m512d _ZGVeN8v_sin(__m512d);
__m512d _ZGVeN8v_cos(__m512d);

#define LANES_LOOP(NAME, ATTR, LANES, VEC, LOAD, STORE, SIN, COS)                             \
    ATTR static void NAME(const double *x, double *s, double *c, Py_ssize_t n)              \
    {                                                                                       \
        Py_ssize_t i = 0;                                                                   \
        for (; i + LANES <= n; i += LANES) {                                                \
            VEC v = LOAD(x + i);                                                            \
            STORE(s + i, SIN(v));                                                           \
            STORE(c + i, COS(v));                                                           \
        }                                                                                   \
        if (i < n) { /* the last few rows, padded to a whole vector */                      \
            double xs[LANES] = {0}, ss[LANES], cs[LANES];                                   \
            memcpy(xs, x + i, (size_t)(n - i) * sizeof(double));                            \
            VEC v = LOAD(xs);                                                               \
            STORE(ss, SIN(v));                                                              \
            STORE(cs, COS(v));                                                              \
            memcpy(s + i, ss, (size_t)(n - i) * sizeof(double));                            \
            memcpy(c + i, cs, (size_t)(n - i) * sizeof(double));                            \
        }                                                                                   \
    }

LANES_LOOP(loop_sse2, , 2, __m128d, _mm_loadu_pd, _mm_storeu_pd, _ZGVbN2v_sin, _ZGVbN2v_cos)
LANES_LOOP(loop_avx2, __attribute__((target("avx2,fma"))), 4, __m256d, _mm256_loadu_pd,
           _mm256_storeu_pd, _ZGVdN4v_sin, _ZGVdN4v_cos)
LANES_LOOP(loop_avx512, __attribute__((target("avx512f"))), 8, __m512d, _mm512_loadu_pd,
           _mm512_storeu_pd, _ZGVeN8v_sin, _ZGVeN8v_cos)

static void (*sincos_loop)(const double *, double *, double *, Py_ssize_t) = loop_sse2;

/* Below 2^-27, sin x = x and cos x = 1 correctly rounded; libmvec's cos can be an ulp under 1
   there. */
static void tiny_rows(const double *x, double *s, double *c, Py_ssize_t n)
{
    for (Py_ssize_t i = 0; i < n; i++) {
        if (__builtin_fabs(x[i]) < 0x1p-27) {
            s[i] = x[i];
            c[i] = 1.0;
        }
    }
}

/* sincos(x, s, c): s[i] = sin(x[i]), c[i] = cos(x[i]); three C-contiguous float64 buffers of
   one length, s and c writable. The GIL is released: blocks run on several threads. */
static PyObject *mvec_sincos(PyObject *self, PyObject *args)
{
    Py_buffer x, s, c;
    if (!PyArg_ParseTuple(args, "y*w*w*", &x, &s, &c))
        return NULL;
    PyObject *result = NULL;
    if (x.len != s.len || x.len != c.len || x.len % (Py_ssize_t)sizeof(double)) {
        PyErr_SetString(PyExc_ValueError, "sincos: three float64 buffers of one length");
    } else {
        Py_BEGIN_ALLOW_THREADS
        Py_ssize_t n = x.len / (Py_ssize_t)sizeof(double);
        sincos_loop((const double *)x.buf, (double *)s.buf, (double *)c.buf, n);
        tiny_rows((const double *)x.buf, (double *)s.buf, (double *)c.buf, n);
        Py_END_ALLOW_THREADS
        result = Py_NewRef(Py_None);
    }
    PyBuffer_Release(&x);
    PyBuffer_Release(&s);
    PyBuffer_Release(&c);
    return result;
}

static PyMethodDef methods[] = {
    {"sincos", mvec_sincos, METH_VARARGS, "sincos(x, s, c): s = sin(x), c = cos(x), in place."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_mvec", NULL, -1, methods};

PyMODINIT_FUNC PyInit__mvec(void)
{
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f"))
        sincos_loop = loop_avx512;
    else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        sincos_loop = loop_avx2;
    PyObject *m = PyModule_Create(&module);
    if (m != NULL && PyModule_AddStringConstant(m, "VARIANT", sincos_loop == loop_avx512
            ? "avx512" : sincos_loop == loop_avx2 ? "avx2" : "sse2") < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
