"""The report: ``html`` (helpers for the stages' sections: Figures, tables, headline rows), ``page``
(rule report: the jinja2 page that embeds the figure files), ``pipeline`` (config → the report rule's
inputs and params), ``synthesis`` (the two papers' exponents combined into the loss-optimal shape)."""
