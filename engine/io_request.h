// A request from a frontend (ublk, NBD, the bench) to a volume.
#pragma once
#include <cstdint>

#include "engine/task.h"

namespace gpuraid {

class Reactor;

struct IoRequest {
  enum Op : uint8_t { Read, Write, Flush };
  Op op = Read;
  bool fua = false;           // write: durable on the members before completion
  uint64_t offset = 0;        // bytes, multiple of 4 KiB
  uint64_t length = 0;        // bytes, multiple of 4 KiB (0 for Flush)
  uint8_t* buf = nullptr;     // length bytes; 4 KiB-aligned for zero-copy member I/O
  void (*done)(IoRequest*) = nullptr;  // runs on the reactor the request was submitted on
  void* ctx = nullptr;
  int result = 0;             // 0, or -errno (-EIO when the data cannot be served)

  // Engine-private bookkeeping.
  uint32_t parts_left = 0;
  Reactor* home = nullptr;
  Task complete_task;
  uint64_t next_off = 0;           // the split: first byte not yet handed to an op
  IoRequest* wait_next = nullptr;  // parked for ops (OpPool)
  bool stream = false;             // continues a recent request of its kind (ops/stripe_gather.h)
};

}  // namespace gpuraid
