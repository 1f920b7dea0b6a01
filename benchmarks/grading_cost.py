"""What grading a class costs, per chapter and at scale: the cost table (issue 48, item 4).

::

    python -m benchmarks.grading_cost measure [--chapters 04,07] [--course DIR]   # minutes
    python -m benchmarks.grading_cost table                                      # instant

``measure`` builds the course (or reuses ``--course``), runs each chapter's release once
in the sandbox (the grader's reference run, which a real course also does once per
assignment, not per student: not counted), then grades each chapter's honest submission
(the release with the source's model answers, :func:`benchmarks.grading.honest_submission`)
once through the entry point ``python -m posenc_helpers.grading one``, wrapped in
``/usr/bin/time -v`` under ``nice -n 19``. It keeps, per chapter: the CPU seconds (user +
system of the entry point and every process it waited for: nbgrader, the sandbox, the
kernel, the verdict), the peak resident memory (the largest single process among them,
as ``getrusage`` reports it), the wall time, the points earned, and the machine's load
average before and after, into ``benchmarks/grading_cost.json``.

``table`` derives the wall times of a class from those measurements alone and writes the
table between the ``grading-cost`` markers of ``benchmarks/README.md`` and of
``book/instructor_guide.md``. What is measured and what is derived, and each assumption,
is in the table's notes (:data:`ASSUMPTIONS`).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
MEASURED = ROOT / "benchmarks" / "grading_cost.json"
TARGETS = (ROOT / "benchmarks" / "README.md", ROOT / "book" / "instructor_guide.md")
START, END = "<!-- grading-cost:start -->", "<!-- grading-cost:end -->"
CLASSES = (200, 2000)
PODS = (10, 50, 200)
#: What the derived columns assume, each stated in the table's notes.
ASSUMPTIONS = {
    "machine_cores": 2,  # one two-core machine, make grade JOBS=2, CPU-bound: wall = CPU-s / 2
    "pod_start_s": 10.0,  # a pod's start with the image already on the node, and its stage/publish steps
    "gradescope_start_s": 30.0,  # a Gradescope container's start and its setup per submission
    "gradescope_concurrency": 50,  # Gradescope's submissions graded at once (not published; assumed)
}


def _time_v(text: str) -> dict[str, float]:
    """The fields of ``/usr/bin/time -v`` that the table reads."""

    def field(name: str) -> str:
        match = re.search(rf"^\s*{re.escape(name)}: (.+)$", text, re.M)
        if match is None:
            raise ValueError(f"/usr/bin/time -v printed no {name!r}")
        return match.group(1).strip()

    clock = [float(part) for part in field("Elapsed (wall clock) time (h:mm:ss or m:ss)").split(":")]
    wall = sum(value * 60**power for power, value in enumerate(reversed(clock)))
    return {
        "cpu_s": float(field("User time (seconds)")) + float(field("System time (seconds)")),
        "peak_mib": int(field("Maximum resident set size (kbytes)")) / 1024,
        "wall_s": wall,
    }


def measure(chapters: list[str] | None, course: Path | None) -> dict[str, Any]:
    """Grade each chapter's honest submission once through the entry point (see the module docstring)."""
    from benchmarks.grading import honest_submission
    from tools.course import chapters_with_exercises, write_course
    from tools.course.grade import prepare_reference

    paths = [p for p in chapters_with_exercises() if not chapters or p.name[:2] in chapters]
    work = Path(tempfile.mkdtemp(prefix="posenc-cost-"))
    if course is None:
        course = work / "course"
        print(f"writing the course of {len(paths)} chapters into {course}", flush=True)
        write_course(course, paths)
    rows: dict[str, Any] = {}
    measured = {"date": time.strftime("%Y-%m-%d"), "cores": os.cpu_count(), "nice": 19, "chapters": rows}
    for number, path in enumerate(paths, 1):
        name = f"ch{path.name[:2]}"
        started = time.perf_counter()
        prepare_reference(course, name)
        reference_s = time.perf_counter() - started
        release = course / "release" / name / path.name
        source = json.loads((course / "source" / name / path.name).read_text(encoding="utf-8"))
        submission = work / name / path.name
        submission.parent.mkdir(parents=True, exist_ok=True)
        submission.write_text(json.dumps(honest_submission(source, json.loads(release.read_text()))), encoding="utf-8")
        load_before = os.getloadavg()[0]
        out = work / name / "out"
        ran = subprocess.run(
            ["nice", "-n", "19", "/usr/bin/time", "-v", sys.executable, "-m", "posenc_helpers.grading", "one",
             "--release", str(course), "--submission", str(submission), "--out", str(out), "--assignment", name],
            capture_output=True, text=True, check=False, cwd=ROOT,
        )  # fmt: skip
        if ran.returncode != 0:
            raise RuntimeError(f"{name}: the entry point failed:\n{ran.stdout[-2000:]}\n{ran.stderr[-3000:]}")
        result = json.loads((out / "result.json").read_text(encoding="utf-8"))
        auto = [row for row in result["cells"] if row["autograded"]]
        rows[name] = {
            **_time_v(ran.stderr),
            "earned": sum(row["score"] for row in auto),
            "autograded_max": sum(row["max_score"] for row in auto),
            "isolation": result["isolation"],
            "reference_s": round(reference_s, 1),
            "load_before": load_before,
            "load_after": os.getloadavg()[0],
        }
        print(f"[{number}/{len(paths)}] {name}: {rows[name]['cpu_s']:.1f} CPU-s, {rows[name]['peak_mib']:.0f} MiB, "
              f"{rows[name]['wall_s']:.1f} s wall, load {load_before:.1f}", flush=True)  # fmt: skip
        MEASURED.write_text(json.dumps(measured, indent=1) + "\n", encoding="utf-8")  # kept as it goes
    return measured


