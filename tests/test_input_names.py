"""Names and bytes a new user trips on (issue 25): a value given to the constant e or pi, and a
UTF-8 byte-order mark at the start of a file or of standard input."""

import subprocess

import pytest

E_MESSAGE = "e is the constant e = 2.718281828459…; an input cannot be named e"
PI_MESSAGE = "pi is the constant π = 3.141592653589…; an input cannot be named pi"

# Every way a command takes a point, a direction or ranges: the constant is an input error.
GIVEN_A_CONSTANT = [
    (["eval", "e*x", "--at", "e=2,x=1"], E_MESSAGE),
    (["eval", "pi*x", "--at", "x=1", "--at", "pi=3"], PI_MESSAGE),
    (["eval", "e*x", "--at", "x=1,e=2", "--check"], E_MESSAGE),
    (["eval", "x^2", "--at", "x=1", "--direction", "e=1"], E_MESSAGE),
    (["eval", "x*e", "--grid", "x=0:1:3,e=0:1:3"], E_MESSAGE),
    (["hessian", "x^2*pi", "--at", "x=1,pi=3"], PI_MESSAGE),
    (["plot", "sin(pi*x)", "--over", "pi=-1:1"], PI_MESSAGE),
    (["eval", "x*e; x", "--at", "x=1,e=3"], E_MESSAGE),  # a Jacobian
]


@pytest.mark.parametrize("args, message", GIVEN_A_CONSTANT, ids=[" ".join(a) for a, _ in
                                                                  GIVEN_A_CONSTANT])
def test_a_value_for_a_constant_is_an_input_error(run, reported, args, message):
    result = run(*args)
    reported(result, 2, [message, "hint: rename the input"])
    assert result.stdout == ""


def test_the_caret_points_at_the_name(run):
    result = run("eval", "e*x", "--at", "x=1, e=2")
    lines = result.stderr.splitlines()
    at = lines.index("  x=1, e=2")
    assert lines[at + 1] == "       ^"


def test_the_console_script_says_so_in_json(gradcli_script):
    import json
    out = subprocess.run([gradcli_script, "eval", "e*x", "--at", "e=2,x=1", "--json"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2
    error = json.loads(out.stdout)["error"]
    assert error["kind"] == "input" and E_MESSAGE in error["message"]
    assert error["hint"] == "rename the input in the expression and here, e.g. e1 or e_"


def test_an_assigned_e_is_still_a_name_of_the_program(run):
    # e = ... shadows the constant inside the program; it is not an input either way
    result = run("eval", "e = 2*x; e + 1", "--at", "x=1")
    assert result.exit_code == 0 and "f     = 3" in result.output


def test_a_points_file_column_named_e_passes_through_with_a_warning(run, tmp_path):
    points = tmp_path / "p.csv"
    points.write_text("x,e\n1,5\n2,6\n")
    result = run("eval", "e*x", "--points", str(points))
    assert result.exit_code == 0
    assert result.stdout.splitlines()[1] == "1,5,2.718281828459045,2.718281828459045,"
    assert ("warning: the column e is not an input: in the expression, e is the constant "
            "e = 2.718281828459…") in result.stderr


# -- a byte-order mark --------------------------------------------------------------------------

BOM = b"\xef\xbb\xbf"


def test_a_file_with_a_byte_order_mark(gradcli_script, tmp_path):
    source = tmp_path / "notepad.grad"
    source.write_bytes(BOM + b"a = x^2\r\na + y\r\n")
    out = subprocess.run([gradcli_script, "eval", "-f", str(source), "--at", "x=1,y=2"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[0] == "f     = 3.000000000000"


def test_standard_input_with_a_byte_order_mark(gradcli_script):
    out = subprocess.run([gradcli_script, "diff", "-"], input=BOM + b"x^3", capture_output=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.decode() == "3*x^2\n"


def test_after_a_byte_order_mark_carets_still_point_at_the_error(run):
    result = run("eval", "-", "--at", "x=1", input="\ufeffx +* 2")
    assert result.exit_code == 2
    lines = result.stderr.splitlines()
    assert lines[1:3] == ["  x +* 2", "     ^"], lines


def test_a_byte_order_mark_inside_the_text_is_still_an_error(run):
    result = run("eval", "x\ufeff + 1", "--at", "x=1")
    assert result.exit_code == 2 and "\\ufeff" in result.stderr


def test_the_python_api_refuses_a_value_for_a_constant_too():
    import gradcli
    with pytest.raises(gradcli.GradcliError, match="an input cannot be named pi") as caught:
        gradcli.evaluate("sin(pi*x)", {"x": 0.5, "pi": 3.0})
    assert caught.value.kind == "input" and caught.value.names == ("pi",)
    assert gradcli.evaluate("e*x", {"x": 1.0}).value == 2.718281828459045


def test_differentiating_by_a_constant_says_it_is_one(run, reported):
    result = run("eval", "e*x", "--at", "x=1", "--wrt", "e")
    reported(result, 2, ["--wrt names e, which the expression does not read",
                         "hint: e is the constant e = 2.718281828459…, not an input; its inputs "
                         "are: x"])
