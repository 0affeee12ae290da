"""``python -m gradcli``: the same as the ``gradcli`` command."""

from .cli import main

main(prog_name="gradcli")
