"""NBD export driven by fio's nbd engine (host). Not implemented yet: the
export harness (tests/frontends/export_harness.cpp, gpuraid-export-harness)
appeared while this suite was being written, uncommitted.

The plan, one run of a case:
  solution: gpuraid-export-harness --level L --members N --strip S
      --drive-type mem --drive-size X --reactors T --nbd unix:SOCK --state F
      (nbd_uri and pid in F), then fio --ioengine=nbd --uri=URI --rw/--bs/
      --iodepth of the case, --numjobs=T (one connection per reactor);
      CPU = the harness's /proc/PID/stat utime+stime over fio's window.
  baseline: the same fio job with --ioengine=io_uring --direct=1 over N
      files of size X in /dev/shm (the harness's mem drives are private to
      it), alternating with the solution.
  failed / rebuilding: --group create --control FIFO, then "fail 0", and
      "replace 0 PATH" for a rebuild in the background.
The VM-lane targets (ublk through fio on /dev/ublkbN, md RAID built by
mdadm over the same members) follow the same shape with environment "tcg"."""
from .base import Target


class NbdTarget(Target):
    name = "nbd"
    environment = "host"

    def unavailable(self):
        return "not implemented yet (see bench/suite/targets/nbd.py for the plan over gpuraid-export-harness)"
