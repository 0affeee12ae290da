"""``python -m gradcli`` and the ``gradcli`` console script.

:func:`run` sets up the process before anything heavy is imported: Ctrl-C ends gradcli at
once with exit code 130 and no traceback, wherever it happens (while importing, parsing,
sweeping or printing).
"""

import gc
import os
import signal
import sys

EXIT_INTERRUPTED = 130  # 128 + SIGINT, the shell's convention


def _interrupted(signum, frame):  # pragma: no cover - exercised through a subprocess
    batchio = sys.modules.get("gradcli.batchio")
    if batchio is not None:  # a batch output being written is removed, not left half done
        batchio.abort_staged()
    os._exit(EXIT_INTERRUPTED)  # nothing half-written is flushed; no traceback is printed


def run():
    signal.signal(signal.SIGINT, _interrupted)
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
