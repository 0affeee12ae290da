"""``python -m gradcli`` and the ``gradcli`` console script.

:func:`run` sets up the process before anything heavy is imported: Ctrl-C, SIGTERM and SIGHUP
end gradcli at once with exit code 128 + the signal's number (Ctrl-C: 130) and no traceback,
wherever they happen (while importing, parsing, sweeping, printing), and remove any output being
written (:mod:`gradcli.files`).
"""

import gc

from .files import handle_signals


def run():
    handle_signals()
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
