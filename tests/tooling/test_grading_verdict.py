"""The course's grading outside the kernel (posenc_helpers.checks._record and _verdict), on
cells written by hand: no kernel runs here (tests/course grades real submissions).

The expected values are worked out by hand: exercise "ex-w" asks for the wavelength of
dimension 301 at d_model = 512, which is pair 150, so 2 pi 10000**(300/512).
"""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest

from posenc_helpers.checks import _record, _verdict
from posenc_helpers.checks._record import MIME
from tools.course import chapters_with_exercises

WAVELENGTH = 2 * math.pi * 10000.0 ** (300 / 512)
SPEC = "{'label': 'ex-w', 'check': 'check_dimension_wavelength', 'answers': ['w'], 'forbid': ['helper'], 'require': []}"
TEST_SOURCE = (
    "### BEGIN HIDDEN TESTS\nfrom posenc_helpers.checks import _record\n\n"
    f"_record.record({SPEC}, w, dimension=301, d_model=512)\n### END HIDDEN TESTS\n"
    "check_dimension_wavelength(w, dimension=301, d_model=512)"
)
SETUP = "import numpy as np\nfrom posenc_helpers import *\nfrom posenc_helpers.checks import *"


def _cell(source, outputs=(), **nbgrader):
    meta = {"nbgrader": nbgrader} if nbgrader else {}
    return {"cell_type": "code", "metadata": meta, "source": source, "outputs": list(outputs)}


def _clean_report():
    """What an untouched kernel reports (this process has no IPython hooks to report)."""
    return {"hooks": [], "namespaces": _record.kernel_report()["namespaces"]}


def _recorded(label, answer, *, kernel=None, **kwargs):
    payload = {
        "label": label,
        "args": [_record.encode(answer)],
        "kwargs": {k: _record.encode(v) for k, v in kwargs.items()},
        "kernel": kernel if kernel is not None else _clean_report(),
    }
    return {"output_type": "display_data", "metadata": {}, "data": {MIME: json.loads(json.dumps(payload))}}


def _notebook(answer_source, outputs, extra=()):
    return [
        _cell(SETUP),
        *extra,
        _cell(answer_source, grade_id="ex-w-answer", solution=True),
        _cell(TEST_SOURCE, outputs, grade_id="ex-w", grade=True, locked=True, points=2),
    ]


RELEASED = [SETUP, "w = None", "check_dimension_wavelength(w, dimension=301, d_model=512)"]


def test_a_correct_recorded_answer_earns_the_points():
    cells = _notebook(
        "w = 2 * np.pi * 10000 ** (300 / 512)", [_recorded("ex-w", WAVELENGTH, dimension=301, d_model=512)]
    )
    (verdict,) = _verdict.grade(cells, RELEASED).values()
    assert verdict.earned and not verdict.tampering
    assert verdict.line.startswith("ex-w: Correct:")


def test_a_wrong_answer_gets_the_checks_message_and_no_flag():
    cells = _notebook("w = 1.0", [_recorded("ex-w", 2 * math.pi * 10000.0 ** (301 / 512), dimension=301, d_model=512)])
    (verdict,) = _verdict.grade(cells, RELEASED).values()
    assert not verdict.earned and not verdict.tampering
    assert "Tampering" not in verdict.line and f"{WAVELENGTH:.3f}" not in verdict.line


def test_the_released_literals_win_over_the_recorded_ones():
    """A kernel that records d_model=2 cannot change the question: the cell says 512."""
    wrong_question = 2 * math.pi * 10000.0 ** (0 / 2)
    cells = _notebook("w = 1.0", [_recorded("ex-w", wrong_question, dimension=1, d_model=2)])
    assert not _verdict.grade(cells, RELEASED)["ex-w"].earned


def test_a_placeholder_earns_nothing():
    cells = _notebook("w = None", [_recorded("ex-w", None, dimension=301, d_model=512)])
    verdict = _verdict.grade(cells, RELEASED)["ex-w"]
    assert not verdict.earned and not verdict.tampering and "not answered yet" in verdict.message


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
    verdict = _verdict.grade(cells, RELEASED)["ex-w"]
    assert not verdict.earned
    assert verdict.line.startswith("Tampering suspected (ex-w): ") and words in verdict.line


def test_a_test_cell_that_failed_before_recording_earns_nothing_without_a_flag():
    error = {"output_type": "error", "ename": "NameError", "evalue": "name 'w' is not defined", "traceback": []}
    verdict = _verdict.grade(_notebook("v = 3", [error]), RELEASED)["ex-w"]
    assert not verdict.earned and not verdict.tampering


def test_a_kernel_that_reports_a_replaced_check_or_a_hook_is_flagged():
    report = _clean_report()
    report["namespaces"]["numpy"]["allclose"] = "function __main__.<lambda> @ /tmp/ipykernel_1/1.py"
    cells = _notebook("w = 1.0", [_recorded("ex-w", WAVELENGTH, kernel=report)])
    assert "`numpy.allclose` was replaced" in _verdict.grade(cells, RELEASED)["ex-w"].line
    hooked = {**_clean_report(), "hooks": ["an IPython hook (input_transformers_post)"]}
    cells = _notebook("w = 1.0", [_recorded("ex-w", WAVELENGTH, kernel=hooked)])
    assert "input_transformers_post" in _verdict.grade(cells, RELEASED)["ex-w"].line
    cells = _notebook("w = 1.0", [_recorded("ex-w", WAVELENGTH, kernel={})])
    assert "no report of the kernel" in _verdict.grade(cells, RELEASED)["ex-w"].line


