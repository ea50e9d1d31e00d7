// Synchronous I/O for control paths, tools and tests: submits one request
// on reactor r from the thread that owns r, and polls r until it is done.
// Never for the data path.
#pragma once
#include <cstdint>

#include "engine/volume.h"

namespace gpuraid {

// Returns the request's result, or the submit error (-EINVAL) for bad input.
int sync_io(Volume& v, Reactor& r, IoRequest::Op op, uint64_t off, uint64_t len, uint8_t* buf, bool fua = false);

}  // namespace gpuraid
