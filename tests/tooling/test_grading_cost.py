"""The cost table's arithmetic (benchmarks/grading_cost.py, issue 48 item 4), on made-up measurements.

Each expected figure is worked out by hand from two chapters of 10 and 30 CPU-s and the
stated assumptions (2 cores; pods 10 s to start; Gradescope 30 s to start, 50 at a time).
"""

from __future__ import annotations

import pytest

from benchmarks import grading_cost


def _row(cpu, peak=300.0):
    return {"cpu_s": cpu, "peak_mib": peak, "wall_s": cpu, "earned": 7.0, "autograded_max": 7.0,
            "load_before": 1.0, "load_after": 1.0, "isolation": "bwrap", "reference_s": 3.0}  # fmt: skip


MEASURED = {
    "date": "2026-11-29",
    "cores": 2,
    "nice": 19,
    "method": grading_cost.METHOD,
    "chapters": {"ch04": _row(10.0), "ch07": _row(30.0)},
}


def test_the_group_reads_cpu_and_memory(tmp_path):
    (tmp_path / "cpuacct").mkdir()
    (tmp_path / "memory").mkdir()
    (tmp_path / "cpuacct" / "cpuacct.usage").write_text("12500000000\n")  # ns
    (tmp_path / "memory" / "memory.max_usage_in_bytes").write_text(str(3 * 2**29) + "\n")
    group = grading_cost.MeasurementGroup({"cpuacct": tmp_path / "cpuacct", "memory": tmp_path / "memory"})
    assert group.cpu_seconds() == 12.5
    assert group.peak_mib() == 1536.0
    with pytest.raises(ValueError, match="cpuacct and memory"):
        grading_cost.MeasurementGroup({"memory": tmp_path})


def test_a_record_of_another_method_is_refused():
    old = {key: value for key, value in MEASURED.items() if key != "method"}
    with pytest.raises(ValueError, match="sandboxed kernel"):
        grading_cost.table(old)


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


def test_the_notes_say_how_busy_the_machine_was_and_whether_every_notebook_ended():
    """The notes said "shared with other work" and warned of stopped notebooks whatever the record
    held; now they follow the loads and points measured."""
    quiet = grading_cost.table(MEASURED)
    assert "with nothing else running" in quiet and "at most 1.0" in quiet and "shared with" not in quiet
    assert "Every submission earned every point" in quiet and "too low by as much" not in quiet
    busy = {**MEASURED, "chapters": {"ch04": {**_row(10.0), "load_before": 5.2, "earned": 3.0}}}
    text = grading_cost.table(busy)
    assert "shared with other work" in text and "too low by as much" in text
    assert "3 of 7 (stopped before the end: too few CPU-s)" in text
