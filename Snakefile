# depthwidth: width and depth scaling of language-model loss.
# Reproduces Liu, Liu & Gore (arXiv 2505.10465) and Liu, Kangaslahti, Liu & Gore (arXiv 2602.05970).
#   snakemake --cores 8 results/report.html


import os

from snakemake.utils import min_version

min_version("9.0")


# The defaults sit beside this Snakefile; --configfile overlays (deep-merges) on top of them.
configfile: os.path.join(workflow.basedir, "config.yaml")


include: "rules/common.smk"
include: "rules/download.smk"
include: "rules/models.smk"
include: "rules/chinchilla.smk"
include: "rules/superposition.smk"
include: "rules/depth_toy.smk"
include: "rules/hidden_states.smk"
include: "rules/causal_tracing.smk"
include: "rules/lm_head.smk"
include: "rules/report.smk"


rule all:
    default_target: True
    input:
        "results/report.html",
