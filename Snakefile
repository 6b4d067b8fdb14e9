# depthwidth: width and depth scaling of language-model loss.
# Reproduces Liu, Liu & Gore (arXiv 2505.10465) and Liu, Kangaslahti, Liu & Gore (arXiv 2602.05970).
#   snakemake --cores 8 results/report.html


import os
import sys

from snakemake.utils import min_version

min_version("9.0")


# The package holds the science; import it from the checkout when it is not installed.
sys.path.insert(0, os.path.join(workflow.basedir, "src"))

from depthwidth.config import checked_yaml


# The defaults sit beside this Snakefile; --configfile overlays (deep-merges) on top of them. A syntax error
# in the defaults names the file and the line (Snakemake reads the overlays before this file runs).
configfile: checked_yaml(os.path.join(workflow.basedir, "config.yaml"))


include: "rules/common.smk"
include: "rules/download.smk"
include: "rules/models.smk"
include: "rules/chinchilla.smk"
include: "rules/superposition.smk"
include: "rules/depth_toy.smk"
include: "rules/hidden_states.smk"
include: "rules/causal_tracing.smk"
include: "rules/lm_head.smk"
include: "rules/paperfigs.smk"
include: "rules/report.smk"


# Stop, naming the files and the command that remakes them, where a file the finished report was built
# from is missing (a failed job's outputs, which a plain run would not remake).
stop_on_missing()
# Warn, naming them, about files an earlier version's jobs made that no rule makes now (an upgrade moved
# its outputs); nothing reads them, and nothing is deleted.
warn_on_leftovers()


rule all:
    default_target: True
    input:
        "results/report.html",
