/* Sine and cosine of a float64 column, the batch engine's fast path (gradcli/engine/trig.py).

   The same IEEE operations, in the same order, as trig.py's NumPy path (_reduced_into): a
   Cody-Waite reduction with pi/2 in three parts, fdlibm's kernels by Horner's rule, the quadrant
   by bit operations. Each is a correctly rounded add, multiply or subtract, so the result is the
   NumPy path's bit for bit: what gradcli prints does not depend on whether this was built.
   No FMA (-ffp-contract=off, and no target that has it): a fused multiply-add rounds once where
   NumPy rounds twice. rint(v) is computed as (v + 1.5*2^52) - 1.5*2^52, which is rint in the
   default rounding mode for |v| < 2^51 (here |v| < 6400), and vectorises.

   Rows with |x| > BOUND, inf or nan are left to NumPy (np.sin, np.cos), as on the NumPy path:
   sincos() returns how many there are, and writes nan in their places.

   Optional: where this does not build (no C compiler), trig.py computes the same in NumPy.
   Also here: small(), one exact pass of the error bounds' quick test (bounds.py). */

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>
#include <string.h>

static const double TWO_OVER_PI = 0.6366197723675814;
static const double PIO2_1 = 0x1.921fb54442000p+0;
static const double PIO2_2 = 0x1.a308d31318000p-41;
static const double PIO2_3 = 0x1.8a2e03707344ap-81;
static const double BOUND = 1.0e4;
static const double ROUNDER = 0x1.8p52;

static const double S[6] = {-1.66666666666666324348e-01, 8.33333333332248946124e-03,
                            -1.98412698298579493134e-04, 2.75573137070700676789e-06,
                            -2.50507602534068634195e-08, 1.58969099521155010221e-10};
static const double C[6] = {4.16666666666666019037e-02, -1.38888888888741095749e-03,
                            2.48015872894767294178e-05, -2.75573143513906633035e-07,
                            2.08757232129817482790e-09, -1.13596475577881948265e-11};

static inline uint64_t bits(double v) { uint64_t u; memcpy(&u, &v, 8); return u; }
static inline double real(uint64_t u) { double v; memcpy(&v, &u, 8); return v; }

#define KERNEL_LOOP(NAME, ATTR)                                                               \
    ATTR static void NAME(const double *x, double *s, double *c, Py_ssize_t n)               \
    {                                                                                        \
        const uint64_t rounder = bits(ROUNDER);                                              \
        for (Py_ssize_t i = 0; i < n; i++) {                                                 \
            double v = x[i];                                                                 \
            double kr = v * TWO_OVER_PI + ROUNDER;  /* k = rint(x·2/π), exactly */           \
            double k = kr - ROUNDER;                                                         \
            uint64_t q = bits(kr) - rounder;        /* k as a two's complement integer */    \
            double r = v - k * PIO2_1;                                                       \
            r = r - k * PIO2_2;                                                              \
            r = r - k * PIO2_3;                                                              \
            double z = r * r;                                                                \
            double ps = z * S[5], pc = z * C[5];                                             \
            ps = (ps + S[4]) * z; pc = (pc + C[4]) * z;                                      \
            ps = (ps + S[3]) * z; pc = (pc + C[3]) * z;                                      \
            ps = (ps + S[2]) * z; pc = (pc + C[2]) * z;                                      \
            ps = (ps + S[1]) * z; pc = (pc + C[1]) * z;                                      \
            ps = ps + S[0]; pc = pc + C[0];                                                  \
            double sv = ps * (r * z) + r;                                                    \
            double cv = 1.0 - (z * 0.5 - pc * (z * z));                                      \
            uint64_t su = bits(sv), cu = bits(cv);                                           \
            uint64_t odd = q << 63, high = (q << 62) & 0x8000000000000000ULL;                \
            uint64_t swap = (su ^ cu) & (0 - (q & 1));                                       \
            su ^= swap ^ high;                                                               \
            cu ^= swap ^ high ^ odd;                                                         \
            s[i] = v == 0.0 ? v : real(su);  /* sin(-0) = -0 */                             \
            c[i] = real(cu);                                                                 \
        }                                                                                    \
    }

KERNEL_LOOP(loop_base, )
KERNEL_LOOP(loop_avx2, __attribute__((target("avx2"))))

static void (*sincos_loop)(const double *, double *, double *, Py_ssize_t) = loop_base;

/* sincos(x, s, c) -> int: s[i] = sin(x[i]), c[i] = cos(x[i]) for |x[i]| <= BOUND; nan in both
   elsewhere, and the number of such rows returned. Three C-contiguous float64 buffers of one
   length, s and c writable. The GIL is released: blocks run on several threads. */
