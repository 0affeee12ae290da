"""Batch rows agree with the single-point certified answer in every digit they claim.

``gradcli eval --points/--grid`` writes doubles, each row with a proven number of certain digits
(rows short of 10 recomputed by the certified engine: gradcli.engine.rows), or with ``--digits N``
decimal text of N proven digits. The single-point answer, ``gradcli.evaluate(..., digits=N)``, is
the certified engine's, correctly rounded; the references for the cancelling examples come from
mpmath at 50 digits.
"""

from __future__ import annotations

import json
import subprocess
from decimal import Decimal
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, note, settings

import gradcli
from gradcli.batchio import evaluate_chunk
from gradcli.engine.bounds import SMALLEST_NORMAL
from gradcli.errors import GradcliError
from gradcli.language.printer import to_source
from strategies import Case, cases
from test_properties import case

CANCELLING = "(1-cos(x))/x^2"


def truth(x: float, digits: int) -> tuple[str, str]:
    """f and f' of (1-cos(x))/x^2 at the double x, from mpmath, as text of ``digits`` digits."""
    with mpmath.workdps(60):
        t = mpmath.mpf(x)
        f = (1 - mpmath.cos(t)) / t ** 2
        d = mpmath.diff(lambda s: (1 - mpmath.cos(s)) / s ** 2, t)
        return mpmath.nstr(f, digits, strip_zeros=False), mpmath.nstr(d, digits, strip_zeros=False)


def same_number(text: str, reference: str) -> bool:
    return Decimal(text) == Decimal(reference)


# -- --digits N writes N proven digits --------------------------------------------------------------

@pytest.mark.parametrize("how", ["cli", "script"])
def test_digits_20_writes_twenty_proven_digits_as_text(how, run, gradcli_script, tmp_path):
    args = ["eval", CANCELLING, "--grid", "x=1e-8:1:3", "--digits", "20", "--with-digits"]
    if how == "cli":
        result = run(*args)
        out, code = result.stdout, result.exit_code
    else:
        done = subprocess.run([gradcli_script, *args], capture_output=True, text=True, timeout=120)
        out, code = done.stdout, done.returncode
    assert code == 0
    header, *lines = out.splitlines()
    assert header == "x,f,df/dx,digits,error"
    for line in lines:
        x, f, d, digits, error = line.split(",")
        assert digits == "20" and error == ""
        assert len(f.lstrip("-0.").split("e")[0].replace(".", "")) == 20  # 20 significant
        want_f, want_d = truth(float(x), 20)
        assert same_number(f, want_f) and same_number(d, want_d), (line, want_f, want_d)


def test_digits_in_json_lines_are_strings_and_parquet_has_string_columns(run, tmp_path):
    import pyarrow.parquet as pq
    result = run("eval", CANCELLING, "--grid", "x=1e-8:1:3", "--digits", "20", "--json")
    assert result.exit_code == 0
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert [row["f"] for row in rows][0] == "0.49999999999999999583"
    assert all(isinstance(row["df/dx"], str) for row in rows)
    out = tmp_path / "out.parquet"
    result = run("eval", "log(x)", "--grid", "x=-1:2:4", "--digits", "25", "-o", str(out))
    assert result.exit_code == 1  # log(-1) and log(0) fail their rows
    table = pq.read_table(out)
    assert str(table.schema.field("f").type) == "string"
    f = table.column("f").to_pylist()
    assert f[:2] == [None, None]
    with mpmath.workdps(40):
        assert same_number(f[3], mpmath.nstr(mpmath.log(2), 25, strip_zeros=False))
    empty = tmp_path / "empty.csv"
    empty.write_text("x\n")
    result = run("eval", "x", "--points", str(empty), "--digits", "20", "-o", str(out))
    assert result.exit_code == 0  # no rows: the same columns, the same types
    assert str(pq.read_table(out).schema.field("df/dx").type) == "string"


def test_digits_agree_with_the_single_point_answer_on_a_well_conditioned_grid(run):
    # rows float64 proves to 12 digits are rounded from the double (checked at both ends of
    # the bound), the others recomputed: either way the text is the single point's
    result = run("eval", "log(x)+x*y-sin(y)", "--grid", "x=0.5:4:8,y=-2:3:6", "--digits", "12",
                 "--json")
    assert result.exit_code == 0
    for row in map(json.loads, result.stdout.splitlines()):
        single = gradcli.evaluate("log(x)+x*y-sin(y)", {"x": row["x"], "y": row["y"]}, digits=12)
        assert row["f"] == single.value.text
        assert row["df/dx"] == single.gradient["x"].text
        assert row["df/dy"] == single.gradient["y"].text


