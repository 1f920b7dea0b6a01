"""Give chapter 11's record the key of refactored lab code, after proving the code computes the same.

The record (``posenc_helpers/data/train_short_test_long.json``) carries the key of
the code that made it (:func:`posenc_helpers.lab.lab_digest`); any change of a
statement on the lab's path makes it stale, and ``make record-lab`` takes the better
part of an hour. A refactor that moves, renames or splits code computes the same
numbers; this tool shows that it does and then writes the new key::

    python -m tools.rekey_lab_record --base COMMIT          # check only
    python -m tools.rekey_lab_record --base COMMIT --write  # check, then re-key

``COMMIT`` is a commit whose record was valid for its own code. The tool exports that
commit's package, and

1. asks the old code whether its record was valid (its own ``lab_digest``);
2. checks that the working tree's record holds the same numbers as the old one (every
   field but the key);
3. runs ``tools/lab_probe.py`` (training of every method and control, the tasks, the
   rescue, the baselines and the verdict rules, on small runs) under the old package
   and under the working tree's, and requires the two fingerprints to be equal bit
   for bit.

Only then, with ``--write``, does it replace the record's key by the working tree's.
A change of the numerics fails step 3: re-record (``make record-lab``) instead.
Nothing is written when any step fails.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RECORD = Path("posenc_helpers") / "data" / "train_short_test_long.json"
PROBE = ROOT / "tools" / "lab_probe.py"

_ASK_VALID = (
    "import json\n"
    "from posenc_helpers.lab import lab_digest\n"
    "from posenc_helpers.measured import trained_extrapolation\n"
    "print(json.dumps(trained_extrapolation()['digest'] == lab_digest()))\n"
)


def _python(code_or_script: str | Path, package_root: Path) -> str:
    """Run ``code_or_script`` with ``package_root`` first on the path; its last line of output."""
    env = {**os.environ, "PYTHONPATH": str(package_root), "PYTHONHASHSEED": "0"}
    command = [sys.executable, str(code_or_script)] if isinstance(code_or_script, Path) else [sys.executable, "-c"]
    if not isinstance(code_or_script, Path):
        command.append(code_or_script)
    result = subprocess.run(command, cwd=package_root, env=env, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(command[:2])} failed under {package_root}:\n{result.stderr[-2000:]}")
    return result.stdout.strip().splitlines()[-1]


def export_package(commit: str, into: Path) -> Path:
    """Write ``commit``'s ``posenc_helpers`` under ``into``; return ``into``."""
    if not isinstance(commit, str) or not commit or commit.startswith("-"):
        raise ValueError(f"commit must name a commit (a hash, tag or branch), got {commit!r}")
    archive = subprocess.run(
        ["git", "archive", "--format=tar", commit, "posenc_helpers"], cwd=ROOT, capture_output=True, check=False
    )
    if archive.returncode != 0:
        raise ValueError(f"commit must name a commit of this repository: git archive said {archive.stderr.decode()}")
    archive_path = into / "package.tar"
    archive_path.write_bytes(archive.stdout)
    with tarfile.open(archive_path) as tar:
        tar.extractall(into, filter="data")
    return into


def same_numbers(old_record: dict, new_record: dict) -> list[str]:
    """The fields (other than the key) in which two records differ; empty when they hold the same numbers.

    Examples
    --------
    >>> same_numbers({"digest": "a", "text": [1.0]}, {"digest": "b", "text": [1.0]})
    []
    >>> same_numbers({"digest": "a", "text": [1.0]}, {"digest": "a", "text": [2.0], "new": 1})
    ['new', 'text']
    """
    fields = (set(old_record) | set(new_record)) - {"digest"}
    return sorted(field for field in fields if old_record.get(field) != new_record.get(field))


def check(base: str) -> tuple[list[str], str]:
    """Steps 1-3 of the module docstring: the problems found (empty: none) and the new key."""
    problems = []
    with tempfile.TemporaryDirectory(prefix="rekey-") as folder:
        old_root = export_package(base, Path(folder))
        if json.loads(_python(_ASK_VALID, old_root)) is not True:
            problems.append(f"the record at {base} was not valid for its own code: start from a commit where it was")
        old_record = json.loads((old_root / RECORD).read_text())
        new_record = json.loads((ROOT / RECORD).read_text())
        changed = same_numbers(old_record, new_record)
        if changed:
            problems.append(f"the working tree's record differs from {base}'s in {', '.join(changed)}")
        old_probe = json.loads(_python(PROBE, old_root))["probe"]
        new_probe = json.loads(_python(PROBE, ROOT))["probe"]
        print(f"probe under {base}: {old_probe}\nprobe under the working tree: {new_probe}")
        if old_probe != new_probe:
            problems.append("the working tree's lab computes other numbers than the old one: make record-lab")
    new_key = _python("from posenc_helpers.lab import lab_digest; print(lab_digest())", ROOT)
    return problems, new_key


def write_key(new_key: str) -> bool:
    """Replace the record's key by ``new_key`` (only that line changes); True if it changed."""
    path = ROOT / RECORD
    text = path.read_text()
    old_key = json.loads(text)["digest"]
    if old_key == new_key:
        return False
    path.write_text(text.replace(f'"digest": "{old_key}"', f'"digest": "{new_key}"', 1))
    return True


