"""What chapter 11's record may say: summaries of the text models and the verdicts the rules allow.

The rules themselves (seed intervals, the one-sided rule for the loss) are in
:mod:`posenc_helpers.lab.statistics`; here they are applied to the record's parts.
"""

from __future__ import annotations

import numpy as np

from .._validation import require_positive_real
from .statistics import DROP_MARGIN, FLAT_MARGIN, drop_verdicts, rise_verdict

__all__ = [
    "summarise_text",
    "extrapolation_verdicts",
    "LEARNED_AT",
    "question_reach",
    "reach_label",
    "reproduces_record",
    "works_past_training_length",
]


def summarise_text(per_window: np.ndarray, sliding: np.ndarray | None = None) -> dict[str, list[float]]:
    """Mean, standard error, and the paired rise over the first length with its standard error,
    from :func:`~posenc_helpers.lab.length_losses`' ``(windows, lengths)`` array.

    With ``sliding``, the same windows' :func:`~posenc_helpers.lab.sliding_window_losses`,
    the summary also holds that reference (``"sliding"``, ``"sliding_se"``), the rise over it
    at every length (``"rise_sliding"``, ``"rise_sliding_se"``) and the *early-token gain*
    ``ℓ(L) - sliding`` (``"early_gain"``, ``"early_gain_se"``): what the first length's
    loss owes to the early bytes that see little context.

    Examples
    --------
    >>> summary = summarise_text(np.array([[1.0, 1.5], [2.0, 2.5], [3.0, 3.5]]))
    >>> summary["mean"], summary["rise"], summary["rise_se"]
    ([2.0, 2.5], [0.0, 0.5], [0.0, 0.0])
    >>> with_reference = summarise_text(np.array([[1.0, 1.5], [2.0, 2.5], [3.0, 3.5]]), np.array([0.9, 1.9, 2.9]))
    >>> [round(v, 6) for v in with_reference["rise_sliding"]], round(with_reference["early_gain"], 6)
    ([0.1, 0.6], 0.1)
    """
    per_window = np.asarray(per_window, dtype=float)
    count = per_window.shape[0]

    def mean_and_se(values):
        return values.mean(axis=0).tolist(), (values.std(axis=0, ddof=1) / np.sqrt(count)).tolist()

    summary = {}
    summary["mean"], summary["se"] = mean_and_se(per_window)
    summary["rise"], summary["rise_se"] = mean_and_se(per_window - per_window[:, :1])
    if sliding is not None:
        sliding = np.asarray(sliding, dtype=float)
        if sliding.shape != (count,):
            raise ValueError(f"sliding must hold one loss per window, shape ({count},), got {sliding.shape}")
        summary["sliding"], summary["sliding_se"] = mean_and_se(sliding)
        summary["rise_sliding"], summary["rise_sliding_se"] = mean_and_se(per_window - sliding[:, None])
        summary["early_gain"], summary["early_gain_se"] = mean_and_se(per_window[:, 0] - sliding)
    return summary


def extrapolation_verdicts(
    text: dict, seeds, budget: int, *, rise: str = "rise_sliding", margin: float = FLAT_MARGIN
) -> dict[str, str]:
    """Each method's answer to "does its loss rise past the training length?" at ``budget``:
    :func:`~posenc_helpers.lab.rise_verdict` of its rises at every longer length, one per seed.

    ``text`` is the record's ``"text"`` part, ``{method: {seed: {budget: summary}}}``;
    ``rise`` the summary's rise to judge: over the sliding-window reference at the
    training length (``"rise_sliding"``, the default: the loss a model reaches with
    ``train_len`` tokens of context) or over the loss at the training length
    (``"rise"``, which the early-token gain understates).

    Examples
    --------
    >>> fake = {"alibi": {str(s): {"8": {"rise_sliding": [0.0, r]}} for s, r in enumerate([0.01, 0.0, -0.01])}}
    >>> extrapolation_verdicts(fake, seeds=(0, 1, 2), budget=8)
    {'alibi': 'does not rise'}
    """
    verdicts = {}
    for method, by_seed in text.items():
        rises = np.array([by_seed[str(seed)][str(budget)][rise][1:] for seed in seeds])  # (seeds, lengths)
        verdicts[method] = rise_verdict(rises, margin)
    return verdicts


