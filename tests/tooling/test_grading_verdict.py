"""The verdict outside the sandbox (posenc_helpers.grading: verdict, values, scan, record), on
cells written by hand: no kernel runs here (tests/course grades real submissions).

The expected values are worked out by hand: exercise "ex-w" asks for the wavelength of
dimension 301 at d_model = 512, which is pair 150, so 2 pi 10000**(300/512); exercise
"ex-l" asks for the rows of ``w`` in the order ``perm`` (``w[perm]``), with ``w`` and
``perm`` the data it gives.
"""

from __future__ import annotations

import functools
import json
import math
import re

import numpy as np
import pytest

from posenc_helpers import answer_cells
from posenc_helpers.grading import record, scan, values, verdict
from posenc_helpers.grading.values import RECORD_MIME
from tools.course import chapters_with_exercises

WAVELENGTH = 2 * math.pi * 10000.0 ** (300 / 512)
SPEC = "{'label': 'ex-w', 'check': 'check_dimension_wavelength', 'answers': ['w'], 'forbid': ['helper'], 'require': []}"
TEST_SOURCE = (
    "### BEGIN HIDDEN TESTS\nfrom posenc_helpers.grading import record as _record\n\n"
    f"_record.record({SPEC}, w, dimension=301, d_model=512)\n### END HIDDEN TESTS\n"
    "check_dimension_wavelength(w, dimension=301, d_model=512)"
)
SETUP = "import numpy as np\nfrom posenc_helpers import *\nfrom posenc_helpers.checks import *"
# the grader's run of the release recorded the question's literals and no answer
REFERENCE = {"ex-w": {"args": [None], "kwargs": {"dimension": 301, "d_model": 512}}}


def _cell(source, outputs=(), **nbgrader):
    meta = {"nbgrader": nbgrader} if nbgrader else {}
    return {"cell_type": "code", "metadata": meta, "source": source, "outputs": list(outputs)}


def _clean_report():
    """What an untouched kernel reports (this process has no IPython hooks to report)."""
    return {"hooks": [], "namespaces": record.kernel_report()["namespaces"]}


def _recorded(label, *args, kernel=None, **kwargs):
    payload = {
        "label": label,
        "args": [values.encode(a) for a in args],
        "kwargs": {k: values.encode(v) for k, v in kwargs.items()},
        "kernel": kernel if kernel is not None else _clean_report(),
    }
    return {"output_type": "display_data", "metadata": {}, "data": {RECORD_MIME: json.loads(json.dumps(payload))}}


def _notebook(answer_source, outputs, extra=()):
    return [
        _cell(SETUP),
        *extra,
        _cell(answer_source, grade_id="ex-w-answer", solution=True),
        _cell(TEST_SOURCE, outputs, grade_id="ex-w", grade=True, locked=True, points=2),
    ]


RELEASED = [SETUP, "w = None", TEST_SOURCE]


def _grade(cells, reference=REFERENCE):
    return verdict.grade(cells, RELEASED, reference=reference)


def test_a_correct_recorded_answer_earns_the_points():
    cells = _notebook(
        "w = 2 * np.pi * 10000 ** (300 / 512)", [_recorded("ex-w", WAVELENGTH, dimension=301, d_model=512)]
    )
    (found,) = _grade(cells).values()
    assert found.earned and not found.tampering
    assert found.line.startswith("ex-w: Correct:")


def test_a_wrong_answer_gets_the_checks_message_and_no_flag():
    cells = _notebook("w = 1.0", [_recorded("ex-w", 2 * math.pi * 10000.0 ** (301 / 512), dimension=301, d_model=512)])
    (found,) = _grade(cells).values()
    assert not found.earned and not found.tampering
    assert "Tampering" not in found.line and f"{WAVELENGTH:.3f}" not in found.line


