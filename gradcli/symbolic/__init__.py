"""Symbolic derivatives: the table's rules applied to expressions instead of numbers (``expr``),
and ``gradcli diff`` built on them (``diff``)."""
