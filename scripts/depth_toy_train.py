"""Train every student of one (teacher kind, variant, replicate) job (rule depth_toy_train_<variant>)."""

from pathlib import Path

import torch

from depthwidth.depth_toy import pipeline
from depthwidth.depth_toy.io import write_job_outputs
from depthwidth.depth_toy.model import make_teacher
from depthwidth.depth_toy.train import train_students
from depthwidth.logs import setup_logging

sm = snakemake  # noqa: F821
log = setup_logging(sm.log[0])
torch.set_num_threads(sm.threads)  # more threads than cores makes OpenMP spin: use what Snakemake gave
# How often to checkpoint does not change the result, so it is read from the config rather than passed as
# a param: editing it must not retrain anything.
p = {**sm.params.train, "checkpoint_every": sm.config["depth_toy"]["checkpoint_every"]}
kind, rep = sm.wildcards.kind, int(sm.wildcards.rep)
device = p["device"] if p["device"] != "auto" else ("cuda" if torch.cuda.is_available() else "cpu")
settings = pipeline.settings_for(p, kind, rep)
teacher = make_teacher(kind, pipeline.teacher_seed(p["seed"], rep), p["teacher_depth"], p["width"], p["vocab"])
log.info("depth_toy %s/%s rep %d on %s: depths %s, %d temperature(s), %d steps", kind, p["variant"], rep,
         device, p["depths"], len(settings.temperatures), p["steps"])
checkpoint = Path(sm.output.angles).with_name("checkpoint.pt")
records = train_students(teacher, settings, checkpoint=checkpoint, device=device)
write_job_outputs(records, teacher.to(device), kind, p["variant"], rep, sm.output.students, sm.output.angles,
                  p["angle_samples"])
checkpoint.unlink(missing_ok=True)  # finished: the outputs now hold everything worth keeping
