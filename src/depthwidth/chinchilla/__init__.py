"""Chinchilla stage: reconstruct the points of Chinchilla Fig. 4 and fit the decomposed law.

``points`` (rule chinchilla_points), ``law`` (the law and the point selection), ``fit`` (rule
chinchilla_fit: lmfit to convergence, standard errors, bootstrap, held-out check, variants), ``adam`` (the
paper's float32 Adam fit), ``scan`` (rule chinchilla_drop_scan), ``shape`` (what the law implies for
width and depth), ``section`` (rule chinchilla_section), ``pipeline`` (config → rule params).
"""


def __getattr__(name: str):
    # depthwidth.synthesis imports shape_exponents from here; loaded on use so that the rules' import of
    # depthwidth.chinchilla.pipeline stays light.
    if name == "shape_exponents":
        from depthwidth.chinchilla.shape import shape_exponents

        return shape_exponents
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
