"""Chinchilla stage: reconstruct the points of Chinchilla Fig. 4 and fit the decomposed law.

``points`` (rule chinchilla_points); the fit grid, one cell per law and loss of the fitting core
(``pipeline.LAWS`` x ``pipeline.LOSSES``, results/chinchilla/fits/<law>/<loss>/): ``fit`` (rule
chinchilla_fit: lmfit to convergence, standard errors, bootstrap, held-out check, variants), ``adam`` (the
paper's Adam fit), ``scan`` (rule chinchilla_drop_scan, the decomposed law's cells); ``robustness`` (the
exponents across losses and cuts, and rule chinchilla_leverage), ``replication`` (rule chinchilla_law:
Besiroglu et al.'s procedure), ``compare`` (both laws on a sweep), ``sweeps`` (rule
chinchilla_sweep_points), ``identify`` (rule chinchilla_sweep_identify), ``shape`` (what the law implies
for width and depth), ``comparisons`` (rule chinchilla_compare: every comparison with the papers as
data, ``depthwidth.verdicts``), ``section`` (rule chinchilla_section, which only renders; its parts
``section_fit``, ``section_robust``, ``section_law``, ``section_sweeps``), ``pipeline`` (config → rule
params). The law, the data class and the point selection are
``depthwidth.laws``.
"""
