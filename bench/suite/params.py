"""Run parameters of the suite (what a person may change), with defaults that
finish the whole default matrix on mem drives in about 15 minutes on a quiet
2-core machine: 2 geometries x 5 workloads x 3 states x 3 runs = 90 runs,
each one gpuraid-bench invocation of fill + 2 x (warmup + runtime) (+ the
rebuilds in the rebuilding state)."""
from dataclasses import dataclass, asdict


@dataclass
class Params:
    drive_type: str = "mem"     # mem, null, file (gpuraid-bench --drive-type)
    drive_size: str = "64M"     # per member; small enough that the fill is short
    runtime: float = 3.0        # measured seconds per target per run
    warmup: float = 0.5
    iodepth: int = 32           # per thread ("QD high": 64 in flight with 2 threads)
    threads: int = 2
    runs: int = 3
    strip: str = "64K"
    seed: int = 1
    # Rebuilding state: rebuild rate cap per second (bytes, or K/M/G), 0 = unlimited, auto = slow
    # enough that the rebuild of one member lasts REBUILD_SPAN x (warm-up + runtime).
    rebuild_rate: str = "auto"
    # Writes as a drive group does them (on: the write-hole guard and the write-intent bitmap,
    # gpuraid-bench's default) or without both (off: as md without PPL and bitmap). inproc only.
    guard: str = "on"

    def rebuild_rate_bytes(self) -> int:
        if self.rebuild_rate != "auto":
            return parse_size(self.rebuild_rate)
        return int(parse_size(self.drive_size) / (REBUILD_SPAN * (self.warmup + self.runtime)))

    def run_seconds(self, rebuilding: bool) -> float:
        """Rough wall time of one run: fill and start-up, both windows, the rebuild's tail and idle rebuild."""
        window = self.warmup + self.runtime
        return 2 * window + 2 + ((REBUILD_SPAN + 0.3) * window if rebuilding else 0)

    def to_json(self) -> dict:
        return asdict(self)


REBUILD_SPAN = 1.3


def parse_size(text: str) -> int:
    """'64M' -> bytes (K, M, G, T are powers of 1024)."""
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
    t = text.strip().upper()
    return int(float(t[:-1]) * units[t[-1]]) if t and t[-1] in units else int(t)


QUICK = dict(drive_size="16M", runtime=0.3, warmup=0.1, iodepth=8, runs=2)
