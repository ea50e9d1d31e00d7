"""NBD export driven by fio's nbd engine (host). Not yet available: the
daemon/frontends NBD export has no harness the suite can start yet.

When it exists this target will: start gpuraidd on the same mem drives,
export the VD over a Unix socket, run `fio --ioengine=nbd
--uri=nbd+unix:///?socket=SOCK` with the case's rw/bs/iodepth/numjobs
(solution), and the same fio job with --ioengine=io_uring --direct=1 over
the member files (baseline), alternating the two, CPU from the daemon's
/proc/PID/stat plus fio's usr/sys. The VM-lane targets (ublk, md) follow
the same shape with environment = "tcg"."""
from .base import Target


class NbdTarget(Target):
    name = "nbd"
    environment = "host"

    def unavailable(self):
        return "not yet available: daemon/frontends provides no NBD export harness yet"
