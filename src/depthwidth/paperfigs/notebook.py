"""The superposition paper's LLM fit notebook (LLMs/nonlinearfit-3.ipynb), read from its stored outputs.

The notebook fits L = A / m^α + B_g with one offset per (family, dataset) group, family-major: its
``model_classes`` × ``data_names``. Nothing here is typed in: the model ids, the group order, α, A, the
16 offsets and the printed slope error are parsed from the cells' sources and stored outputs.

- ``read_fit_notebook``: {model_names, data_names, model_classes, groups, alpha, A, B, err_slope, final_loss}.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path


def _source(cell) -> str:
    s = cell.get("source", "")
    return "".join(s) if isinstance(s, list) else s


def _outputs_text(cell) -> str:
    parts = []
    for o in cell.get("outputs", []):
        t = o.get("text") or o.get("data", {}).get("text/plain", "")
        parts.append("".join(t) if isinstance(t, list) else t)
    return "\n".join(parts)


def _list_assignment(src: str, name: str):
    tree = ast.parse(src)
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for t in node.targets
        ):
            return ast.literal_eval(node.value)
    return None


def _tensors(text: str) -> list[list[float]]:
    """The values of each ``tensor([...])`` in a printed tuple."""
    return [
        [float(v) for v in re.split(r"[,\s]+", body.strip()) if v]
        for body in re.findall(r"tensor\(\[([^\]]*)\]", text)
    ]


def read_fit_notebook(path: str | Path) -> dict:
    """Parse the fit notebook. Raises ValueError naming what is missing if the notebook is not the one
    pinned (a cell defining model_names / data_names / model_classes, an output printing alpha, A, B)."""
    path = Path(path)
    nb = json.loads(path.read_text(encoding="utf-8"))
    found: dict = {}
    for cell in nb.get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        src = _source(cell)
        for name in ("model_names", "data_names", "model_classes"):
            if name not in found and re.search(rf"^{name}\s*=", src, re.M):
                found[name] = _list_assignment(src, name)
        out = _outputs_text(cell)
        if re.search(r"model\.alpha\.data\s*,\s*model\.A\.data\s*,\s*model\.B\.data", src) and out:
            t = _tensors(out)
            if len(t) == 3:
                found["alpha"], found["A"], found["B_list"] = t[0][0], t[1][0], t[2]
        m = re.search(r"Error in slope:\s*([0-9.eE+-]+)", out)
        if m:
            found["err_slope"] = float(m.group(1))
        losses = re.findall(r"Iteration (\d+), Loss: ([0-9.eE+-]+)", out)
        if losses:
            found["final_loss"] = float(losses[-1][1])
            found["iterations"] = int(losses[-1][0]) + 1000
    need = ["model_names", "data_names", "model_classes", "alpha", "A", "B_list", "err_slope"]
    missing = [k for k in need if k not in found]
    if missing:
        raise ValueError(
            f"{path}: could not find {missing} in the notebook's cells and stored outputs; is it the pinned nonlinearfit-3.ipynb?"
        )
    groups = [f"{c} / {d}" for c in found["model_classes"] for d in found["data_names"]]
    if len(groups) != len(found["B_list"]):
        raise ValueError(
            f"{path}: {len(found['B_list'])} offsets printed for {len(groups)} (family, dataset) groups"
        )
    found["groups"] = groups
    found["B"] = dict(zip(groups, found.pop("B_list")))
    return found
