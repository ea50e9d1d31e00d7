"""Run parameters of the suite (what a person may change), with defaults that
finish the whole default matrix on mem drives in about 12 minutes on a
2-core machine: 2 geometries x 5 workloads x 2 measured states x 3 runs,
each run one gpuraid-bench invocation of fill + 2 x (warmup + runtime)."""
from dataclasses import dataclass, asdict


@dataclass
class Params:
    drive_type: str = "mem"     # mem, null, file (gpuraid-bench --drive-type)
    drive_size: str = "128M"    # per member; small enough that the fill is short
    runtime: float = 4.0        # measured seconds per target per run
    warmup: float = 1.0
    iodepth: int = 32           # per thread ("QD high": 64 in flight with 2 threads)
    threads: int = 2
    runs: int = 3
    strip: str = "64K"
    seed: int = 1

    def to_json(self) -> dict:
        return asdict(self)


QUICK = dict(drive_size="16M", runtime=0.3, warmup=0.1, iodepth=8, runs=2)
