"""Chapter 04's exercises as students answer them, shared by the nbgrader and otter tests.

Worked out by hand from the chapter's formulas: PE(7) for d = 6 interleaves sin and
cos of 7 * 10000**(-2k/6), k = 0, 1, 2; dimension 301 belongs to pair 150, whose
wavelength is 2 pi 10000**(300/512); the concatenated read-out takes the rows of the
interleaved one in the order ``perm``. The exercises are worth 2, 2 and 3 points.
"""

from pathlib import Path

CHAPTER = Path(__file__).resolve().parents[2] / "notebooks" / "04_sine_cosine_pairs.ipynb"
POINTS = {"ex-04-row": 2.0, "ex-04-wavelength": 2.0, "ex-04-layout": 3.0}
# exercise label -> a correct answer cell
CORRECT = {
    "ex-04-row": (
        "k = np.arange(3)\nw = 10000.0 ** (-2 * k / 6)\npe_7 = np.empty(6)\n"
        "pe_7[0::2], pe_7[1::2] = np.sin(7 * w), np.cos(7 * w)"
    ),
    "ex-04-wavelength": "wavelength_301 = 2 * np.pi * 10000.0 ** (2 * (301 // 2) / 512)",
    "ex-04-layout": "w_concat = w_interleaved[perm]",
}
# exercise label -> the placeholder line its answer cell starts with
PLACEHOLDER = {
    "ex-04-row": "pe_7 = None",
    "ex-04-wavelength": "wavelength_301 = None",
    "ex-04-layout": "w_concat = None",
}
SHORTCUT = "pe_7 = sinusoidal_encoding([7], 6)[0]"  # a helper call instead of the formula

# Submissions that tamper with the kernel instead of answering: each replaces the first
# answer cell (ex-04-row) and answers nothing. Before grading moved out of the kernel
# (issue 24) most of them earned all 7 autograded points; now each earns 0 and each of its
# exercises carries a "Tampering suspected" line.
_LEFT_BLANK = "pe_7 = None\n"
TAMPERING = {
    # the package's shared check machinery and the recorder patched: every result reads as correct
    "machinery": _LEFT_BLANK
    + "import posenc_helpers.checks._core as _c\n"
    + "_c.CheckResult.__bool__ = lambda self: True\n"
    + "import posenc_helpers.grading.record as _g\n"
    + "_g.record = lambda *a, **k: None\n",
    # an IPython input transformer that turns every later test cell into `pass`
    "input-transformer": _LEFT_BLANK
    + "def _skip(lines):\n"
    + "    return ['pass\\n'] if any('_record' in l for l in lines) else lines\n"
    + "get_ipython().input_transformers_post.append(_skip)\n",
    # a custom exception handler that swallows every error a test raises
    "exception-handler": _LEFT_BLANK + "get_ipython().set_custom_exc((BaseException,), lambda *a, **k: None)\n",
    # numpy's comparisons patched to call everything equal
    "numpy-patched": "pe_7 = np.zeros(6)\n"
    + "import numpy\n"
    + "numpy.allclose = lambda *a, **k: True\n"
    + "numpy.isclose = lambda a, b, *r, **k: numpy.ones(numpy.broadcast(a, b).shape, bool)\n"
    + "numpy.array_equal = lambda *a, **k: True\n",
    # a fake recorder planted in sys.modules
    "fake-module": _LEFT_BLANK
    + "import sys, types\n"
    + "fake = types.ModuleType('posenc_helpers.grading.record')\n"
    + "fake.record = lambda *a, **k: None\n"
    + "sys.modules['posenc_helpers.grading.record'] = fake\n"
    + "import posenc_helpers.grading as _pg\n"
    + "_pg.record = fake\n",
    # builtins.__import__ hooked: the hidden tests import a fake module
    "import-hook": _LEFT_BLANK
    + "import builtins as _b\n"
    + "_imp = _b.__import__\n"
    + "class _Fake:\n"
    + "    def __getattr__(self, name):\n"
    + "        return lambda *a, **k: None\n"
    + "def _hook(name, globals=None, locals=None, fromlist=(), level=0):\n"
    + "    if name.startswith('posenc_helpers.grading') and fromlist:\n"
    + "        return type('M', (), {'record': _Fake()})\n"
    + "    return _imp(name, globals, locals, fromlist, level)\n"
    + "_b.__import__ = _hook\n",
    # a grading record forged in the answer cell, with values from the helper
    "forged-record": _LEFT_BLANK
    + "from IPython.display import display as _show\n"
    + "_row = sinusoidal_encoding([7], 6)[0]\n"
    + "_show({'application/vnd.posenc.record+json': {'label': 'ex-04-row', 'args': [{'__list__': list(_row)}],"
    + " 'kwargs': {}}}, raw=True)\n",
    # a thread that keeps forging records, so that one lands inside the test cell
    "thread-forged-record": _LEFT_BLANK
    + "import threading, time\n"
    + "from IPython.display import display as _show\n"
    + "_row = [float(v) for v in sinusoidal_encoding([7], 6)[0]]\n"
    + "def _forge():\n"
    + "    for _ in range(400):\n"
    + "        _show({'application/vnd.posenc.record+json': {'label': 'ex-04-row',\n"
    + "               'args': [{'__list__': _row}], 'kwargs': {}}}, raw=True)\n"
    + "        time.sleep(0.02)\n"
    + "threading.Thread(target=_forge, daemon=True).start()\n",
}


