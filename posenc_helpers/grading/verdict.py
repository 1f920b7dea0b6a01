"""The verdict: each exercise graded outside the sandbox, on the answers the kernel recorded.

After the submission has run in its sandbox (:mod:`posenc_helpers.grading.execute`),
the grader (the nbgrader preprocessors in ``posenc_helpers.grading.nbgrader``, the
otter plugin in ``posenc_helpers.grading.otter``) calls :func:`grade`, which

* reads each exercise's check, answer names and forbidden helpers from the test
  cell *as released*, never from the record (:func:`released_spec`);
* takes exactly one record per exercise, from that exercise's own test cell; a
  missing, extra, malformed or misplaced record earns nothing;
* builds the check's arguments from the grader's own run of the release
  (:mod:`posenc_helpers.grading.reference`): only the arguments the released call
  fills with an answer come from the student's record, so data the exercise gives
  cannot be changed from the kernel;
* runs the package's own check on them in a fresh interpreter (:func:`judge`:
  ``python -I -S`` with an explicit ``sys.path``, so no ``.pth`` file or
  environment variable runs anything in it), reading the record as JSON; a function
  answer is replayed from the calls the kernel's check made to it;
* reads the cells the student could edit (:func:`~posenc_helpers.grading.scan.scan_cells`)
  and compares the kernel's own report with a fresh import;
* gives the points only to a correct answer, and says "Tampering suspected: ..." in
  one line when something above was seen.

Nothing here imports nbgrader or otter.
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..answer_cells import DYNAMIC_LOOKUP, answer_cell, cell_source, names_used
from .runtime import sandbox_environment
from .scan import scan_cells
from .values import RECORD_MIME

__all__ = [
    "TAMPERING",
    "RECORD_CALL",
    "RECORD_IMPORT",
    "Verdict",
    "ExerciseSpec",
    "released_spec",
    "records_in",
    "judge",
    "grade",
    "source_digest",
]

TAMPERING = "Tampering suspected"
VERDICT_TIMEOUT = 300  # seconds for the checks of one notebook
#: How a hidden test records an answer (the call :func:`released_spec` reads), and how it
#: imports the recorder: the one definition the course tools (``tools/course/nbgrader.py``,
#: which write the hidden tests), the runner (which keeps them out of the kernel's history)
#: and this verdict share.
RECORD_CALL = "_record.record"
RECORD_IMPORT = "from posenc_helpers.grading import record as _record"
_KERNEL_BUILTINS = {"input", "exit", "quit", "help", "copyright", "credits", "license"}  # ipykernel's own


@dataclass
class Verdict:
    """The grade of one exercise: ``earned`` and one line for the feedback."""

    label: str
    earned: bool
    message: str
    tampering: list[str] = field(default_factory=list)

    @property
    def line(self) -> str:
        if self.tampering:
            return (
                f"{TAMPERING} ({self.label}): " + "; ".join(dict.fromkeys(self.tampering))[:600] + ". This exercise "
                "earns no points until an instructor has looked at the notebook."
            )
        return f"{self.label}: {self.message}"


@dataclass
class ExerciseSpec:
    """What the released test cell of one exercise records: read from its source, not its outputs.

    ``answer_args`` are the positions (``"0"``, ``"1"`` ...) and keywords of the call that
    an answer fills; every other argument is data the exercise gives, taken from the
    grader's run of the release. ``literals`` are the arguments written as literals in
    the cell.
    """

    label: str
    check: str
    answers: list[str]
    forbid: list[str]
    require: list[str]
    literals: dict[str, Any]
    answer_args: list[str] = field(default_factory=list)


# --------------------------------------------------------------------------- the released test cell


def _reads_answer(node: ast.AST, answers: set[str]) -> bool:
    return any(isinstance(leaf, ast.Name) and leaf.id in answers for leaf in ast.walk(node))


def released_spec(test_source: str) -> ExerciseSpec | None:
    """The exercise a test cell records, from its ``_record.record({...}, ...)`` call; None if it has none.

    Raises
    ------
    ValueError
        If an answer is passed after a ``*`` argument or inside ``**``, where its place
        in the call could not be told from the source.
    """
    if not isinstance(test_source, str):
        raise TypeError(f"test_source must be a str; got {type(test_source).__name__}")
    try:
        tree = ast.parse(test_source)
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and ast.unparse(node.func) == RECORD_CALL and node.args:
            try:
                spec = ast.literal_eval(node.args[0])
            except ValueError:
                return None
            answers = set(spec.get("answers", []))
            literals: dict[str, Any] = {}
            answer_args: list[str] = []
            starred = False
            for index, argument in enumerate(node.args[1:]):
                starred |= isinstance(argument, ast.Starred)
                if _reads_answer(argument, answers):
                    if starred:
                        raise ValueError(f"{spec.get('label')}: an answer after a * argument cannot be placed")
                    answer_args.append(str(index))
                with contextlib.suppress(ValueError):
                    literals[str(index)] = ast.literal_eval(argument)
            for keyword in node.keywords:
                if _reads_answer(keyword.value, answers):
                    if keyword.arg is None:
                        raise ValueError(f"{spec.get('label')}: an answer inside ** cannot be placed")
                    answer_args.append(keyword.arg)
                if keyword.arg is not None:
                    with contextlib.suppress(ValueError):
                        literals[keyword.arg] = ast.literal_eval(keyword.value)
            return ExerciseSpec(
                label=str(spec["label"]),
                check=str(spec["check"]),
                answers=list(spec.get("answers", [])),
                forbid=list(spec.get("forbid", [])),
                require=list(spec.get("require", [])),
                literals=literals,
                answer_args=answer_args,
            )
    return None


# --------------------------------------------------------------------------- the fresh process


def _merge(item: dict[str, Any]) -> tuple[list[Any], dict[str, Any]]:
    """The check's arguments, encoded: the reference's, with the answers from the student's record."""
    reference = item["reference"]
    args = list(reference["args"])
    kwargs = dict(reference["kwargs"])
    student_args, student_kwargs = item["args"], item["kwargs"]
    if not isinstance(student_args, list) or not isinstance(student_kwargs, dict):
        raise TypeError("the record's arguments are not a list and a dict")
    for place in item["answer_args"]:
        if place.isdigit():
            if int(place) >= len(student_args) or int(place) >= len(args):
                raise ValueError("the record has fewer arguments than the released call")
            args[int(place)] = student_args[int(place)]
        else:
            if place not in student_kwargs:
                raise ValueError(f"the record has no argument {place!r}")
            kwargs[place] = student_kwargs[place]
    return args, kwargs


