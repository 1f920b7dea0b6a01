"""Chapter 13 (13_positions_in_2026): its check, figure and explorer.

TODO(author): test every helper the chapter adds against values worked out by
hand or from the paper, and its bad input.
"""

import matplotlib.pyplot as plt
import numpy as np
import pytest

from posenc_helpers.checks import CheckFailed, check_proportional_frequencies
from posenc_helpers.plotting import plot_rotating_pairs
from posenc_helpers.widgets import RotaryFractionExplorer


def test_check_accepts_the_positions_and_names_the_off_by_one():
    assert check_proportional_frequencies([0, 1, 2], 3)
    with pytest.raises(CheckFailed, match="counted from 0"):
        check_proportional_frequencies([1, 2, 3], 3)
    assert not check_proportional_frequencies(None, 3)


def test_check_messages_never_reveal_the_positions():
    with pytest.raises(CheckFailed) as info:
        check_proportional_frequencies([0.0, 1.0, 2.0, 5.0, 4.0, 5.0, 6.0], 7)
    assert "[0. 1. 2. 3." not in str(info.value) and "3.0" not in str(info.value)


def test_check_rejects_a_length_that_is_not_a_count():
    with pytest.raises(ValueError, match="n_positions"):
        check_proportional_frequencies([0], 0)
    with pytest.raises(TypeError, match="n_positions"):
        check_proportional_frequencies([0], 2.0)


def test_plot_draws_the_values_and_rejects_a_table():
    ax = plot_rotating_pairs(np.array([3.0, 1.0]))
    assert ax.lines[0].get_ydata().tolist() == [3.0, 1.0]
    plt.close("all")
    with pytest.raises(ValueError, match="values"):
        plot_rotating_pairs(np.zeros((2, 2)))


def test_explorer_status_follows_the_slider():
    explorer, changes = RotaryFractionExplorer.demo()
    for change in changes:
        explorer.set(**change)
        assert explorer.status.value == f"last position: {change['n_positions'] - 1}"


# The checks' policy cases (tests/chapters/test_checks_policy.py runs them): the call, a
# right answer worked out by hand, and a clearly wrong one.
POLICY_CASES = {
    "check_proportional_frequencies": (lambda a: check_proportional_frequencies(a, 4), [0.0, 1.0, 2.0, 3.0], [1.0, 2.0, 3.0, 4.0]),
}

# Bad input to the chapter's helpers (tests/core/test_bad_input.py runs them): the call,
# the exception, and words its message must contain.
BAD_INPUT_CASES = [
    (lambda: check_proportional_frequencies([0], -1), ValueError, ["n_positions", ">= 1"]),
    (lambda: plot_rotating_pairs(np.zeros((2, 2))), ValueError, ["values", "1-D"]),
]
