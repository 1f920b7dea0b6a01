"""The machine's pace (benchmarks/pace.py): the best of several timed calls, and how the lane
table and make bench print it."""

from __future__ import annotations

import math

import pytest

from benchmarks import pace
from benchmarks.common import best_time
from tools import lane_times


def test_the_best_time_is_the_shortest_timed_call_after_an_untimed_one():
    calls = []
    # The clock reads 0, 5 | 10, 13 | 20, 24: the timed calls take 5, 3 and 4 "seconds".
    ticks = iter([0.0, 5.0, 10.0, 13.0, 20.0, 24.0])
    assert best_time(lambda: calls.append(1), repeats=3, clock=lambda: next(ticks)) == 3.0
    assert len(calls) == 4, "one untimed call, then three timed ones"


def test_repeats_below_one_are_refused():
    with pytest.raises(ValueError, match="repeats must be at least 1, got 0"):
        best_time(lambda: None, repeats=0)


def test_the_pace_in_words():
    assert pace.describe(pace.Pace(python_ms=17.64, numpy_ms=48.05)) == (
        "pace 17.6 ms (Python) and 48.0 ms (numpy), `benchmarks/pace.py`"
    )


def test_both_pieces_of_work_are_timed():
    measured = pace.measure(repeats=1)
    assert all(math.isfinite(v) and v > 0 for v in (measured.python_ms, measured.numpy_ms))


def test_the_lane_table_s_paragraph_keeps_the_pace_it_was_measured_at():
    machine = "2 cores (AMD EPYC), load average 0.1 at the start, " + pace.describe(pace.Pace(17.6, 48.1))
    fields = {
        "how": "`python -m tools.lane_times`",
        "commit": "abc1234",
        "subject": "A commit",
        "machine": machine,
        "date": "2026-11-29",
        "total": "52 min 3 s",
        "jobs": "2",
    }
    block = lane_times.render(lane_times.table_of([lane_times.Measured("lint", wall=3.0)], fields))
    assert lane_times.parse(block).fields["machine"] == machine


def test_lane_times_measures_the_pace_before_the_lanes(monkeypatch, tmp_path):
    order = []
    monkeypatch.setattr(lane_times, "_machine", lambda: ("2 cores (x), load average 0.0 at the start", 0.0))
    monkeypatch.setattr(lane_times, "_pace", lambda: order.append("pace") or "pace 1.0 ms (Python) and 2.0 ms (numpy)")
    monkeypatch.setattr(lane_times, "makefile_lanes", lambda: ["lint"])
    ticks = iter([(100, 200), (250, 400)])  # 150 of 200 ticks busy
    monkeypatch.setattr(lane_times, "cpu_ticks", lambda: next(ticks))
    monkeypatch.setattr(
        lane_times, "measure", lambda lanes, jobs: order.append("lanes") or [lane_times.Measured("lint", wall=1.0)]
    )
    readme = tmp_path / "README.md"
    readme.write_text(f"x\n{lane_times.BEGIN}\n{lane_times.END}\n")
    monkeypatch.setattr(lane_times, "README", readme)
    monkeypatch.setattr(lane_times, "ROOT", tmp_path)
    monkeypatch.setattr(lane_times, "_git", lambda *args: "abc1234" if args[0] == "rev-parse" else "A commit")
    assert lane_times.main([]) == 0
    assert order == ["pace", "lanes"]
    paragraph = readme.read_text().replace("\n", " ")
    assert "load average 0.0 at the start, pace 1.0 ms (Python) and 2.0 ms (numpy), 20" in paragraph
    assert "The cores were busy 75 % of that time" in paragraph