def test_with_digits_reports_what_is_proven_not_what_a_double_holds(run):
    # without --digits the numbers are doubles: a recomputed row claims the digits asked of
    # the certified engine (10), never 17 because 17 were written
    result = run("eval", CANCELLING, "--grid", "x=1e-8:1e-8:1", "--with-digits", "--json")
    assert json.loads(result.stdout)["digits"] == 10
    result = run("eval", CANCELLING, "--grid", "x=1e-8:1e-8:1", "--with-digits", "--json",
                 "--digits", "30")
    row = json.loads(result.stdout)
    assert row["digits"] == 30 and same_number(row["f"], truth(1e-8, 30)[0])


# -- the property: every claimed digit agrees with the single point ---------------------------------

def claims_hold(got, claimed: int, single) -> bool:
    """A double claiming d digits is within |got|·10^-d/2 of the exact value (or within the
    smallest normal double, 2.2e-308: a double cannot say more of a number below it, as
    docs/batch.md says); the single point's text (correctly rounded to its digits) is within
    half a unit of its last digit of it."""
    if claimed == 0 or single.digits == 0:
        return True
    exact = Fraction(Decimal(single.text))
    own = abs(exact) / 10 ** (single.digits - 1) / 2  # half a unit in its last place
    got = Fraction(got)
    allowed = max(abs(got) / 10 ** claimed / 2, Fraction(SMALLEST_NORMAL))
    return abs(got - exact) <= allowed + own


def batch_row(source: str, point: dict, digits: int | None):
    import pyarrow as pa
    graph = gradcli.compile(source)
    batch = pa.record_batch([pa.array([float(point[n])]) for n in graph.inputs]
                            + [pa.array(["row 1"])], names=[*graph.inputs, "id"])
    table, errors = evaluate_chunk(graph, batch, list(graph.inputs), {}, digits, True)
    row = {name: table.column(name)[0].as_py() for name in table.schema.names}
    return graph, row, errors[0]


@settings(max_examples=100, derandomize=True, database=None, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(cases(max_statements=2, max_depth=3))
@example(case(CANCELLING, x=1e-8))
@example(case(CANCELLING, x=1.75e-5))
@example(case("x - cos(y)", x=0.5403023058681398, y=1))
@example(case("exp(x) - 1 - x", x=1e-9))
@example(case("sqrt(x^2 + 1) - 1", x=3e-9))
@example(case("log(x)+x*y-sin(y)", x=4, y=-1))
def test_batch_rows_agree_with_the_single_point_answer(case: Case):
    source = to_source(case.program)
    note(f"source:\n{source}\npoint: {case.point}")
    try:
        single = gradcli.evaluate(source, case.point, digits=17)
    except GradcliError:
        return  # outside a domain, or not certifiable: the row says so in its error column
    for digits in (None, 17):
        graph, row, error = batch_row(source, case.point, digits)
        if error is not None:
            assert error.startswith(("not certified", "v")), error
            continue
        claimed = row["digits"]
        note(f"digits={digits}: {row}")
        assert claimed >= (10 if digits is None else digits)
        pairs = [(row["f"], single.value)] + [(row[f"df/d{name}"], single.gradient[name])
                                             for name in graph.inputs]
        for got, proven in pairs:
            if digits is None:
                assert claims_hold(got, claimed, proven), (got, claimed, proven.text)
            elif proven.digits == 17:
                assert Decimal(got) == Decimal(proven.text), (got, proven.text)


def test_a_cancelling_row_and_the_single_point_agree_in_sign_and_digits():
    # the disagreement: at 1.75e-5 the batch and single-point derivatives had opposite
    # signs; now both are the certified value
    _, row, error = batch_row(CANCELLING, {"x": 1.75e-5}, None)
    single = gradcli.evaluate(CANCELLING, {"x": 1.75e-5}, digits=13)
    assert error is None and np.sign(row["df/dx"]) == np.sign(float(single.gradient["x"])) == -1
    assert f"{row['df/dx']:.12e}" == f"{float(single.gradient['x'].text):.12e}"
