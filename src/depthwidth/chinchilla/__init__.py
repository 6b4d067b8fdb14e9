"""Chinchilla stage: reconstruct the points of Chinchilla Fig. 4 and fit the decomposed law.

``points`` (rule chinchilla_points), ``law`` (the law and the point selection), ``fit`` (rule
chinchilla_fit: lmfit to convergence, standard errors, bootstrap, held-out check, variants), ``adam`` (the
paper's Adam fit), ``scan`` (rule chinchilla_drop_scan), ``shape`` (what the law implies for
width and depth), ``section`` (rule chinchilla_section), ``pipeline`` (config → rule params).
"""
