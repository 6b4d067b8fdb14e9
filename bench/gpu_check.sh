#!/usr/bin/env bash
# The GPU checks in one short script (about 9 minutes on one H200), for a machine that has python3 with
# torch (CUDA), transformers, numpy, pandas and safetensors; nothing is installed. Writes into $OUT (or
# bench/gpu_out) five files: log.txt (everything printed) and
#   depth_toy_speed.json: the batched depth-toy trainer against the paper's plain loop (target >= 10x);
#   depth_toy_exponent_{tied,independent}.json: the paper's MSE settings for as many steps as fit about
#     300 s (STEPS overrides), the depth exponent at every evaluation (paper: ~3 tied, ~1 independent);
#   hidden_states_speed.json: bf16 extraction against the bare forward, Pythia-1B's shape (target >= 85 %).
# Smoke test on a CPU (about 3 minutes):
#   PYTHON=.venv/bin/python DEVICE=cpu STEPS=20 DT_DEPTHS="4 8" HS_SHAPE=pythia-160m HS_SEQ=64 HS_TIMEOUT=300 \
#   bash bench/gpu_check.sh
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
out="${OUT:-bench/gpu_out}"
mkdir -p "$out"
log="$out/log.txt"
dev="${DEVICE:-cuda}"
py="${PYTHON:-python3}"
status=0
(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv || true) > "$log" 2>&1
"$py" -c "import torch, transformers; print('torch', torch.__version__, 'transformers', transformers.__version__, 'cuda', torch.cuda.is_available())" 2>&1 | tee -a "$log"

quick=""
[ "$dev" = cpu ] && quick="--quick"
# shellcheck disable=SC2086
timeout 150 "$py" bench/bench_depth_toy.py --device "$dev" $quick --out "$out/depth_toy_speed.json" 2>&1 \
    | tee -a "$log" || status=1

# One step of all six depth groups costs about what one step of the speed benchmark's 24 students (six
# groups of four temperatures) costs: take the steps that fit about 300 s.
steps="${STEPS:-$("$py" -c "import json; ms = json.load(open('$out/depth_toy_speed.json'))['batched_ms']; print(max(200, min(80000, int(0.8 * 300e3 / (24 * ms)) // 100 * 100)))" 2>/dev/null || echo 4000)}"
echo "depth toy exponent run: $steps steps per teacher kind, the two kinds in parallel" | tee -a "$log"
tmp="$(mktemp -d)"
pids=()
for kind in tied independent; do
    # shellcheck disable=SC2086
    timeout 360 "$py" bench/depth_toy_exponent.py --kinds "$kind" --device "$dev" --steps "$steps" \
        --depths ${DT_DEPTHS:-6 12 16 24 32 48} --out "$out/depth_toy_exponent_$kind.json" \
        > "$tmp/$kind.log" 2>&1 &
    pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid" || status=1; done
cat "$tmp"/*.log >> "$log"
grep -h "alpha_l\|per student-step" "$tmp"/*.log

timeout "${HS_TIMEOUT:-90}" "$py" bench/bench_hidden_states.py --device "$dev" --shape "${HS_SHAPE:-pythia-1b}" \
    --batch-docs 8 --seq-len "${HS_SEQ:-1024}" --out "$out/hidden_states_speed.json" 2>&1 | tee -a "$log" || status=1
exit $status