def _duration(seconds: float) -> str:
    """``seconds`` in words a reader compares: s, min or h."""
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 2 * 3600:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def table(measured: dict[str, Any]) -> str:
    """The cost table (Markdown) from ``measured`` (:func:`measure`'s) and :data:`ASSUMPTIONS`."""
    rows = measured["chapters"]
    a = ASSUMPTIONS
    lines = [
        "| chapter | CPU-s per submission (measured) | peak memory, MiB (measured) | wall, s (measured, under load) "
        "| points earned (measured) |",
        "|---|---|---|---|---|",
    ]
    for name, row in rows.items():
        short = " (stopped before the end: too few CPU-s)" if row["earned"] < row["autograded_max"] else ""
        lines.append(
            f"| {name} | {row['cpu_s']:.1f} | {row['peak_mib']:.0f} | {row['wall_s']:.0f} "
            f"(load {row['load_before']:.1f}) | {row['earned']:g} of {row['autograded_max']:g}{short} |"
        )
    cpu = sum(row["cpu_s"] for row in rows.values())
    slowest = max(rows, key=lambda name: rows[name]["cpu_s"])
    worst = rows[slowest]
    peak = max(row["peak_mib"] for row in rows.values())
    lines += [
        f"| **one student, all {len(rows)}** | **{cpu:.0f}** | **{peak:.0f}** (largest) | | |",
        "",
        f"| class (all {len(rows)} chapters) | one {a['machine_cores']}-core machine | Gradescope | "
        + " | ".join(f"{n} pods" for n in PODS)
        + " |",
        "|---|---|---|" + "---|" * len(PODS),
    ]
    for students in CLASSES:
        machine = students * cpu / a["machine_cores"]
        per_submission = [a["gradescope_start_s"] + row["cpu_s"] for row in rows.values()]
        waves = math.ceil(students / a["gradescope_concurrency"])
        gradescope = waves * sum(per_submission)
        pods = [sum(math.ceil(students / n) * (a["pod_start_s"] + row["cpu_s"]) for row in rows.values()) for n in PODS]
        lines.append(
            f"| {students} students | {_duration(machine)} | {_duration(gradescope)} | "
            + " | ".join(_duration(t) for t in pods)
            + " |"
        )
    lines += [
        "",
        f"Measured ({measured['date']}, `python -m benchmarks.grading_cost measure`, {measured['cores']} cores "
        f"shared with other work, `nice -n {measured['nice']}`, the load average beside each wall time): one "
        "honest submission per chapter (the release with the model answers) graded once through "
        "`python -m posenc_helpers.grading one` in its bubblewrap sandbox, wrapped in `/usr/bin/time -v`; "
        "CPU-s is user + system time of the entry point and every process it waited for (nbgrader, the sandbox, "
        "the kernel, the verdict), peak memory the largest single process among them as `getrusage` reports it "
        "(a lower bound: a process the sandbox reaped itself may not reach it; the kernels' own peaks are "
        "`make bench`'s chapter section, chapter 11's up to 1.5 GB). The grader's reference "
        "run of each release (once per assignment, not per student) is not counted. Under load the wall times "
        "are longer than the CPU-s; the derived times below use CPU-s. An honest submission earns every "
        "point; one that earned less was stopped before its notebook ended (its runner killed, on a machine "
        "this loaded), so its CPU-s are too few and the sums below too low by as much.",
        "",
        "Derived (`python -m benchmarks.grading_cost table`, from the measured CPU-s alone): one machine = "
        f"students x {cpu:.0f} CPU-s / {a['machine_cores']} cores (make grade JOBS={a['machine_cores']}, "
        "CPU-bound, no overhead: a lower bound); Gradescope = one container per submission and chapter, "
        f"each {a['gradescope_start_s']:.0f} s to start (assumed) plus the chapter's CPU-s on one core, "
        f"{a['gradescope_concurrency']} containers at a time (assumed: Gradescope does not publish its "
        "concurrency); N pods = for each chapter one Indexed Job of 1-CPU pods, N at a time, each "
        f"{a['pod_start_s']:.0f} s to start, stage and publish (assumed, image already on the nodes) plus the "
        f"chapter's CPU-s; the Jobs run one after another. The slowest chapter is {slowest} "
        f"({worst['cpu_s']:.0f} CPU-s); every chapter's peak is below the pod's 2 GiB limit"
        + ("." if peak < 2048 else " EXCEPT the largest: raise the pod's memory for it."),
    ]
    return "\n".join(lines)


def write_table(text: str) -> list[Path]:
    """Put ``text`` between the markers of each file of :data:`TARGETS` that has them; those files."""
    written = []
    for path in TARGETS:
        content = path.read_text(encoding="utf-8")
        if START not in content or END not in content:
            continue
        head, rest = content.split(START, 1)
        _, tail = rest.split(END, 1)
        path.write_text(f"{head}{START}\n{text}\n{END}{tail}", encoding="utf-8")
        written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.grading_cost", description=__doc__.split("\n")[0])
    parser.add_argument("command", choices=("measure", "table"))
    parser.add_argument("--chapters", default="", help="only these chapters, e.g. 04,07 (measure)")
    parser.add_argument("--course", type=Path, default=None, help="a course make course wrote (measure)")
    args = parser.parse_args(argv)
    if args.command == "measure":
        measure([c for c in args.chapters.split(",") if c] or None, args.course)
    measured = json.loads(MEASURED.read_text(encoding="utf-8"))
    text = table(measured)
    print(text)
    for path in write_table(text):
        print(f"written into {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
