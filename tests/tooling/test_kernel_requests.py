"""benchmarks/kernel_requests.py: the count of how each cell sent to the kernel ended."""

from __future__ import annotations

import pytest

from benchmarks import kernel_requests


def test_every_cell_a_quiet_kernel_is_sent_ends_ok():
    statuses, seconds = kernel_requests.send_cells(3)
    assert dict(statuses) == {"ok": 3}
    assert seconds > 0


@pytest.mark.parametrize("args", [["--cells", "0"], ["--busy", "-1"]])
def test_a_count_out_of_range_is_refused_by_name(args, capsys):
    with pytest.raises(SystemExit) as stopped:
        kernel_requests.main(args)
    assert stopped.value.code == 2
    assert args[0] in capsys.readouterr().err
