"""The names in generated code: distinct by construction, never a user's name read as another.

The generated code has names of its own (:func:`own`): its temporaries (``v3``, ``vb3``,
``vd_x``), its helpers (``_sigmoid``; ``gc_sigmoid`` in C), its locals and constants
(``shape``, ``INPUTS``; ``in``, ``grad``), the functions it defines (``f``, ``f_hvp``,
``f_points``), the modules and library names it calls (``math``, ``np``; ``sin``, ``NAN``),
the language's keywords and Python's builtins. An input keeps its name where that name is
none of these and the language reads it as written; else it is renamed (:func:`variables`):

- ``u_NAME`` for a name that is one of the code's own (``v1`` -> ``u_v1``, ``int`` -> ``u_int``)
  or that starts with ``u_`` or ``u``, digits and ``_`` itself;
- ``uK_`` and the name's normal form, K the input's position, for a name the language would read
  as another (Python reads identifiers in NFKC: ``ｖ１`` is ``v1``, ``𝑥`` is ``x``) or cannot
  spell (C: ASCII only; ``θ`` -> ``u0_``).

Kept names, the first kind and the second kind are three disjoint sets (no own name starts with
``u`` then digits or ``_``), so no two inputs and no input and the code share a name. The
function's name (``--name``) is refused, not renamed, when it is one of the code's own.
"""

from __future__ import annotations

import builtins
import keyword
import re
import unicodedata

from ..errors import InputError

# Temporaries (v3, vb3, vd3, vbd3; vb_x, vd_x, vbd_x of an input x) and the Python helpers (_x)
_TEMPORARIES = re.compile(r"^(vb?d?(\d+|_.*)|_.*)$")
_RENAMED = re.compile(r"^u\d*_")  # the renamed inputs' namespace, which no own name is in

_PYTHON_OWN = frozenset(
    "value gradient exc shape failed INPUTS OUTPUTS WRT math np jnp jax".split()
) | frozenset(keyword.kwlist) | frozenset(dir(builtins))
_PYTHON_OWN_PATTERN = re.compile(r"^(row|column)\d+$")

_C_KEYWORDS = frozenset(
    "auto break case char const continue default do double else enum extern float for goto if "
    "inline int long register restrict return short signed sizeof static struct switch typedef "
    "union unsigned void volatile while main".split())
# <math.h> (C99), each function also with its f and l suffixes, and <stddef.h>: what the
# generated C includes, so a name it declares can be neither an input nor the function
_C_MATH = (
    "acos asin atan atan2 cos sin tan acosh asinh atanh cosh sinh tanh exp exp2 expm1 frexp "
    "ilogb ldexp log log10 log1p log2 logb modf scalbn scalbln cbrt fabs hypot pow sqrt erf "
    "erfc lgamma tgamma ceil floor nearbyint rint lrint llrint round lround llround trunc fmod "
    "remainder remquo copysign nan nextafter nexttoward fdim fmax fmin fma").split()
_C_HEADERS = frozenset(
    [name + suffix for name in _C_MATH for suffix in ("", "f", "l")]
    + "isfinite isinf isnan isnormal signbit fpclassify isgreater isgreaterequal isless "
      "islessequal islessgreater isunordered math_errhandling float_t double_t size_t "
      "ptrdiff_t wchar_t max_align_t offsetof".split())
# The C library's functions a function named like them would clash with at link time (or with
# the compiler's built-in declaration), and the names C reserves for the library's future
# (C99 7.26): is*, to*, str*, mem*, wcs* and the complex functions c*.
_C_LIBRARY = frozenset(
    ["c" + name + suffix for name in _C_MATH + ["abs", "arg", "imag", "conj", "proj", "real"]
     for suffix in ("", "f", "l")]
    + "remove rename tmpfile tmpnam fclose fflush fopen freopen setbuf setvbuf fprintf fscanf "
      "printf scanf snprintf sprintf sscanf vfprintf vfscanf vprintf vscanf vsnprintf vsprintf "
      "vsscanf fgetc fgets fputc fputs getc getchar gets putc putchar puts ungetc fread fwrite "
      "fgetpos fseek fsetpos ftell rewind clearerr feof ferror perror atof atoi atol atoll "
      "rand srand calloc free malloc realloc abort atexit exit getenv system bsearch qsort abs "
      "labs llabs div ldiv lldiv mblen mbtowc wctomb mbstowcs wcstombs clock difftime mktime "
      "time asctime ctime gmtime localtime strftime signal raise setjmp longjmp errno assert "
      "setlocale localeconv va_start va_arg va_end va_copy".split())
