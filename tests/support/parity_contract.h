// What parity_backend.h promises of every backend, as checks any test can
// run on any ParityBackend.
//
// The grid: parity jobs on awkward buffers: every op and code
// on lengths that are not multiples of 8/16/32/64 (1, 15, 33, ...) and past
// IsalRaid's bounce chunk, buffers at different offsets mod 64, the overlap
// the interface allows (inputs sharing a buffer), each job checked byte for
// byte against the code's definition (the codec's matrix, tables of its
// own, no backend), done() once, status 0, inputs unchanged, and 64 guard
// bytes on each side of every buffer unchanged (no write past either end).
#pragma once
#include <cstddef>
#include <cstdint>

#include "engine/parity/parity_backend.h"

namespace gpuraid::test {

struct GridOptions {
  // Fewer codes, lengths and layouts (unaligned and odd lengths stay in):
  // for the runs under an emulated CPU, which are some 50 times slower.
  bool small = false;
};

// small = true when GPURAID_PARITY_GRID=small (the emulated ctest runs set it).
GridOptions grid_options_from_env();

// Runs every job of the grid for `op` on `be` and reports each difference
// with a gtest failure. Returns the number of jobs run.
size_t check_parity_grid(ParityBackend& be, ParityOp op, const GridOptions& o);

// Jobs that break the interface's rules (no code, len 0, XOR with two
// parity rows, repeated or out-of-range rows, a null buffer, ...): each
// must complete once with status -EINVAL and change no buffer, and a
// Verify must report every row mismatched. Returns the number of jobs.
size_t check_rejects_invalid_jobs(ParityBackend& be);

}  // namespace gpuraid::test
