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
    # the package's shared check machinery patched: every result reads as correct
    "machinery": _LEFT_BLANK
    + "import posenc_helpers.checks._core as _c\n"
    + "_c.CheckResult.__bool__ = lambda self: True\n"
    + "import posenc_helpers.checks._grading as _g\n"
    + "_g.require_correct = lambda *a, **k: None\n"
    + "_g.require_own_code = lambda *a, **k: None\n",
    # an IPython input transformer that turns every later test cell into `pass`
    "input-transformer": _LEFT_BLANK
    + "def _skip(lines):\n"
    + "    return ['pass\\n'] if any('_grading' in l or '_record' in l for l in lines) else lines\n"
    + "get_ipython().input_transformers_post.append(_skip)\n",
    # a custom exception handler that swallows every error a test raises
    "exception-handler": _LEFT_BLANK + "get_ipython().set_custom_exc((BaseException,), lambda *a, **k: None)\n",
    # numpy's comparisons patched to call everything equal
    "numpy-patched": "pe_7 = np.zeros(6)\n"
    + "import numpy\n"
    + "numpy.allclose = lambda *a, **k: True\n"
    + "numpy.isclose = lambda a, b, *r, **k: numpy.ones(numpy.broadcast(a, b).shape, bool)\n"
    + "numpy.array_equal = lambda *a, **k: True\n",
    # a fake grading module planted in sys.modules
    "fake-module": _LEFT_BLANK
    + "import sys, types\n"
    + "fake = types.ModuleType('posenc_helpers.checks._grading')\n"
    + "fake.original = lambda name: (lambda *a, **k: True)\n"
    + "fake.require_correct = fake.require_own_code = lambda *a, **k: None\n"
    + "sys.modules['posenc_helpers.checks._grading'] = fake\n"
    + "import posenc_helpers.checks as _pc\n"
    + "_pc._grading = fake\n",
    # builtins.__import__ hooked: the hidden tests import a fake module
    "import-hook": _LEFT_BLANK
    + "import builtins as _b\n"
    + "_imp = _b.__import__\n"
    + "class _Fake:\n"
    + "    def original(self, name):\n"
    + "        return lambda *a, **k: None\n"
    + "    def __getattr__(self, name):\n"
    + "        return lambda *a, **k: None\n"
    + "def _hook(name, globals=None, locals=None, fromlist=(), level=0):\n"
    + "    if name.startswith('posenc_helpers.checks') and fromlist:\n"
    + "        return type('M', (), {'_grading': _Fake(), '_record': _Fake()})\n"
    + "    return _imp(name, globals, locals, fromlist, level)\n"
    + "_b.__import__ = _hook\n",
    # a grading record forged in the answer cell, with values from the helper
    "forged-record": _LEFT_BLANK
    + "from IPython.display import display as _show\n"
    + "_row = sinusoidal_encoding([7], 6)[0]\n"
    + "_show({'application/vnd.posenc.record+json': {'label': 'ex-04-row', 'args': [{'__list__': list(_row)}],"
    + " 'kwargs': {}}}, raw=True)\n",
}
