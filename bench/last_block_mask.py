"""How much the per-layer "last block" loss moves with the paper's padding-only attention mask.

    python bench/last_block_mask.py                                    # tiny random GPT-NeoX
    python bench/last_block_mask.py --model data/models/smollm2-135m   # the packaged SmolLM2-135M

The paper's Pythia script calls the last block on h_l with a mask that hides only the padding; under
transformers' SDPA (and eager) attention a given mask is the whole mask, so for l < L-1 each position
sees the later tokens of its document, the next one (its target) included. This runs the same FineWeb
documents through ``batch_metrics`` with ``last_block_mask`` causal and padding_only, and prints the mean
loss per layer of both, their difference, the compositional test on each, and a leak check: the loss
at l ≤ L-2 of the first document's early positions before and after its last token is changed.
Prints one JSON object; ``--out`` also writes it.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from depthwidth.download.fineweb import read_corpus  # noqa: E402
from depthwidth.hidden_states.extract import make_batches, pad_batch, tokenize  # noqa: E402
from depthwidth.hidden_states.metrics import LAST_BLOCK_MASKS, batch_metrics, find_parts  # noqa: E402
from depthwidth.hidden_states.stats import compositional_test, rel_depth  # noqa: E402

MIRROR = Path(__file__).resolve().parents[2] / "shared" / "data" / "fineweb" / "fineweb_subset.json"


def load(model_dir: str | None, texts: list[str]):
    if model_dir:
        from depthwidth.models.load import load_model

        m = load_model(model_dir)
        return m.model, m.tokenizer, Path(model_dir).name
    from depthwidth.hidden_states.tiny import tiny_model, tiny_tokenizer

    tok = tiny_tokenizer(texts, vocab_size=400)
    return (
        tiny_model("gpt_neox", vocab_size=len(tok), hidden=64, layers=6, heads=4),
        tok,
        "tiny random gpt_neox",
    )


def per_layer_losses(parts, batches, mask_kind: str) -> np.ndarray:
    """(tokens, L) last-block losses of every kept token, all batches."""
    out = [
        batch_metrics(parts, ids, m, losses=("last_block",), last_block_mask=mask_kind)["loss_last_block"]
        for ids, m in batches
    ]
    return torch.cat(out).double().numpy()


def leak_check(parts, ids: torch.Tensor, mask: torch.Tensor, mask_kind: str) -> float:
    """Largest change of the loss at l ≤ L-2, positions < T-2 of row 0, when row 0's last token changes."""
    row_len = int(mask[0].sum())
    ids2 = ids.clone()
    ids2[0, row_len - 1] = (ids[0, row_len - 1] + 1) % int(ids.max() + 1)
    a = batch_metrics(parts, ids, mask, losses=("last_block",), last_block_mask=mask_kind)
    b = batch_metrics(parts, ids2, mask, losses=("last_block",), last_block_mask=mask_kind)
    sel = (a["row"] == 0) & (a["position"] < row_len - 2)
    return float((a["loss_last_block"][sel, :-1] - b["loss_last_block"][sel, :-1]).abs().max())


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--model", help="a fetched model folder (data/models/<name>); default: tiny random GPT-NeoX"
    )
    ap.add_argument("--docs", type=int, default=8)
    ap.add_argument("--max-tokens", type=int, default=128)
    ap.add_argument("--batch-tokens", type=int, default=512)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out")
    a = ap.parse_args(argv)
    torch.set_num_threads(a.threads)
    texts = [d["text"] for d in read_corpus(MIRROR, limit=a.docs)]
    model, tok, name = load(a.model, texts)
    model.eval()
    parts = find_parts(model)
    seqs = tokenize(tok, texts, a.max_tokens)
    pad = tok.pad_token_id if tok.pad_token_id is not None else 0
    batches = [
        pad_batch([seqs[i] for i in rows], pad)
        for rows in make_batches([len(s) for s in seqs], a.batch_tokens)
    ]
    L = parts.n_layers
    depth = rel_depth("loss_last_block", L, L)
    res = {
        "model": name,
        "n_layers": L,
        "attn_implementation": model.config._attn_implementation,
        "docs": a.docs,
        "max_tokens": a.max_tokens,
        "rel_depth": depth.round(4).tolist(),
    }
    losses = {}
    for kind in LAST_BLOCK_MASKS:
        losses[kind] = per_layer_losses(parts, batches, kind)
        res[f"mean_loss_{kind}"] = losses[kind].mean(axis=0).round(4).tolist()
        comp = compositional_test(losses[kind], depth)
        res[f"compositional_{kind}"] = {
            k: round(v, 4) if isinstance(v, float) else v for k, v in comp.items()
        }
        ids, m = batches[0]
        res[f"leak_{kind}"] = leak_check(parts, ids, m, kind)
    diff = losses["causal"].mean(axis=0) - losses["padding_only"].mean(axis=0)
    res["n_tokens"] = int(losses["causal"].shape[0])
    res["causal_minus_paper_per_layer"] = diff.round(4).tolist()
    res["causal_minus_paper_mean_l_le_L-2"] = round(float(diff[:-1].mean()), 4)
    res["causal_minus_paper_max_l_le_L-2"] = round(float(diff[:-1].max()), 4)
    res["causal_minus_paper_at_L-1"] = round(float(diff[-1]), 6)
    per_token = np.abs(losses["causal"] - losses["padding_only"])[:, :-1]
    res["mean_abs_token_change_l_le_L-2"] = round(float(per_token.mean()), 4)
    print(json.dumps(res, indent=1))
    if a.out:
        Path(a.out).write_text(json.dumps(res, indent=1) + "\n")
    return res


if __name__ == "__main__":
    main()
