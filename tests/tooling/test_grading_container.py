"""Grading one submission anywhere (issue 48): when a container may be the sandbox, and the pod's steps.

The probes of :mod:`posenc_helpers.grading.container` are replaced one at a time, so each
condition is shown to be checked and named by :mod:`posenc_helpers.grading.isolation`'s
choice; bubblewrap is made to fail the same way.
Nothing here runs a submission (tests/course/test_k8s_job.py does).
"""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

import pytest

from posenc_helpers.grading import container, isolation, one, pod, sandbox
from posenc_helpers.grading.__main__ import main as grading_main

CONFINED = dict.fromkeys(container.PROBES, True)


@pytest.fixture
def no_bwrap(monkeypatch):
    monkeypatch.setattr(sandbox, "available", lambda: "bwrap cannot make a sandbox here: No permissions")


def _probes(monkeypatch, **holds: bool) -> None:
    for name, value in {**CONFINED, **holds}.items():
        monkeypatch.setitem(container.PROBES, name, lambda value=value: value)


def test_bubblewrap_comes_first_whatever_the_container(monkeypatch):
    monkeypatch.setattr(sandbox, "available", lambda: None)
    _probes(monkeypatch, non_root=False, read_only_root=False, no_network=False)
    assert isolation.choose_isolation().kind == "bwrap"
    assert isolation.choose_isolation().notes == []


def test_a_confined_container_is_the_sandbox_and_says_so(monkeypatch, no_bwrap):
    _probes(monkeypatch)
    chosen = isolation.choose_isolation()
    assert chosen.kind == "container"
    assert "bubblewrap cannot make a sandbox here" in chosen.notes[0]
    assert "seccomp" in chosen.notes[1]


@pytest.mark.parametrize("condition", list(container.PROBES))
def test_each_missing_condition_refuses_and_is_named(monkeypatch, no_bwrap, condition):
    _probes(monkeypatch, **{condition: False})
    with pytest.raises(isolation.NoConfinedSandbox) as caught:
        isolation.choose_isolation()
    message = str(caught.value)
    assert container.CONDITIONS[condition] in message
    others = [text for name, text in container.CONDITIONS.items() if name != condition]
    assert not any(text in message for text in others)
    assert "Nothing was graded" in message


def test_every_missing_condition_is_named_at_once(monkeypatch, no_bwrap):
    _probes(monkeypatch, non_root=False, read_only_root=False, no_network=False, seccomp=False)
    with pytest.raises(isolation.NoConfinedSandbox) as caught:
        isolation.choose_isolation()
    assert all(text in str(caught.value) for text in container.CONDITIONS.values())


def test_unsafe_grades_without_a_sandbox_only_when_asked_and_says_so(monkeypatch, no_bwrap):
    _probes(monkeypatch, no_network=False)
    chosen = isolation.choose_isolation(unsafe=True)
    assert chosen.kind == "none" and "WITHOUT a sandbox" in chosen.notes[-1]
    with pytest.raises(TypeError, match="unsafe"):
        isolation.choose_isolation(unsafe="yes")


def test_the_probes_read_this_machine(monkeypatch):
    class Mounted:
        def __init__(self, flags):
            self.f_flag = flags

    monkeypatch.setattr(os, "statvfs", lambda path: Mounted(os.ST_RDONLY | os.ST_NOSUID))
    assert container.root_is_read_only() is True
    monkeypatch.setattr(os, "statvfs", lambda path: Mounted(os.ST_NOSUID))
    assert container.root_is_read_only() is False
    monkeypatch.undo()
    names = container.network_interfaces()
    assert "lo" in names and names == sorted(names)
    assert container.PROBES["non_root"]() is (os.geteuid() != 0)
    assert container.PROBES["no_network"]() is all(name == "lo" for _, name in socket.if_nameindex())


def test_the_sandbox_refuses_container_isolation_where_the_container_is_not_confined(monkeypatch):
    _probes(monkeypatch, read_only_root=False)
    with pytest.raises(sandbox.SandboxUnavailable, match="read-only root filesystem"):
        sandbox.run(["/usr/bin/true"], isolation="container")


def _course(tmp_path: Path) -> Path:
    course = tmp_path / "course"
    (course / "release" / "ch04").mkdir(parents=True)
    (course / "release" / "ch04" / "04_x.ipynb").write_text("{}")
    return course