static PyObject *sincos_py(PyObject *self, PyObject *args)
{
    Py_buffer x, s, c;
    if (!PyArg_ParseTuple(args, "y*w*w*", &x, &s, &c))
        return NULL;
    PyObject *result = NULL;
    if (x.len != s.len || x.len != c.len || x.len % (Py_ssize_t)sizeof(double)) {
        PyErr_SetString(PyExc_ValueError, "sincos: three float64 buffers of one length");
    } else {
        Py_ssize_t n = x.len / (Py_ssize_t)sizeof(double), outside = 0;
        const double *xs = (const double *)x.buf;
        double *ss = (double *)s.buf, *cs = (double *)c.buf;
        Py_BEGIN_ALLOW_THREADS
        sincos_loop(xs, ss, cs, n);
        for (Py_ssize_t i = 0; i < n; i++) {
            if (!(__builtin_fabs(xs[i]) <= BOUND)) { /* also nan */
                ss[i] = cs[i] = __builtin_nan("");
                outside++;
            }
        }
        Py_END_ALLOW_THREADS
        result = PyLong_FromSsize_t(outside);
    }
    PyBuffer_Release(&x);
    PyBuffer_Release(&s);
    PyBuffer_Release(&c);
    return result;
}

/* small(column, threshold, mask): mask[i] |= |column[i]| < threshold, for the quick test of
   gradcli/engine/bounds.py (the rows a chunk's one error bound cannot give enough digits). A
   comparison is exact: the NumPy path (np.abs, np.less, np.bitwise_or) marks the same rows.
   One pass instead of NumPy's three. */
#define SMALL_LOOP(NAME, ATTR)                                                                \
    ATTR static void NAME(const double *xs, double t, unsigned char *ms, Py_ssize_t n)      \
    {                                                                                        \
        for (Py_ssize_t i = 0; i < n; i++)                                                   \
            ms[i] = ms[i] | (unsigned char)(__builtin_fabs(xs[i]) < t);                      \
    }

SMALL_LOOP(small_base, )

/* extent: the least and the greatest value, NaN skipped; four accumulators of each, so that the
   compiler can keep several comparisons in flight (v < lo ? v : lo skips a NaN v). */
#define EXTENT_LOOP(NAME, ATTR)                                                               \
    ATTR static void NAME(const double *xs, Py_ssize_t n, double *out)                       \
    {                                                                                        \
        double lo[4], hi[4];                                                                 \
        for (int j = 0; j < 4; j++) { lo[j] = __builtin_inf(); hi[j] = -__builtin_inf(); }   \
        Py_ssize_t i = 0;                                                                    \
        for (; i + 4 <= n; i += 4)                                                           \
            for (int j = 0; j < 4; j++) {                                                    \
                double v = xs[i + j];                                                        \
                lo[j] = v < lo[j] ? v : lo[j];                                               \
                hi[j] = v > hi[j] ? v : hi[j];                                               \
            }                                                                                \
        for (; i < n; i++) {                                                                 \
            double v = xs[i];                                                                \
            lo[0] = v < lo[0] ? v : lo[0];                                                   \
            hi[0] = v > hi[0] ? v : hi[0];                                                   \
        }                                                                                    \
        for (int j = 1; j < 4; j++) {                                                        \
            lo[0] = lo[j] < lo[0] ? lo[j] : lo[0];                                           \
            hi[0] = hi[j] > hi[0] ? hi[j] : hi[0];                                           \
        }                                                                                    \
        out[0] = lo[0];                                                                      \
        out[1] = hi[0];                                                                      \
    }

EXTENT_LOOP(extent_base, )
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
/* The same with AVX's minpd and maxpd, four lanes at a time: minpd(v, lo) is v < lo ? v : lo,
   the comparison above, lane by lane (a NaN v keeps lo). */
__attribute__((target("avx2"))) static void extent_avx2(const double *xs, Py_ssize_t n,
                                                        double *out)
{
    __m256d lo = _mm256_set1_pd(__builtin_inf()), hi = _mm256_set1_pd(-__builtin_inf());
    __m256d lo2 = lo, hi2 = hi;
    Py_ssize_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256d v = _mm256_loadu_pd(xs + i), w = _mm256_loadu_pd(xs + i + 4);
        lo = _mm256_min_pd(v, lo);
        hi = _mm256_max_pd(v, hi);
        lo2 = _mm256_min_pd(w, lo2);
        hi2 = _mm256_max_pd(w, hi2);
    }
    double l[8], h[8];
    _mm256_storeu_pd(l, lo);
    _mm256_storeu_pd(l + 4, lo2);
    _mm256_storeu_pd(h, hi);
    _mm256_storeu_pd(h + 4, hi2);
    extent_base(xs + i, n - i, out);  /* the rest, then the lanes */
    for (int j = 0; j < 8; j++) {
        out[0] = l[j] < out[0] ? l[j] : out[0];
        out[1] = h[j] > out[1] ? h[j] : out[1];
    }
}

