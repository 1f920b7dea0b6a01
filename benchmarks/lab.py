"""The training lab of chapter 11, benchmarked: ``make bench`` (section ``lab``) and
``python -m benchmarks.bench --only lab-pattern`` (the chapter's conclusions at other seeds
and training lengths, about fifteen minutes).
"""

from __future__ import annotations

import statistics

import numpy as np

from benchmarks.common import BUDGETS, Row, median_time

__all__ = ["bench_lab", "bench_lab_pattern"]


# ----------------------------------------------------------------------------- the training lab
def _matmul_gflops() -> float:
    """float32 GFLOP/s of a 2048 x 2048 matrix product in JAX on this CPU (its practical peak)."""
    import jax
    import jax.numpy as jnp

    a = jnp.ones((2048, 2048), jnp.float32)
    product = jax.jit(lambda x: x @ x)
    seconds = median_time(lambda: product(a).block_until_ready(), 5)
    return 2 * 2048**3 / seconds / 1e9


def bench_lab() -> list[Row]:
    """Chapter 11's live models: seconds per model, training throughput against a large
    matrix product timed in the same run, and the time ``make record-lab`` took (from the record)."""
    from posenc_helpers.lab import METHODS, PROTOCOL, ModelConfig, train, train_step_flops
    from posenc_helpers.measured import trained_extrapolation

    p = PROTOCOL
    settings = dict(
        train_len=p.train_len, steps=p.live_budget, batch_size=p.batch_size, learning_rate=p.learning_rate,
        warmup=p.warmup, progress=False,
    )  # fmt: skip
    train("rope", **(settings | {"steps": 2, "warmup": 1}))  # compile once, as the chapter's first model does
    rows, rates = [], []
    for method in METHODS:
        model = train(method, **settings)
        rows.append(
            Row(
                "lab",
                f"train one {method} model ({p.live_budget} steps of {p.batch_size} x {p.train_len})",
                model.seconds,
                "s",
                BUDGETS["lab_model_seconds"],
            )
        )
        rates.append(p.live_budget / model.seconds)
    steps_per_second = statistics.median(rates)
    achieved = train_step_flops(ModelConfig(), p.batch_size, p.train_len) * steps_per_second / 1e9
    peak = _matmul_gflops()
    record = trained_extrapolation()
    rows += [
        Row("lab", "training steps per second (median over the methods)", steps_per_second, "/s", None),
        Row("lab", "model FLOP rate (matrix products only)", achieved, "GF/s", None),
        Row("lab", "2048 x 2048 float32 matrix product, same run", peak, "GF/s", None),
        Row("lab", "model FLOP rate / matrix-product rate", achieved / peak, "×", None),
    ]
    # A record written by a rerun read its trained models back from the store: its total
    # is then not the time of the whole experiment, and gets no budget.
    trained = sum(record["training_seconds"].values())
    # A record re-made by make record-lab-questions keeps the text part of an earlier whole run
    # ("kept"): the whole run's seconds are those, and the question part's are this run's.
    whole = record["kept"]["seconds"] if "kept" in record else record["seconds"]
    rerun = whole["text training"] < 0.25 * trained
    rows += [
        Row(
            "lab",
            "make record-lab, as recorded (minutes" + ("; a rerun from stored runs)" if rerun else ")"),
            whole["total"] / 60,
            "min",
            None if rerun else 60.0,
        ),
        Row(
            "lab",
            "training time of the recorded text models, summed over 18 trained two at a time (minutes)",
            trained / 60,
            "min",
            None,
        ),
    ]
    rows += [
        Row("lab", f"make record-lab: {part} (minutes)", seconds / 60, "min", None)
        for part, seconds in whole.items()
        if part != "total"
    ]
    if "kept" in record:
        rows += [
            Row("lab", f"make record-lab-questions: {part} (minutes)", seconds / 60, "min", None)
            for part, seconds in record["seconds"].items()
        ]
    return rows


def bench_lab_pattern() -> list[Row]:
    """Chapter 11's verdicts at a training length, seed and budget the chapter does not use
    (L = 48, seed 7, twice the largest budget): for each method, 1 when this run's rises
    agree with the recorded verdict ("rises": above the margin at some length by more than
    three standard errors; "does not rise": below the margin plus three standard errors at
    every length). One seed: a check of the pattern, not a verdict of its own. The rises
    are over the loss at the training length (the early-token gain understates them a
    little; the record's verdicts use a sliding-window reference). About 15 minutes:
    python -m benchmarks.bench --only lab-pattern."""
    from posenc_helpers.lab import METHODS, PROTOCOL, length_losses, summarise_text, train_many, two_at_a_time
    from posenc_helpers.measured import trained_extrapolation

    p = PROTOCOL
    train_len, seed, steps = 48, 7, 2 * p.largest
    verdicts = trained_extrapolation()["verdicts"]
    models = train_many(
        METHODS, [seed], train_len=train_len, steps=steps, batch_size=p.batch_size, learning_rate=p.learning_rate,
        warmup=p.warmup, progress=False,
    )  # fmt: skip
    lengths = [m * train_len for m in (1, 2, 4, 8, 16)]
    summaries = dict(
        zip(
            METHODS,
            two_at_a_time(
                lambda m: summarise_text(length_losses(models[(m, seed)], lengths, seed=seed, windows=p.windows)),
                METHODS,
            ),
            strict=True,
        )  # fmt: skip
    )
    rows = []
    label = f"L = {train_len}, seed {seed}, {steps} steps"
    for method, summary in summaries.items():
        rise, se = np.array(summary["rise"][1:]), np.array(summary["rise_se"][1:])
        if verdicts[method] == "rises":
            holds = bool((rise - 3 * se > p.margin).any())
        elif verdicts[method] == "does not rise":
            holds = bool((rise < p.margin + 3 * se).all())
        else:
            holds = True
        rows.append(Row("lab-pattern", f"{label}: {method} {verdicts[method]}", float(holds), "", 1.0,
                        higher_is_better=True))  # fmt: skip
        rows.append(Row("lab-pattern", f"{label}: {method} rise at 2x", rise[0], "nats", None))
    return rows
