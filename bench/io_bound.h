// The I/O-count bound of a workload: the share of raw member throughput a
// RAID can deliver once every logical I/O is charged the member I/Os it
// needs (random workloads, counted by the engine's own planner), or the
// member bytes it moves (sequential ones). RAID 5 7+1: random read 1,
// random write 1/4, full-stripe sequential write 7/8, degraded random
// read 1/1.75.
#pragma once
#include <cstdint>
#include <string>

#include "engine/geometry.h"

namespace gpuraid::bench {

enum class Rw { RandRead, RandWrite, RandRw, SeqRead, SeqWrite };
bool parse_rw(const std::string& s, Rw* out);
const char* rw_name(Rw rw);
bool is_random(Rw rw);

// Member I/Os (random) or member bytes (sequential) per logical I/O/byte,
// averaged over stripe rotations and positions, with `failed` members out.
double member_cost(const Geometry& g, Rw rw, uint32_t bs, uint64_t failed, bool write);
double io_count_bound(const Geometry& g, Rw rw, uint32_t bs, uint32_t rwmixread, uint64_t failed);

}  // namespace gpuraid::bench