def test_the_question_comes_from_the_release_not_from_the_kernel():
    """A kernel that records d_model=2 cannot change the question: the reference says 512."""
    wrong_question = 2 * math.pi * 10000.0 ** (0 / 2)
    cells = _notebook("w = 1.0", [_recorded("ex-w", wrong_question, dimension=1, d_model=2)])
    assert not _grade(cells)["ex-w"].earned


LAYOUT_SPEC = "{'label': 'ex-l', 'check': 'check_concat_readout', 'answers': ['w_concat'], 'forbid': [], 'require': []}"
LAYOUT_TEST = f"_record.record({LAYOUT_SPEC}, w_concat, w_interleaved)\ncheck_concat_readout(w_concat, w_interleaved)"


def test_given_data_come_from_the_reference_run_not_from_the_kernel():
    """An alias that zeroes the given matrix in the kernel (w = w_interleaved; w *= 0) and a
    "right" answer on the zeroed data earns nothing: the grader's own run gave the real data."""
    given = np.random.default_rng(7).normal(size=(8, 3))
    perm = np.r_[0:8:2, 1:8:2]
    reference = {"ex-l": {"args": [None, values.encode(given)], "kwargs": {}}}
    zeroed = np.zeros_like(given)
    cells = [
        _cell(SETUP),
        _cell("w = w_interleaved\nw *= 0\nw_concat = w_interleaved[perm]", grade_id="ex-l-answer", solution=True),
        _cell(LAYOUT_TEST, [_recorded("ex-l", zeroed[perm], zeroed)], grade_id="ex-l", grade=True, locked=True),
    ]
    released = [SETUP, "w_concat = None", LAYOUT_TEST]
    found = verdict.grade(cells, released, reference=reference)["ex-l"]
    assert not found.earned and not found.tampering
    cells[2]["outputs"] = [_recorded("ex-l", given[perm], zeroed)]  # right on the real data
    assert verdict.grade(cells, released, reference=reference)["ex-l"].earned


def test_the_released_call_says_which_arguments_are_answers():
    spec = verdict.released_spec(LAYOUT_TEST)
    assert spec is not None and spec.answer_args == ["0"] and spec.literals == {}
    spec = verdict.released_spec(TEST_SOURCE)
    assert spec is not None and spec.answer_args == ["0"] and spec.literals == {"dimension": 301, "d_model": 512}
    with pytest.raises(ValueError, match="answer"):
        verdict.released_spec(f"_record.record({SPEC}, *given, w)")


def test_a_placeholder_earns_nothing():
    cells = _notebook("w = None", [_recorded("ex-w", None, dimension=301, d_model=512)])
    found = _grade(cells)["ex-w"]
    assert not found.earned and not found.tampering and "not answered yet" in found.message


@pytest.mark.parametrize(
    ("outputs", "extra", "words"),
    [
        ([], (), "did not record the answer"),
        ([_recorded("ex-w", WAVELENGTH), _recorded("ex-w", WAVELENGTH)], (), "more than one record"),
        ([], (_cell("x = 1", [_recorded("ex-w", WAVELENGTH)]),), "a record outside its test cell"),
        ([_recorded("ex-w", WAVELENGTH), _recorded("ex-z", 1.0)], (), "records of exercises it does not have"),
    ],
    ids=["missing", "twice", "misplaced", "unknown"],
)
def test_a_missing_extra_or_misplaced_record_earns_nothing_and_is_flagged(outputs, extra, words):
    cells = _notebook("w = 2 * np.pi * 10000 ** (300 / 512)", outputs, extra)
    found = _grade(cells)["ex-w"]
    assert not found.earned
    assert found.line.startswith("Tampering suspected (ex-w): ") and words in found.line


def test_a_test_cell_that_failed_or_was_stopped_earns_nothing_without_a_flag():
    error = {"output_type": "error", "ename": "NameError", "evalue": "name 'w' is not defined", "traceback": []}
    found = _grade(_notebook("v = 3", [error]))["ex-w"]
    assert not found.earned and not found.tampering
    stopped = {"output_type": "stream", "name": "stderr", "text": "[grader] this cell ran longer than its limit\n"}
    found = _grade(_notebook("v = 3", [stopped]))["ex-w"]
    assert not found.earned and not found.tampering