#: A seed has *learned* a question task when it answers at least this fraction of the
#: questions at the training length (the worse of far and near): the protocol chose each
#: task's steps so that every method answered nine in ten in trial runs, and 0.8 leaves
#: about four binomial standard errors (0.027 at 0.9 on 128 sequences) for sampling.
LEARNED_AT = 0.8


def question_reach(part: dict, seeds, lengths, *, windows: int, learned_at: float = LEARNED_AT,
                   margin: float = DROP_MARGIN) -> dict[str, dict]:  # fmt: skip
    """For each method, whether its answers *keep* past the training length on a question task.

    A seed's accuracy at a length is the worse of its ``"far"`` and ``"near"`` accuracy
    there (far back, or at late positions: either can fail). Seeds whose accuracy at the
    training length (the first of ``lengths``) is below ``learned_at`` never learned the
    task; they are listed, not pooled. From the others (at least two), each longer
    length gets :func:`~posenc_helpers.lab.drop_verdicts` of the paired drops from each
    seed's own accuracy at ``L``: ``"keeps"``, ``"drops"`` or ``"unresolved"``.

    Returns
    -------
    dict
        ``{method: entry}``, each entry with ``"at_train_len"`` (each seed's accuracy at
        ``L``), ``"learned"`` (the seeds that learned the task), ``"verdicts"``, ``"upper"``
        and ``"lower"`` (one per longer length; all ``"unresolved"`` and no bounds when
        fewer than two seeds learned) and ``"reach"``: the longest length with
        ``"keeps"`` there and at every shorter one (the training length when the first
        longer one does not keep; 0 when fewer than two seeds learned the task).

    Examples
    --------
    >>> fake = {"nope": {str(s): {"far": [1.0, 0.99, 0.3], "near": [1.0, 1.0, 0.98]} for s in range(3)}}
    >>> entry = question_reach(fake, seeds=range(3), lengths=[64, 128, 256], windows=128)["nope"]
    >>> entry["verdicts"], entry["reach"], entry["learned"]
    (['keeps', 'drops'], 128, [0, 1, 2])
    """
    seeds = list(seeds)
    lengths = list(lengths)
    out = {}
    for method, by_seed in part.items():
        worse = np.array([np.minimum(by_seed[str(s)]["far"], by_seed[str(s)]["near"]) for s in seeds])
        learned = [s for s, row in zip(seeds, worse, strict=True) if row[0] >= learned_at]
        entry: dict = {"at_train_len": worse[:, 0].tolist(), "learned": learned}
        if len(learned) < 2:
            entry.update(verdicts=["unresolved"] * (len(lengths) - 1), upper=None, lower=None, reach=0)
        else:
            rows = worse[[seeds.index(s) for s in learned]]
            verdicts, upper, lower = drop_verdicts(rows[:, 0], rows[:, 1:], windows, margin)
            reach = lengths[0]
            for length, verdict in zip(lengths[1:], verdicts, strict=True):
                if verdict != "keeps":
                    break
                reach = length
            entry.update(verdicts=verdicts, upper=upper, lower=lower, reach=reach)
        out[method] = entry
    return out


