"""The lane table of benchmarks/README.md is the one ``tools/lane_times.py`` writes (issue 49):
its format, not its numbers, which only a run on a quiet machine may change."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tools import lane_times

ROOT = Path(__file__).resolve().parents[2]


def _block(text: str) -> str:
    return text[text.index(lane_times.BEGIN) : text.index(lane_times.END) + len(lane_times.END)]


def test_the_committed_table_has_the_format_the_script_writes():
    text = (ROOT / "benchmarks" / "README.md").read_text(encoding="utf-8")
    assert text.count(lane_times.BEGIN) == 1 and text.count(lane_times.END) == 1
    block = _block(text)
    table = lane_times.parse(block)
    assert lane_times.render(table) == block, "edited by hand: regenerate it with `make lane-times`"
    lanes = [lane for lane, _, _ in table.rows]
    assert sorted(lanes) == sorted(lane_times.makefile_lanes()), "one row per lane of make test"


def test_every_lane_of_make_test_is_described():
    assert set(lane_times.WHAT) == set(lane_times.makefile_lanes())
    assert set(lane_times.WHAT) >= lane_times.BUILDS_FIRST


def test_the_lanes_are_read_across_continued_lines(tmp_path):
    makefile = tmp_path / "Makefile"
    makefile.write_text(
        "test:\n\tmake _test-parallel\n\n_test-parallel: a-lane b \\\n                c\n\nc:\n\ttrue\n"
    )
    assert lane_times.makefile_lanes(makefile) == ["a-lane", "b", "c"]


def test_every_pytest_summary_of_a_lane_is_summed():
    # the book's lane: the browser, then the editions (one skipped, warnings are not tests)
    log = (
        "building the book\n"
        "...................... [100%]\n"
        "144 passed in 2165.88s (0:36:05)\n"
        "building the editions\n"
        "======= 8 passed, 1 skipped, 3 warnings in 32.85s =======\n"
        "2 failed, 98 passed, 1 xfailed in 10.25s (0:00:10)\n"
    )
    tests, seconds = lane_times.read_summaries(log)
    assert tests == 144 + 8 + 1 + 2 + 98 + 1
    assert seconds == pytest.approx(2165.88 + 32.85 + 10.25)


def test_a_log_without_a_pytest_summary_gives_none():
    assert lane_times.read_summaries("ruff check\nAll checks passed!\nSuccess: no issues in 186 files\n") is None


@pytest.mark.parametrize(("seconds", "text"), [(0.4, "0 s"), (46.2, "46 s"), (59.6, "1 min 0 s"), (951, "15 min 51 s")])
def test_durations(seconds, text):
    assert lane_times.duration(seconds) == text


FIELDS = {
    "how": "`python -m tools.lane_times`",
    "commit": "abc1234",
    "subject": "A commit",
    "machine": "2 cores (a CPU), load average 0.1 at the start",
    "date": "2026-11-29",
    "total": "14 min 2 s",
    "jobs": "2",
}


def test_rows_are_the_longest_first_with_pytest_s_own_time():
    measured = [
        lane_times.Measured("lint", wall=41.6),
        lane_times.Measured("test-unit", wall=150.0, tests=2742, pytest_seconds=136.4),
        lane_times.Measured("_book-then-browser", wall=700.0, tests=138, pytest_seconds=573.2),
    ]
    table = lane_times.table_of(measured, FIELDS)
    assert table.rows == [
        ("_book-then-browser", "138", "573 s (+ the build)"),
        ("test-unit", "2,742", "136 s"),
        ("lint", "–", "42 s"),
    ]
    block = lane_times.render(table)
    assert "| `test-unit` | unit, property and tooling tests, slow ones included | 2,742 | 136 s |" in block
    assert "**14 min 2 s** in all, 2 lanes at a time" in block.replace("\n", " ")
    assert lane_times.parse(block) == table


def test_a_hand_edited_block_is_refused():
    block = lane_times.render(lane_times.table_of([lane_times.Measured("lint", wall=3.0)], FIELDS))
    with pytest.raises(ValueError, match="not a row"):
        lane_times.parse(block.replace("ruff and mypy", "ruff, mypy"))
    with pytest.raises(ValueError, match="paragraph"):
        lane_times.parse(block.replace("in all", "altogether"))
    with pytest.raises(ValueError, match="once"):
        lane_times.replace_block("no markers", block)
    text = f"before\n{block}\nafter\n"
    assert lane_times.replace_block(text, "NEW") == "before\nNEW\nafter\n"


FAKE_MAKE = """
import sys
lane = sys.argv[1]
if lane == "pytest-lane":  # two pytest runs, as the book's lane starts several
    print("3 passed in 2.00s")
    print("building something between them")
    print("=== 1 passed, 1 skipped in 0.50s ===")