def _namespace_changes(kernel: dict[str, dict[str, str]]) -> list[str]:
    """What the kernel's report says its protected namespaces hold that a fresh import does not."""
    import builtins
    import importlib

    from .record import PROTECTED_MODULES, describe_namespace

    changed: list[str] = []
    fresh = {"builtins": describe_namespace(builtins)}
    for name in PROTECTED_MODULES:
        fresh[name] = describe_namespace(importlib.import_module(name))
    for module, names in fresh.items():
        seen = kernel.get(module)
        if not isinstance(seen, dict):
            if module in ("builtins", "numpy", "posenc_helpers.grading.record"):
                changed.append(f"the kernel did not report `{module}`")
            continue
        for name, description in names.items():
            if module == "builtins" and name in _KERNEL_BUILTINS:
                continue
            if seen.get(name) != description:
                changed.append(
                    f"`{module}.{name}` was replaced" if module != "builtins" else f"builtin `{name}` was replaced"
                )
        if module != "builtins":
            extra = sorted(set(seen) - set(names))
            changed += [f"`{module}.{name}` was added" for name in extra[:3]]
    return changed


def _judge_one(item: dict[str, Any]) -> dict[str, Any]:
    from posenc_helpers import checks
    from posenc_helpers.checks import CheckFailed, CheckResult

    from .values import ReplayMismatch, decode

    out: dict[str, Any] = {"label": item["label"], "tampering": []}
    report = item.get("kernel")
    if not isinstance(report, dict) or not isinstance(report.get("namespaces"), dict):
        out["tampering"].append("the record has no report of the kernel")
    else:
        out["tampering"] += [str(hook) for hook in report.get("hooks", [])][:5]
        out["tampering"] += _namespace_changes(report["namespaces"])[:5]
    try:
        encoded_args, encoded_kwargs = _merge(item)
        args = [decode(value) for value in encoded_args]
        kwargs = {str(key): decode(value) for key, value in encoded_kwargs.items()}
    except (KeyError, TypeError, ValueError) as error:
        out.update(status="malformed", message=f"the recorded answer could not be read ({error})")
        out["tampering"].append("a malformed record")
        return out
    for key, value in item.get("literals", {}).items():  # what the released cell wrote, not what was recorded
        if key.isdigit() and int(key) < len(args):
            args[int(key)] = value
        elif not key.isdigit():
            kwargs[key] = value
    check = getattr(checks, item["check"], None)
    if not (isinstance(item["check"], str) and item["check"].startswith("check_") and callable(check)):
        out.update(status="error", message=f"no check named {item['check']!r}")
        return out
    try:
        result = check(*args, **kwargs)
    except ReplayMismatch as error:
        out.update(status="wrong", message=f"the grader could not replay your function's answers: {error}.")
        out["tampering"].append("the check in the notebook called the function differently from the package's")
    except CheckFailed as error:
        out.update(status="wrong", message=str(error))
    except Exception as error:  # noqa: BLE001 - an answer the check cannot read
        out.update(status="wrong", message=f"the check could not read the answer ({type(error).__name__})")
    else:
        if isinstance(result, CheckResult) and result.status == "correct":
            out.update(status="correct", message=result.message)
        else:
            out.update(status="not attempted", message="not answered yet, so this exercise earns no points.")
    return out


