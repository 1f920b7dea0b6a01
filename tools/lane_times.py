"""Measure each lane of ``make test`` and write the table "make test, lane by lane" of
``benchmarks/README.md``: ``.venv/bin/python -m tools.lane_times`` (issue 49).

The lanes are the prerequisites of the Makefile's ``_test-parallel``, read from the
Makefile, run as ``make test`` runs them: ``TEST_JOBS`` at a time in the Makefile's order
(the longest first), each by its own make target, chapter 11's runs shared through a
fresh ``_build/lab-test-cache``. A lane's tests and time are the sums over every pytest
it starts (the book's lane starts four: the browser, the editions, the EPUB, the archive),
read from each one's closing summary line in the lane's log (:func:`read_summaries`); the
builds between them are left out (the row says "+ the build"); a lane that runs no pytest
(``audit``, ``lint``) is timed whole. Nothing is written when a lane fails: its log is in
``_build/lane-times``.

The table and the paragraph above it sit between two markers and are rewritten whole;
``tests/tooling/test_lane_times.py`` holds the committed table to the format written
here (not to its numbers). Measure on a quiet machine: the paragraph records the load
average at the start, and the script refuses a busy machine unless ``--allow-load``. It
also records the machine's pace (:mod:`benchmarks.pace`), without which times from
different days do not compare, and how busy the cores were over the run (``/proc/stat``):
near 100 % says that ``make test`` is bound by the CPU, and shorter only with less work or
more cores. Where cgroup v1's ``cpuacct`` hierarchy is mounted (and as root), each lane runs
in a group of its own there and its row adds the CPU seconds of all its processes
(:func:`cpu_group`): the work ``make test`` asks of the cores, lane by lane, against which
a wall-time goal can be set.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import os
import re
import shutil
import subprocess
import sys
import textwrap
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "BEGIN",
    "END",
    "WHAT",
    "Measured",
    "Table",
    "makefile_lanes",
    "read_summaries",
    "run_lane",
    "measure",
    "table_of",
    "render",
    "parse",
    "replace_block",
    "duration",
    "cpu_ticks",
    "busy_percent",
    "cpu_group",
]

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "benchmarks" / "README.md"
LOGS = ROOT / "_build" / "lane-times"
LAB_TEST_CACHE = ROOT / "_build" / "lab-test-cache"

BEGIN = "<!-- lane-times: written by `python -m tools.lane_times`; do not edit by hand -->"
END = "<!-- /lane-times -->"
HEADER = "| lane (`make` target) | what | tests | time |\n|---|---|---|---|"
#: What each lane of ``_test-parallel`` checks (a test keeps it to the Makefile's lanes).
WHAT = {
    "_book-then-browser": "the book (`-W -n`), then every page in Chromium and JupyterLab; the editions, the "
    "EPUB and the archive",
    "test-notebooks-native": "nbval strict, every chapter (chapter 11 trains its live models into the shared store)",
    "test-notebooks-portable": "nbval strict under the portable profile (reads chapter 11's models from the store)",
    "test-course": "every chapter's release and source run, nbgrader and otter grade hostile and honest "
    "submissions in the sandbox",
    "test-student-book": "the student edition (built first), then its website shows no solution",
    "test-unit": "unit, property and tooling tests, slow ones included",
    "test-doctest": "the package's doctests",
    "audit": "stored outputs: no errors, stderr, widget state, paths, addresses or rounding-level figures",
    "lint": "ruff and mypy",
}
#: Lanes that build something before their pytest (the build is not in the time).
BUILDS_FIRST = frozenset({"_book-then-browser", "test-student-book"})
_PARAGRAPH = (
    'Measured by {how} at {commit} ("{subject}"), {machine}, {date}: **{total}** in all, {jobs} lanes at a '
    "time (`TEST_JOBS={jobs}`), the Makefile's longest first. A lane's time is its own pytest total, the build "
    "before it left out where the row says so; a lane without pytest is timed whole."
)
_BUSY = (
    " The cores were busy {busy} % of that time (`/proc/stat`: every process on the machine, the sandboxes' "
    "kernels included)."
)
_CPU = (
    " A lane's CPU-s are the CPU time of all its processes, its build and its sandboxes' kernels included "
    "(a group of its own on cgroup v1's `cpuacct`): {cpu} CPU-s in all."
)
_PARAGRAPH_RE = re.compile(
    re.escape(_PARAGRAPH)
    .replace(r"\{how\}", "(?P<how>.+?)")
    .replace(r"\{commit\}", "(?P<commit>[0-9a-f]{7,40})")
    .replace(r"\{subject\}", "(?P<subject>.*?)")
    .replace(r"\{machine\}", "(?P<machine>.+?)")
    .replace(r"\{date\}", r"(?P<date>\d{4}-\d\d-\d\d)")
    .replace(r"\{total\}", r"(?P<total>[^*]+)")
    .replace(r"\{jobs\}", r"(?P<jobs>\d+)", 1)
    .replace(r"\{jobs\}", r"(?P=jobs)")
    + "(?:"
    + re.escape(_BUSY).replace(r"\{busy\}", r"(?P<busy>\d+)")
    + ")?(?:"
    + re.escape(_CPU).replace(r"\{cpu\}", r"(?P<cpu>[\d,]+)")
    + ")?"
)
_ROW = re.compile(r"^\| `(?P<lane>[\w-]+)` \| (?P<what>.+?) \| (?P<tests>[^|]+) \| (?P<time>[^|]+) \|$")


@dataclass(frozen=True)
class Measured:
    """One lane's run: wall seconds of its make target, its pytest's count and total, and the
    CPU seconds of every process of the lane (None where no ``cpuacct`` group could be made)."""

    lane: str
    wall: float
    tests: int | None = None
    pytest_seconds: float | None = None
    cpu_seconds: float | None = None


@dataclass(frozen=True)
class Table:
    """The block between the markers: the paragraph's fields and the rows, as text."""

    fields: dict[str, str]
    rows: list[tuple[str, str, str]]  # (lane, tests, time); "what" is WHAT[lane]