def reach_label(entry: dict, lengths, seeds=None) -> str:
    """A :func:`question_reach` entry in words, e.g. ``"keeps to 256, drops at 512"``.

    Examples
    --------
    >>> reach_label({"learned": [0, 1, 2], "verdicts": ["keeps", "unresolved"], "reach": 128}, [64, 128, 256])
    'keeps to 128, unresolved at 256'
    >>> reach_label({"learned": [0, 2], "verdicts": ["drops", "drops"], "reach": 64}, [64, 128, 256], seeds=[0, 1, 2])
    'drops at 128 (seed 1 never learned it)'
    >>> reach_label({"learned": [2], "verdicts": ["unresolved"] * 2, "reach": 0}, [64, 128, 256], seeds=[0, 1, 2])
    'unresolved: only seed 2 learned it'
    """
    lengths = list(lengths)
    seeds = list(entry["learned"]) if seeds is None else list(seeds)
    missing = [s for s in seeds if s not in entry["learned"]]
    if len(entry["learned"]) < 2:
        learned = entry["learned"]
        return f"unresolved: only seed {learned[0]} learned it" if learned else "unresolved: no seed learned it"
    verdicts = entry["verdicts"]
    if all(v == "keeps" for v in verdicts):
        text = f"keeps to {lengths[-1]}"
    else:
        k = next(i for i, v in enumerate(verdicts) if v != "keeps")
        text = f"{verdicts[k]} at {lengths[k + 1]}"
        if k > 0:
            text = f"keeps to {lengths[k]}, {text}"
    if missing:
        text += f" (seed {', '.join(str(s) for s in missing)} never learned it)"
    return text


def reproduces_record(live: dict, record: dict, budget: int, *, widen: float = 3.0) -> dict[str, bool]:
    """Whether a live run *reproduces* the record: for each method, its mean loss and its rise
    at every length it was scored at lie within the range the recorded seeds span at
    ``budget``, widened on each side by ``widen`` standard errors of the live estimate and
    of the recorded one.

    A reproduction check, not an independent confirmation: the live run of seed 0 uses
    the recorded seed 0's weights, batches and windows, so on the same machine it gives
    the recorded numbers; elsewhere it shows that floating-point differences stay within
    the spread.

    Examples
    --------
    >>> entry = {"mean": [2.0, 2.5], "se": [0.02, 0.02], "rise": [0.0, 0.5], "rise_se": [0.0, 0.01]}
    >>> record = {"protocol": {"seeds": [0, 1]}, "text": {"rope": {"0": {"250": entry}, "1": {"250": entry}}}}
    >>> live = {"rope": {"mean": [2.1, 2.6], "se": [0.03, 0.03], "rise": [0.0, 0.5], "rise_se": [0.0, 0.01]}}
    >>> reproduces_record(live, record, 250)   # 2.1 is within 3 * (0.03 + 0.02) of 2.0
    {'rope': True}
    >>> live["rope"]["mean"][0] = 2.2
    >>> reproduces_record(live, record, 250)
    {'rope': False}
    """
    widen = require_positive_real(widen, "widen")
    out = {}
    for method, summary in live.items():
        runs = [record["text"][method][str(seed)][str(budget)] for seed in record["protocol"]["seeds"]]
        ok = True
        for value_key, se_key in (("mean", "se"), ("rise", "rise_se")):
            for k, value in enumerate(summary[value_key]):
                recorded = [run[value_key][k] for run in runs]
                slack = widen * (summary[se_key][k] + max(run[se_key][k] for run in runs))
                ok &= min(recorded) - slack <= value <= max(recorded) + slack
        out[method] = bool(ok)
    return out


def works_past_training_length(curves: dict, threshold: float = FLAT_MARGIN) -> dict[str, bool]:
    """Whether each method's loss rises by at most ``threshold`` above its loss at the training length
    on every seed, from ``{(method, seed): losses at L, 2L, ...}`` (a quick look; the record's
    verdicts use seed bounds, :func:`extrapolation_verdicts`).

    Examples
    --------
    >>> curves = {("alibi", 0): [2.3, 2.31, 2.3], ("rope", 0): [2.2, 2.3, 3.0]}
    >>> works_past_training_length(curves)
    {'alibi': True, 'rope': False}
    """
    threshold = require_positive_real(threshold, "threshold")
    worst: dict[str, float] = {}
    for (method, _seed), losses in curves.items():
        losses = np.asarray(losses, dtype=float)
        worst[method] = max(worst.get(method, -np.inf), float((losses[1:] - losses[0]).max()))
    return {method: bool(rise <= threshold) for method, rise in worst.items()}