def test_a_forbidden_helper_is_read_from_the_notebook_not_the_kernel():
    cells = _notebook("w = helper(301)", [_recorded("ex-w", WAVELENGTH)])
    verdict = _verdict.grade(cells, RELEASED)["ex-w"]
    assert not verdict.earned and not verdict.tampering and "calls `helper`" in verdict.message


HONEST = [
    "w = 2 * np.pi * 10000 ** (300 / 512)",
    "k = np.arange(3)\nfreqs = 10000.0 ** (-2 * k / 6)\npe = np.empty(6)\npe[0::2] = np.sin(7 * freqs)",
    "%timeit np.sin(1.0)\nimport math\nw = math.tau",
    "def first(omega, tol):\n    t = np.arange(1, 10)\n    return int(t[0])",
    "import numpy as np",  # the same import as the release
]


@pytest.mark.parametrize("source", HONEST)
def test_honest_code_is_not_flagged(source):
    assert _verdict.scan_cells([source], [SETUP], ["given = np.ones(3)"]) == [[]]


@pytest.mark.parametrize(
    ("source", "words"),
    [
        ("get_ipython().input_transformers_post.append(f)", "get_ipython"),
        ("import posenc_helpers.checks._core as c\nc.CheckResult.__bool__ = lambda s: True", "_core"),
        ("np.allclose = lambda *a: True", "changes `np.allclose`"),
        ("check_dimension_wavelength = print", "redefines `check_dimension_wavelength`"),
        ("def sinusoidal_encoding(*a):\n    return 0", "redefines `sinusoidal_encoding`"),
        ("import sys\nsys.modules['x'] = 1", "imports `sys`"),
        ("exec('x = 1')", "exec"),
        ("given[0] = 5", "changes the given `given`"),
        ("given.fill(0)", "changes the given `given` in place"),
        ("given = np.zeros(3)", "replaces the given `given`"),
        ("np.multiply(2, 3, out=given)", "out="),
        ("!rm -rf /", "get_ipython"),
        ("(lambda: 0).__globals__['np'] = None", "__globals__"),
        ("import numpy as np_\nimport builtins", "imports `builtins`"),
        ("import math as np", "rebinds `np`"),
    ],
)
def test_code_that_reaches_into_the_kernel_is_flagged(source, words):
    (found,) = _verdict.scan_cells([source], [SETUP], ["given = np.ones(3)"])
    assert any(words in line for line in found), found


def test_recorded_values_are_plain_data():
    class Always(float):
        def __eq__(self, other):
            return True

        __hash__ = float.__hash__

    assert _record.encode(Always(3.0)) == 3.0 and type(_record.encode(Always(3.0))) is float
    assert _record.encode(np.array(["a"], dtype=object)) == {"__unsupported__": "array of object"}
    assert _record.encode(object()) == {"__unsupported__": "object"}
    for value in (np.float32(1.5), np.arange(6.0).reshape(2, 3), {("a", 0): [1, 2]}, (None, ...), 2**70, 1 + 2j):
        back = _verdict._decode(json.loads(json.dumps(_record.encode(value))), [])
        assert type(back) is type(value)
        if isinstance(value, np.ndarray):
            np.testing.assert_array_equal(back, value)
        else:
            assert back == value


@pytest.mark.parametrize(
    "data",
    [[1, 2], {"__ndarray__": "", "dtype": "|O", "shape": [0]}, {"nothing": 1}, {}],
    ids=["bare-list", "object-array", "unknown-tag", "empty"],
)
def test_malformed_values_are_refused(data):
    with pytest.raises(ValueError):
        _verdict._decode(data, [])


def test_a_recorded_function_runs_in_its_own_process():
    record = _record.encode(lambda x: x * 2)
    proxy = _verdict._decode(json.loads(json.dumps(record)), [])
    try:
        assert proxy(21) == 42
        with pytest.raises(Exception, match="unsupported operand"):
            proxy(None)
    finally:
        proxy.close()


def test_bad_input_names_the_argument():
    with pytest.raises(TypeError, match="test_source"):
        _verdict.released_spec(3)
    with pytest.raises(TypeError, match="source"):
        _verdict.source_digest(None)
    with pytest.raises(TypeError, match="released"):
        _verdict.grade([], "w = None")


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
    given = [t for t, m in zip(text, meta, strict=True) if m.get("locked") and not m.get("grade")]
    assert answers and all(found == [] for found in _verdict.scan_cells(answers, book, given))
    specs = [_verdict.released_spec(t) for t, m in zip(text, meta, strict=True) if m.get("grade")]
    assert specs and all(spec is not None and callable(getattr(checks, spec.check)) for spec in specs)


def test_a_recorded_function_keeps_its_name_and_the_helpers_it_calls(tmp_path, monkeypatch):
    """A function that calls another function of the notebook and a helper of the package: the
    record names the function, and the worker finds both again (6 = 2 * floor(3.7) * 1)."""
    (tmp_path / "cell.py").write_text(
        "import numpy as np\nfrom posenc_helpers import round_to_bfloat16\n\ndef double(x):\n    return 2 * x\n\n"
        "def answer(s):\n    return int(double(np.floor(s)) * round_to_bfloat16(np.array(1.0)))\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    import importlib

    record = _record.encode(importlib.import_module("cell").answer)
    assert record["__function__"]["name"] == "answer"
    proxy = _verdict._decode(json.loads(json.dumps(record)), [])
    try:
        assert proxy(3.7) == 6
    finally:
        proxy.close()