def makefile_lanes(makefile: Path = ROOT / "Makefile") -> list[str]:
    """The prerequisites of ``_test-parallel``, in the Makefile's order."""
    text = makefile.read_text(encoding="utf-8").replace("\\\n", " ")
    found = re.search(r"^_test-parallel:(.*)$", text, re.M)
    if found is None:
        raise ValueError(f"{makefile}: no _test-parallel target")
    return found.group(1).split()


#: pytest's closing summary line, as ``-q`` prints it or between rules of "=":
#: ``2 failed, 98 passed, 1 skipped, 3 warnings in 2615.18s (0:43:35)``.
_SUMMARY = re.compile(
    r"^(?:=+ )?(?P<counts>\d+ [a-z]+(?:, \d+ [a-z]+)*) in (?P<seconds>[\d.]+)s(?: \([\d:]+\))?(?: =+)?$"
)
#: What the summary counts that is a test (warnings and deselected ones are not).
_TEST_OUTCOMES = frozenset({"passed", "failed", "skipped", "xfailed", "xpassed", "error", "errors"})


def read_summaries(log: str) -> tuple[int, float] | None:
    """The tests and seconds summed over every pytest summary line of a lane's ``log``; None
    when it holds none. A lane may start several pytest runs, each with its own summary (a
    junit report, which each run writes over the one before it, would keep only the last)."""
    tests, seconds, found = 0, 0.0, False
    for line in log.splitlines():
        summary = _SUMMARY.match(line.strip())
        if summary is None:
            continue
        found = True
        seconds += float(summary.group("seconds"))
        for count in summary.group("counts").split(", "):
            number, outcome = count.split(" ")
            tests += int(number) if outcome in _TEST_OUTCOMES else 0
    return (tests, seconds) if found else None


MAKE = ("make", "--no-print-directory")


def cpu_group(name: str) -> Path | None:
    """A new group ``name`` on cgroup v1's ``cpuacct`` hierarchy, below this process's own;
    None where none can be made (cgroup v2, no such hierarchy, not root).

    Every process a lane starts stays in it, the sandboxes' kernels too: the grader makes
    its groups on the ``memory``, ``cpu`` and ``pids`` hierarchies
    (:mod:`posenc_helpers.grading.cgroups`), never on ``cpuacct``; and no process waits for
    a sandbox's kernel, so ``getrusage`` of the lane would leave them out.
    """
    from posenc_helpers.grading.cgroups import v1_folders

    found = v1_folders(Path("/proc/self/mountinfo").read_text(), Path("/proc/self/cgroup").read_text(), ("cpuacct",))
    if "cpuacct" not in found:
        return None
    folder = found["cpuacct"] / name
    try:
        folder.mkdir()
    except OSError:
        return None
    return folder


