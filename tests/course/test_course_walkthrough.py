"""The instructor guide's walk-through, run as written: release, fetch, submit, collect, grade.

``book/instructor_guide.md`` ("A term, step by step") gives the commands an instructor
and a student type with nbgrader's exchange. Here they run in that order, with the
exchange and the student's home in temporary folders (the guide's
``/usr/local/share/nbgrader/exchange`` needs root), one chapter, one student (this
process's user, as on a hub where each student is a user of their own): the
submission collected by ``nbgrader collect`` is graded by ``make grade``'s program in
the sandbox and gets its feedback back through ``nbgrader release_feedback``.

The guide's code blocks are read from the page, so that the page and this test cannot
drift apart: each command named below must appear in it.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from posenc_helpers.grading import sandbox
from tools.course import write_course

if sandbox.available() is not None and os.environ.get("POSENC_REQUIRE_SANDBOX"):
    raise RuntimeError(f"POSENC_REQUIRE_SANDBOX is set but there is no sandbox here: {sandbox.available()}")
pytestmark = pytest.mark.skipif(sandbox.available() is not None, reason=f"no sandbox: {sandbox.available()}")

ROOT = Path(__file__).resolve().parents[2]
CHAPTER = ROOT / "notebooks" / "04_sine_cosine_pairs.ipynb"
GUIDE = ROOT / "book" / "instructor_guide.md"
COURSE_ID = "positional-encoding"
# What the guide tells each side to type (with the exchange passed on the command line here).
INSTRUCTOR = [
    "nbgrader release_assignment ch04",
    "nbgrader collect ch04",
    "make grade A=ch04 JOBS=2",
    "nbgrader generate_feedback ch04",
    "nbgrader release_feedback ch04",
]
STUDENT = [
    f"nbgrader fetch_assignment ch04 --course {COURSE_ID}",
    f"nbgrader submit ch04 --course {COURSE_ID}",
    f"nbgrader fetch_feedback ch04 --course {COURSE_ID}",
]


def test_the_guide_gives_these_commands():
    blocks = "\n".join(re.findall(r"```bash\n(.*?)```", GUIDE.read_text(), flags=re.DOTALL))
    for command in [*INSTRUCTOR, *STUDENT, ". .venv/bin/activate", "chmod 777"]:
        assert command in blocks, command


def _nbgrader(arguments: str, cwd: Path, exchange: Path) -> subprocess.CompletedProcess[str]:
    scripts = Path(sys.executable).parent
    env = {**os.environ, "PATH": f"{scripts}{os.pathsep}{os.environ['PATH']}"}
    return subprocess.run(
        [str(scripts / "nbgrader"), *arguments.split()[1:], f"--Exchange.root={exchange}", "--log-level=WARN"],
        cwd=cwd,
        env=env,
        text=True,
        capture_output=True,
        check=True,
    )


def test_a_term_step_by_step(tmp_path):
    from tools.course import grade

    course, exchange, home = tmp_path / "course", tmp_path / "exchange", tmp_path / "student"
    exchange.mkdir(mode=0o777)
    exchange.chmod(0o777)  # the guide: sudo chmod 777 on the exchange
    home.mkdir()
    write_course(course, [CHAPTER])
    _nbgrader(INSTRUCTOR[0], course, exchange)
    _nbgrader(STUDENT[0], home, exchange)
    fetched = home / "ch04" / CHAPTER.name
    nb = json.loads(fetched.read_text())
    for cell in nb["cells"]:  # the student answers exercise 4.2
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "ex-04-wavelength-answer":
            cell["source"] = "wavelength_301 = 2 * np.pi * 10000.0 ** (300 / 512)"
    fetched.write_text(json.dumps(nb))
    _nbgrader(STUDENT[1], home, exchange)
    _nbgrader(INSTRUCTOR[1], course, exchange)
    (student,) = [path.parent.name for path in (course / "submitted").glob("*/ch04")]
    assert grade.main(["ch04", "--course", str(course), "--jobs", "2"]) == 0
    _nbgrader(INSTRUCTOR[3], course, exchange)
    _nbgrader(INSTRUCTOR[4], course, exchange)
    _nbgrader(STUDENT[2], home, exchange)
    feedback = next((home / "ch04" / "feedback").rglob("*.html")).read_text()
    assert "ex-04-wavelength" in feedback and "Correct" in feedback
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        assert gradebook.find_grade("ex-04-wavelength", CHAPTER.stem, "ch04", student).score == 2.0
        assert gradebook.find_grade("ex-04-row", CHAPTER.stem, "ch04", student).score == 0.0
