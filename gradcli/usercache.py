"""The user's own cache: small plain-data files that fail safe.

gradcli keeps one kind of file there, the parser's LALR tables (see ``gradcli/language/parser.py``),
so that a run need not build them again. The directory is the first of ``$GRADCLI_CACHE_DIR``,
``$XDG_CACHE_HOME/gradcli`` and ``$HOME/.cache/gradcli`` that is an absolute path; with none of
them there is no cache (never the current directory, never the shared temporary directory).

A file is one line ``gradcli-cache 1 sha256=<hex>`` and then JSON: ``{"key": ..., "data": ...}``,
the checksum being over the JSON. :func:`load` returns the data only if the file is a regular
file (not a symlink, FIFO, device or directory) owned by this user and writable by no one else,
in such a directory, whole (the checksum matches) and made for the same key (the versions it
depends on); anything else is ``None``, never an exception, and the caller builds the data again.
:func:`save` writes a new file (mode 0600, in a directory created 0700) and renames it over the
old one, so a reader sees the old file or the new one, never half of one. Nothing here is code:
JSON is parsed into dicts, lists, strings and numbers, and no file is ever unpickled.

POSIX only: where ``O_NOFOLLOW`` or user ids do not exist (Windows) there is no cache.
"""

from __future__ import annotations

import json
import os
import stat

MAGIC = b"gradcli-cache 1 sha256="
MAX_BYTES = 1 << 20  # a file larger than this is not one of ours
_SUPPORTED = hasattr(os, "O_NOFOLLOW") and hasattr(os, "getuid")
_OPEN_READ = (os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
              | getattr(os, "O_CLOEXEC", 0))
_OPEN_NEW = (os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
             | getattr(os, "O_CLOEXEC", 0))


def _sha256_function():
    # The C module hashlib itself falls back on: importing hashlib loads OpenSSL (milliseconds).
    try:
        from _sha2 import sha256  # Python >= 3.12
    except ImportError:
        try:
            from _sha256 import sha256  # Python 3.10, 3.11
        except ImportError:
            from hashlib import sha256
    return sha256


_sha256 = None


def sha256_hex(data: bytes) -> str:
    """The SHA-256 of ``data``, in hex."""
    global _sha256
    if _sha256 is None:
        _sha256 = _sha256_function()
    return _sha256(data).hexdigest()


def directory(environ=os.environ) -> str | None:
    """Where the cache lives for ``environ``, or None (no absolute path to use)."""
    folder = environ.get("GRADCLI_CACHE_DIR")
    if not folder:
        base = environ.get("XDG_CACHE_HOME")
        if not (base and os.path.isabs(base)):  # a relative XDG_CACHE_HOME is ignored (the spec)
            home = environ.get("HOME")
            if not (home and os.path.isabs(home)):
                return None  # no home: no cache, rather than the current directory
            base = os.path.join(home, ".cache")
        folder = os.path.join(base, "gradcli")
    return folder if os.path.isabs(folder) else None


def _trusted(st: os.stat_result) -> bool:
    """Owned by this user and writable by no one else."""
    return st.st_uid == os.getuid() and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def _own_directory(create: bool) -> str | None:
    """The cache directory if it is a directory this user owns and only they can write to."""
    folder = directory() if _SUPPORTED else None
    if folder is None:
        return None
    try:
        if create:
            os.makedirs(folder, mode=0o700, exist_ok=True)
        st = os.stat(folder)
    except OSError:  # missing, or not creatable (read-only home, a file in the way)
        return None
    return folder if stat.S_ISDIR(st.st_mode) and _trusted(st) else None


def encode(key, data) -> bytes:
    """A file's bytes: the checksum line, then the JSON of ``key`` and ``data``."""
    body = json.dumps({"key": key, "data": data}, separators=(",", ":"), ensure_ascii=True,
                      allow_nan=False).encode("ascii")
    return MAGIC + sha256_hex(body).encode("ascii") + b"\n" + body


def decode(blob: bytes, key):
    """The data in ``blob`` if it is whole and made for ``key``, else None."""
    header, newline, body = blob.partition(b"\n")
    if not newline or not header.startswith(MAGIC):
        return None
    if header[len(MAGIC):] != sha256_hex(body).encode("ascii"):
        return None  # truncated, or a byte changed
    try:
        content = json.loads(body)
    except ValueError:  # cannot happen with a matching checksum, unless written by hand
        return None
    if not isinstance(content, dict) or content.get("key") != key:
        return None  # another version of gradcli, Lark, Python or the grammar
    return content.get("data")


def read(path: str) -> bytes | None:
    """The bytes of ``path`` if it is a regular file this user owns and only they can write,
    else None; a symlink, FIFO, device or directory is not opened for reading at all."""
    try:
        before = os.lstat(path)
        if not (stat.S_ISREG(before.st_mode) and _trusted(before)) or before.st_size > MAX_BYTES:
            return None
        # O_NOFOLLOW: a symlink swapped in since lstat fails to open; O_NONBLOCK: so does a FIFO
        fd = os.open(path, _OPEN_READ)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if (st.st_ino, st.st_dev) != (before.st_ino, before.st_dev) or not stat.S_ISREG(st.st_mode):
            return None  # replaced between the two looks
        chunks, size = [], 0
        while size <= MAX_BYTES:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
            size += len(chunk)
        return None  # grew past the limit while being read
    except OSError:
        return None
    finally:
        os.close(fd)


def load(name: str, key):
    """The data saved under ``name`` for ``key``, or None (see the module's docstring)."""
    folder = _own_directory(create=False)
    if folder is None:
        return None
    blob = read(os.path.join(folder, name))
    return None if blob is None else decode(blob, key)


def save(name: str, key, data) -> bool:
    """Save ``data`` under ``name`` for ``key``; False if there is no usable cache directory.

    The bytes go to a new file (``O_EXCL``, mode 0600) in the same directory, which is then
    renamed over ``name``: a symlink, FIFO or stale file at ``name`` is replaced, never followed,
    and processes saving at the same time each rename a whole file of their own."""
    folder = _own_directory(create=True)
    if folder is None:
        return False
    blob = encode(key, data)
    temporary = os.path.join(folder, f".{name}.{os.getpid()}-{os.urandom(6).hex()}.tmp")
    try:
        fd = os.open(temporary, _OPEN_NEW, 0o600)
    except OSError:
        return False
    try:
        with open(fd, "wb") as file:
            file.write(blob)
        os.replace(temporary, os.path.join(folder, name))
        return True
    except OSError:  # a full disk, a directory at ``name``: the data still serves this run
        try:
            os.unlink(temporary)
        except OSError:
            pass
        return False