def _main() -> None:
    items = json.loads(sys.stdin.read())
    json.dump([_judge_one(item) for item in items], sys.stdout)


#: How the fresh interpreter starts: ``-I -S -B`` (no site, no user paths, no environment, no
#: bytecode written), then exactly the grading environment's folders on sys.path, then _main.
_BOOT = (
    "import sys, json; sys.path[:0] = json.loads(sys.argv[1]); "
    "from posenc_helpers.grading.verdict import _main; _main()"
)


def _grading_paths() -> list[str]:
    """The folders the verdict imports from: the package's parent and the environment's site-packages."""
    import sysconfig

    import posenc_helpers

    package_parent = str(Path(posenc_helpers.__file__).resolve().parents[1])
    purelib, platlib = sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]
    return list(dict.fromkeys([package_parent, purelib, platlib]))


def judge(items: Sequence[dict[str, Any]], *, timeout: float = VERDICT_TIMEOUT) -> list[dict[str, Any]]:
    """The verdicts on ``items`` (label, check, answer_args, literals, args, kwargs, reference,
    kernel), from a fresh ``python -I -S`` process that imports the package as the grading
    environment has it, with the numeric libraries single-threaded as in the sandbox."""
    if not items:
        return []
    numeric = {k: v for k, v in sandbox_environment().items() if k.endswith("_THREADS") or k == "XLA_FLAGS"}
    process = subprocess.run(
        [sys.executable, "-I", "-S", "-B", "-c", _BOOT, json.dumps(_grading_paths())],
        input=json.dumps(list(items)),
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=Path(sys.executable).parent,
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8", "MPLBACKEND": "Agg", **numeric},
    )
    if process.returncode != 0:
        raise RuntimeError(f"the verdict process failed: {process.stderr[-2000:]}")
    return list(json.loads(process.stdout))


