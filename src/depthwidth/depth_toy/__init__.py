"""Teacher-student depth toy of "Inverse depth scaling from most layers being similar" (arXiv 2602.05970).

``pipeline``: config -> rule params, job lists, variant definitions (what the rules import);
``model``: teacher/student residual networks; ``train``: batched, resumable training of all students of one
job (rule depth_toy_train_<variant>); ``angles``: hidden-state angles; ``exponents``: depth exponents α_ℓ;
``tables``: the stage's CSV tables (rule depth_toy_tables); ``section``: the report section (rule
depth_toy_section).
"""
