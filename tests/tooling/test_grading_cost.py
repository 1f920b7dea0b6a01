"""The cost table's arithmetic (benchmarks/grading_cost.py, issue 48 item 4), on made-up measurements.

Each expected figure is worked out by hand from two chapters of 10 and 30 CPU-s and the
stated assumptions (2 cores; pods 10 s to start; Gradescope 30 s to start, 50 at a time).
"""

from __future__ import annotations

import pytest

from benchmarks import grading_cost

TIME_V = """\tCommand being timed: "python -m posenc_helpers.grading one"
\tUser time (seconds): 7.25
\tSystem time (seconds): 1.50
\tElapsed (wall clock) time (h:mm:ss or m:ss): 1:02.50
\tMaximum resident set size (kbytes): 524288
"""


def _row(cpu, peak=300.0):
    return {"cpu_s": cpu, "peak_mib": peak, "wall_s": cpu, "earned": 7.0, "autograded_max": 7.0,
            "load_before": 1.0, "load_after": 1.0, "isolation": "bwrap", "reference_s": 3.0}  # fmt: skip


MEASURED = {"date": "2026-11-29", "cores": 2, "nice": 19, "chapters": {"ch04": _row(10.0), "ch07": _row(30.0)}}


def test_time_v_is_read():
    assert grading_cost._time_v(TIME_V) == {"cpu_s": 8.75, "peak_mib": 512.0, "wall_s": 62.5}
    with pytest.raises(ValueError, match="printed no"):
        grading_cost._time_v("nothing")


def test_the_derived_times_follow_from_the_measurements():
    assert grading_cost.ASSUMPTIONS == {"machine_cores": 2, "pod_start_s": 10.0, "gradescope_start_s": 30.0,
                                        "gradescope_concurrency": 50}  # fmt: skip
    text = grading_cost.table(MEASURED)
    rows = {line.split("|")[1].strip(): [c.strip() for c in line.split("|")[2:-1]] for line in text.splitlines()
            if line.startswith("| 200 students") or line.startswith("| 2000 students")}  # fmt: skip
    # one machine: 200 x 40 CPU-s / 2 = 4000 s = 67 min; 2000 students: 40000 s = 11.1 h
    # Gradescope: ceil(200/50) = 4 waves x (40 + 60) s = 400 s = 7 min; 2000: 40 waves = 4000 s = 67 min
    # 10 pods: 20 x (20 + 40) = 1200 s = 20 min; 50 pods: 4 x 60 = 240 s = 4 min; 200 pods: 60 s
    assert rows["200 students"] == ["67 min", "7 min", "20 min", "4 min", "60 s"]
    # 2000: 10 pods 200 x 60 = 12000 s = 3.3 h; 50 pods 40 x 60 = 2400 s = 40 min; 200 pods 10 x 60 = 10 min
    assert rows["2000 students"] == ["11.1 h", "67 min", "3.3 h", "40 min", "10 min"]
    assert "| **one student, all 2** | **40** |" in text
    assert "The slowest chapter is ch07 (30 CPU-s)" in text and "below the pod's 2 GiB limit." in text


def test_a_chapter_over_the_pod_s_memory_is_named():
    measured = {**MEASURED, "chapters": {"ch11": _row(50.0, peak=3000.0)}}
    assert "EXCEPT the largest" in grading_cost.table(measured)


def test_the_table_goes_between_the_markers_only(tmp_path, monkeypatch):
    page = tmp_path / "page.md"
    page.write_text(f"before\n{grading_cost.START}\nold\n{grading_cost.END}\nafter\n")
    other = tmp_path / "other.md"
    other.write_text("no markers\n")
    monkeypatch.setattr(grading_cost, "TARGETS", (page, other))
    assert grading_cost.write_table("NEW") == [page]
    assert page.read_text() == f"before\n{grading_cost.START}\nNEW\n{grading_cost.END}\nafter\n"
    assert other.read_text() == "no markers\n"