def _in_group(command: list[str], group: Path | None) -> list[str]:
    """``command`` started by a shell that first moves itself into ``group``. Not by
    ``preexec_fn``: that runs Python's fork handlers in this process, and JAX's, where a test
    has imported it, warn of a deadlock (warnings are errors in the unit lane)."""
    if group is None:
        return command
    return ["sh", "-c", 'echo $$ > "$0/cgroup.procs" && exec "$@"', str(group), *command]


def run_lane(lane: str, logs: Path, env: dict[str, str], make: tuple[str, ...] = MAKE) -> Measured:
    """Run one lane's make target, its output in ``logs/LANE.log``; raise if it fails."""
    group = cpu_group(f"posenc-lane-times-{os.getpid()}-{lane}")
    start = time.monotonic()
    try:
        with (logs / f"{lane}.log").open("w") as log:
            done = subprocess.run(_in_group([*make, lane], group), cwd=ROOT, env=env, stdout=log, stderr=log)
        wall = time.monotonic() - start
        cpu = None if group is None else int((group / "cpuacct.usage").read_text()) / 1e9
    finally:
        if group is not None:
            with contextlib.suppress(OSError):  # a process left behind keeps it: the folder stays
                group.rmdir()
    if done.returncode != 0:
        raise RuntimeError(f"lane {lane} failed (exit {done.returncode}): see {logs / f'{lane}.log'}")
    summed = read_summaries((logs / f"{lane}.log").read_text(errors="replace"))
    if summed is None:
        return Measured(lane, wall, cpu_seconds=cpu)
    return Measured(lane, wall, *summed, cpu)


def measure(lanes: list[str], jobs: int, make: tuple[str, ...] = MAKE) -> list[Measured]:
    """Every lane, ``jobs`` at a time in the given order, as ``make test`` runs them."""
    LOGS.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(LAB_TEST_CACHE, ignore_errors=True)
    env = {**os.environ, "POSENC_LAB_CACHE": str(LAB_TEST_CACHE)}
    with ThreadPoolExecutor(jobs) as pool:
        runs = [pool.submit(run_lane, lane, LOGS, env, make) for lane in lanes]
        return [run.result() for run in runs]


def duration(seconds: float) -> str:
    """``"46 s"`` under a minute, else ``"15 min 51 s"``."""
    whole = round(seconds)
    return f"{whole} s" if whole < 60 else f"{whole // 60} min {whole % 60} s"


def table_of(measured: list[Measured], fields: dict[str, str]) -> Table:
    """The rows of a run, the longest lane first."""
    rows = []
    for m in sorted(measured, key=lambda m: -(m.pytest_seconds if m.pytest_seconds is not None else m.wall)):
        cpu = "" if m.cpu_seconds is None else f"; {round(m.cpu_seconds):,} CPU-s"
        if m.pytest_seconds is None:
            rows.append((m.lane, "–", f"{round(m.wall)} s{cpu}"))
        else:
            build = " (+ the build)" if m.lane in BUILDS_FIRST else ""
            rows.append((m.lane, f"{m.tests:,}", f"{round(m.pytest_seconds)} s{build}{cpu}"))
    if all(m.cpu_seconds is not None for m in measured):
        fields = {**fields, "cpu": f"{round(sum(m.cpu_seconds or 0.0 for m in measured)):,}"}
    return Table(fields, rows)


def render(table: Table) -> str:
    """The block between the markers, markers included."""
    text = _PARAGRAPH.format(**table.fields)
    text += _BUSY.format(**table.fields) if "busy" in table.fields else ""
    text += _CPU.format(**table.fields) if "cpu" in table.fields else ""
    paragraph = textwrap.fill(text, width=90, break_on_hyphens=False)
    rows = "\n".join(f"| `{lane}` | {WHAT[lane]} | {tests} | {took} |" for lane, tests, took in table.rows)
    return f"{BEGIN}\n{paragraph}\n\n{HEADER}\n{rows}\n{END}"