# --------------------------------------------------------------------------- one notebook


def records_in(cell: Any) -> list[Any]:
    """The grading records among a cell's outputs."""
    found = []
    for output in cell.get("outputs", []) or []:
        data = output.get("data", {}) if isinstance(output, dict) else {}
        if isinstance(data, dict) and RECORD_MIME in data:
            found.append(data[RECORD_MIME])
    return found


def source_digest(source: str) -> str:
    """SHA-256 of a cell's source, without its leading and trailing blank space."""
    if not isinstance(source, str):
        raise TypeError(f"source must be a str; got {type(source).__name__}")
    return hashlib.sha256(source.strip().encode("utf-8")).hexdigest()


def _nbgrader(cell: Any) -> dict[str, Any]:
    return dict(cell.get("metadata", {}).get("nbgrader", {}) or {})


def exercise_cells(cells: Sequence[Any]) -> tuple[dict[str, ExerciseSpec], dict[str, int]]:
    """Each exercise's spec, read from its test cell (an nbgrader graded, locked code cell that
    records), and that cell's index."""
    specs: dict[str, ExerciseSpec] = {}
    places: dict[str, int] = {}
    for index, cell in enumerate(cells):
        meta = _nbgrader(cell)
        if cell.get("cell_type") == "code" and meta.get("grade") and not meta.get("solution"):
            spec = released_spec(cell_source(cell))
            if spec is not None and spec.label == meta.get("grade_id"):
                specs[spec.label] = spec
                places[spec.label] = index
    return specs, places


def grade(
    cells: Sequence[Any],
    released: Iterable[str] = (),
    *,
    reference: Mapping[str, Mapping[str, Any]],
    released_digests: Iterable[str] = (),
    specs: Mapping[str, ExerciseSpec] | None = None,
    test_cells: Mapping[str, int] | None = None,
    environment_changed: bool = False,
) -> dict[str, Verdict]:
    """The verdict on every exercise of an executed notebook (its ``cells``).

    ``released`` are the sources of the release's cells (or ``released_digests`` their
    :func:`source_digest`): a code cell with one of these sources is the book's, any other
    the student's. ``specs`` and ``test_cells`` (label -> the index of the cell that must
    hold its record) default to those of the notebook's nbgrader test cells.
    ``reference`` holds, per label, the arguments the grader's own run of the release
    recorded (:mod:`posenc_helpers.grading.reference`): the data each exercise gives.
    """
    if isinstance(released, str):
        raise TypeError("released must be an iterable of cell sources, not one str")
    known = {source_digest(source) for source in released} | set(released_digests)
    if specs is None or test_cells is None:
        specs, test_cells = exercise_cells(cells)
    code = [(index, cell) for index, cell in enumerate(cells) if cell.get("cell_type") == "code"]
    places = set(test_cells.values())
    student = [(i, cell_source(c)) for i, c in code if source_digest(cell_source(c)) not in known and i not in places]
    trusted = [cell_source(c) for _, c in code if source_digest(cell_source(c)) in known]
    findings = scan_cells([s for _, s in student], trusted)
    flagged = [(i, found) for (i, _), found in zip(student, findings, strict=True) if found]
    records = _records_by_label(code)
    unexpected = sorted(set(records) - set(specs))

    items = []
    verdicts: dict[str, Verdict] = {}
    for label, spec in specs.items():
        place = test_cells[label]
        tampering = [f for index, found in flagged if index < place for f in found]
        if environment_changed:
            tampering.append("the grading environment changed while the notebook ran")
        if unexpected:
            tampering.append("the notebook holds records of exercises it does not have")
        mine = _own_records(records.get(label, []), place, tampering)
        if not mine:
            if not _stopped_before_recording(cells, place):
                tampering.append("the test cell did not record the answer, so it did not run as released")
            verdicts[label] = Verdict(
                label, False, "the test cell stopped before your answer was recorded; no points.", tampering
            )
            continue
        payload = mine[0][1]
        if not isinstance(payload, dict) or payload.get("too_large"):
            verdicts[label] = Verdict(label, False, "the answer is too large to grade; no points.", tampering)
            continue
        if label not in reference:
            raise ValueError(f"reference has no record of {label}: run the release again")
        items.append(
            {
                "label": label,
                "check": spec.check,
                "literals": spec.literals,
                "answer_args": spec.answer_args,
                "args": payload.get("args", []),
                "kwargs": payload.get("kwargs", {}),
                "reference": dict(reference[label]),
                "kernel": payload.get("kernel"),
            }
        )
        verdicts[label] = Verdict(label, False, "", tampering)
    for result in judge(items):
        verdict = verdicts[result["label"]]
        verdict.tampering += result.get("tampering", [])
        verdict.message = str(result.get("message", ""))
        verdict.earned = result.get("status") == "correct"
    for label, verdict in verdicts.items():  # the exercise's own code: read from the notebook, not the kernel
        history = [cell_source(cell) for index, cell in code if index < test_cells[label]]
        _hold_to_forbid_and_require(verdict, specs[label], history)
    for verdict in verdicts.values():
        if verdict.tampering:
            verdict.earned = False
    return verdicts


