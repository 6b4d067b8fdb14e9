"""LM-head stage (Liu, Liu & Gore 2025, "Superposition yields robust neural scaling"): the geometry of
each model's LM head, next-token loss vs width and the fitted width exponent α_m, and the token
frequencies of real text (α − 1: what weak superposition would predict for α_m).

- ``pipeline``: config → rule params and input lists (the only module rules/lm_head.smk imports).
- ``geometry``: which matrix is the LM head, its row norms and overlaps (rule lm_head_geometry).
- ``corpus``: texts of a corpus and the tokenizer of a model (rule lm_head_corpus).
- ``loss``: next-token loss of a model on a corpus (rule lm_head_loss).
- ``width_fit``: L = A / m^α + B_g (rule lm_head_width_fit); ``tables``: geometry.csv and loss.csv.
- ``token_frequencies``: token counts of real text and p_i ∝ i^-α (rules lm_head_token_counts, lm_head_token_fit).
- ``compare``: every comparison with the paper, as data (rule lm_head_compare, comparisons.csv).
- ``section``: the report section, rendered from the tables and comparisons.csv (rule lm_head_section).
"""
