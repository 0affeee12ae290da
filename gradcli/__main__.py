"""``python -m gradcli`` and the ``gradcli`` console script.

:func:`run` sets up the process before anything heavy is imported: Ctrl-C ends gradcli at
once with exit code 130 and no traceback, wherever it happens (while importing, parsing,
sweeping or printing).
"""

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
    from .cli import run as run_cli
    run_cli()


if __name__ == "__main__":
    run()