def _records_by_label(code: list[tuple[int, Any]]) -> dict[str, list[tuple[int, Any]]]:
    """Every record in the executed cells, with the index of its cell, by the label it claims."""
    records: dict[str, list[tuple[int, Any]]] = {}
    for index, cell in code:
        for payload in records_in(cell):
            label = payload.get("label") if isinstance(payload, dict) else None
            records.setdefault(str(label), []).append((index, payload))
    return records


def _own_records(mine: list[tuple[int, Any]], place: int, tampering: list[str]) -> list[tuple[int, Any]]:
    """An exercise's records that count (its test cell's); misplaced or repeated records are
    noted in ``tampering``."""
    if any(index != place for index, _ in mine):
        tampering.append("a record outside its test cell")
    mine = [(index, payload) for index, payload in mine if index == place]
    if len(mine) > 1:
        tampering.append("more than one record")
    return mine


def _stopped_before_recording(cells: Sequence[Any], place: int) -> bool:
    """Whether a missing record is explained: the test cell raised, or did not run to its end."""
    outputs = (cells[place].get("outputs", []) or []) if place < len(cells) else []
    return any(
        o.get("output_type") == "error" or (o.get("name") == "stderr" and "[grader]" in str(o.get("text", "")))
        for o in outputs
    )


def _hold_to_forbid_and_require(verdict: Verdict, spec: ExerciseSpec, history: list[str]) -> None:
    """Take the points of an earned verdict whose answer calls a forbidden helper or skips a required one."""
    if not verdict.earned or not (spec.forbid or spec.require):
        return
    label = verdict.label
    used = names_used(answer_cell(history, spec.answers))
    shortcuts = sorted(used & set(spec.forbid))
    missing = sorted(set(spec.require) - used)
    if not shortcuts and spec.forbid and DYNAMIC_LOOKUP in used:
        verdict.earned = False
        verdict.message = (
            f"{label} asks you to write the computation out yourself; your answer looks a function up by a "
            "name it builds at run time (getattr), which the grader cannot read, so it earns no points."
        )
    elif shortcuts:
        verdict.earned = False
        verdict.message = (
            f"{label} asks you to write the computation out yourself; your answer calls "
            f"{', '.join(f'`{name}`' for name in shortcuts)}, which does it for you, so it earns no points."
        )
    elif missing:
        verdict.earned = False
        verdict.message = (
            f"{label} asks you to build the answer with {', '.join(f'`{name}`' for name in missing)}, "
            "and your answer does not use it, so it earns no points."
        )


if __name__ == "__main__":
    _main()
