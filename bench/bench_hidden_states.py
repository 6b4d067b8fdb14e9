"""Benchmark: hidden-state extraction against the model's bare forward pass on the same batches.

    python bench/bench_hidden_states.py                       # random weights, SmolLM2-135M's shape
    python bench/bench_hidden_states.py --model data/models/smollm2-135m --device cuda
    python bench/bench_hidden_states.py --shape pythia-1b --batch-docs 32 --seq-len 1024   # on a GPU

Measures tokens/s (real, unpadded tokens) of

- ``bare``: ``model(input_ids, attention_mask)``, what any use of the model costs;
- ``geometry``: the extraction without losses (forward with all hidden states, then θ, θ^Δ, norms,
  angle to h_L, progress, on the device), target ≥ 85 % of ``bare``: timed batch by batch in
  alternation with ``bare``, and the ratio is the median over repeats of the paired times;
- ``split``: inside one pass, the time of the forward with hidden states and of the metrics on them
  (less exposed to other processes' load than two separate passes on a shared CPU);
- ``full``: geometry plus both per-layer losses (logit lens, last block); this decodes every layer
  through the LM head, i.e. about 2 L extra head passes, so its cost is reported, not targeted.

Peak memory is the CUDA allocator's peak on a GPU, and the process's max RSS on a CPU. Prints one JSON
object; ``--out`` also writes it to a file. Runs on CPU (float32) and CUDA (bfloat16 by default).
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from depthwidth.hidden_states.extract import resolve_device, resolve_dtype  # noqa: E402
from depthwidth.hidden_states.metrics import batch_metrics, find_parts  # noqa: E402
from depthwidth.models.load import cast_like_pretrained  # noqa: E402

# Random-weight stand-ins with real models' shapes (no download needed).
SHAPES = {
    "smollm2-135m": dict(
        family="llama",
        hidden_size=576,
        intermediate_size=1536,
        num_hidden_layers=30,
        num_attention_heads=9,
        num_key_value_heads=3,
        vocab_size=49152,
    ),
    "pythia-160m": dict(
        family="gpt_neox",
        hidden_size=768,
        intermediate_size=3072,
        num_hidden_layers=12,
        num_attention_heads=12,
        vocab_size=50304,
    ),
    "pythia-1b": dict(
        family="gpt_neox",
        hidden_size=2048,
        intermediate_size=8192,
        num_hidden_layers=16,
        num_attention_heads=8,
        vocab_size=50304,
    ),
    "qwen2.5-0.5b": dict(
        family="qwen2",
        hidden_size=896,
        intermediate_size=4864,
        num_hidden_layers=24,
        num_attention_heads=14,
        num_key_value_heads=2,
        vocab_size=151936,
    ),
}


def random_model(shape: str):
    import transformers as T

    kw = dict(SHAPES[shape])
    family = kw.pop("family")
    cfg = {"llama": T.LlamaConfig, "gpt_neox": T.GPTNeoXConfig, "qwen2": T.Qwen2Config}[family](
        max_position_embeddings=2048, **kw
    )
    torch.manual_seed(0)
    return T.AutoModelForCausalLM.from_config(cfg).eval()


def make_batches(vocab: int, n: int, docs: int, seq: int, seed: int = 0):
    """``n`` batches of (docs, seq) token ids; rows are right-padded to 50-100 % of ``seq`` like real text."""
    g = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(n):
        ids = torch.randint(0, vocab, (docs, seq), generator=g)
        lengths = torch.randint(seq // 2, seq + 1, (docs,), generator=g)
        lengths[0] = seq
        mask = (torch.arange(seq)[None] < lengths[:, None]).long()
        out.append((ids, mask))
    return out


def sync(dev):
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)


def timed(fn, batches, dev, repeats: int):
    """Best of ``repeats`` passes over all batches: tokens/s of real tokens."""
    n_tokens = sum(int(m.sum()) for _, m in batches)
    best = float("inf")
    for _ in range(repeats):
        sync(dev)
        t0 = time.perf_counter()
        for ids, mask in batches:
            fn(ids, mask)
        sync(dev)
        best = min(best, time.perf_counter() - t0)
    return n_tokens / best, best


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", help="a fetched model folder (data/models/<name>); default: random weights")
    ap.add_argument(
        "--shape", default="smollm2-135m", choices=sorted(SHAPES), help="shape of the random model"
    )
    ap.add_argument("--device", default="auto")
    ap.add_argument("--dtype", default="auto", choices=["auto", "float32", "bfloat16", "float16"])
    ap.add_argument("--batch-docs", type=int, default=4)
    ap.add_argument("--seq-len", type=int, default=256)
    ap.add_argument("--n-batches", type=int, default=3)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: torch's default)")
    ap.add_argument("--skip-full", action="store_true", help="do not time the extraction with losses")
    ap.add_argument("--out", help="also write the JSON result here")
    a = ap.parse_args(argv)
    if a.threads:
        torch.set_num_threads(a.threads)
    dev = resolve_device(a.device)
    dt = resolve_dtype(a.dtype, dev)
    if a.model:
        from depthwidth.models.load import load_model

        model = load_model(a.model, dtype=dt).model  # loaded in dt, as the extraction rule loads it
        name = Path(a.model).name
    else:
        model = random_model(a.shape)
        name = f"random {a.shape}"
    model = (
        cast_like_pretrained(model, dt).to(dev).eval()
    )  # rotary inv_freq stays float32, as extract keeps it
    parts = find_parts(model)
    vocab = model.get_input_embeddings().weight.shape[0]
    batches = [(i.to(dev), m.to(dev)) for i, m in make_batches(vocab, a.n_batches, a.batch_docs, a.seq_len)]

    @torch.inference_mode()
    def bare(ids, mask):
        return model(input_ids=ids, attention_mask=mask, use_cache=False)

    def geometry(ids, mask):
        return batch_metrics(parts, ids, mask, losses=())

    def full(ids, mask):
        return batch_metrics(parts, ids, mask)

    for fn in (bare, geometry):  # warm-up: kernels, allocator, caches
        fn(*batches[0])
    result = {
        "model": name,
        "device": str(dev),
        "dtype": str(dt).removeprefix("torch."),
        "threads": torch.get_num_threads(),
        "n_layers": parts.n_layers,
        "batch_docs": a.batch_docs,
        "seq_len": a.seq_len,
        "n_batches": a.n_batches,
        "real_tokens": sum(int(m.sum()) for _, m in batches),
    }
    # Interleave the measurements batch by batch, so that load from other processes (and a shared VM's
    # drifting speed) hits both alike; the ratio is the median over repeats of paired sums.
    n_tokens = result["real_tokens"]
    t_bare, t_geo = [], []
    for _ in range(a.repeats):
        tb = tg = 0.0
        for ids, mask in batches:
            for fn, acc in ((bare, "b"), (geometry, "g")):
                sync(dev)
                t0 = time.perf_counter()
                fn(ids, mask)
                sync(dev)
                if acc == "b":
                    tb += time.perf_counter() - t0
                else:
                    tg += time.perf_counter() - t0
        t_bare.append(tb)
        t_geo.append(tg)
    result["bare_tokens_per_s"] = n_tokens / min(t_bare)
    result["geometry_tokens_per_s"] = n_tokens / min(t_geo)
    ratios = sorted(b / g for b, g in zip(t_bare, t_geo))
    result["geometry_over_bare_per_repeat"] = ratios
    result["geometry_over_bare"] = ratios[len(ratios) // 2]  # median
    result["target_geometry_over_bare"] = 0.85
    result["meets_target"] = result["geometry_over_bare"] >= 0.85
    # The same split inside one call: forward with hidden states vs the metrics on them. Less exposed
    # to load from other processes than two separate passes.
    from depthwidth.hidden_states.metrics import geometry, valid_positions

    t_fwd, t_geo = float("inf"), float("inf")
    with torch.inference_mode():
        for _ in range(a.repeats):
            f = g = 0.0
            for ids, mask in batches:
                sync(dev)
                t0 = time.perf_counter()
                out = model(input_ids=ids, attention_mask=mask, use_cache=False, output_hidden_states=True)
                sync(dev)
                t1 = time.perf_counter()
                valid = valid_positions(mask)
                geometry([h[:, :-1][valid] for h in out.hidden_states])
                sync(dev)
                f, g = f + t1 - t0, g + time.perf_counter() - t1
            t_fwd, t_geo = min(t_fwd, f), min(t_geo, g)
    result["split_forward_s"] = t_fwd
    result["split_metrics_s"] = t_geo
    result["split_forward_over_forward_plus_metrics"] = t_fwd / (t_fwd + t_geo)
    if not a.skip_full and parts.decode is not None:
        full(*batches[0])
        result["full_tokens_per_s"] = timed(full, batches, dev, max(1, a.repeats - 1))[0]
        result["full_over_bare"] = result["full_tokens_per_s"] / result["bare_tokens_per_s"]
    if dev.type == "cuda":
        result["peak_gpu_gib"] = torch.cuda.max_memory_allocated(dev) / 2**30
    result["max_rss_gib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    text = json.dumps(result, indent=2)
    print(text)
    if a.out:
        Path(a.out).write_text(text)
    return result


if __name__ == "__main__":
    main()
