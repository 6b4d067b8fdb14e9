"""How much the bf16 hidden-state metrics depend on how the model is put in bf16, and on the angle precision.

    python bench/bf16_load.py --model data/models/smollm2-135m   # the packaged SmolLM2-135M (fetched)

Runs the longest FineWeb documents of the mirror (at least ``--min-tokens`` tokens, truncated to
``--max-tokens``) through ``batch_metrics`` with the model

- loaded in bf16 (``load_model(dtype=bfloat16)``, i.e. ``from_pretrained(dtype=bfloat16)``, the paper's
  load and the pipeline's: the rotary ``inv_freq`` stays float32),
- loaded in float32 and cast with ``.to(bfloat16)`` (``inv_freq`` rounded to bf16),
- loaded in float32 (the reference),

and prints, per position range, the mean |Δ| in degrees of θ, θ^Δ and the angle to h_L between them, the mean
next-token loss of each, and for the bf16 load the effect of ``angle_precision: paper_bf16`` (the share of θ
that reads exactly 0 and the mean θ under each precision). Prints one JSON object; ``--out`` also writes it.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from depthwidth.download.fineweb import read_corpus  # noqa: E402
from depthwidth.hidden_states.extract import pad_batch, tokenize  # noqa: E402
from depthwidth.hidden_states.metrics import batch_metrics, find_parts  # noqa: E402
from depthwidth.models.load import load_model  # noqa: E402

MIRROR = Path(__file__).resolve().parents[2] / "shared" / "data" / "fineweb" / "fineweb_subset.json"
ANGLES = ("theta", "theta_dh", "angle_to_last")


def metrics(model, seqs: list[list[int]], precision: str = "float32") -> dict[str, torch.Tensor]:
    """Angles, positions and the model's own next-token loss of each kept token, one document at a time."""
    out = []
    for s in seqs:
        ids, mask = pad_batch([s])
        r = batch_metrics(find_parts(model), ids, mask, losses=(), angle_precision=precision)
        with torch.inference_mode():
            logits = model(input_ids=ids).logits[0, :-1].float()
        r["loss"] = F.cross_entropy(logits, ids[0, 1:], reduction="none")
        out.append(r)
    return {k: torch.cat([o[k].float() for o in out]) for k in (*ANGLES, "loss", "position")}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True, help="a fetched model folder (data/models/<name>)")
    ap.add_argument("--corpus", default=str(MIRROR), help="FineWeb JSON of the mirror")
    ap.add_argument("--scan-docs", type=int, default=300, help="documents searched for long ones")
    ap.add_argument("--docs", type=int, default=2, help="documents used (the first long enough)")
    ap.add_argument("--min-tokens", type=int, default=1000)
    ap.add_argument("--max-tokens", type=int, default=1024)
    ap.add_argument("--buckets", type=int, nargs="+", default=[0, 128, 512, 1024], help="position ranges")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", help="also write the JSON result here")
    a = ap.parse_args(argv)
    torch.set_num_threads(a.threads)
    paper = load_model(a.model, dtype=torch.bfloat16)
    texts = [d["text"] for d in read_corpus(Path(a.corpus), limit=a.scan_docs)]
    seqs = [s for s in tokenize(paper.tokenizer, texts, a.max_tokens) if len(s) >= a.min_tokens][: a.docs]
    if not seqs:
        sys.exit(f"no document of {a.corpus} has {a.min_tokens} tokens; lower --min-tokens")
    cast = load_model(a.model).model.to(torch.bfloat16)
    runs = {
        "bf16_load": metrics(paper.model, seqs),
        "float32_then_cast": metrics(cast, seqs),
        "float32": metrics(load_model(a.model).model, seqs),
    }
    pos = runs["float32"]["position"]
    ranges = list(zip(a.buckets[:-1], a.buckets[1:]))

    def by_range(x: torch.Tensor, fn) -> dict[str, float]:
        return {f"{lo}-{hi}": fn(x[(pos >= lo) & (pos < hi)]) for lo, hi in ranges}

    def mean_deg(x):
        return round(math.degrees(float(x.mean())), 5) if x.numel() else None

    diffs = {}
    for x, y in (
        ("bf16_load", "float32_then_cast"),
        ("bf16_load", "float32"),
        ("float32_then_cast", "float32"),
    ):
        diffs[f"{x} vs {y}"] = {
            k: by_range((runs[x][k] - runs[y][k]).abs(), mean_deg)
            | {"max": mean_deg((runs[x][k] - runs[y][k]).abs().max())}
            for k in ANGLES
        }
    loss = {
        n: by_range(r["loss"], lambda x: round(float(x.mean()), 5))
        | {"all": round(float(r["loss"].mean()), 5)}
        for n, r in runs.items()
    }
    prec = metrics(paper.model, seqs, "paper_bf16")
    ours = runs["bf16_load"]["theta"]
    result = {
        "model": Path(a.model).name,
        "documents": len(seqs),
        "tokens": [len(s) for s in seqs],
        "inv_freq_dtype": {
            "bf16_load": str(next(b for n, b in paper.model.named_buffers() if n.endswith("inv_freq")).dtype),
            "float32_then_cast": str(
                next(b for n, b in cast.named_buffers() if n.endswith("inv_freq")).dtype
            ),
        }
        if any(n.endswith("inv_freq") for n, _ in cast.named_buffers())
        else None,
        "mean_abs_angle_difference_deg": diffs,
        "mean_loss_nats": loss,
        "angle_precision_paper_bf16": {
            "theta_share_zero": round(float((prec["theta"] == 0).float().mean()), 5),
            "theta_share_zero_float32": round(float((ours == 0).float().mean()), 5),
            "theta_share_below_3.6deg_float32": round(float((ours < math.radians(3.6)).float().mean()), 5),
            "mean_theta_deg": {"float32": mean_deg(ours), "paper_bf16": mean_deg(prec["theta"])},
            "mean_abs_theta_difference_deg": mean_deg((prec["theta"] - ours).abs()),
        },
    }
    text = json.dumps(result, indent=2)
    print(text)
    if a.out:
        Path(a.out).write_text(text + "\n")


if __name__ == "__main__":
    main()
