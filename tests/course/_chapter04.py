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