def test_the_entry_point_refuses_in_an_open_container_and_writes_why(monkeypatch, no_bwrap, tmp_path, capsys):
    _probes(monkeypatch, non_root=False, no_network=False)
    submission = tmp_path / "04_x.ipynb"
    submission.write_text("{}")
    code = grading_main(
        ["one", "--release", str(_course(tmp_path)), "--submission", str(submission), "--out", str(tmp_path / "o")]
    )
    assert code == 3
    error = capsys.readouterr().err
    assert "cannot grade" in error and container.CONDITIONS["non_root"] in error
    assert container.CONDITIONS["no_network"] in error and container.CONDITIONS["seccomp"] not in error
    result = json.loads((tmp_path / "o" / "result.json").read_text())
    assert result["schema_version"] == one.SCHEMA_VERSION and result["status"] == "not-graded"
    assert result["total"] == 0 and result["cells"] == [] and container.CONDITIONS["non_root"] in result["messages"][0]


def test_a_linked_submission_is_refused_unread(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("grader only")
    link = tmp_path / "04_x.ipynb"
    link.symlink_to(secret)
    result = one.grade_one(_course(tmp_path), link, tmp_path / "o")
    assert result["status"] == "refused" and "a symbolic link" in result["messages"][0]
    assert "grader only" not in (tmp_path / "o" / "result.json").read_text()


@pytest.mark.parametrize(
    ("arguments", "words"),
    [
        ({"student": "../x"}, "student"),
        ({"student": ""}, "student"),
        ({"assignment": "ch05"}, "ch05"),
    ],
)
def test_the_entry_point_names_bad_input(tmp_path, arguments, words):
    submission = tmp_path / "04_x.ipynb"
    submission.write_text("{}")
    with pytest.raises(ValueError, match=words):
        one.grade_one(_course(tmp_path), submission, tmp_path / "o", **arguments)
    with pytest.raises(TypeError, match="release"):
        one.grade_one(str(tmp_path), submission, tmp_path / "o")


def test_the_job_index_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv(pod.INDEX_VARIABLE, "12")
    assert pod.job_index() == 12
    for bad in ("", "-1", "x"):
        monkeypatch.setenv(pod.INDEX_VARIABLE, bad)
        with pytest.raises(ValueError, match=pod.INDEX_VARIABLE):
            pod.job_index()


def _volume(tmp_path: Path, path: str = "submissions/0/04_x.ipynb") -> Path:
    volume = tmp_path / "volume"
    (volume / "course").mkdir(parents=True)
    (volume / "course" / "nbgrader_config.py").write_text("c = get_config()\n")
    entry = {"index": 0, "student": "ada", "assignment": "ch04", "path": path}
    index = {"schema_version": 1, "assignment": "ch04", "submissions": [entry, {**entry, "index": 1}]}
    (volume / "index.json").write_text(json.dumps(index))
    return volume


def test_stage_copies_its_own_submission_alone(tmp_path):
    volume = _volume(tmp_path)
    (volume / "submissions" / "0").mkdir(parents=True)
    (volume / "submissions" / "0" / "04_x.ipynb").write_text('{"mine": 1}')
    entry = pod.stage(volume, tmp_path / "in", 0)
    assert entry["student"] == "ada"
    assert (tmp_path / "in" / "submissions" / "0" / "04_x.ipynb").read_text() == '{"mine": 1}'
    staged = json.loads((tmp_path / "in" / "index.json").read_text())
    assert [e["index"] for e in staged["submissions"]] == [0]
    with pytest.raises(ValueError, match="JOB_COMPLETION_INDEX=5"):
        pod.stage(volume, tmp_path / "in5", 5)


@pytest.mark.parametrize("path", ["../escape.ipynb", "/etc/passwd"])
def test_stage_refuses_a_path_outside_the_volume(tmp_path, path):
    with pytest.raises(ValueError, match="relative"):
        pod.stage(_volume(tmp_path, path), tmp_path / "in", 0)


def test_stage_refuses_a_linked_submission(tmp_path):
    volume = _volume(tmp_path)
    (volume / "submissions" / "0").mkdir(parents=True)
    (volume / "submissions" / "0" / "04_x.ipynb").symlink_to(volume / "index.json")
    with pytest.raises(ValueError, match="a symbolic link"):
        pod.stage(volume, tmp_path / "in", 0)


def test_publish_copies_the_result_and_its_notebook_and_no_link(tmp_path):
    out, results = tmp_path / "out", tmp_path / "results"
    out.mkdir()
    results.mkdir()
    one.write_result(out, {"notebook": "04_x", "status": "graded", "schema_version": 1})
    (out / "04_x.ipynb").write_text("{}")
    (out / "planted.txt").write_text("not published")
    folder = pod.publish(out, results, 3)
    assert sorted(p.name for p in folder.iterdir()) == ["04_x.ipynb", "result.json"]
    (out / "04_x.ipynb").unlink()
    (out / "04_x.ipynb").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(ValueError, match="a symbolic link"):
        pod.publish(out, results, 4)
    assert not (results / "4").exists()