def parse(block: str) -> Table:
    """The inverse of :func:`render` (raises ``ValueError`` on any other format)."""
    lines = block.split("\n")
    if lines[0] != BEGIN or lines[-1] != END:
        raise ValueError("the block must open and close with the lane-times markers")
    blank = lines.index("")
    paragraph = _PARAGRAPH_RE.fullmatch(" ".join(lines[1:blank]))
    if paragraph is None:
        raise ValueError(f"the paragraph is not the one tools/lane_times.py writes: {' '.join(lines[1:blank])!r}")
    if "\n".join(lines[blank + 1 : blank + 3]) != HEADER:
        raise ValueError("the table's header is not the one tools/lane_times.py writes")
    rows = []
    for line in lines[blank + 3 : -1]:
        row = _ROW.fullmatch(line)
        if row is None or row.group("lane") not in WHAT or row.group("what") != WHAT[row.group("lane")]:
            raise ValueError(f"not a row tools/lane_times.py writes: {line!r}")
        rows.append((row.group("lane"), row.group("tests"), row.group("time")))
    return Table({name: value for name, value in paragraph.groupdict().items() if value is not None}, rows)


def replace_block(text: str, block: str) -> str:
    """``text`` with the block between its markers (markers included) replaced by ``block``."""
    if text.count(BEGIN) != 1 or text.count(END) != 1:
        raise ValueError("benchmarks/README.md must hold each lane-times marker once")
    start, end = text.index(BEGIN), text.index(END) + len(END)
    return text[:start] + block + text[end:]


def _machine() -> tuple[str, float]:
    """This machine in words, and its one-minute load average."""
    cpus = Path("/proc/cpuinfo").read_text().splitlines() if Path("/proc/cpuinfo").is_file() else []
    model = next((line.split(":", 1)[1].strip() for line in cpus if line.startswith("model name")), "unknown CPU")
    load = os.getloadavg()[0]
    return f"{os.cpu_count()} cores ({model}), load average {load:.1f} at the start", load


def _pace() -> str:
    """The machine's pace now (:mod:`benchmarks.pace`): times on other days compare only with it."""
    from benchmarks import pace

    return pace.describe(pace.measure())


def cpu_ticks(stat: Path = Path("/proc/stat")) -> tuple[int, int]:
    """The machine's CPU time since boot, in ticks: (busy, all). Idle and I/O wait are not busy."""
    fields = [int(v) for v in stat.read_text().split("\n", 1)[0].split()[1:9]]
    user, nice, system, idle, iowait, irq, softirq, steal = fields
    return user + nice + system + irq + softirq + steal, sum(fields)


def busy_percent(before: tuple[int, int], after: tuple[int, int]) -> int:
    """The share of the cores' time between two :func:`cpu_ticks` readings that was busy."""
    elapsed = after[1] - before[1]
    if elapsed <= 0:
        raise ValueError(f"the second reading must come after the first, got {before} and {after}")
    return round(100 * (after[0] - before[0]) / elapsed)


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()


def _subject(line: str, limit: int = 60) -> str:
    """A commit's subject, cut at a word before ``limit`` characters."""
    line = line.replace('"', "'").replace("*", "")
    return line if len(line) <= limit else line[:limit].rsplit(" ", 1)[0] + " ..."


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=int(os.environ.get("TEST_JOBS", "2")), help="lanes at a time")
    parser.add_argument("--allow-load", action="store_true", help="measure although the machine is busy")
    parser.add_argument("--dry-run", action="store_true", help="print the block instead of writing it")
    args = parser.parse_args(argv)
    machine, load = _machine()
    if load > 0.5 and not args.allow_load:
        print(f"lane_times: load average {load:.1f}: times measured under load are wrong; --allow-load to go on")
        return 2
    machine = f"{machine}, {_pace()}"
    start, ticks = time.monotonic(), cpu_ticks()
    measured = measure(makefile_lanes(), args.jobs)
    busy = busy_percent(ticks, cpu_ticks())
    fields = {
        "how": "`python -m tools.lane_times`",
        "commit": _git("rev-parse", "--short", "HEAD"),
        "subject": _subject(_git("log", "-1", "--format=%s")),
        "machine": machine,
        "date": datetime.date.today().isoformat(),
        "total": duration(time.monotonic() - start),
        "jobs": str(args.jobs),
        "busy": str(busy),
    }
    block = render(table_of(measured, fields))
    if args.dry_run:
        print(block)
    else:
        README.write_text(replace_block(README.read_text(encoding="utf-8"), block), encoding="utf-8")
        print(f"wrote the lane table of {README.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
