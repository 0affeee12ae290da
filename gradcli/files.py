"""Files written whole or not at all, and nothing of them left behind when gradcli is stopped.

Every file gradcli writes (``eval --points -o``, ``codegen -o``, ``graph -o``, ``eval --export``,
``plot -o``) goes through :class:`Staged`: written under a new name in the same directory
(``.NAME.XXXXXXXX.part``), flushed to the disk (``fsync``) and renamed over ``NAME`` in one step.
An error, a full disk, Ctrl-C, SIGTERM or SIGHUP removes the staged file and leaves an earlier
``NAME`` as it was; only SIGKILL (``kill -9``) or a crash of the machine can leave a ``.part``
behind (docs/security.md). A file the command reads is never the one it writes.

>>> write_atomic("out.py", "print(1)\\n", reads=["model.grad"])   # doctest: +SKIP
>>> with staged("plot.png") as file:                               # doctest: +SKIP
...     figure.savefig(file, format="png")
"""

from __future__ import annotations

import contextlib
import os
import signal
import stat

from .errors import FileError, InputError, OutputError

_STAGED: set = set()  # what this process has staged and not yet committed or removed
_READ: list = []  # the files this command reads (-f FILE): never one it writes
_critical = [0, None]  # depth of critical sections; the signal that arrived inside one


def reason(exc: OSError) -> str:
    """An OSError's reason in words (pyarrow's carry only the number and a long detail)."""
    return os.strerror(exc.errno) if exc.errno else str(exc).split("\n")[0]


def write_error(path: str | None, exc: OSError):
    """The gradcli error for a failed write: standard output's is an ``io error``, a file's
    names the file; both exit 2."""
    if path is None:
        return OutputError(f"cannot write to standard output: {reason(exc)}")
    return FileError(f"cannot write {path}: {reason(exc)}")


# -- signals ------------------------------------------------------------------------------------

def abort_staged() -> None:
    """Every staged file and scratch directory of this process removed."""
    for item in list(_STAGED):
        item.abort()


def end_on_signal(signum, frame=None) -> None:  # pragma: no cover - run in a subprocess
    """The handler of SIGINT, SIGTERM and SIGHUP (installed by :mod:`gradcli.__main__`): what
    is staged is removed, and the process ends at once with 128 + the signal's number (no
    traceback, nothing half-written flushed). Inside :func:`critical` (a rename in progress)
    the signal waits for it to finish."""
    if _critical[0]:
        _critical[1] = signum
        return
    abort_staged()
    os._exit(128 + signum)


@contextlib.contextmanager
def critical():
    """Signals wait while the block runs (the renames that put a staged output in place): the
    output is then either wholly the old or wholly the new."""
    _critical[0] += 1
    try:
        yield
    finally:
        _critical[0] -= 1
        pending, _critical[1] = _critical[1], None
        if pending is not None and not _critical[0]:
            handler = signal.getsignal(pending)
            if callable(handler):
                handler(pending, None)


