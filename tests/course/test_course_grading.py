"""nbgrader grades a hostile class of chapter 04, each submission in its own sandbox.

``make course`` (tools/course) turns the chapter into an nbgrader assignment; here
students submit it and ``make grade`` (tools/course/grade.py, which runs ``nbgrader
autograde`` with the course's sandboxed preprocessors) and ``nbgrader
generate_feedback`` run on the lot. Chapter 04 has three autograded exercises worth
2, 2 and 3 points (7) and one written answer (graded by hand, 2 points). The expected
scores are worked out from those points.

Two batches, as an instructor would grade them:

* **the attacks on the grader** (``_chapter04.hostile``: a ``.pth`` and a ``.pyc``
  planted in the grading environment, the gradebook and the classmates' notebooks
  opened by their paths, a daemon that outlives its notebook, a flood of processes, a
  memory hog), graded one at a time in this order and followed, in the same batch, by
  a blank canary (0) and an honest submission (every point). Before the sandbox the
  ``.pth`` gave every later submission 7/7 and the daemon rewrote the gradebook after
  ``nbgrader autograde`` had exited; here each earns 0, the grading environment's
  files are the same before and after (checksummed), no process of the batch is left,
  and the batch does not wait for the daemon;
* **a class** (one at a time here, since ``make test`` gives this lane one core; two
  of them again with ``JOBS=2`` at the end): honest submissions (right, untouched, with mistakes, with
  a helper shortcut and an endless loop, right in the forms of ``_chapter04.honest``:
  50 MB of prints, a loop that catches KeyboardInterrupt, an import of os, a function
  of the student's own), a right answer on data changed through an alias, and the
  in-kernel tampering kinds of ``_chapter04.TAMPERING`` (0 and flagged once per
  exercise).

Slow (each submission runs the whole chapter in a sandbox): ``make test-course``.
"""

from __future__ import annotations

import hashlib
import html
import json
import os
import re
import shutil
import sys
import time
from pathlib import Path

import pytest
from _chapter04 import CHAPTER, POINTS, SHORTCUT, TAMPERING, honest, hostile
from _chapter04 import CORRECT as ANSWERS

from posenc_helpers.grading import runtime, sandbox
from tools.course import run_nbgrader, write_course

if sandbox.available() is not None and os.environ.get("POSENC_REQUIRE_SANDBOX"):
    raise RuntimeError(f"POSENC_REQUIRE_SANDBOX is set but there is no sandbox here: {sandbox.available()}")
pytestmark = pytest.mark.skipif(sandbox.available() is not None, reason=f"no sandbox: {sandbox.available()}")

ASSIGNMENT = "ch04"
MARKER = f"posenc{os.getpid() % 10000:04d}"  # names this run's planted files and stray processes
SECRET = f"grader-secret-{MARKER}"  # in the grader's environment; must reach no feedback
CORRECT = {f"{label}-answer": answer for label, answer in ANSWERS.items()}  # by nbgrader grade_id
SWAPPED = CORRECT["ex-04-row-answer"].replace("np.sin(7 * w), np.cos(7 * w)", "np.cos(7 * w), np.sin(7 * w)")
FULL = dict(POINTS)
NOTHING = dict.fromkeys(POINTS, 0.0)

