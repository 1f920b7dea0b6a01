"""What grading a class costs, per chapter and at scale: the cost table (issue 48, item 4).

::

    python -m benchmarks.grading_cost measure [--chapters 04,07] [--course DIR]   # minutes
    python -m benchmarks.grading_cost table                                      # instant

``measure`` builds the course (or reuses ``--course``), runs each chapter's release once
in the sandbox (the grader's reference run, which a real course also does once per
assignment, not per student: not counted), then grades each chapter's honest submission
(the release with the source's model answers, :func:`benchmarks.grading.honest_submission`)
once through the entry point ``python -m posenc_helpers.grading one`` under ``nice -n 19``,
in a control group of its own (:class:`MeasurementGroup`). It keeps, per chapter: the CPU
seconds of every process of that group and of the sandbox's groups below it (nbgrader, the
sandbox, the student's kernel, the verdict: ``cpuacct.usage``), the most memory the group
held at once, page cache included, as a pod's memory limit counts it
(``memory.max_usage_in_bytes``), the wall time, the points earned, and the machine's load
average before and after, into ``benchmarks/grading_cost.json``.

Why a control group: ``/usr/bin/time -v`` (the first measurement) counts only processes
whose parents waited for them, and the sandbox's first process ends its namespace without
waiting for the kernel: it read 9.5 to 12.0 CPU-s for every chapter, chapter 11 included,
whose notebook trains for minutes. The group is made on cgroup v1's ``cpuacct`` and
``memory`` hierarchies (as root); on cgroup v2 the sandbox's own groups would have to be
made below a leaf, which :mod:`posenc_helpers.grading.cgroups` does not do yet, so
``measure`` says so and stops.

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
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from posenc_helpers.grading import cgroups

ROOT = Path(__file__).resolve().parents[1]
QUIET_LOAD = 1.5  # a load average at most this, on two cores, is the measurement alone
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


#: How :func:`measure` reads a submission's cost; :func:`table` refuses any other record.
METHOD = "cgroup v1: cpuacct.usage, memory.max_usage_in_bytes"


class MeasurementGroup:
    """A control group on the ``cpuacct`` and ``memory`` hierarchies for one measured run.

    The command joins it before it starts (:meth:`join`, as ``preexec_fn``); every process
    it starts stays in it, and the groups the sandbox makes for itself are made below it
    (:mod:`posenc_helpers.grading.cgroups` makes them under the grader's own group), so
    :meth:`cpu_seconds` and :meth:`peak_mib` count them all.
    """

    def __init__(self, folders: dict[str, Path]) -> None:
        if set(folders) != {"cpuacct", "memory"}:
            raise ValueError(f"folders must name the cpuacct and memory groups; got {sorted(folders)}")
        self.folders = folders

    @classmethod
    def make(cls, name: str) -> MeasurementGroup:
        """A new group ``name`` below this process's own, in both hierarchies (root only)."""
        found = cgroups.v1_folders(
            Path("/proc/self/mountinfo").read_text(), Path("/proc/self/cgroup").read_text(), ("cpuacct", "memory")
        )
        if set(found) != {"cpuacct", "memory"}:
            raise RuntimeError(
                "the cost is measured on cgroup v1's cpuacct and memory hierarchies, which this machine "
                f"does not mount (found: {sorted(found) or 'none'}); see the module docstring"
            )
        folders = {controller: folder / name for controller, folder in found.items()}
        for folder in folders.values():
            folder.mkdir()
        return cls(folders)

    def join(self) -> None:
        """Move the calling process into the group (for ``subprocess``'s ``preexec_fn``)."""
        for folder in self.folders.values():
            (folder / "cgroup.procs").write_text(str(os.getpid()))

    def cpu_seconds(self) -> float:
        """CPU time of every process that was in the group or below it, in seconds."""
        return int((self.folders["cpuacct"] / "cpuacct.usage").read_text()) / 1e9

    def peak_mib(self) -> float:
        """The most memory the group (and the groups below it) held at once, in MiB."""
        return int((self.folders["memory"] / "memory.max_usage_in_bytes").read_text()) / 2**20

    def remove(self) -> None:
        """Remove the group's folders (the sandbox's own removal, which waits for them to empty)."""
        cgroups.Group(list(self.folders.values()), 1).remove()


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
    measured = {
        "date": time.strftime("%Y-%m-%d"),
        "cores": os.cpu_count(),
        "nice": 19,
        "method": METHOD,
        "chapters": rows,
    }
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
        group = MeasurementGroup.make(f"posenc-cost-{os.getpid()}-{name}")
        try:
            started = time.perf_counter()
            ran = subprocess.run(
                ["nice", "-n", "19", sys.executable, "-m", "posenc_helpers.grading", "one",
                 "--release", str(course), "--submission", str(submission), "--out", str(out), "--assignment", name],
                capture_output=True, text=True, check=False, cwd=ROOT, preexec_fn=group.join,
            )  # fmt: skip
            wall_s = time.perf_counter() - started
            cost = {
                "cpu_s": round(group.cpu_seconds(), 2),
                "peak_mib": round(group.peak_mib(), 1),
                "wall_s": round(wall_s, 2),
            }
        finally:
            group.remove()
        if ran.returncode != 0:
            raise RuntimeError(f"{name}: the entry point failed:\n{ran.stdout[-2000:]}\n{ran.stderr[-3000:]}")
        result = json.loads((out / "result.json").read_text(encoding="utf-8"))
        auto = [row for row in result["cells"] if row["autograded"]]
        rows[name] = {
            **cost,
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
    """The cost table (Markdown) from ``measured`` (:func:`measure`'s) and :data:`ASSUMPTIONS`.

    Raises
    ------
    ValueError
        ``measured`` was not taken by :data:`METHOD` (the first record, timed with
        ``/usr/bin/time -v``, left out the sandboxed kernel).
    """
    if measured.get("method") != METHOD:
        raise ValueError(
            f"measured was taken by {measured.get('method', '/usr/bin/time -v')!r}, not by {METHOD!r}: "
            "it leaves the sandboxed kernel out; measure again (python -m benchmarks.grading_cost measure)"
        )
    rows = measured["chapters"]
    a = ASSUMPTIONS
    lines = [
        "| chapter | CPU-s per submission (measured) | peak memory, MiB (measured) | wall, s (measured) "
        "| points earned (measured) |",
        "|---|---|---|---|---|",
    ]
    stopped = [name for name, row in rows.items() if row["earned"] < row["autograded_max"]]
    for name, row in rows.items():
        short = " (stopped before the end: too few CPU-s)" if name in stopped else ""
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
    busiest = max(row["load_before"] for row in rows.values())
    machine_was = (
        f"{measured['cores']} cores with nothing else running (the load average beside each wall time, at most "
        f"{busiest:.1f}, is the measurement's own)"
        if busiest <= QUIET_LOAD
        else f"{measured['cores']} cores shared with other work (the load average beside each wall time)"
    )
    lines += [
        "",
        f"Measured ({measured['date']}, `python -m benchmarks.grading_cost measure`, {machine_was}, "
        f"`nice -n {measured['nice']}`): one "
        "honest submission per chapter (the release with the model answers) graded once through "
        "`python -m posenc_helpers.grading one` in its bubblewrap sandbox, in a control group of its own; "
        "CPU-s is the CPU time of every process of that group and of the sandbox's groups below it (nbgrader, "
        "the sandbox, the student's kernel, the verdict: `cpuacct.usage`), peak memory the most they held at "
        "once, page cache included, as a pod's limit counts it (`memory.max_usage_in_bytes`). The grader's reference "
        "run of each release (once per assignment, not per student) is not counted. The derived times below "
        "use CPU-s, not the wall times."
        + (
            " An honest submission earns every point; one that earned less was stopped before its notebook "
            "ended (its runner killed, on a machine this loaded), so its CPU-s are too few and the sums below "
            "too low by as much."
            if stopped
            else " Every submission earned every point: each notebook ran to its end."
        ),
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
