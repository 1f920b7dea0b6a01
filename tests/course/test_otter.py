"""otter-grader (Gradescope) grades chapter 04 with the same sandbox and verdict as nbgrader.

``make otter`` writes the otter master notebook, runs ``otter assign``, runs the release
in the sandbox and completes the autograder zip (the plugin's configuration, a wheel of
the package, Python 3.11). Here ``otter run`` grades submissions locally with that zip,
one after another as a batch: the plugin runs each in a sandbox, grades the records
outside it, and hands otter's own kernel an empty notebook. Chapter 04's autograded
exercises are worth 2, 2 and 3 points (7).

The attacks are those that reach otter itself (issue 37): a thread that rewrites the
results pickle otter loads, an ``.OTTER_LOG`` that runs code when otter unpickles it, a
``numpy.py`` beside the notebook that otter's kernel would import, a ``.pth`` in the
grading environment; and some of the in-kernel tampering kinds. Each earns 0, and a
blank canary and an honest submission graded after them earn 0 and 7. Last, the zip is
unpacked and its own entry point (``run_otter.py``) grades a submission offline.
"""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from _chapter04 import CHAPTER, CORRECT, PLACEHOLDER, SHORTCUT, TAMPERING, hostile

from posenc_helpers.grading import runtime, sandbox
from tools.course import write_otter

if sandbox.available() is not None and os.environ.get("POSENC_REQUIRE_SANDBOX"):
    raise RuntimeError(f"POSENC_REQUIRE_SANDBOX is set but there is no sandbox here: {sandbox.available()}")
pytestmark = pytest.mark.skipif(sandbox.available() is not None, reason=f"no sandbox: {sandbox.available()}")

ANSWERS = {PLACEHOLDER[label]: answer for label, answer in CORRECT.items()}  # by the line they replace
FULL = {"ex-04-row": 2.0, "ex-04-wavelength": 2.0, "ex-04-layout": 3.0}
NOTHING = dict.fromkeys(FULL, 0.0)
MARKER = f"posenc{os.getpid() % 10000:04d}"
BLANK = "pe_7 = None\n"