sys.exit(3 if lane == "failing-lane" else 0)
"""


def test_a_lane_is_run_by_its_target_and_read_from_its_log(tmp_path):
    fake = tmp_path / "fake_make.py"
    fake.write_text(FAKE_MAKE)
    make = (sys.executable, str(fake))
    env = {"PYTEST_ADDOPTS": "-q"}
    measured = lane_times.run_lane("pytest-lane", tmp_path, env, make)
    assert (measured.lane, measured.tests, measured.pytest_seconds) == ("pytest-lane", 5, 2.5)
    assert measured.wall > 0
    no_pytest = lane_times.run_lane("lint", tmp_path, env, make)
    assert (no_pytest.tests, no_pytest.pytest_seconds) == (None, None)
    with pytest.raises(RuntimeError, match=r"lane failing-lane failed \(exit 3\): see .*failing-lane\.log"):
        lane_times.run_lane("failing-lane", tmp_path, env, make)


def test_the_cores_busy_share_comes_from_proc_stat(tmp_path):
    stat = tmp_path / "stat"
    # user nice system idle iowait irq softirq steal guest guest_nice
    stat.write_text("cpu  100 10 40 800 30 5 5 10 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\n")
    assert lane_times.cpu_ticks(stat) == (100 + 10 + 40 + 5 + 5 + 10, 1000)
    # 1000 more ticks, of which 170 + 580 = 750 busy: 75 %
    assert lane_times.busy_percent((170, 1000), (920, 2000)) == 75
    with pytest.raises(ValueError, match="second reading must come after the first"):
        lane_times.busy_percent((170, 1000), (170, 1000))


def test_the_busy_share_is_written_and_read_back():
    table = lane_times.table_of([lane_times.Measured("lint", wall=3.0)], {**FIELDS, "busy": "97"})
    block = lane_times.render(table)
    assert "The cores were busy 97 % of that time" in block.replace("\n", " ")
    assert lane_times.parse(block) == table
    without = lane_times.table_of([lane_times.Measured("lint", wall=3.0)], FIELDS)
    assert "busy" not in lane_times.parse(lane_times.render(without)).fields


SPINNING_MAKE = """
import os, sys, time
# A grandchild that nobody waits for (as a sandbox's kernel is) spins for 0.5 s of CPU, then
# tells the lane through a pipe; the lane itself never calls wait() on it.
read_end, write_end = os.pipe()
if os.fork() == 0:
    if os.fork() == 0:
        start = time.process_time()
        while time.process_time() - start < 0.5:
            pass
        os.write(write_end, b"done")
        os._exit(0)
    os._exit(0)
os.wait()  # the child, which ended at once; the grandchild is nobody's to wait for
os.read(read_end, 4)
time.sleep(0.2)  # the grandchild's exit
"""


def test_a_lane_s_cpu_time_counts_the_processes_nobody_waited_for(tmp_path):
    probe = lane_times.cpu_group(f"posenc-lane-times-probe-{os.getpid()}")
    if probe is None:
        pytest.skip("no cgroup v1 cpuacct group can be made here (cgroup v2, or not root)")
    probe.rmdir()
    fake = tmp_path / "spinning_make.py"
    fake.write_text(SPINNING_MAKE)
    measured = lane_times.run_lane("spin", tmp_path, {}, (sys.executable, str(fake)))
    assert measured.cpu_seconds is not None and measured.cpu_seconds >= 0.5, measured
    assert not list(Path("/sys/fs/cgroup").glob(f"**/posenc-lane-times-{os.getpid()}-spin"))


def test_the_cpu_time_of_each_lane_and_their_sum_are_written_and_read_back():
    measured = [
        lane_times.Measured("lint", wall=41.6, cpu_seconds=60.4),
        lane_times.Measured("test-course", wall=2500.0, tests=100, pytest_seconds=2451.2, cpu_seconds=3911.6),
        lane_times.Measured("_book-then-browser", wall=2300.0, tests=144, pytest_seconds=1939.0, cpu_seconds=2100.2),
    ]
    table = lane_times.table_of(measured, FIELDS)
    assert table.rows == [
        ("test-course", "100", "2451 s; 3,912 CPU-s"),
        ("_book-then-browser", "144", "1939 s (+ the build); 2,100 CPU-s"),
        ("lint", "–", "42 s; 60 CPU-s"),
    ]
    assert table.fields["cpu"] == "6,072"  # 60.4 + 3911.6 + 2100.2 = 6072.2
    block = lane_times.render(table)
    assert "6,072 CPU-s in all." in block.replace("\n", " ")
    assert lane_times.parse(block) == table
    partly = lane_times.table_of([*measured, lane_times.Measured("audit", wall=5.0)], FIELDS)
    assert "cpu" not in partly.fields, "no sum where a lane was not measured"