def test_a_kernel_that_reports_a_replaced_check_or_a_hook_is_flagged():
    report = _clean_report()
    report["namespaces"]["numpy"]["allclose"] = "function __main__.<lambda> @ /tmp/ipykernel_1/1.py"
    cells = _notebook("w = 1.0", [_recorded("ex-w", WAVELENGTH, kernel=report)])
    assert "`numpy.allclose` was replaced" in _grade(cells)["ex-w"].line
    hooked = {**_clean_report(), "hooks": ["an IPython hook (input_transformers_post)"]}
    cells = _notebook("w = 1.0", [_recorded("ex-w", WAVELENGTH, kernel=hooked)])
    assert "input_transformers_post" in _grade(cells)["ex-w"].line
    cells = _notebook("w = 1.0", [_recorded("ex-w", WAVELENGTH, kernel={})])
    assert "no report of the kernel" in _grade(cells)["ex-w"].line


def test_a_changed_grading_environment_takes_every_point():
    cells = _notebook("w = 2 * np.pi * 10000 ** (300 / 512)", [_recorded("ex-w", WAVELENGTH)])
    found = verdict.grade(cells, RELEASED, reference=REFERENCE, environment_changed=True)["ex-w"]
    assert not found.earned and "grading environment changed" in found.line


def test_a_forbidden_helper_is_read_from_the_notebook_not_the_kernel():
    cells = _notebook("w = helper(301)", [_recorded("ex-w", WAVELENGTH)])
    found = _grade(cells)["ex-w"]
    assert not found.earned and not found.tampering and "calls `helper`" in found.message


@pytest.mark.parametrize(
    ("source", "words"),
    [
        ("w = getattr(ph, 'helper')(301)", "calls `helper`"),  # a literal name is read like a call
        ("w = getattr(ph, 'hel' + 'per')(301)", "a name it builds at run time (getattr)"),
        ("import operator\nw = operator.attrgetter('hel' + 'per')(ph)(301)", "a name it builds at run time"),
    ],
)
def test_a_forbidden_helper_looked_up_by_name_is_refused(source, words):
    """Before: ``getattr(ph, "apply_" + "rope")`` passed the forbid rule (issue 44); a name looked
    up from a string built at run time cannot be read, so an exercise that forbids helpers
    withholds its points, and says why without naming the helper."""
    found = _grade(_notebook(source, [_recorded("ex-w", WAVELENGTH)]))["ex-w"]
    assert not found.earned and words in found.message, found.message
    if "builds" in words:
        assert "helper" not in found.message


def test_getattr_with_a_name_of_the_student_s_own_is_fine_where_nothing_is_forbidden():
    spec = SPEC.replace("'forbid': ['helper']", "'forbid': []")
    test_source = TEST_SOURCE.replace(SPEC, spec)
    cells = [
        _cell(SETUP),
        _cell(
            "w = getattr(np, 'p' + 'i') * 0 + 2 * np.pi * 10000 ** (300 / 512)", grade_id="ex-w-answer", solution=True
        ),
        _cell(test_source, [_recorded("ex-w", WAVELENGTH)], grade_id="ex-w", grade=True, locked=True, points=2),
    ]
    assert verdict.grade(cells, [SETUP, "w = None", test_source], reference=REFERENCE)["ex-w"].earned


HONEST = [
    "w = 2 * np.pi * 10000 ** (300 / 512)",
    "k = np.arange(3)\nfreqs = 10000.0 ** (-2 * k / 6)\npe = np.empty(6)\npe[0::2] = np.sin(7 * freqs)",
    "%timeit np.sin(1.0)\nimport math\nw = math.tau",
    "def first(omega, tol):\n    t = np.arange(1, 10)\n    return int(t[0])",
    "import numpy as np",  # the same import as the release
    "from numpy import sin, cos\nfrom functools import partial",
    "import os\nprint(os.getcwd())\nfrom pathlib import Path\nPath('notes.txt').write_text('x')",
    "given = given.copy()\ngiven[0] = 5\ngiven.fill(0)",  # the data it gives, changed: harmless now
]


