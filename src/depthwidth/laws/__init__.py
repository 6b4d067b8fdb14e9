"""The fitting layer: every law the pipeline fits, the data it is fitted to and the fitting core.

- ``law``: ``PowerLaw`` (the decomposed and the Chinchilla law), ``FitData``, the point selection.
- ``lawfit``: the lmfit core (``LawFit``, residual and analytic Jacobian, starts, bootstrap, held-out).
"""