def hostile(course: str, marker: str) -> dict[str, str]:
    """Submissions that attack the grader itself rather than their kernel, as ``{kind: answer cell
    of ex-04-row}``; each answers nothing. ``course`` is the course folder (an attacker who knows
    where it is), ``marker`` a word that names this test run's processes and files.

    Before the sandbox (issue 37) the first one gave every later submission of the batch full
    marks, and the daemon rewrote the gradebook after ``nbgrader autograde`` exited.
    """
    site = "os.path.dirname(os.path.dirname(numpy.__file__))"
    return {
        # a .pth in the grading environment: every later Python process would run it
        "pth": _LEFT_BLANK
        + "import os, numpy\n"
        + f"open(os.path.join({site}, 'zz_{marker}.pth'), 'w').write("
        + "'import posenc_helpers.checks._core as c; c.CheckResult.__bool__ = lambda s: True\\n')\n",
        # bytecode planted where the grader imports its checks from
        "pyc": _LEFT_BLANK
        + "import os, posenc_helpers.checks as pc\n"
        + "cache = os.path.join(os.path.dirname(pc.__file__), '__pycache__')\n"
        + "os.makedirs(cache, exist_ok=True)\n"
        + f"open(os.path.join(cache, '_core.cpython-311.pyc'), 'wb').write(b'{marker}')\n",
        # the gradebook and the classmates' notebooks, by their path on the grader's machine
        "gradebook": _LEFT_BLANK
        + "import os, sqlite3\n"
        + f"db = sqlite3.connect({course + '/gradebook.db'!r})\n"
        + "db.execute('update grade set manual_score = 7')\n"
        + "db.commit()\n",
        # what a kernel could read and print into its own feedback
        "snoop": _LEFT_BLANK
        + "import os, glob\n"
        + "print(dict(os.environ))\n"
        + f"print(sorted(glob.glob({course + '/**/*.ipynb'!r}, recursive=True)))\n"
        + f"for path in glob.glob({course + '/submitted/*/ch04/*.ipynb'!r}):\n"
        + "    print(open(path).read())\n"
        + "for top in ('/', '/root', '/home', '/tmp', '/work', '/srv', '/mnt'):\n"
        + "    print(top, os.listdir(top) if os.path.isdir(top) else None)\n",
        # a double-forked daemon that keeps the pipes it inherited and waits for the grader to
        # go, then rewrites the gradebook; and one that just sleeps, to be found afterwards
        "daemon": _LEFT_BLANK
        + "import os, time, sqlite3\n"
        + "if os.fork() == 0:\n"
        + "    os.setsid()\n"
        + "    if os.fork() == 0:\n"
        + "        for _ in range(90):\n"
        + "            time.sleep(1)\n"
        + "            try:\n"
        + f"                db = sqlite3.connect({course + '/gradebook.db'!r})\n"
        + "                db.execute('update grade set manual_score = 7'); db.commit()\n"
        + "            except Exception:\n"
        + "                pass\n"
        + f"        os.execvp('sleep', ['sleep', '{marker[-4:]}9'])\n"
        + "    os._exit(0)\n"
        + "if os.fork() == 0:\n"
        + "    os.setsid()\n"
        + "    if os.fork() == 0:\n"
        + f"        os.execvp('sleep', ['sleep', '{marker[-4:]}8'])\n"
        + "    os._exit(0)\n",
        # processes until the limit; they hold on until their sandbox ends
        "forks": _LEFT_BLANK
        + "import subprocess\n"
        + "children = []\n"
        + "for _ in range(400):\n"
        + f"    children.append(subprocess.Popen(['sleep', '{marker[-4:]}7']))\n",
        # more memory than a process may have
        "memory": _LEFT_BLANK + "import numpy\nhog = numpy.ones(2 * 10**9)\n",
        # the runner's result pipe taken with pidfd_getfd, or reopened through /proc, a result of
        # full marks written into it, and the runner killed so that the real one never comes (issue 44:
        # before, a blank notebook earned 7/7 this way)
        "pidfd": _LEFT_BLANK + _FORGE.format(take="pidfd", marker=marker),
        "proc-fd": _LEFT_BLANK + _FORGE.format(take="proc", marker=marker),
        # the runner stopped (SIGSTOP): before, it held its slot until the wall limit (700 s)
        "stop-runner": _LEFT_BLANK
        + "import os, signal\ntry:\n    os.kill(os.getppid(), signal.SIGSTOP)\nexcept OSError:\n    pass\n",
        # 20,000 outputs: before, 225 s of the grader's time to check them one by one
        "displays": _LEFT_BLANK + "for i in range(20_000):\n    display(i)\n",
    }