/* small with AVX: four comparisons at once, |v| as v with the sign bit cleared (exact, as
   fabs), the four answers as four bytes of 0 or 1 from a table, or-ed into the mask. */
__attribute__((target("avx2"))) static void small_avx2(const double *xs, double t,
                                                       unsigned char *ms, Py_ssize_t n)
{
    static const uint32_t bytes[16] = {
        0x00000000, 0x00000001, 0x00000100, 0x00000101, 0x00010000, 0x00010001, 0x00010100,
        0x00010101, 0x01000000, 0x01000001, 0x01000100, 0x01000101, 0x01010000, 0x01010001,
        0x01010100, 0x01010101};
    const __m256d sign = _mm256_set1_pd(-0.0), limit = _mm256_set1_pd(t);
    Py_ssize_t i = 0;
    for (; i + 4 <= n; i += 4) {
        __m256d size = _mm256_andnot_pd(sign, _mm256_loadu_pd(xs + i));
        int below = _mm256_movemask_pd(_mm256_cmp_pd(size, limit, _CMP_LT_OQ));
        uint32_t old;
        memcpy(&old, ms + i, 4);  /* little-endian: byte j is row i + j */
        old |= bytes[below];
        memcpy(ms + i, &old, 4);
    }
    small_base(xs + i, t, ms + i, n - i);
}
#else
EXTENT_LOOP(extent_avx2, )
SMALL_LOOP(small_avx2, )
#endif

static void (*small_loop)(const double *, double, unsigned char *, Py_ssize_t) = small_base;
static void (*extent_loop)(const double *, Py_ssize_t, double *) = extent_base;

static PyObject *small_py(PyObject *self, PyObject *args)
{
    Py_buffer x, m;
    double threshold;
    if (!PyArg_ParseTuple(args, "y*dw*", &x, &threshold, &m))
        return NULL;
    PyObject *result = NULL;
    if (x.len % (Py_ssize_t)sizeof(double) || m.len != x.len / (Py_ssize_t)sizeof(double)) {
        PyErr_SetString(PyExc_ValueError, "small: a float64 buffer and a bool buffer of one "
                                          "length");
    } else {
        Py_BEGIN_ALLOW_THREADS
        small_loop((const double *)x.buf, threshold, (unsigned char *)m.buf, m.len);
        Py_END_ALLOW_THREADS
        Py_INCREF(Py_None);
        result = Py_None;
    }
    PyBuffer_Release(&x);
    PyBuffer_Release(&m);
    return result;
}

/* extent(column) -> (lo, hi): the least and the greatest value, NaN skipped (as np.fmin.reduce
   and np.fmax.reduce); (inf, -inf) when every value is NaN. Exact: the same numbers as NumPy's.
   One pass instead of two, for the quick test's ranges. */
static PyObject *extent_py(PyObject *self, PyObject *args)
{
    Py_buffer x;
    if (!PyArg_ParseTuple(args, "y*", &x))
        return NULL;
    PyObject *result = NULL;
    if (x.len % (Py_ssize_t)sizeof(double)) {
        PyErr_SetString(PyExc_ValueError, "extent: a float64 buffer");
    } else {
        double out[2];
        Py_BEGIN_ALLOW_THREADS
        extent_loop((const double *)x.buf, x.len / (Py_ssize_t)sizeof(double), out);
        Py_END_ALLOW_THREADS
        result = Py_BuildValue("(dd)", out[0], out[1]);
    }
    PyBuffer_Release(&x);
    return result;
}

static PyMethodDef methods[] = {
    {"extent", extent_py, METH_VARARGS,
     "extent(column) -> (lo, hi): the least and greatest value, NaN skipped."},
    {"small", small_py, METH_VARARGS,
     "small(column, threshold, mask): mask |= |column| < threshold, in place."},
    {"sincos", sincos_py, METH_VARARGS,
     "sincos(x, s, c) -> int: s = sin(x), c = cos(x) in place for |x| <= 1e4; the other rows "
     "are nan, and their count is returned."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_sincos", NULL, -1, methods};

PyMODINIT_FUNC PyInit__sincos(void)
{
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2")) {
        sincos_loop = loop_avx2;
        small_loop = small_avx2;
        extent_loop = extent_avx2;
    }
    PyObject *m = PyModule_Create(&module);
    if (m != NULL && PyModule_AddStringConstant(m, "VARIANT", sincos_loop == loop_avx2
            ? "avx2" : "sse2") < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