@pytest.mark.parametrize("source", HONEST)
def test_honest_code_is_not_flagged(source):
    assert scan.scan_cells([source], [SETUP]) == [[]]


@pytest.mark.parametrize(
    ("source", "words"),
    [
        ("get_ipython().input_transformers_post.append(f)", "get_ipython"),
        ("import posenc_helpers.checks._core as c\nc.CheckResult.__bool__ = lambda s: True", "_core"),
        ("from posenc_helpers.grading import record\nrecord.record = print", "posenc_helpers.grading"),
        ("np.allclose = lambda *a: True", "changes `np.allclose`"),
        ("check_dimension_wavelength = print", "redefines `check_dimension_wavelength`"),
        ("def sinusoidal_encoding(*a):\n    return 0", "redefines `sinusoidal_encoding`"),
        ("import sys\nsys.modules['x'] = 1", "imports `sys`"),
        ("exec('x = 1')", "exec"),
        ("!rm -rf /", "get_ipython"),
        ("(lambda: 0).__globals__['np'] = None", "__globals__"),
        ("import numpy as np_\nimport builtins", "imports `builtins`"),
        ("import math as np", "rebinds `np`"),
        ("import threading\nthreading.Thread(target=print).start()", "imports `threading`"),
    ],
)
def test_code_that_reaches_into_the_kernel_is_flagged(source, words):
    (found,) = scan.scan_cells([source], [SETUP])
    assert any(words in line for line in found), found


