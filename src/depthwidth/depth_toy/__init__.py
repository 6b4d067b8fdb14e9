"""Teacher-student depth toy of "Inverse depth scaling from most layers being similar" (arXiv 2602.05970).

``model``: teacher/student residual networks; ``train``: batched, resumable training of all students of one
teacher; ``analysis``: depth exponents, hidden-state angles, tables and the report section.
"""
