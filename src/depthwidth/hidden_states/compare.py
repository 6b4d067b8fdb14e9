"""The hidden-states stage's comparisons with the depth paper, as data (rule hidden_states_compare):
``results/hidden_states/comparisons.csv`` through the one verdict procedure (``depthwidth.verdicts``).

Per model:

- the share of tokens in the smooth bulk against the paper's 99.6 % (Pythia on FineWeb documents of 1024
  tokens; only a run of that setting is compared), its error from the bootstrap over documents that rule
  hidden_states_stats ran (the whole rule redone on each resample);
- the middle-layer mean θ and θ^Δ and the share of tokens whose loss gain is done by half depth: the paper
  states these in words ("small", "near 90°", "few"), so they are shown and not tested.

The section (rule hidden_states_section) only renders these records.
"""

from __future__ import annotations

import logging
import math
from pathlib import Path

import numpy as np

from depthwidth import verdicts as v
from depthwidth.integrity import read_json
from depthwidth.papers import SMOOTH_BULK_PERCENT

log = logging.getLogger("depthwidth.hidden_states")

STAGE, PAPER, LINK = "hidden_states", "depth", "docs/stages/hidden_states.md"
CLAIM = "hidden states: small, uncorrelated layer updates"
SOURCE = "depth paper, Pythia hidden states on FineWeb"
DEG = 180.0 / math.pi
# The paper's smooth-bulk share is Pythia's (GPT-NeoX) on FineWeb documents of 1024 tokens: only a run of
# that setting is compared with it; other models and shorter documents are shown, not compared.
PAPER_BULK_ARCHITECTURE = "GPTNeoX"
PAPER_BULK_MAX_TOKENS = 1024
IN_WORDS = "the paper says this in words, with no number or tolerance to test against"


def bulk_comparison(name: str, s: dict) -> v.Comparison:
    """The smooth-bulk share (%) of one model against the paper's 99.6 %."""
    ext = s.get("extraction", {})
    share = 100 * s["bulk_share"]
    arch, max_tokens = str(ext.get("architecture", "")), ext.get("max_tokens") or 0
    paper_setting = arch.startswith(PAPER_BULK_ARCHITECTURE) and max_tokens >= PAPER_BULK_MAX_TOKENS
    boot = s.get("bulk_share_bootstrap") or {}
    shares = 100 * np.asarray(boot.get("shares", []), dtype=float)
    err = v.bootstrap_error(shares, boot["unit"]) if np.isfinite(shares).sum() >= v.MIN_RESAMPLES else v.NONE
    note = (
        f"{s['n_tokens']} tokens of {boot.get('n_docs', ext.get('n_docs'))} documents ≤ {max_tokens} tokens; "
        f"rule: robust distance ≤ {s['bulk_rule']['max_robust_distance']} in the first "
        f"{s['bulk_rule']['n_components']} principal components of the token's θ profile; binomial error "
        f"over tokens {100 * s['bulk_share_err']:.2g} (tokens treated as independent, not used)"
    )
    if not paper_setting:
        verdict = v.not_tested(
            f"the paper's share is Pythia's (GPT-NeoX) on documents of {PAPER_BULK_MAX_TOKENS} tokens; this "
            f"is {arch or 'another architecture'} on documents of at most {max_tokens} tokens"
        )
    elif err.value is None:
        verdict = v.not_tested(
            f"the bootstrap over documents has fewer than {v.MIN_RESAMPLES} resamples, too few for an error"
        )
    elif err.value == 0:
        verdict = v.cannot_tell(
            "every resample over documents gives the same share, so the bootstrap has no spread to test "
            f"{SMOOTH_BULK_PERCENT.value:g} % against"
        )
    else:
        verdict = v.interval_test(err.low, err.high, SMOOTH_BULK_PERCENT.value, what="bootstrap interval")
    return v.compare(
        STAGE,
        f"smooth_bulk_{name}",
        PAPER,
        CLAIM,
        f"tokens in the smooth bulk, {name} (%)",
        verdict,
        value=share,
        err=err,
        paper_value=SMOOTH_BULK_PERCENT.value,
        paper_text=f"{SMOOTH_BULK_PERCENT.text} % (Pythia, FineWeb)",
        paper_source=SMOOTH_BULK_PERCENT.source,
        note=note,
        link=LINK,
    )


def words_comparisons(name: str, s: dict) -> list[v.Comparison]:
    """The statements the paper makes in words: shown beside our value, not tested."""
    mid = s["middle"]
    rows = [
        (
            f"middle_theta_{name}",
            f"middle-layer mean θ, {name} (degrees)",
            "small and nearly constant in the middle layers",
            s["middle_means_rad"].get("theta", float("nan")) * DEG,
            f"relative depth {mid[0]:g}–{mid[1]:g}",
        ),
        (
            f"middle_theta_dh_{name}",
            f"middle-layer mean θ^Δ, {name} (degrees)",
            "near 90° (weakly correlated updates)",
            s["middle_means_rad"].get("theta_dh", float("nan")) * DEG,
            f"relative depth {mid[0]:g}–{mid[1]:g}",
        ),
    ]
    comp = s.get("compositional_loss_last_block")
    if comp:
        rows.append(
            (
                f"done_by_half_depth_{name}",
                f"tokens whose loss gain is done by half depth, {name} (%)",
                "few: gradual improvement (ensemble averaging)",
                100 * comp["share_done_by_early"],
                f"median depth of 90 % of the gain: {comp['median_depth_90']:.2f} of the depth",
            )
        )
    return [
        v.compare(
            STAGE,
            key,
            PAPER,
            CLAIM,
            quantity,
            v.not_tested(IN_WORDS),
            value=value,
            paper_text=paper,
            paper_source=SOURCE,
            note=note,
            link=LINK,
        )
        for key, quantity, paper, value, note in rows
    ]


def hidden_states_compare(
    summaries: dict[str, str | Path], *, comparisons_csv: str | Path
) -> list[v.Comparison]:
    """Rule hidden_states_compare: ``summaries`` (model -> summary.json of rule hidden_states_stats) to
    the stage's comparison records, written to ``comparisons_csv``."""
    rows = []
    for name, path in summaries.items():
        s = read_json(path, "hidden_states_stats", ("n_tokens", "middle_means_rad", "bulk_share"))
        rows += [bulk_comparison(name, s), *words_comparisons(name, s)]
    v.write_comparisons(comparisons_csv, rows)
    for c in rows:
        log.info("%s: %s", c.quantity, c.verdict_text)
    return rows
