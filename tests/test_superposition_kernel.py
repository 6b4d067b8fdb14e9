"""The superposition trainer's compiled kernel: its per-machine build cache (reuse, concurrent builds, key,
no compiler warnings) and its checked boundary (a wrong argument raises an error naming it)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import torch

from depthwidth.superposition import fused, native
from depthwidth.superposition.batch import Batch, Workspace
from depthwidth.superposition.data import SparseSampler, feature_probabilities

SRC = Path(__file__).resolve().parents[1] / "src"


def _env(cache: Path) -> dict:
    env = {**os.environ, native.CACHE_ENV: str(cache), "PYTHONPATH": str(SRC)}
    env.pop("DEPTHWIDTH_FUSED", None)
    return env


def _needs_compiler():
    try:
        native.compiler_id(native.find_compiler())
    except (RuntimeError, OSError, subprocess.CalledProcessError) as e:
        pytest.skip(f"no working C compiler here ({e})")


def test_build_is_clean_and_reused_by_the_next_process(tmp_path, monkeypatch, caplog):
    """A build into an empty cache compiles without a warning (-Wall -Wextra); the next process that needs
    the kernel (here: this one with the kernel's state reset) logs that it reused that build, leaves the
    file as it was and gets the kernel ready (lookup, load and self-checks) quickly."""
    _needs_compiler()
    monkeypatch.setenv(native.CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.delenv("DEPTHWIDTH_FUSED", raising=False)
    first = native.cached_build(fused.NAME, fused.SOURCE, fused.FLAGS, fused.LIBS)
    assert not first.reused and first.warnings == ""
    assert first.path.parent == tmp_path / "cache" / "kernels" and first.path.name.endswith(
        f"-{first.key}.so"
    )
    stat = first.path.stat()
    for name in ("_kernel", "_tried", "_group", "_sgemm", "build", "build_seconds"):
        monkeypatch.setattr(fused, name, getattr(fused, name))  # restored after the test
    fused._kernel, fused._tried = None, False
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as a training job (a first parallel op would start torch's thread pool)
    try:
        with caplog.at_level("INFO", logger="depthwidth.superposition"):
            assert fused.kernel() is not None and fused.group_ok()
    finally:
        torch.set_num_threads(threads)
    assert f"reused the build {first.path}" in caplog.text
    assert fused.build.reused and fused.build.path == first.path
    now = first.path.stat()
    assert (now.st_ino, now.st_mtime_ns) == (stat.st_ino, stat.st_mtime_ns)  # not rebuilt
    assert (
        fused.build_seconds < 1.0
    )  # measured 0.04-0.08 s in a new process (notes); loose for a loaded machine
    assert [p.name for p in first.path.parent.iterdir() if ".partial-" in p.name] == []


def test_two_processes_building_at_once_both_get_the_kernel(tmp_path):
    """Two processes that need the kernel at the same moment (released together after their imports) both
    load a working library: one builds it, the other waits for the lock and reuses it; no partial file
    is left behind and there is one library in the cache."""
    _needs_compiler()
    cache, go = tmp_path / "cache", tmp_path / "go"
    code = textwrap.dedent(
        f"""
        import ctypes, os, sys, time
        from pathlib import Path
        from depthwidth.superposition import native
        src = Path({str(SRC)!r}) / "depthwidth" / "superposition"
        flags = {fused.FLAGS!r}
        Path(sys.argv[1]).touch()  # ready
        while not Path({str(go)!r}).exists():
            time.sleep(0.005)
        b = native.cached_build("superposition-kernel", src / "kernel.c", flags, ["-lm"])
        lib = ctypes.CDLL(str(b.path))
        lib.gemm_seconds.restype = ctypes.c_double
        print("reused" if b.reused else "built", b.path, lib.gemm_seconds())
        """
    )
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code, str(tmp_path / f"ready{i}")],
            env=_env(cache),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(2)
    ]
    deadline = time.monotonic() + 120
    while not all((tmp_path / f"ready{i}").exists() for i in range(2)):
        assert time.monotonic() < deadline and all(p.poll() is None for p in procs), "a process died early"
        time.sleep(0.01)
    go.touch()
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [e for _, e in outs]
    words = sorted(o.split()[0] for o, _ in outs)
    assert words == ["built", "reused"], outs
    assert {o.split()[1] for o, _ in outs} == {str(p) for p in (cache / "kernels").glob("*.so")}
    assert all(o.split()[2] == "0.0" for o, _ in outs)  # each called into its loaded library
    assert [p.name for p in (cache / "kernels").iterdir() if ".partial-" in p.name] == []


def test_build_key_changes_with_source_flags_compiler_and_cpu():
    base = native.build_key(b"int f(void);", ["-O3"], "gcc 12", "cpu A")[0]
    others = {
        native.build_key(b"int g(void);", ["-O3"], "gcc 12", "cpu A")[0],
        native.build_key(b"int f(void);", ["-O2"], "gcc 12", "cpu A")[0],
        native.build_key(b"int f(void);", ["-O3"], "gcc 13", "cpu A")[0],
        native.build_key(b"int f(void);", ["-O3"], "gcc 12", "cpu B")[0],
    }
    assert len(others) == 4 and base not in others and len(base) == 16
    assert native.build_key(b"int f(void);", ["-O3"], "gcc 12", "cpu A")[0] == base


def test_cache_folder_is_the_users_not_the_projects(monkeypatch, tmp_path):
    monkeypatch.delenv(native.CACHE_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert native.cache_dir() == tmp_path / "xdg" / "depthwidth"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert native.cache_dir() == Path.home() / ".cache" / "depthwidth"
    monkeypatch.setenv(native.CACHE_ENV, str(tmp_path / "mine"))
    assert native.cache_dir() == tmp_path / "mine"


def test_an_unwritable_cache_folder_is_named_with_the_fix(tmp_path, monkeypatch):
    _needs_compiler()
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    monkeypatch.setenv(native.CACHE_ENV, str(blocked))
    with pytest.raises(
        RuntimeError, match=f"cannot write the kernel build cache {blocked}.*set {native.CACHE_ENV}"
    ):
        native.cached_build(fused.NAME, fused.SOURCE, fused.FLAGS, fused.LIBS)


def _problem(C=2, m=5):
    n, B = 70, 96
    sampler = SparseSampler(feature_probabilities("power-a1.2", n), B, torch.Generator().manual_seed(3))
    x = Batch(*sampler.sample(), B, n)
    a = x.n_features
    g = torch.Generator().manual_seed(4)
    return x, {
        "Wt": torch.randn(C, m, n, generator=g),
        "b": torch.randn(C, n, generator=g),
        "G": torch.full((C, m, n), 7.0),
        "Gb": torch.full((C, n), 7.0),
        "WAt": torch.empty(m, a),
        "GA": torch.empty(a, n),
        "D": torch.empty(a, n),
        "DW": torch.empty(m, a),
        "sq": torch.empty(C, dtype=torch.float64),
    }


def _wrong(t: torch.Tensor, how: str):
    if how == "shape":
        return t.reshape(-1)[: t.numel() - 1].clone()
    if how == "dtype":
        return t.double() if t.dtype == torch.float32 else t.float()
    if how == "stride":  # same shape, not contiguous
        return t.t().contiguous().t() if t.dim() == 2 else torch.empty(2 * t.numel(), dtype=t.dtype)[::2]
    if how == "device":
        return torch.empty(t.shape, dtype=t.dtype, device="meta")
    return t.numpy()  # not a tensor


@pytest.mark.parametrize("how", ["shape", "dtype", "stride", "device", "numpy"])
@pytest.mark.parametrize("name", ["Wt", "b", "G", "DW", "sq"])
def test_a_wrong_argument_is_an_error_naming_it(name, how):
    """group_grads with one argument wrong (shape, dtype, layout, device or not a tensor) raises an error
    naming that argument, before the C code runs (the outputs keep their contents)."""
    k = fused.kernel()
    if k is None or not fused.group_ok():
        pytest.skip("the kernel is not built here (no C compiler, or DEPTHWIDTH_FUSED=0)")
    x, args = _problem()
    if name == "Wt" and how == "stride":
        args["Wt"] = args["Wt"].transpose(1, 2).contiguous().transpose(1, 2)
    else:
        args[name] = _wrong(args[name], how)
    with pytest.raises(fused.KernelArgumentError, match=f"group_grads: argument '{name}' must be"):
        k.group_grads(rows=fused.rows_of(x), **args)
    if name != "G":
        assert bool((args["G"] == 7.0).all())


def test_wrong_arguments_of_the_pass_and_the_update_are_named():
    k = fused.kernel()
    if k is None:
        pytest.skip("the kernel is not built here (no C compiler, or DEPTHWIDTH_FUSED=0)")
    x, _ = _problem()
    a, n = x.n_features, x.n
    D = torch.full((a, n), 7.0)
    with pytest.raises(
        fused.KernelArgumentError, match=rf"fused_step: argument 'GA' .*\({a}, {n}\).*\({a + 1}, {n}\)"
    ):
        k.fused_step(
            rows=fused.rows_of(x), GA=torch.randn(a + 1, n), b=torch.zeros(n), D=D, gb=torch.empty(n)
        )
    assert bool((D == 7.0).all())
    C, m = 2, 4
    ok = {
        **{k_: torch.zeros(C, m, n) for k_ in ("Wt", "G", "mW", "vW")},
        **{k_: torch.zeros(C, n) for k_ in ("b", "Gb", "mb", "vb")},
        "gammas": torch.zeros(C, dtype=torch.float64),
        "norm": torch.empty(n),
    }
    scalars = dict(gscale=1.0, lr_w=1e-2, lr_b=1e-2, beta1=0.9, beta2=0.999, bc1=0.1, bc2=0.001, eps=1e-8)
    k.adam_group(**ok, **scalars)  # the right arguments pass
    for name, bad in (
        ("vW", ok["vW"].transpose(1, 2).contiguous().transpose(1, 2)),
        ("gammas", torch.zeros(C)),
        ("norm", torch.empty(n - 1)),
    ):
        with pytest.raises(fused.KernelArgumentError, match=f"adam_group: argument '{name}'"):
            k.adam_group(**{**ok, name: bad}, **scalars)
    with pytest.raises(TypeError):  # keyword-only: positional arguments are refused
        k.adam_group(*ok.values(), **scalars)


def test_an_inconsistent_batch_is_refused():
    """Index arrays that would make the C code read out of bounds are refused when the batch is packed."""
    if fused.kernel() is None:
        pytest.skip("the kernel is not built here (no C compiler, or DEPTHWIDTH_FUSED=0)")
    x, _ = _problem()
    x.inv = x.inv.clone()
    x.inv[0] = x.n_features + 5
    with pytest.raises(fused.KernelArgumentError, match="inv outside"):
        fused.rows_of(x)
    z, _ = _problem()
    z.feats = z.feats.clone()
    z.feats[-1] = z.n
    with pytest.raises(fused.KernelArgumentError, match="feats outside"):
        fused.rows_of(z)
    y, _ = _problem()
    assert fused.rows_of(y) is fused.rows_of(y)  # packed and checked once per batch
    ws = Workspace()
    assert ws.get("a", 3, 4).shape == (3, 4)


# One process trains the same small cells with an intact cache and with each damaged copy of it (a cache
# folder of its own per case, so no library this process has mapped is ever changed under it) and prints,
# per case, what the kernel log said and the trained numbers (as a file torch.save wrote).
_DAMAGED_CACHE_SCRIPT = """
import json, logging, os, shutil, subprocess, sys
from pathlib import Path
import torch
from depthwidth.superposition import fused, native
from depthwidth.superposition.train import TrainSettings, train_cells

torch.set_num_threads(1)
root = Path(sys.argv[1])
records = []
logging.getLogger("depthwidth.superposition").addHandler(
    type("H", (logging.Handler,), {"emit": lambda self, r: records.append(r.getMessage())})()
)
logging.getLogger("depthwidth.superposition").setLevel(logging.INFO)


def train(case):
    os.environ[native.CACHE_ENV] = str(root / case)
    fused._kernel, fused._tried, fused._group = None, False, False
    del records[:]
    cells = train_cells(
        "power-a1.5", [-1.0, 0.5], [6, 9], TrainSettings(n=90, batch=256, steps=30, warmup_steps=3, seed=3)
    )
    torch.save([(torch.from_numpy(c.W), torch.from_numpy(c.b), torch.from_numpy(c.losses)) for c in cells],
               root / f"{case}.pt")
    lib = fused.build.path if fused.build else None
    return {"log": list(records), "kernel": fused.kernel() is not None, "lib": str(lib),
            "lib_ok": bool(lib) and native.verify(lib)[0] == ""}


out = {"intact": train("intact")}
lib = Path(out["intact"]["lib"])
foreign = root / "foreign.so"
subprocess.run([native.find_compiler(), "-x", "c", "-shared", "-fPIC", "-o", str(foreign), "-"],
               input="int fused_step(void) { return 0; }\\n", text=True, check=True)
for case in ("truncated", "flipped", "foreign"):
    shutil.copytree(root / "intact", root / case)
    damaged = root / case / "kernels" / lib.name
    data = damaged.read_bytes()
    if case == "truncated":
        damaged.write_bytes(data[: len(data) // 2])
    elif case == "flipped":
        i = len(data) // 2
        damaged.write_bytes(data[:i] + bytes([data[i] ^ 0x40]) + data[i + 1 :])
    else:
        shutil.copyfile(foreign, damaged)
    out[case] = train(case)
    out[case]["size_after"] = damaged.stat().st_size
out["intact_size"] = lib.stat().st_size
print(json.dumps(out))
"""


@pytest.mark.workflow
def test_a_damaged_cached_library_is_detected_before_loading_and_rebuilt(tmp_path):
    """A cached kernel library that is truncated (dlopen maps it; the first call would die of SIGBUS), has
    one byte flipped, or is another valid library, is found wrong by its recorded size and SHA-256 before
    it is loaded: one warning names its path, it is built again, and training gives exactly the numbers
    (torch.equal) of a run with the intact cache."""
    _needs_compiler()
    p = subprocess.run(
        [sys.executable, "-c", _DAMAGED_CACHE_SCRIPT, str(tmp_path)],
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert p.returncode == 0, f"rc {p.returncode} (-7 is SIGBUS): {p.stderr[-3000:]}"
    out = json.loads(p.stdout.strip().splitlines()[-1])
    assert out["intact"]["kernel"] and out["intact"]["lib_ok"]
    assert not any("is damaged (" in m for m in out["intact"]["log"])
    intact = torch.load(tmp_path / "intact.pt")
    for case in ("truncated", "flipped", "foreign"):
        got = out[case]
        lib = Path(got["lib"])
        assert got["kernel"] and got["lib_ok"], (case, got["log"])  # the kernel ran, not the torch code
        assert lib.parent == tmp_path / case / "kernels"
        warned = [m for m in got["log"] if "is damaged (" in m]
        assert len(warned) == 1 and str(lib) in warned[0] and "building it again" in warned[0], got["log"]
        assert got["size_after"] == out["intact_size"]  # rebuilt in place
        for (W, b, losses), (W0, b0, losses0) in zip(torch.load(tmp_path / f"{case}.pt"), intact):
            assert torch.equal(W, W0) and torch.equal(b, b0) and torch.equal(losses, losses0), case


def test_a_cached_library_without_a_recorded_checksum_is_not_trusted(tmp_path, monkeypatch):
    """A library whose record holds no checksum (a cache written before checksums were recorded) or whose
    record is missing is not loaded unchecked: ``verify`` names what is wrong and the build is replaced."""
    _needs_compiler()
    monkeypatch.setenv(native.CACHE_ENV, str(tmp_path / "cache"))
    b = native.cached_build(fused.NAME, fused.SOURCE, fused.FLAGS, fused.LIBS)
    assert native.verify(b.path) == ("", b.sha256) and len(b.sha256) == 64
    record = b.path.with_suffix(".json")
    meta = json.loads(record.read_text())
    record.write_text(json.dumps({k: v for k, v in meta.items() if k not in ("sha256", "size")}))
    assert "holds no checksum" in native.verify(b.path)[0]
    again = native.cached_build(fused.NAME, fused.SOURCE, fused.FLAGS, fused.LIBS)
    assert not again.reused and native.verify(again.path)[0] == ""
    record.unlink()
    assert "missing or unreadable" in native.verify(b.path)[0]
