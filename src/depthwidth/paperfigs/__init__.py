"""The superposition paper's figures read off its vector PDFs (pdfminer.six): axes from tick marks,
markers, error bars and lines in data coordinates; Fig. 8's LLM points and the fit notebook's outputs.

Modules: ``vector`` (drawing objects of a page), ``axes`` (frames, ticks, axis maps), ``marks`` (markers,
error bars, lines, tables), ``notebook`` (the LLM fit notebook's stored outputs), ``fig8`` (Fig. 8a read and
fitted), ``concordance`` (every figure of both papers), ``ours`` (our cells as seed means in the paper's
unit), ``figures`` (one record per compared figure and its comparison: rules paperfigs_compare and
paperfigs_comparisons), ``section`` (rule paperfigs_section: renders the files), ``outputs`` (files both the
rules and the jobs name).
"""
