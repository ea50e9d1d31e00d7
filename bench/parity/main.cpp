// gpuraid-parity-bench: each parity operation of shared/notes/parity.md
// through direct ISA-L calls ("isal") and through the engine's CPU backend
// ("backend"), beside memcpy and a read pass, in GB/s of data in per core.
// Extra flag: --sizes=L2,64M[,512M] (default L2,64M). Pin it to one core
// (taskset -c 1) for figures comparable with parity.md.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "bench/parity/cases.h"

using namespace gpuraid::parity_bench;

namespace {

std::vector<const Mode*> parse_sizes(const std::string& list) {
  std::vector<const Mode*> out;
  size_t pos = 0;
  while (pos <= list.size()) {
    const size_t comma = std::min(list.find(',', pos), list.size());
    const std::string name = list.substr(pos, comma - pos);
    const Mode* found = nullptr;
    for (const Mode& m : all_modes())
      if (m.name == name) found = &m;
    if (!found) {
      fprintf(stderr, "gpuraid-parity-bench: unknown size '%s' (L2, 64M, 512M)\n", name.c_str());
      exit(2);
    }
    out.push_back(found);
    pos = comma + 1;
  }
  return out;
}

void register_all(const std::vector<const Mode*>& modes) {
  for (const ParityCase& c : parity_cases())
    if (c.op == ParityCase::Decode && c.code != Code::Xor && c.lost == c.m)
      benchmark::RegisterBenchmark(("decode_setup/" + c.name() + "/isal").c_str(), run_decode_setup, c)
          ->Unit(benchmark::kMicrosecond);
  for (const Mode* m : modes) {
    benchmark::RegisterBenchmark(("memory/memcpy/" + m->name).c_str(), run_memcpy, *m);
    benchmark::RegisterBenchmark(("memory/read/" + m->name).c_str(), run_read, *m);
    for (const ParityCase& c : parity_cases()) {  // isal and backend side by side
      const std::string base = c.name() + "/" + m->name;
      benchmark::RegisterBenchmark((base + "/isal").c_str(), run_isal, c, *m);
      benchmark::RegisterBenchmark((base + "/backend").c_str(), run_backend, c, *m, aligned_shape());
      if (c.op == ParityCase::Update)
        benchmark::RegisterBenchmark((base + "/isal-rmw").c_str(), run_isal_rmw, c, *m);
      if (!uses_raid_gen(c)) continue;
      // What buffers ISA-L's xor_gen/pq_gen cannot take cost the backend
      // (bounced), beside ISA-L's portable _base functions.
      benchmark::RegisterBenchmark((base + "/isal-base").c_str(), run_isal_base, c, *m);
      for (const Shape& shape : awkward_shapes())
        benchmark::RegisterBenchmark((base + "/backend" + shape.name).c_str(), run_backend, c, *m, shape);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string sizes = "L2,64M";
  std::vector<char*> rest;
  for (int i = 0; i < argc; i++) {
    if (strncmp(argv[i], "--sizes=", 8) == 0)
      sizes = argv[i] + 8;
    else
      rest.push_back(argv[i]);
  }
  int n = int(rest.size());
  benchmark::Initialize(&n, rest.data());
  if (benchmark::ReportUnrecognizedArguments(n, rest.data())) return 2;
  register_all(parse_sizes(sizes));
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
