"""The benchmark matrix in the seeds' form: suites of workloads, RAID
geometries and life-cycle states, crossed into cases."""
from dataclasses import dataclass, field, asdict


@dataclass(frozen=True)
class Workload:
    name: str       # e.g. "4K randread"
    suite: str      # "random" (figure: MIOPS) or "sequential" (figure: GB/s)
    rw: str         # gpuraid-bench / fio --rw
    bs: str
    rwmixread: int = 70


@dataclass(frozen=True)
class Geometry:
    level: str      # "5", "6" or "ec"
    members: int
    parity: int     # m
    strip: str = "64K"

    @property
    def label(self) -> str:
        k = self.members - self.parity
        name = f"RAID {self.level}" if self.level in ("5", "6") else "EC"
        return f"{name} {k}+{self.parity}"

    @staticmethod
    def parse(text: str, strip: str) -> "Geometry":
        """'5:7+1', '6:8+2' or 'ec:8+3' (level:k+m)."""
        level, km = text.split(":")
        k, m = (int(x) for x in km.split("+"))
        want = {"5": 1, "6": 2}.get(level)
        if level not in ("5", "6", "ec") or (want is not None and m != want) or k < 2 or not 1 <= m <= 4:
            raise ValueError(f"bad geometry '{text}' (examples: 5:7+1, 6:8+2, ec:8+3)")
        return Geometry(level, k + m, m, strip)


@dataclass(frozen=True)
class State:
    name: str           # "normal", "failed", "rebuilding"
    label: str
    failed_members: int


SUITES = {
    "random": [Workload("4K randread", "random", "randread", "4K"),
               Workload("4K randwrite", "random", "randwrite", "4K"),
               Workload("4K randrw 70/30", "random", "randrw", "4K", 70)],
    "sequential": [Workload("128K read", "sequential", "read", "128K"),
                   Workload("128K write", "sequential", "write", "128K")],
}
SUITE_TITLES = {"random": "Spec Sheet Random", "sequential": "Spec Sheet Sequential"}
STATES = [State("normal", "normal", 0),
          State("failed", "1 member failed", 1),
          State("rebuilding", "rebuilding", 1)]


@dataclass
class Case:
    geometry: Geometry
    workload: Workload
    state: State
    status: str = "pending"     # pending | measured | not measured | failed
    reason: str = ""
    runs: list = field(default_factory=list)    # one dict per run (see targets/base.py)
    summary: dict = field(default_factory=dict)

    @property
    def key(self) -> str:
        return f"{self.geometry.label} | {self.workload.name} | {self.state.name}"

    def to_json(self) -> dict:
        d = asdict(self)
        d["geometry"]["label"] = self.geometry.label
        return d

    @staticmethod
    def from_json(d: dict) -> "Case":
        g = {k: v for k, v in d["geometry"].items() if k != "label"}
        return Case(Geometry(**g), Workload(**d["workload"]), State(**d["state"]), d["status"], d["reason"],
                    d["runs"], d["summary"])


def build(geometries, suites, states) -> list:
    return [Case(g, w, s) for g in geometries for suite in suites for w in SUITES[suite] for s in states]
