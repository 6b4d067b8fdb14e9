"""The fitting layer: every law the pipeline fits, the data it is fitted to, and how (docs/fitting.md).

- ``law``: ``FitData`` (the one data class), ``PowerLaw`` (``DECOMPOSED``, ``CHINCHILLA``), the point selection.
- ``lawfit``: the lmfit core of a ``PowerLaw`` (``LawFit``, log residual and analytic Jacobian, starts,
  losses, errors, row bootstrap, held-out check).
- ``model``: ``Law``, the base of a law written as one class, and ``fit``; ``group_offsets``
  (L = A/m^α + B_g), ``power`` (y = c·x^−α), ``loglog`` (the log-log line, OLS).
- ``resample`` (bootstrap over a named unit), ``profile`` (profiles and their intervals), ``compare``
  (information criteria).
"""