def sync(path: str) -> None:
    """``path``'s data on the disk (a rename after it is then never of a half-written file)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


# -- staged files -------------------------------------------------------------------------------

class Staged:
    """An output file made whole or not at all: written under a new name beside ``path`` (in the
    same directory, so the rename cannot cross file systems), renamed over ``path`` by
    :meth:`commit` once complete; :meth:`abort` (an error, a signal) removes it and leaves an
    earlier file at ``path`` untouched. Two runs writing one path each rename a whole file: the
    last one wins. A symlink at ``path`` has its target replaced; a device or a FIFO (``-o
    /dev/stdout``) is written in place. ``directory``: a directory of parts, replaced whole."""

    def __init__(self, path: str, directory: bool = False):
        import secrets
        self.path = path  # as the user wrote it, for messages
        target = os.path.realpath(path)
        try:
            status = os.stat(target)
        except OSError:
            status = None
        if status is not None and stat.S_ISDIR(status.st_mode) and not directory:
            raise FileError(f"cannot write {path}: it is a directory",
                            hint=f"name a file in it: {os.path.join(path, 'out.csv')}")
        self.old = None  # a directory output's earlier version, while it is replaced
        if status is not None and not (stat.S_ISREG(status.st_mode) or directory):
            self.target, self.temp = None, target  # a device, a FIFO: no rename
            return
        folder, name = os.path.split(target)
        self.target = target
        for _ in range(100):
            # registered before it exists: a signal as it is made removes it too
            self.temp = os.path.join(folder, f".{name}.{secrets.token_hex(4)}.part")
            _STAGED.add(self)
            try:
                if directory:
                    os.mkdir(self.temp, 0o777)
                else:
                    os.close(os.open(self.temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
                    if status is not None:  # the new file keeps the old one's permissions
                        os.chmod(self.temp, stat.S_IMODE(status.st_mode))
            except FileExistsError:  # another run's (a one in 2^32 name): not ours to remove
                _STAGED.discard(self)
                continue
            except OSError as exc:
                _STAGED.discard(self)
                raise FileError(f"cannot write {path}: {reason(exc)}") from None
            break

    def commit(self) -> None:
        """The new file (or directory of parts) at ``path``, on the disk, in one rename."""
        if self.target is None:
            return
        try:
            if os.path.isdir(self.temp):
                for folder, _, names in os.walk(self.temp):
                    for name in names:
                        sync(os.path.join(folder, name))
            else:
                sync(self.temp)
            with critical():
                if os.path.isdir(self.temp) and os.path.isdir(self.target):
                    # a directory cannot be renamed over another: the old one is set aside
                    self.old = self.temp + ".old"
                    os.rename(self.target, self.old)
                os.replace(self.temp, self.target)
                self.temp = None
        except OSError as exc:
            if self.old is not None and not os.path.exists(self.target):
                os.rename(self.old, self.target)  # the earlier output back in place
                self.old = None
            self.abort()
            raise write_error(self.path, exc) from None
        self.abort()  # the old directory, if any, removed

    def abort(self) -> None:
        """The partial file (or directory) removed; ``path`` as it was."""
        if self.target is None:  # a device or a FIFO written in place: nothing of ours
            return
        for path in (self.temp, self.old):
            if path is not None:
                remove(path)
        self.temp = self.old = None
        _STAGED.discard(self)


def remove(path: str) -> None:
    """A file or a directory tree removed, quietly (it may be gone already)."""
    import shutil
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    else:
        try:
            os.unlink(path)
        except OSError:
            pass


class Scratch:
    """A new private directory in ``folder`` (``.gradcli-PREFIX-XXXXXXXX``), removed by
    :meth:`abort` or by a signal, like a staged output."""

    def __init__(self, folder: str, prefix: str):
        import tempfile
        self.temp = self.old = None
        self.target = folder  # not None: the directory is ours to remove
        _STAGED.add(self)
        try:
            self.path = self.temp = tempfile.mkdtemp(prefix=f".gradcli-{prefix}-", dir=folder)
        except OSError as exc:
            _STAGED.discard(self)
            raise FileError(f"cannot write in {folder}: {exc.strerror}") from None

    abort = Staged.abort


def reading(path: str) -> None:
    """Note that this command reads the file ``path``: no file it writes may be that file."""
    _READ.append(path)


@contextlib.contextmanager
def staged(path: str, reads=()):
    """A binary file to write ``path``'s new content into: in place once the block ends, and
    nothing changed should the block fail (the exception goes on). ``path`` is none of the
    files the command reads (:func:`reading`, and ``reads``)."""
    refuse_overwriting([*_READ, *reads], path)
    out = Staged(path)
    try:
        file = open(out.temp, "wb")  # noqa: SIM115 - closed below
    except OSError as exc:
        out.abort()
        raise write_error(path, exc) from None
    try:
        yield file
        try:
            file.close()  # the last of the data written: a full disk shows here
        except OSError as exc:
            raise write_error(path, exc) from None
        out.commit()
    except BaseException:
        with contextlib.suppress(OSError):
            file.close()  # a flush that failed fails again: the file is dropped anyway
        out.abort()
        raise


def write_atomic(path: str, data, reads=()) -> None:
    """``data`` (text, written as UTF-8, or bytes) as the whole of the file ``path``, or an
    error naming the file and ``path`` as it was; ``reads``: files that ``path`` must not be."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    with staged(path, reads) as file:
        try:
            file.write(data)
        except OSError as exc:
            raise write_error(path, exc) from None


# -- the files a command reads ------------------------------------------------------------------

def _identities(path: str) -> set[tuple[int, int]]:
    """(device, inode) of every file ``path`` names: a file, a directory's files, a glob."""
    import glob
    if os.path.isdir(path):
        names = [os.path.join(folder, name)
                 for folder, _, names in os.walk(path) for name in names]
    else:
        names = glob.glob(glob.escape(path)) or glob.glob(path) or [path]
    found = set()
    for name in names:
        try:
            status = os.stat(name)
        except OSError:
            continue
        if stat.S_ISREG(status.st_mode) or stat.S_ISDIR(status.st_mode):
            found.add((status.st_dev, status.st_ino))
    return found


def overlaps(source: str, target: str) -> bool:
    """Whether writing ``target`` (a file, a directory of parts, an ``out-*.csv`` pattern) would
    replace a file that reading ``source`` (a file, a glob, a directory of parts) reads: files
    compared by device and inode, so a hard link, a symlink or another spelling is caught."""
    return bool(_identities(source) & _identities(target))


def refuse_overwriting(sources, target: str, what: str = "{source}, which this command reads",
                       hint: str = "write to another file") -> None:
    """An InputError when ``target`` names one of the files ``sources`` (a path or several);
    ``what`` says what ``source`` is."""
    for source in [sources] if isinstance(sources, str) else sources:
        if source is not None and source != "-" and overlaps(source, target):
            raise InputError(f"names {what.format(source=source)}: writing there would destroy "
                             "it", option="output", hint=hint)