# the generated C's helpers, its locals and parameters, and a macro's spelling (no lower case:
# NAN, HUGE_VAL, FP_NAN, the header's F_INPUTS and GRADCLI_F_H)
_C_OWN = frozenset("in out grad dir dout hv hess status count i j failed".split())
_C_OWN_PATTERN = re.compile(r"^(gc_.*|[^a-z]{2,})$")


def functions(name: str, lang: str) -> list[str]:
    """The names of the functions generated code defines for ``--name NAME`` (all of them, in
    every mode: a name is the code's own whether or not this mode defines it)."""
    return [name, f"{name}_hvp"] + ([f"{name}_points"] if lang == "c" else [])


def own(word: str, lang: str, function: str | None = None) -> bool:
    """Whether ``word`` is a name the code of ``lang`` uses itself (or the language reserves),
    with the functions it defines for ``function``."""
    if _TEMPORARIES.match(word) or (function and word in functions(function, lang)):
        return True
    if lang != "c":
        return word in _PYTHON_OWN or bool(_PYTHON_OWN_PATTERN.match(word))
    return (word in _C_KEYWORDS or word in _C_HEADERS or word in _C_OWN
            or bool(_C_OWN_PATTERN.match(word)))


def _spelled(name: str, lang: str) -> str:
    """The name as the language reads it: Python's NFKC, C's ASCII as it is."""
    return name if lang == "c" else unicodedata.normalize("NFKC", name)


def _identifier(word: str, lang: str) -> bool:
    """Whether ``word`` is an identifier of ``lang`` (C's: ASCII)."""
    if lang == "c":
        return bool(re.fullmatch(r"[A-Za-z_]\w*", word, re.ASCII))
    return word.isidentifier()


def variables(inputs: list[str], lang: str, function: str) -> dict[str, str]:
    """Each input's variable in the code of ``lang`` defining ``function`` (see the module's
    docstring): distinct from one another and from every name of the code's own."""
    found = {}
    for k, name in enumerate(inputs):
        spelled = _spelled(name, lang)
        if spelled != name or not _identifier(name, lang):
            plain = unicodedata.normalize("NFKC", name)  # an ASCII reading, kept if any
            plain = plain if _identifier(plain, "c") else ""
            found[name] = f"u{k}_{plain}"
        elif own(name, lang, function) or _RENAMED.match(name):
            found[name] = f"u_{name}"
        else:
            found[name] = name
    return found


def check_function(name: str, lang: str) -> None:
    """Refuse ``--name NAME`` where it is not an ASCII identifier of ``lang``, or is (or makes)
    a name the code uses itself, the language reserves, or a renamed input's."""
    def refuse(why: str) -> None:
        raise InputError(f"{name!r} is not a function name in {lang}: {why}", option="name",
                         hint="another name, e.g. --name grad_f")
    if not _identifier(name, "c"):
        refuse("an identifier is ASCII letters, digits and _, not starting with a digit")
    if name in (_C_KEYWORDS if lang == "c" else keyword.kwlist):
        refuse("a reserved word")
    if _RENAMED.match(name):
        refuse("u, digits and _ begin the names of renamed inputs")
    for made in functions(name, lang):
        if own(made, lang) or (lang == "c" and made in _C_LIBRARY):
            library = "the C library" if lang == "c" else "Python's builtins"
            refuse(f"{made} is taken by the generated code, the language or {library}")
