"""``python -m gradcli`` and the ``gradcli`` console script.

:func:`run` sets up the process before anything heavy is imported: Ctrl-C, SIGTERM and SIGHUP
end gradcli at once with exit code 128 + the signal's number (Ctrl-C: 130) and no traceback,
wherever they happen (while importing, parsing, sweeping, printing), and remove any output being
written (:mod:`gradcli.files`).
"""

import os
import signal

HANDLED_SIGNALS = ("SIGINT", "SIGTERM", "SIGHUP")  # each ends gradcli with 128 + its number


def _early(signum, frame):  # pragma: no cover - before anything can be staged
    os._exit(128 + signum)


def handle_signals(handler=_early) -> None:
    """``handler`` for every signal gradcli handles; SIGHUP stays ignored under nohup."""
    for name in HANDLED_SIGNALS:
        number = getattr(signal, name, None)
        if number is None or (name == "SIGHUP" and signal.getsignal(number) == signal.SIG_IGN):
            continue
        try:
            signal.signal(number, handler)
        except (ValueError, OSError):  # not the main thread
            pass


handle_signals()  # first, before anything else is imported: no ^C is ever a traceback

import gc  # noqa: E402


def run():
    from .files import end_on_signal
    handle_signals(end_on_signal)  # from now on what is staged is removed first
    # Importing click and the CLI makes tens of thousands of objects that live as long as the
    # process: the cyclic collector would walk them at every collection, from the first
    # import on (6% of a plain eval's start-up). It is off while they are made, and then
    # they are set aside (gc.freeze) so that it walks only what the command makes.
    gc.disable()
    from .cli import run as run_cli
    gc.freeze()
    gc.enable()
    run_cli()


if __name__ == "__main__":
    run()
