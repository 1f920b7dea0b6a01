"""The instructor guide's walk-through, run as written: release, fetch, submit, collect, grade.

``book/instructor_guide.md`` ("A term, step by step") gives the commands an instructor
and a student type with nbgrader's exchange. Here they run in that order, with the
exchange and the student's home in temporary folders (the guide's
``/usr/local/share/nbgrader/exchange`` needs root), one chapter, one student (this
process's user, as on a hub where each student is a user of their own): the
submission collected by ``make collect`` is graded by ``make grade``'s program in
the sandbox and gets its feedback back through ``nbgrader release_feedback``.

Two crafted submissions wait in the exchange's inbound beside it, as any user of the
hub can leave them (issue 44): one whose files are links (a symbolic link to a file
only the grader may read, a hard link to another, a symbolic link to the gradebook),
and one without ``submission_secret.txt``, which used to stop ``nbgrader
release_feedback`` before the students after it. ``make collect`` refuses both, names
why, and copies nothing they point to; the honest student still gets their feedback.

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
    "make collect A=ch04",
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


def _crafted_submissions(tmp_path: Path, course: Path, exchange: Path) -> str:
    """Two submissions a hub's user can leave in the inbound by hand (see the module docstring);
    the text of the file only the grader may read."""
    inbound = exchange / COURSE_ID / "inbound"
    secret = f"grader-only-{os.getpid()}"
    private = tmp_path / "grader-only.txt"
    private.write_text(secret)
    private.chmod(0o600)
    stamp = "2030-01-01 00:00:00.000000 UTC"
    links = inbound / f"mallory+ch04+{stamp}+x1"
    links.mkdir()
    (links / "04_sine_cosine_pairs.ipynb").write_text((course / "release" / "ch04" / CHAPTER.name).read_text())
    (links / "timestamp.txt").write_text(stamp)
    (links / "submission_secret.txt").write_text("0" * 128)
    (links / "notes.txt").symlink_to(private)
    (links / "data.bin").symlink_to(course / "gradebook.db")
    os.link(private, links / "copy.txt")
    bare = inbound / f"eve+ch04+{stamp}+x2"
    bare.mkdir()
    (bare / "04_sine_cosine_pairs.ipynb").write_text((course / "release" / "ch04" / CHAPTER.name).read_text())
    (bare / "timestamp.txt").write_text(stamp)
    return secret


def _run_main(main, arguments: list[str]) -> str:
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        assert main(arguments) == 0, out.getvalue()
    return out.getvalue()


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
    secret = _crafted_submissions(tmp_path, course, exchange)
    from tools.course import collect

    printed = _run_main(collect.main, ["ch04", "--course", str(course), "--exchange", str(exchange)])
    assert "1 submissions collected, 2 refused" in printed, printed
    assert (
        "mallory: refused, not collected: copy.txt: a hard link (one of 2 names of the same file); "
        "data.bin: a symbolic link; notes.txt: a symbolic link"
    ) in printed, printed
    assert "eve: refused, not collected: no submission_secret.txt" in printed, printed
    (student,) = [path.parent.name for path in (course / "submitted").glob("*/ch04")]
    assert not (course / "submitted" / "mallory").exists() and not (course / "submitted" / "eve").exists()
    copied = b"".join(p.read_bytes() for p in (course / "submitted").rglob("*") if p.is_file())
    assert secret.encode() not in copied
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