_DESCRIBE = (
    "import dataclasses, json\n"
    "from posenc_helpers.lab import PROTOCOL, SNAPSHOT_SHA256, lab_digest\n"
    "from posenc_helpers.lab.fingerprint import LAB_VERSION\n"
    "from posenc_helpers.measured import trained_extrapolation\n"
    "print(json.dumps({'valid': trained_extrapolation()['digest'] == lab_digest(),\n"
    "    'protocol': dataclasses.asdict(PROTOCOL), 'corpus': SNAPSHOT_SHA256, 'lab_version': LAB_VERSION}))\n"
)

#: The settings a record is keyed on besides code: a change of any of them changes the numbers.
SETTINGS = {"protocol": "the protocol (PROTOCOL)", "corpus": "the corpus snapshot", "lab_version": "LAB_VERSION"}


def describe(package_root: Path) -> dict:
    """What the record's key holds for the package under ``package_root`` (a folder holding ``posenc_helpers``).

    ``valid``: whether that package's record matches its own code here (this Python and
    these libraries); the :data:`SETTINGS`; and ``code``, the docstring-free fingerprint of
    each module on the lab's path, read by this checkout's walk (so two packages compare
    module by module).
    """
    from posenc_helpers.lab.fingerprint import code_fingerprint, training_modules  # noqa: PLC0415 (imports JAX)

    package = package_root / "posenc_helpers"
    described = json.loads(_python(_DESCRIBE, package_root))
    described["code"] = {
        path.relative_to(package).as_posix(): code_fingerprint(path.read_text(encoding="utf-8"))
        for path in training_modules(package=package)
    }
    return described


def which_remedy(old: dict, new: dict, base: str) -> str:
    """Which of ``make rekey-lab`` and ``make record-lab`` a stale record needs, and why.

    Parameters
    ----------
    old, new : dict
        :func:`describe` of the package at ``base`` (a commit whose record was valid) and of
        the working tree's.
    base : str
        The commit ``old`` was read from, named in the advice.

    Returns
    -------
    str
        One sentence that starts with the command to run.

    Examples
    --------
    >>> same = {"valid": True, "protocol": {"seeds": [0, 1]}, "corpus": "c", "lab_version": 1, "code": {"a.py": "1"}}
    >>> which_remedy(same, {**same, "code": {"a.py": "2"}}, "abc123")[:30]
    'make rekey-lab BASE=abc123 if '
    >>> which_remedy(same, {**same, "protocol": {"seeds": [0, 2]}}, "abc123")[:40]
    'make record-lab (about an hour): the pro'
    """
    if not old["valid"]:
        return (
            f"make record-lab (about an hour): {base}'s record does not match {base}'s own code under this "
            "Python and these libraries, so their versions changed since it was recorded (or name another "
            "commit whose record was valid: make rekey-lab BASE=<commit>)"
        )
    settings = [text for name, text in SETTINGS.items() if old[name] != new[name]]
    if settings:
        return (
            f"make record-lab (about an hour): {' and '.join(settings)} changed since {base}, "
            "so the numbers must be measured again; then make notebooks"
        )
    modules = sorted(
        name for name in old["code"].keys() | new["code"].keys() if old["code"].get(name) != new["code"].get(name)
    )
    if not modules:
        return f"make record-lab: nothing on the lab's path differs from {base}, but the record's file does"
    return (
        f"make rekey-lab BASE={base} if the change to {', '.join(modules)} is a refactor (code moved, renamed "
        "or split; no number changed): it proves so on small runs, bit for bit, in minutes, or refuses; "
        "otherwise make record-lab (about an hour), then make notebooks"
    )


def record_commit() -> str | None:
    """The last commit that wrote the record (its key was valid then), or None without git history."""
    found = subprocess.run(
        ["git", "log", "-1", "--format=%h", "--", str(RECORD)], cwd=ROOT, capture_output=True, text=True, check=False
    )
    return found.stdout.strip() or None


def remedy(base: str | None = None, package_root: Path = ROOT) -> str:
    """The advice for a stale record: :func:`which_remedy` between ``base`` and ``package_root``.

    ``base`` defaults to :func:`record_commit`; without git history the advice names both
    commands and when each applies.
    """
    base = base or record_commit()
    if base is None:
        return (
            "make rekey-lab BASE=<a commit whose record was valid> if the change is a refactor (no number "
            "changed; it proves so or refuses), otherwise make record-lab (about an hour)"
        )
    with tempfile.TemporaryDirectory(prefix="remedy-") as folder:
        old = describe(export_package(base, Path(folder)))
        return which_remedy(old, describe(package_root), base)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", required=True, help="a commit whose record was valid for its own code")
    parser.add_argument("--write", action="store_true", help="write the new key when every check passes")
    args = parser.parse_args(argv)
    problems, new_key = check(args.base)
    for problem in problems:
        print(f"rekey: {problem}")
    if problems:
        return 1
    if not args.write:
        print(f"rekey: every check passed; --write would set the record's key to {new_key}")
        return 0
    print(f"rekey: {'the record now carries' if write_key(new_key) else 'the record already carries'} key {new_key}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