def test_recorded_values_are_plain_data():
    class Always(float):
        def __eq__(self, other):
            return True

        __hash__ = float.__hash__

    assert values.encode(Always(3.0)) == 3.0 and type(values.encode(Always(3.0))) is float
    assert values.encode(np.array(["a"], dtype=object)) == {"__unsupported__": "array of object"}
    assert values.encode(object()) == {"__unsupported__": "object"}
    for value in (np.float32(1.5), np.arange(6.0).reshape(2, 3), {("a", 0): [1, 2]}, (None, ...), 2**70, 1 + 2j):
        back = values.decode(json.loads(json.dumps(values.encode(value))))
        assert type(back) is type(value)
        if isinstance(value, np.ndarray):
            np.testing.assert_array_equal(back, value)
        else:
            assert back == value
    with pytest.raises(values.TooLarge):
        values.encode(np.zeros(values.MAX_BYTES // 8 + 1))


@pytest.mark.parametrize(
    "data",
    [[1, 2], {"__ndarray__": "", "dtype": "|O", "shape": [0]}, {"nothing": 1}, {}, {"__calls__": [3]}],
    ids=["bare-list", "object-array", "unknown-tag", "empty", "bad-calls"],
)
def test_malformed_values_are_refused(data):
    with pytest.raises(ValueError):
        values.decode(data)


def _closure(scale):
    def rotate(x, positions):
        print("debugging", x.shape)  # a print does not disturb the log
        return scale * x + positions[:, None]

    return rotate


@pytest.mark.parametrize(
    "function",
    [_closure(2.0), functools.partial(lambda s, x, positions: s * x + positions[:, None], 2.0), np.add],
    ids=["closure-that-prints", "partial", "numpy-ufunc"],
)
def test_any_function_the_student_can_call_is_replayed_from_its_log(function):
    """The kernel's check calls the function through a CallLog; the verdict gets its calls back
    in order, with the same results, and refuses a call the kernel's check did not make."""
    x, positions = np.arange(6.0).reshape(3, 2), np.array([0.0, 1.0, 2.0])
    logged = values.CallLog(function)
    args = (x, positions) if function is not np.add else (x, x)
    first = logged(*args)
    replay = values.decode(json.loads(json.dumps(values.encode(logged))))
    np.testing.assert_array_equal(replay(*args), first)
    with pytest.raises(values.ReplayMismatch, match="more often"):
        replay(*args)
    other = values.decode(json.loads(json.dumps(values.encode(logged))))
    with pytest.raises(values.ReplayMismatch, match="other arguments"):
        other(x + 1, positions)


def test_a_replayed_function_raises_what_it_raised_and_changes_what_it_changed():
    def doubles_in_place(x):
        x *= 2
        return None

    def fails(x):
        raise ZeroDivisionError("no")

    x = np.ones(3)
    logged = values.CallLog(doubles_in_place)
    logged(x)
    replay = values.decode(json.loads(json.dumps(values.encode(logged))))
    y = np.ones(3)
    replay(y)
    np.testing.assert_array_equal(y, [2.0, 2.0, 2.0])
    logged = values.CallLog(fails)
    with pytest.raises(ZeroDivisionError):
        logged(x)
    replay = values.decode(json.loads(json.dumps(values.encode(logged))))
    with pytest.raises(values.StudentError, match="no") as raised:
        replay(x)
    assert type(raised.value).__name__ == "ZeroDivisionError"


def test_a_function_answer_is_graded_on_the_kernels_calls(monkeypatch):
    """record() runs the exercise's own check in the kernel with the function logged; the
    verdict replays the log through the package's check: a correct ALiBi bias earns, and a
    log whose calls the package's check does not make is tampering."""
    from posenc_helpers import alibi_bias

    shown = []
    monkeypatch.setattr("IPython.display.display", lambda obj, raw=False: shown.append(obj))
    spec = {"label": "ex-a", "check": "check_conforming_alibi", "answers": ["fixed"], "forbid": [], "require": []}
    record.record(spec, lambda n_heads, seq_len: alibi_bias(n_heads, seq_len))
    payload = shown[0][RECORD_MIME]
    source = f"_record.record({spec!r}, fixed)\ncheck_conforming_alibi(fixed)"
    cells = [
        _cell(SETUP),
        _cell("fixed = my_alibi", grade_id="ex-a-answer", solution=True),
        _cell(source, [{"output_type": "display_data", "metadata": {}, "data": {RECORD_MIME: payload}}],
              grade_id="ex-a", grade=True, locked=True),
    ]  # fmt: skip
    reference = {"ex-a": {"args": [None], "kwargs": {}}}
    assert verdict.grade(cells, [SETUP, source], reference=reference)["ex-a"].earned
    payload["args"][0]["__calls__"] = payload["args"][0]["__calls__"][1:]  # one call left out
    found = verdict.grade(cells, [SETUP, source], reference=reference)["ex-a"]
    assert not found.earned and "called the function differently" in found.line


def test_bad_input_names_the_argument():
    with pytest.raises(TypeError, match="test_source"):
        verdict.released_spec(3)
    with pytest.raises(TypeError, match="source"):
        verdict.source_digest(None)
    with pytest.raises(TypeError, match="released"):
        verdict.grade([], "w = None", reference={})


@pytest.mark.parametrize("path", chapters_with_exercises(), ids=lambda p: p.stem)
def test_no_model_answer_of_any_chapter_looks_like_tampering(path):
    """Read, not run (chapter 11 trains): the book's model answers, as a student would submit
    them, raise no flag, and every test cell names a check the grader can find."""
    from posenc_helpers import checks
    from tools.course import course_notebook

    nb = course_notebook(json.loads(path.read_text()), int(path.name[:2]))
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    meta = [c.get("metadata", {}).get("nbgrader", {}) for c in code]
    text = ["".join(c["source"]) for c in code]
    answers = [
        re.sub(r"### (BEGIN|END) SOLUTION\n?", "", t) for t, m in zip(text, meta, strict=True) if m.get("solution")
    ]
    book = [t for t, m in zip(text, meta, strict=True) if not m.get("solution") and not m.get("grade")]
    assert answers and all(found == [] for found in scan.scan_cells(answers, book))
    specs = [verdict.released_spec(t) for t, m in zip(text, meta, strict=True) if m.get("grade")]
    assert specs and all(spec is not None and callable(getattr(checks, spec.check)) for spec in specs)


def test_the_answer_cell_is_the_latest_that_assigns_an_answer_and_its_names_include_aliases():
    history = ["import numpy as np", "pe = sinusoidal_encoding([7], 6)[0]", "x = 1"]
    assert "sinusoidal_encoding" in answer_cells.names_used(answer_cells.answer_cell(history, ["pe"]))
    later = [*history, "pe = np.sin(7 * w)"]  # answered again, by hand
    assert "sinusoidal_encoding" not in answer_cells.names_used(answer_cells.answer_cell(later, ["pe"]))
    assert "alibi_slopes" in answer_cells.names_used(
        answer_cells.answer_cell(["def f(t):\n    return alibi_slopes(8) * t"], ["f"])
    )
    aliased = ["from posenc_helpers import alibi_slopes as s\nslopes = s(20)"]
    assert "alibi_slopes" in answer_cells.names_used(answer_cells.answer_cell(aliased, ["slopes"]))
    assert answer_cells.answer_cell(["y = 1"], ["pe"]) == ""


def test_the_hidden_tests_the_course_writes_are_the_ones_the_verdict_and_the_runner_read():
    """One format for the hidden test (issue 49): what tools/course writes is read back by the
    verdict as the released spec, written by hand here, and holds the call the runner keeps
    out of the kernel's history."""
    from posenc_helpers.grading import execute
    from tools.course.nbgrader import hidden_tests

    exercise = {"answer": ["w"], "forbid": ["helper"], "require": []}
    source = hidden_tests("check_dimension_wavelength(w, dimension=301, d_model=512)", "ex-w", exercise)
    spec = verdict.released_spec(source)
    assert spec is not None
    assert (spec.label, spec.check, spec.answers, spec.forbid) == (
        "ex-w",
        "check_dimension_wavelength",
        ["w"],
        ["helper"],
    )
    assert spec.literals == {"dimension": 301, "d_model": 512} and spec.answer_args == ["0"]
    assert "from posenc_helpers.grading import record as _record" in source
    assert execute._HIDDEN_TEST in source and execute._HIDDEN_TEST == "_record.record("


def test_make_grade_names_a_sandbox_that_did_not_finish_or_had_no_budget(tmp_path, monkeypatch):
    """make grade printed only each submission's time: a notebook whose runner was killed scored 0
    with no line saying why (CI: 'mistakes' lost its layout points and its feedback). Now the
    autograded notebook's note from SandboxedExecute is read back and printed."""
    from posenc_helpers.grading import cgroups
    from posenc_helpers.grading.nbgrader import SANDBOX_METADATA
    from tools.course import grade

    folder = tmp_path / "autograded" / "ann" / "ch04"
    folder.mkdir(parents=True)
    note = {"budget": "none", "peak_memory_bytes": None, "oom_kills": 0, "seconds": 3.0,
            "problem": "the notebook did not finish (the grader's runner ended with status -9)"}  # fmt: skip
    (folder / "04_x.ipynb").write_text(json.dumps({"cells": [], "metadata": {SANDBOX_METADATA: note}}))
    monkeypatch.setattr(cgroups, "available", lambda: None)
    assert grade.sandbox_notes(tmp_path, "ch04", "ann") == [
        "04_x: the notebook did not finish (the grader's runner ended with status -9)",
        "04_x: its sandbox ran without a control group (no budget for the whole sandbox)",
    ]
    monkeypatch.setattr(cgroups, "available", lambda: "no cgroups here")
    note.update(budget="none", problem=None)
    (folder / "04_x.ipynb").write_text(json.dumps({"cells": [], "metadata": {SANDBOX_METADATA: note}}))
    assert grade.sandbox_notes(tmp_path, "ch04", "ann") == []
    assert grade.sandbox_notes(tmp_path, "ch04", "bob") == []