class _Planted:
    """Unpickled, it writes a file: what a hostile .OTTER_LOG would do in otter's process."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self):
        return (Path(self.path).write_text, ("otter unpickled the log",))


@pytest.fixture(scope="module")
def assignment(tmp_path_factory):
    out = tmp_path_factory.mktemp("otter")
    (autograder,) = write_otter(out, [CHAPTER])
    return out / "ch04" / "dist" / "student" / CHAPTER.name, autograder


def _submission(student_nb: Path, answers: dict[str, str], folder: Path, files: dict[str, bytes] | None) -> Path:
    nb = json.loads(student_nb.read_text())
    for cell in nb["cells"]:
        for start, answer in answers.items():
            if "".join(cell["source"]).startswith(start):
                cell["source"] = answer
    folder.mkdir(parents=True)
    notebook = folder / CHAPTER.name
    notebook.write_text(json.dumps(nb))
    if not files:
        return notebook
    bundle = folder / "submission.zip"  # what a student's otter export uploads: the notebook and more
    with zipfile.ZipFile(bundle, "w") as archive:
        archive.write(notebook, CHAPTER.name)
        for name, data in files.items():
            archive.writestr(name, data)
    return bundle


def _grade(assignment, answers: dict[str, str], folder: Path, files: dict[str, bytes] | None = None) -> dict:
    student_nb, autograder = assignment
    submission = _submission(student_nb, answers, folder, files)
    scripts = Path(sys.executable).parent
    env = {**os.environ, "PATH": f"{scripts}{os.pathsep}{os.environ['PATH']}"}
    subprocess.run(
        [str(scripts / "otter"), "run", "-a", str(autograder), "-o", str(folder), str(submission)],
        check=True,
        env=env,
        capture_output=True,
    )
    results = json.loads((folder / "results.json").read_text())
    return {test["name"]: test for test in results["tests"] if test["name"] != "Public Tests"}


def _scores(tests: dict) -> dict[str, float]:
    return {name: test["score"] for name, test in tests.items()}


def test_student_notebook_holds_no_answer_and_no_test(assignment):
    student_nb, _ = assignment
    text = student_nb.read_text()
    for line in ("w_interleaved[perm]", "np.sin(7 * omega_6)", "_record", "BEGIN SOLUTION"):
        assert line not in text


def test_correct_submission_earns_every_point_and_is_not_flagged(assignment, tmp_path):
    tests = _grade(assignment, ANSWERS, tmp_path / "correct")
    assert _scores(tests) == FULL
    assert all("Tampering" not in t["output"] for t in tests.values()), tests


def test_shortcut_and_untouched_answers_earn_nothing(assignment, tmp_path):
    wrong = {PLACEHOLDER["ex-04-row"]: SHORTCUT, PLACEHOLDER["ex-04-layout"]: CORRECT["ex-04-layout"]}
    tests = _grade(assignment, wrong, tmp_path / "wrong")
    assert _scores(tests) == {"ex-04-row": 0.0, "ex-04-wavelength": 0.0, "ex-04-layout": 3.0}
    assert "calls `sinusoidal_encoding`, which does it for you" in tests["ex-04-row"]["output"]


@pytest.mark.parametrize("kind", ["machinery", "forged-record", "thread-forged-record"])
def test_tampering_earns_nothing_and_is_flagged(assignment, tmp_path, kind):
    tests = _grade(assignment, {PLACEHOLDER["ex-04-row"]: TAMPERING[kind]}, tmp_path / kind)
    assert _scores(tests) == NOTHING
    for name, test in tests.items():
        assert test["output"].count("Tampering suspected") == 1, (name, test["output"])
        assert f"Tampering suspected ({name}): " in test["output"], (name, test["output"])


def test_attacks_on_otter_earn_nothing_and_leave_the_next_submissions_alone(assignment, tmp_path):
    """In one batch: the attacks, then a blank canary (0) and an honest submission (7)."""
    import numpy

    planted = tmp_path / f"planted-{MARKER}"
    pth = Path(numpy.__file__).parents[1] / f"zz_{MARKER}.pth"
    swap = (  # rewrites every results pickle it can find with one that gives full marks
        BLANK + "import glob, pickle, threading, time\n"
        "def _swap():\n"
        "    for _ in range(600):\n"
        "        for path in glob.glob('/tmp/*.pkl') + glob.glob('/tmp/**/results.pkl', recursive=True):\n"
        "            try:\n"
        f"                open(path, 'wb').write(pickle.dumps({str(planted)!r}))\n"
        "            except OSError:\n"
        "                pass\n"
        "        time.sleep(0.05)\n"
        "threading.Thread(target=_swap, daemon=True).start()\n"
    )
    attacks = {
        "pickle-swap": ({PLACEHOLDER["ex-04-row"]: swap}, None),
        "otter-log": ({}, {".OTTER_LOG": pickle.dumps(_Planted(str(planted)))}),
        "numpy-beside": ({}, {"numpy.py": f"open({str(planted)!r}, 'w').write('imported')\n".encode()}),
        "pth": (
            {PLACEHOLDER["ex-04-row"]: BLANK + f"open({str(pth)!r}, 'w').write('import sys')\n"},
            None,
        ),
        # the runner's result pipe taken and a result of full marks written into it (issue 44)
        "pidfd": ({PLACEHOLDER["ex-04-row"]: hostile(str(tmp_path), MARKER)["pidfd"]}, None),
        "proc-fd": ({PLACEHOLDER["ex-04-row"]: hostile(str(tmp_path), MARKER)["proc-fd"]}, None),
    }
    before = runtime.environment_digest()
    for name, (answers, files) in attacks.items():
        assert _scores(_grade(assignment, answers, tmp_path / name, files)) == NOTHING, name
    assert _scores(_grade(assignment, {}, tmp_path / "canary")) == NOTHING
    # what Gradescope shows the student: before, "All test cases passed!" over a blank notebook
    results = json.loads((tmp_path / "canary" / "results.json").read_text())
    shown = [test.get("output", "") for test in results["tests"]]
    assert shown and not any("All test cases passed!" in text for text in shown), shown
    assert _scores(_grade(assignment, ANSWERS, tmp_path / "honest")) == FULL
    assert not planted.exists() and not pth.exists()
    assert runtime.environment_digest() == before


def test_the_gradescope_zip_grades_as_built(assignment, tmp_path):
    """Unpacked as Gradescope does (/autograder/source, /autograder/submission), its own entry
    point grades a submission offline; it installs Python 3.11, the pins and the package's
    wheel, which it carries, and bubblewrap."""
    student_nb, autograder = assignment
    root = tmp_path / "autograder"
    for folder in ("source", "submission", "results"):
        (root / folder).mkdir(parents=True)
    with zipfile.ZipFile(autograder) as archive:
        archive.extractall(root / "source")
    environment = (root / "source" / "environment.yml").read_text()
    python = (Path(__file__).resolve().parents[2] / "runtime.txt").read_text().strip().removeprefix("python-")
    assert f"python={python}" in environment
    (wheel,) = (root / "source" / "files").glob("posenc_helpers-*.whl")
    assert f"/autograder/source/files/{wheel.name}" in environment
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    assert {"posenc_helpers/grading/otter.py", "posenc_helpers/checks/__init__.py"} <= names
    for pin in ("numpy==", "jax==", "otter-grader"):
        assert pin in environment, pin
    assert "apt-get install -y bubblewrap" in (root / "source" / "setup.sh").read_text()
    config = json.loads((root / "source" / "otter_config.json").read_text())
    (plugin,) = config["plugins"]
    assert set(plugin) == {"posenc_helpers.grading.otter.GradeFromRecords"}
    (root / "submission_metadata.json").write_text("{}")
    _submission(student_nb, ANSWERS, tmp_path / "upload", None).replace(root / "submission" / CHAPTER.name)
    entry = (root / "source" / "run_otter.py").read_text().replace('"/autograder"', repr(str(root)))
    (tmp_path / "run_otter.py").write_text(entry)
    scripts = Path(sys.executable).parent
    env = {**os.environ, "PATH": f"{scripts}{os.pathsep}{os.environ['PATH']}"}
    subprocess.run([sys.executable, str(tmp_path / "run_otter.py")], check=True, env=env, capture_output=True)
    results = json.loads((root / "results" / "results.json").read_text())
    assert {t["name"]: t["score"] for t in results["tests"] if t["name"] != "Public Tests"} == FULL
