"""Chapter 14's exercises, whose answers are functions, graded by nbgrader in the sandbox.

Exercise 14.1 asks for a RoPE function ``fixed_rope(x, positions)`` (2 points) and 14.2
for an ALiBi bias ``fixed_alibi(n_heads, seq_len)`` (3 points); the check hands each to
the conformance kit. The kernel's check calls the function and logs each call; the
verdict, outside the sandbox, replays the log through the package's own check
(:mod:`posenc_helpers.grading.values`). So any function a student can call is an
answer: a closure, a ``functools.partial``, ``sin`` and ``cos`` imported from numpy,
one that prints while it works. Before (issue 37) each of those got 0, with
``NameError``, ``'_Unsupported' object is not callable`` or ``JSONDecodeError``, while
the student's own check said "Correct".

The function used to run in a worker process with the grader's rights, where it could
plant a ``.pth`` for every later submission and send the grader's environment, the
gradebook and classmates' notebooks back through its exception text. Here the same
attacks run in the sandbox and are followed, in the same batch, by a blank canary (0)
and honest submissions (every point). The answers are worked out from chapter 08's
slope rule and chapter 07's half layout, written independently of the kit.
"""

from __future__ import annotations

import html
import json
import os
import shutil
import time
from pathlib import Path

import pytest

from posenc_helpers.grading import sandbox
from tools.course import run_nbgrader, write_course

if sandbox.available() is not None and os.environ.get("POSENC_REQUIRE_SANDBOX"):
    raise RuntimeError(f"POSENC_REQUIRE_SANDBOX is set but there is no sandbox here: {sandbox.available()}")
pytestmark = pytest.mark.skipif(sandbox.available() is not None, reason=f"no sandbox: {sandbox.available()}")

CHAPTER = Path(__file__).resolve().parents[2] / "notebooks" / "14_positional_bugs_museum.ipynb"
ASSIGNMENT = "ch14"
POINTS = {"ex-14-partial-port": 2.0, "ex-14-alibi-any-heads": 3.0}
NOTHING = dict.fromkeys(POINTS, 0.0)
MARKER = f"posenc{os.getpid() % 10000:04d}"
SECRET = f"grader-secret-{MARKER}"

# RoPE on the first 8 of 16 features, half layout, frequencies over the rotated width (chapter 07)
CLOSURE_ROPE = """from numpy import sin, cos

def make_rope(base, rotated):
    def rope(x, positions):
        half = rotated // 2
        freq = base ** (-np.arange(half) * 2.0 / rotated)
        angle = np.asarray(positions, dtype=float)[:, None] * freq
        a, b, rest = x[..., :half], x[..., half:rotated], x[..., rotated:]
        print("rope called on", x.shape)  # a print while it works
        return np.concatenate([a * cos(angle) - b * sin(angle), a * sin(angle) + b * cos(angle), rest], axis=-1)
    return rope

fixed_rope = make_rope(10000.0, 8)
"""
PARTIAL_ROPE = """import functools

def rope_of(x, positions, base, rotated):
    half = rotated // 2
    freq = base ** (-np.arange(half) * 2.0 / rotated)
    angle = np.asarray(positions, dtype=float)[:, None] * freq
    a, b, rest = x[..., :half], x[..., half:rotated], x[..., rotated:]
    return np.concatenate([a * np.cos(angle) - b * np.sin(angle), a * np.sin(angle) + b * np.cos(angle), rest], -1)

fixed_rope = functools.partial(rope_of, base=10000.0, rotated=8)
"""
# ALiBi: 2**(-8h/n) for a power of two n; else the lower power's slopes, then every other slope of
# the next power (chapter 08)
ALIBI = """def geometric(n):
    return 2.0 ** (-8.0 * np.arange(1, n + 1) / n)

def slopes_for(n_heads):
    low = 2 ** int(np.floor(np.log2(n_heads)))
    extra = geometric(2 * low)[0::2][: n_heads - low]
    return np.concatenate([geometric(low), extra])

fixed_alibi = lambda n_heads, seq_len: -slopes_for(n_heads)[:, None, None] * np.abs(
    np.arange(seq_len)[:, None] - np.arange(seq_len)[None, :])
"""
PARTIAL_ALIBI = """import functools

def bias(sign, n_heads, seq_len):
    low = 2 ** int(np.floor(np.log2(n_heads)))
    slopes = 2.0 ** (-8.0 * np.arange(1, low + 1) / low)
    extra = (2.0 ** (-8.0 * np.arange(1, 2 * low + 1) / (2 * low)))[0::2][: n_heads - low]
    distance = np.abs(np.arange(seq_len)[:, None] - np.arange(seq_len)[None, :])
    return sign * np.concatenate([slopes, extra])[:, None, None] * distance

fixed_alibi = functools.partial(bias, -1.0)
"""