CLASS = {
    # every answer right: every autograded point
    "correct": dict(CORRECT),
    # the release as handed out: nothing
    "untouched": {},
    # one mistake the check names, one answer left out that prints "Correct:" instead
    "mistakes": {
        **CORRECT,
        "ex-04-row-answer": SWAPPED,
        "ex-04-wavelength-answer": 'wavelength_301 = None\nprint("Correct: ")',
    },
    # the checks redefined, and a test cell edited to check nothing
    "tricks": {
        "ex-04-row-answer": "pe_7 = np.zeros(6)\ncheck_encoding_row = lambda *args, **kwargs: 'Correct: yes'",
        "ex-04-wavelength": "wavelength_301 = 1.0\nprint('Correct: ')",
        "ex-04-layout-answer": "w_concat = np.zeros((8, 3))\ncheck_concat_readout = print",
    },
    # a helper call instead of the formula, and an endless loop
    "shortcut-and-loop": {
        **CORRECT,
        "ex-04-row-answer": SHORTCUT,
        "ex-04-wavelength-answer": "while True:\n    pass",
    },
    # right answers in the forms an honest student writes them (prints, a helper, os, Ctrl-C loop)
    "honest-forms": {**CORRECT, **honest("class")},
    # the given matrix zeroed through an alias, and the "right" read-out of the zeroed matrix
    "alias": {**CORRECT, "ex-04-layout-answer": "w = w_interleaved\nw *= 0\nw_concat = w_interleaved[perm]"},
    # the first exercise's test cell deleted, or its grade_id changed, the answers right (issue 44)
    "test-deleted": {**CORRECT, "ex-04-row-delete": ""},
    "test-renamed": {**CORRECT, "ex-04-row-rename": "ex-04-row-mine"},
}
CLASS.update({f"tamper-{kind}": {"ex-04-row-answer": source} for kind, source in TAMPERING.items()})
EXPECTED = {
    "correct": FULL,
    "untouched": NOTHING,
    "mistakes": {"ex-04-row": 0.0, "ex-04-wavelength": 0.0, "ex-04-layout": 3.0},
    "tricks": NOTHING,
    "shortcut-and-loop": {"ex-04-row": 0.0, "ex-04-wavelength": 0.0, "ex-04-layout": 3.0},
    "honest-forms": FULL,
    "alias": {"ex-04-row": 2.0, "ex-04-wavelength": 2.0, "ex-04-layout": 0.0},
    "test-deleted": {"ex-04-row": 0.0, "ex-04-wavelength": 2.0, "ex-04-layout": 3.0},
    "test-renamed": {"ex-04-row": 0.0, "ex-04-wavelength": 2.0, "ex-04-layout": 3.0},
    **{f"tamper-{kind}": NOTHING for kind in TAMPERING},
}
HONEST = ["correct", "untouched", "mistakes", "shortcut-and-loop", "honest-forms", "alias", "test-deleted"]
TAMPERED = {student for student in CLASS if student.startswith("tamper-")} | {"tricks"}


def _submit(course: Path, student: str, edits: dict[str, str]) -> None:
    """The release with the edited cells (an ``"<grade_id>+extra"`` key adds a cell after it,
    ``"<grade_id>-delete"`` drops the cell, ``"<grade_id>-rename"`` gives it another grade_id)."""
    release = course / "release" / ASSIGNMENT / CHAPTER.name
    nb = json.loads(release.read_text())
    cells = []
    for cell in nb["cells"]:
        grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if f"{grade_id}-delete" in edits:
            continue
        if f"{grade_id}-rename" in edits:
            cell["metadata"]["nbgrader"]["grade_id"] = edits[f"{grade_id}-rename"]
        if grade_id in edits:
            cell["source"] = edits[grade_id]
        cells.append(cell)
        if f"{grade_id}+extra" in edits:
            cells.append({"cell_type": "code", "execution_count": None, "id": f"extra-{len(cells)}",
                          "metadata": {}, "outputs": [], "source": edits[f"{grade_id}+extra"]})  # fmt: skip
    nb["cells"] = cells
    folder = course / "submitted" / student / ASSIGNMENT
    folder.mkdir(parents=True)
    (folder / CHAPTER.name).write_text(json.dumps(nb, indent=1))


