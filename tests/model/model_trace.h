// The record of one model-test episode: each request issued and completed,
// each fault armed, the canary, the end state (failed members, engine
// counters, member I/O per drive). Folded into a 64-bit digest (FNV-1a)
// and, when a file is given, written out one event a line:
//   <episode> I <op> <reactor> <kind 0 read|1 write|2 flush> <offset> <length> <fua>
//   <episode> C <op> <result> <read matched the model 0|1>
//   <episode> F <op> <member> <fault kind 0..6> <countdown, or kind 6's first block>   (armed after <op> was issued)
//   <episode> L <op> <member> <latency us>
//   <episode> K <op> <byte flipped>                          (the canary)
//   <episode> E <failed mask> <rmw> <rcw> <full> <degraded writes> <degraded reads> <merged>
//   <episode> D <member> <reads> <writes> <errors>
// A deterministic run (model_test --deterministic) gives the same record,
// line for line, every time it is run with the same arguments.
#pragma once
#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <mutex>

namespace gpuraid::test {

class RunTrace {
 public:
  RunTrace(uint32_t episode, FILE* out) : episode_(episode), out_(out) {}
  // Any thread (threaded runs record from every reactor's thread).
  void record(char tag, std::initializer_list<uint64_t> fields) {
    std::lock_guard<std::mutex> g(mu_);
    mix(uint8_t(tag));
    for (uint64_t f : fields)
      for (int i = 0; i < 8; i++) mix(uint8_t(f >> (8 * i)));
    if (!out_) return;
    fprintf(out_, "%u %c", episode_, tag);
    for (uint64_t f : fields) fprintf(out_, " %llu", (unsigned long long)f);
    fputc('\n', out_);
  }
  uint64_t digest() {
    std::lock_guard<std::mutex> g(mu_);
    return hash_;
  }

 private:
  void mix(uint8_t b) { hash_ = (hash_ ^ b) * 0x100000001b3ull; }
  std::mutex mu_;
  uint64_t hash_ = 0xcbf29ce484222325ull;
  uint32_t episode_;
  FILE* out_;
};

}  // namespace gpuraid::test