def _attacks(course: Path) -> dict[str, dict[str, str]]:
    """Functions that attack the grader when the check calls them (they conform to nothing)."""
    return {
        "10-fn-pth": {
            "ex-14-partial-port-answer": "import os, numpy\n"
            "def fixed_rope(x, positions):\n"
            f"    open(os.path.join(os.path.dirname(os.path.dirname(numpy.__file__)), 'zz_{MARKER}.pth'), 'w')"
            ".write('import sys')\n"
            "    return x\n"
        },
        "11-fn-snoop": {
            "ex-14-partial-port-answer": "import os, glob\n"
            "def fixed_rope(x, positions):\n"
            "    seen = [dict(os.environ)]\n"
            f"    seen += sorted(glob.glob({str(course) + '/**/*.ipynb'!r}, recursive=True))\n"
            f"    seen += [open(p).read()[:2000] for p in glob.glob({str(course) + '/submitted/*/ch14/*.ipynb'!r})]\n"
            f"    seen += [os.path.exists({str(course) + '/gradebook.db'!r})]\n"
            "    raise RuntimeError(repr(seen))\n",
            "ex-14-alibi-any-heads-answer": "import sys\n"
            "def fixed_alibi(n_heads, seq_len):\n"
            "    raise RuntimeError(repr(sys.argv) + repr(sorted(sys.modules))[:3000])\n",
        },
    }


def _submit(course: Path, student: str, edits: dict[str, str]) -> None:
    release = course / "release" / ASSIGNMENT / CHAPTER.name
    nb = json.loads(release.read_text())
    for cell in nb["cells"]:
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") in edits:
            cell["source"] = edits[cell["metadata"]["nbgrader"]["grade_id"]]
    folder = course / "submitted" / student / ASSIGNMENT
    folder.mkdir(parents=True)
    (folder / CHAPTER.name).write_text(json.dumps(nb, indent=1))


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    from tools.course import grade

    course = tmp_path_factory.mktemp("course14")
    write_course(course, [CHAPTER])
    patch = pytest.MonkeyPatch()
    patch.setenv("POSENC_TEST_SECRET", SECRET)
    batch = {
        **_attacks(course),
        "90-canary": {},
        "95-honest-closure": {"ex-14-partial-port-answer": CLOSURE_ROPE, "ex-14-alibi-any-heads-answer": ALIBI},
        "96-honest-partial": {"ex-14-partial-port-answer": PARTIAL_ROPE, "ex-14-alibi-any-heads-answer": PARTIAL_ALIBI},
    }
    for student, edits in batch.items():
        _submit(course, student, edits)
    start = time.perf_counter()
    code = grade.main([ASSIGNMENT, "--course", str(course), "--jobs", "1", "--timeout", "20"])
    seconds = time.perf_counter() - start
    run_nbgrader(["generate_feedback", ASSIGNMENT], course)
    yield {"course": course, "code": code, "seconds": seconds, "students": sorted(batch)}
    patch.undo()
    shutil.rmtree(course, ignore_errors=True)


def _scores(course: Path, student: str) -> dict[str, float]:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        return {g: gradebook.find_grade(g, CHAPTER.stem, ASSIGNMENT, student).score for g in POINTS}


def _feedback(course: Path, student: str) -> str:
    return html.unescape((course / "feedback" / student / ASSIGNMENT / f"{CHAPTER.stem}.html").read_text())


def test_honest_function_answers_earn_every_point_in_every_form(graded):
    assert graded["code"] == 0
    for student in ("95-honest-closure", "96-honest-partial"):
        assert _scores(graded["course"], student) == POINTS, student
        assert "Tampering" not in _feedback(graded["course"], student)
    assert "rope called on" in _feedback(graded["course"], "95-honest-closure")  # its prints are kept


def test_functions_that_attack_the_grader_earn_nothing_and_change_nothing(graded):
    import numpy

    course = graded["course"]
    for student in ("10-fn-pth", "11-fn-snoop", "90-canary"):
        assert _scores(course, student) == NOTHING, student
    assert not (Path(numpy.__file__).parents[1] / f"zz_{MARKER}.pth").exists()


def test_a_function_sends_nothing_of_the_grader_or_the_class_back(graded):
    seen = _feedback(graded["course"], "11-fn-snoop")
    assert "raised an exception when the kit called it" in seen  # its message does come back
    assert SECRET not in seen and "POSENC_TEST_SECRET" not in seen
    assert "95-honest" not in seen and "make_rope" not in seen  # no classmate's notebook
    assert "--worker" not in seen  # the old worker process, which ran with the grader's rights