def _checksum() -> str:
    """SHA-256 over the content of every file of the grading environment and the package, but
    bytecode caches (which any process importing a module the first time writes: the other
    lanes of make test run beside this one; the planted .pyc is looked for by name)."""
    digest = hashlib.sha256()
    for root in runtime.runtime_paths():
        if root.is_relative_to(Path(sys.base_prefix)) and root != Path(sys.prefix):
            continue  # the Python installation: read-only to a sandbox like the rest, and large
        for path in sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink()):
            if "__pycache__" not in path.parts:
                digest.update(str(path).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


_SLEEPS = {f"sleep {MARKER[-4:]}{digit}" for digit in "789"}  # the sleeps hostile() starts


def _sandbox_processes() -> list[str]:
    """Processes left by the batch: a kernel run by a sandbox's user, or a sleep named by MARKER."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            uid = int(next(x for x in (entry / "status").read_text().splitlines() if x.startswith("Uid:")).split()[1])
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except (OSError, StopIteration, ValueError):
            continue
        sandboxed = sandbox.UID_BASE <= uid < sandbox.UID_BASE + sandbox.SLOTS
        # a kernel of a sandbox (make test's unit lane runs other sandboxed commands beside this one)
        if (sandboxed and "ipykernel_launcher" in command) or command.strip() in _SLEEPS:
            found.append(f"{entry.name} uid {uid}: {command}")
    return found


def _grade(course: Path, students: list[str], jobs: int) -> tuple[int, float, str]:
    import contextlib
    import io

    from tools.course import grade

    out = io.StringIO()
    start = time.perf_counter()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        code = grade.main(
            [ASSIGNMENT, "--course", str(course), "--jobs", str(jobs), "--timeout", "10",
             *sum([["--student", s] for s in students], [])]
        )  # fmt: skip
    return code, time.perf_counter() - start, out.getvalue()


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    course = tmp_path_factory.mktemp("course")
    write_course(course, [CHAPTER])
    patch = pytest.MonkeyPatch()
    patch.setenv("POSENC_TEST_SECRET", SECRET)
    attacks = {f"1{index}-{kind}": {"ex-04-row-answer": source}
               for index, (kind, source) in enumerate(hostile(str(course), MARKER).items())}  # fmt: skip
    neighbour = {**CORRECT, **honest(MARKER)}  # its 50 MB of prints are in the class batch's honest-forms
    neighbour["ex-04-layout-answer"] = CORRECT["ex-04-layout-answer"] + "\nprint('x' * 2_000_000)"
    batch = {**attacks, "40-symlink": {}, "41-hardlink": {}, "90-canary": {}, "95-honest": neighbour}
    for student, edits in {**batch, **CLASS}.items():
        _submit(course, student, edits)
    grader_only = course.parent / f"grader-only-{MARKER}.txt"  # a file only the grader may read
    grader_only.write_text(SECRET)
    grader_only.chmod(0o600)
    linked = course / "submitted" / "40-symlink" / ASSIGNMENT
    (linked / "notes.txt").symlink_to(grader_only)
    (linked / "data.bin").symlink_to(course / "gradebook.db")
    os.link(grader_only, course / "submitted" / "41-hardlink" / ASSIGNMENT / "copy.txt")
    before = _checksum()
    hostile_run = _grade(course, sorted(batch), jobs=1)
    class_run = _grade(course, sorted(CLASS), jobs=1)  # make test gives this lane one core
    time.sleep(2)  # what a surviving daemon would do, it would do now
    after = _checksum()
    run_nbgrader(["generate_feedback", ASSIGNMENT], course)
    yield {
        "course": course,
        "attacks": sorted(attacks),
        "hostile": hostile_run,
        "class": class_run,
        "checksums": (before, after),
        "left": _sandbox_processes(),
    }
    patch.undo()
    shutil.rmtree(course, ignore_errors=True)


def _scores(course: Path, student: str) -> dict[str, float]:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        return {
            grade_id: gradebook.find_grade(grade_id, CHAPTER.stem, ASSIGNMENT, student).score for grade_id in POINTS
        }


def _feedback(course: Path, student: str) -> str:
    return html.unescape((course / "feedback" / student / ASSIGNMENT / f"{CHAPTER.stem}.html").read_text())


def _autograded(course: Path, student: str) -> str:
    return (course / "autograded" / student / ASSIGNMENT / CHAPTER.name).read_text()


def _what_went_wrong(course: Path, student: str, printed: str = "") -> str:
    """For a failure's message: make grade's lines about ``student`` and each error output of its
    autograded notebook (which cell, which exception), so that a CI log says why it scored so."""
    lines = [line for line in printed.splitlines() if f"  {student}:" in line or f"{student} " in line]
    path = course / "autograded" / student / ASSIGNMENT / CHAPTER.name
    if not path.exists():
        return "\n".join([*lines, f"no autograded notebook for {student}"])
    for index, cell in enumerate(json.loads(path.read_text())["cells"]):
        for output in cell.get("outputs", []):
            text = output.get("text", "") if output.get("output_type") == "stream" else ""
            text = "".join(text) if isinstance(text, list) else text  # nbformat writes a list of lines
            if output.get("output_type") == "error" or "[grader]" in text or "Kernel" in text:
                what = f"{output.get('ename', '')}: {output.get('evalue', '')}" if "ename" in output else text
                grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id", "")
                lines.append(f"cell {index} {grade_id}: {what.strip()[:300]}")
    return "\n".join(lines)


# --------------------------------------------------------------------------- the attacks on the grader


def test_every_attack_on_the_grader_earns_nothing_and_its_neighbours_are_graded_as_before(graded):
    course = graded["course"]
    code, _, printed = graded["hostile"]
    assert code == 0, printed
    for student in graded["attacks"]:
        assert _scores(course, student) == NOTHING, student
    assert _scores(course, "90-canary") == NOTHING
    assert _scores(course, "95-honest") == FULL, _what_went_wrong(course, "95-honest", printed)


def test_a_submission_holding_links_is_refused_and_nothing_it_points_to_is_read(graded):
    """Before: make grade sent every file of the submission's folder into the sandbox, links
    followed, and the kernel printed the grader's files into its own feedback (issue 44). Now
    such a submission is not graded, make grade names what it holds, and no file of the
    course shows the linked file's text."""
    course = graded["course"]
    _, _, printed = graded["hostile"]
    assert (
        "  40-symlink: not graded, nothing of it read: its folder holds what a grader must not follow: "
        "data.bin: a symbolic link; notes.txt: a symbolic link"
    ) in printed, printed
    assert (
        "  41-hardlink: not graded, nothing of it read: its folder holds what a grader must not follow: "
        "copy.txt: a hard link (one of 2 names of the same file)" in printed
    ), printed
    for student in ("40-symlink", "41-hardlink"):
        assert not (course / "autograded" / student).exists() and not (course / "feedback" / student).exists()
    for folder in ("autograded", "feedback"):
        for path in (course / folder).rglob("*"):
            assert not path.is_file() or SECRET.encode() not in path.read_bytes(), path


def test_a_stopped_runner_or_20000_displays_hold_nobody_up(graded):
    """Before: a kernel that stopped its runner held the slot for 700 s, and 20,000 displays took
    225 s of the grader's time; now the kernel cannot signal the runner and the runner keeps 200
    outputs per cell: both are graded in about the time of the blank canary."""
    _, _, printed = graded["hostile"]
    seconds = {m[1]: float(m[2]) for m in re.finditer(r"^  (\S+): (\d+\.\d) s$", printed, re.MULTILINE)}
    for kind in ("stop-runner", "displays"):
        student = next(s for s in graded["attacks"] if s.endswith(f"-{kind}"))
        assert seconds[student] < max(60.0, 3 * seconds["90-canary"]), printed
    feedback = _feedback(graded["course"], next(s for s in graded["attacks"] if s.endswith("-displays")))
    assert re.search(r"\d+ more outputs were displayed than the grader keeps \(at most 200 per cell", feedback)


def test_a_missing_test_cell_scores_0_and_names_its_exercise(graded):
    """Before: a deleted or renamed test cell left its exercise with no score row and no message.
    Now the released cell comes back at the end of the autograded notebook with one line."""
    for student in ("test-deleted", "test-renamed"):
        feedback = _feedback(graded["course"], student)
        assert "ex-04-row: the test cell of this exercise is missing from the submitted notebook" in feedback
        assert "_record" not in feedback and "BEGIN HIDDEN TESTS" not in feedback


def test_the_grading_environment_is_the_same_after_the_batch(graded):
    before, after = graded["checksums"]
    assert before == after
    import numpy

    import posenc_helpers.checks

    assert not (Path(numpy.__file__).parents[1] / f"zz_{MARKER}.pth").exists()  # where the attack wrote it
    planted = Path(posenc_helpers.checks.__file__).parent / "__pycache__" / "_core.cpython-311.pyc"
    assert not planted.exists() or MARKER.encode() not in planted.read_bytes()


def test_nothing_of_the_batch_outlives_it_nor_holds_it_up(graded):
    """The daemon would have slept 90 s, then rewritten the gradebook, and held the pipes it
    inherited until then (before the sandbox that stalled make grade for 742 s): its submission
    was graded in the time of an ordinary one, and no process of the batch is left."""
    assert graded["left"] == []
    _, _, printed = graded["hostile"]
    seconds = {m[1]: float(m[2]) for m in re.finditer(r"^  (\S+): (\d+\.\d) s$", printed, re.MULTILINE)}
    daemon = next(s for s in graded["attacks"] if s.endswith("daemon"))
    assert seconds[daemon] < max(60.0, 3 * seconds["90-canary"]), printed
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{graded['course'] / 'gradebook.db'}") as gradebook:
        scored = [grade.manual_score for student in gradebook.students for grade in _grades(gradebook, student.id)]
    assert all(score is None for score in scored)


def _grades(gradebook, student: str):
    submission = gradebook.find_submission(ASSIGNMENT, student)
    return [grade for notebook in submission.notebooks for grade in notebook.grades]


def test_a_kernel_reads_nothing_of_the_grader_or_the_class(graded):
    course = graded["course"]
    snoop = next(s for s in graded["attacks"] if s.endswith("snoop"))
    seen = _autograded(course, snoop) + _feedback(course, snoop)
    assert SECRET not in seen and "POSENC_TEST_SECRET" not in seen
    assert MARKER not in seen  # the honest student's answer cell carries the marker
    assert "95-honest" not in seen  # no classmate's folder was listed


# --------------------------------------------------------------------------- a class


@pytest.mark.parametrize("student", list(CLASS))
def test_autograded_scores(graded, student):
    code, _, printed = graded["class"]
    assert code == 0, printed
    scores = _scores(graded["course"], student)
    assert scores == EXPECTED[student], _what_went_wrong(graded["course"], student, printed)


def test_honest_forms_are_graded_and_told_what_was_cut(graded):
    feedback = _feedback(graded["course"], "honest-forms")
    assert "output truncated" in feedback  # 50 MB of prints, kept in part
    assert "did not stop when interrupted" in feedback and "grading went on" in feedback
    assert len(feedback) < 8 * 2**20


def test_the_release_has_no_solution_and_no_hidden_test(graded):
    text = (graded["course"] / "release" / ASSIGNMENT / CHAPTER.name).read_text()
    for line in ("w_interleaved[perm]", "np.sin(7 * omega_6)", "BEGIN HIDDEN TESTS", "_record", "BEGIN SOLUTION"):
        assert line not in text


def test_feedback_names_the_mistake_and_the_shortcut_and_never_the_hidden_tests(graded):
    course = graded["course"]
    mistakes = _feedback(course, "mistakes")
    assert "sine and cosine are swapped" in mistakes, _what_went_wrong(course, "mistakes", graded["class"][2])
    shortcut = _feedback(course, "shortcut-and-loop")
    assert "calls `sinusoidal_encoding`, which does it for you" in shortcut
    assert "ran longer than its limit of 10 s" in shortcut
    for student in CLASS:
        feedback = _feedback(course, student)
        assert "BEGIN HIDDEN TESTS" not in feedback and "_record.record(" not in feedback, student
        assert "'forbid'" not in feedback, student


def _flag_lines(course: Path, student: str) -> list[str]:
    """The feedback's "Tampering suspected" lines (one per exercise that has one)."""
    text = re.sub(r"<[^>]+>", "", _feedback(course, student))
    return [line for line in text.splitlines() if "Tampering suspected (ex-04-" in line]


@pytest.mark.parametrize("student", sorted(TAMPERED))
def test_tampering_is_flagged_once_per_exercise(graded, student):
    lines = _flag_lines(graded["course"], student)
    assert sorted(line.split("(")[1].split(")")[0] for line in lines) == sorted(POINTS), lines


@pytest.mark.parametrize("student", HONEST)
def test_honest_submissions_are_never_flagged(graded, student):
    assert student not in TAMPERED
    assert _flag_lines(graded["course"], student) == []
    assert "Tampering" not in _feedback(graded["course"], student)


def test_tampering_is_named_in_the_feedback(graded):
    """What each kind did, in its words, so that an instructor knows where to look."""
    seen = {
        "tamper-machinery": "imports `posenc_helpers.checks._core`",
        "tamper-input-transformer": "the test cell did not record the answer",
        "tamper-exception-handler": "custom exception handler",
        "tamper-numpy-patched": "`numpy.allclose` was replaced",
        "tamper-fake-module": "sys.modules",
        "tamper-import-hook": "__import__",
        "tamper-forged-record": "a record outside its test cell",
        "tamper-thread-forged-record": "imports `threading`",
        "tricks": "redefines `check_encoding_row`",
    }
    for student, words in seen.items():
        lines = _flag_lines(graded["course"], student)
        assert any(words in line for line in lines), (student, lines)


def test_feedback_shows_each_message_and_never_the_answer(graded):
    import numpy as np

    from posenc_helpers import sinusoidal_encoding

    course = graded["course"]
    text = _feedback(course, "mistakes")
    assert "sine and cosine are swapped" in text, _what_went_wrong(course, "mistakes", graded["class"][2])
    assert "ex-04-wavelength: not answered yet" in text
    assert "Correct: the [sines | cosines] table" in text  # the visible check's message on the right answer
    row = sinusoidal_encoding(np.array([7]), 6)[0]
    for student in CLASS:
        feedback = _feedback(course, student)
        if student in ("correct", "honest-forms", "alias", "shortcut-and-loop"):
            continue  # their own right answer, which they printed or computed, is theirs to see
        for value in row[:2]:  # the answer to ex-04-row, as the feedback would print it
            assert f"{value:.4f}" not in feedback and repr(float(value)) not in feedback, student
        assert "recorded for grading" not in feedback, student  # the records do not reach students


def test_written_answers_wait_for_a_person(graded):
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{graded['course'] / 'gradebook.db'}") as gradebook:
        answered = gradebook.find_grade("ex-04-norm", CHAPTER.stem, ASSIGNMENT, "untouched")
        assert answered.score == 0  # untouched answer cell: nbgrader gives 0 by its checksum
        assert gradebook.find_submission(ASSIGNMENT, "correct").max_score == sum(POINTS.values()) + 2


def test_make_grade_lists_the_flags_and_the_time_of_each_submission(graded):
    _, _, printed = graded["class"]
    assert f"{ASSIGNMENT}: {len(CLASS)} submissions in " in printed and "with 1 at a time" in printed
    assert sum("tamper-machinery: Tampering suspected (ex-04-" in line for line in printed.splitlines()) == 3
    assert "correct: Tampering" not in printed
    assert re.search(r"  correct: \d+\.\d s", printed)


def test_make_grade_regrades_two_at_a_time_with_the_same_scores(graded):
    code, _, printed = _grade(graded["course"], ["correct", "tamper-machinery"], jobs=2)
    assert code == 0 and "ch04: 2 submissions in " in printed and "with 2 at a time" in printed
    for student in ("correct", "tamper-machinery"):
        assert _scores(graded["course"], student) == EXPECTED[student]


def test_make_grade_refuses_to_grade_without_a_sandbox_unless_told(graded, monkeypatch, capsys):
    from tools.course import grade

    monkeypatch.setattr(sandbox, "available", lambda: "bubblewrap (bwrap) is not installed")
    assert grade.main([ASSIGNMENT, "--course", str(graded["course"]), "--student", "correct"]) == 2
    message = capsys.readouterr().err
    assert "bubblewrap" in message and "UNSAFE=1" in message


@pytest.mark.parametrize(
    ("arguments", "words"),
    [(["ch4"], "assignment"), (["ch04", "--jobs", "0"], "jobs"), (["ch04", "--student", "nobody"], "nobody")],
)
def test_make_grade_reports_bad_input(graded, capsys, arguments, words):
    from tools.course import grade

    assert grade.main([*arguments, "--course", str(graded["course"])]) == 2
    assert words in capsys.readouterr().err


# --------------------------------------------------------------------------- a budget per sandbox (issue 44)

# Beside an honest submission, graded two at a time: a fork bomb (processes that spin until their
# sandbox ends, forking until they may not), and a memory bomb (eight processes of 1.5 GB each,
# every one under the per-process limit, 12 GB together).
BOMBS = {
    "b-fork-bomb": "pe_7 = None\nimport os, time\nend = time.time() + 9\nwhile time.time() < end:\n"
    "    try:\n        if os.fork() == 0:\n            while True:\n                pass\n"
    "    except OSError:\n        pass\n",
    "b-memory-bomb": "pe_7 = None\nimport subprocess, sys\n"
    "code = 'import time; hog = bytes(1500 * 2**20) + b\"x\" * (1500 * 2**20); time.sleep(15)'\n"
    "children = [subprocess.Popen([sys.executable, '-c', code]) for _ in range(8)]\n"
    "codes = [child.wait() for child in children]\n",
}


def _sandbox(course: Path, student: str) -> dict:
    """How the student's sandbox ran (``SandboxedExecute``'s note in the autograded notebook)."""
    from posenc_helpers.grading.nbgrader import SANDBOX_METADATA

    return json.loads(_autograded(course, student))["metadata"][SANDBOX_METADATA]


def _times(printed: str) -> dict[str, float]:
    return {m[1]: float(m[2]) for m in re.finditer(r"^  (\S+): (\d+\.\d) s$", printed, re.MULTILINE)}


@pytest.mark.skipif(os.geteuid() != 0, reason="a control group per sandbox needs root")
def test_bombs_beside_an_honest_submission_are_held_to_their_own_budget(graded):
    """Before: limits per process only; a fork bomb took the machine's load from 11 to 38 and one
    sandbox held 6.4 GB. Now each sandbox has a control group (one core, 4 GiB, its processes).
    Graded two at a time beside an honest submission, each bomb ran in a group of its own and met
    it: the fork bomb's spinners ran under its one core's quota for the whole of their 9 s, the
    memory bomb's processes were killed by the out-of-memory killer of its group, which never
    held more than 4 GiB. The honest neighbour, in its own group, ran to the end and earned every
    point; the bombs none.

    The quota is shown in force by the periods it counted (``cpu.stat``'s ``nr_periods``), not
    by its holding the bomb back: that happens only when the machine would give the bomb more
    than a core. ``make test`` with the other core kept busy gave it less, and the bomb's group
    was held back for 0.0 s (the old assertion, throttled_seconds > 0, failed there).

    What this asserts is the mechanism, not the neighbour's wall time: beside make test's other
    lane the honest submission's time beside an honest twin varied from 26 to 43 s and the twin's
    own reached 74.5 s, so a timing here measured the other lane. The old bound (25 % over the
    time beside the twin) failed in CI for the fork bomb (100 s) and, with every sandbox in its
    group, in a rerun beside the browser lane for the memory bomb (95 s). The times are printed."""
    from posenc_helpers.grading import cgroups

    assert cgroups.available() is None, cgroups.available()
    course = graded["course"]
    for student, source in {**BOMBS, "b-honest": None}.items():
        if not (course / "submitted" / student).exists():
            _submit(course, student, dict(CORRECT) if source is None else {"ex-04-row-answer": source})
    times = {}
    for bomb in BOMBS:
        code, _, printed = _grade(course, ["b-honest", bomb], jobs=2)
        assert code == 0, printed
        honest, ran = _sandbox(course, "b-honest"), _sandbox(course, bomb)
        assert honest["budget"].startswith("cgroup v") and ran["budget"] == honest["budget"], (honest, ran)
        assert honest["problem"] is None, honest
        if bomb == "b-memory-bomb":
            assert ran["oom_kills"] >= 1 and ran["peak_memory_bytes"] <= 4 * 2**30 + 2**20, ran
        else:  # it forks and spins for 9 s: 90 of the quota's 100-ms periods; at least half counted
            assert ran["cpu_periods"] >= 45, ran
        assert _scores(course, "b-honest") == FULL, printed
        assert _scores(course, bomb) == NOTHING, printed
        times[bomb] = {**_times(printed), "throttled": ran["throttled_seconds"], "periods": ran["cpu_periods"]}
    print(f"seconds, graded two at a time: {times}; load average after: {os.getloadavg()}")
