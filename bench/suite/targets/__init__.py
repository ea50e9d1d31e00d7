"""Targets: what the suite drives. Each has a name, an environment ("host"
or "tcg": figures of different environments are never put side by side)
and measures one run of one case: baseline and solution together."""
from .base import Target
from .cuda import CudaTarget
from .inproc import InprocTarget
from .nbd import NbdTarget
from .vmlane import MdTarget, UblkTarget

TARGETS = {t.name: t for t in (InprocTarget, NbdTarget, CudaTarget, UblkTarget, MdTarget)}
