"""depthwidth: the science behind the pipeline (fits, toy models, metrics, report helpers)."""

__version__ = "0.1.0"
