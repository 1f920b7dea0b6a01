"""The contract every exercise check builds on (``posenc_helpers.checks._core``): answers are
compared so that a wrong one is pointed at, position and value, and the message never contains the
expected values. Each chapter's checks are tested in its own ``test_chNN_*.py``; the policies all
checks follow are in ``test_checks_policy.py``."""

import re

import numpy as np
import pytest

from posenc_helpers.checks import CheckFailed
from posenc_helpers.checks._compare import compare_arrays


def _numbers(text):
    return {float(m) for m in re.findall(r"-?\d+\.\d+(?:e-?\d+)?", text)}


def test_messages_never_reveal_expected_values():
    expected = np.array([[0.123456, 0.654321], [0.5, 0.25]])
    answer = expected.copy()
    answer[1, 0] = 0.7
    with pytest.raises(CheckFailed) as info:
        compare_arrays(answer, expected, name="A", description="the matrix", axes=("row", "column"))
    message = str(info.value)
    assert "row 1, column 0" in message and "0.7" in message
    assert not _numbers(message) & {0.123456, 0.654321, 0.5, 0.25}


def test_non_finite_answers_are_pointed_at():
    with pytest.raises(CheckFailed, match="non-finite value .* position 1, dimension 0"):
        compare_arrays(
            np.array([[0.0], [np.nan]]),
            np.zeros((2, 1)),
            name="PE",
            description="x",
            axes=("position", "dimension"),
        )