# Takes the runner's result pipe (by pidfd_getfd or through /proc), writes a result that holds a
# record of every exercise with the right values (computed by the package's helper) in the cells
# where the records belong, and kills the runner. {take}: "pidfd" or "proc".
_FORGE = """import ctypes, json, os, signal
from posenc_helpers.grading.record import kernel_report
libc = ctypes.CDLL(None, use_errno=True)
runner = os.getppid()
args = open(f"/proc/{{runner}}/cmdline").read().split("\\0")
fd = int(args[args.index("--result-fd") + 1]) if "--result-fd" in args else 9
if "{take}" == "pidfd":
    handle = libc.syscall(438, libc.syscall(434, runner, 0), fd, 0)
else:
    try:
        handle = os.open(f"/proc/{{runner}}/fd/{{fd}}", os.O_WRONLY)
    except OSError:
        handle = -1
row = [float(v) for v in sinusoidal_encoding([7], 6)[0]]
record = {{"label": "ex-04-row", "args": [{{"__list__": row}}], "kwargs": {{}}, "kernel": kernel_report()}}
cell = {{"outputs": [{{"output_type": "display_data", "metadata": {{}},
         "data": {{"application/vnd.posenc.record+json": record, "text/plain": "{marker}"}}}}],
         "execution_count": 1}}
if handle >= 0:
    os.write(handle, json.dumps({{"cells": [cell] * 64, "seconds": [0.0] * 64}}).encode())
    os.kill(runner, signal.SIGKILL)
print("could not take the result pipe")
"""


def honest(marker: str) -> dict[str, str]:
    """Right answers written as a student might, each form the grader must take: prints
    (50 MB of them), an import of os, a helper of the student's own, and a loop that
    catches KeyboardInterrupt in a cell of its own; by answer cell grade_id, with
    ``"+extra"`` keys for cells the student added after an answer cell."""
    return {
        "ex-04-row-answer": "from numpy import sin, cos\n"
        + "def row(position, width):\n"
        + "    k = np.arange(width // 2)\n"
        + "    omega = 10000.0 ** (-2 * k / width)\n"
        + "    out = np.empty(width)\n"
        + "    out[0::2], out[1::2] = sin(position * omega), cos(position * omega)\n"
        + "    return out\n"
        + "pe_7 = row(7, 6)\n"
        + "print('my row', pe_7)\n"
        + f"# {marker}\n",
        "ex-04-wavelength-answer": CORRECT["ex-04-wavelength"] + "\nimport os\nprint(os.getcwd())",
        "ex-04-layout-answer": CORRECT["ex-04-layout"] + "\nprint('x' * 50_000_000)",
        "ex-04-row-answer+extra": "import time\n"
        + "while True:  # a progress loop the student stops with Ctrl-C, by hand\n"
        + "    try:\n"
        + "        time.sleep(0.5)\n"
        + "    except KeyboardInterrupt:\n"
        + "        pass\n",
    }
