// The logical content of a volume as a test expects it: written through
// the engine, checked back byte for byte.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>

#include "tests/support/group_rig.h"

namespace gpuraid::test {

// The logical content of a volume, written through the engine and checked back.
struct Image {
  explicit Image(uint64_t n) : buf(n) { fill_random(buf.data(), n, 77); }
  void write_all(GroupRig& rig, Volume& v) {
    for (uint64_t off = 0; off < buf.size(); off += 1u << 20)
      ASSERT_EQ(0, rig.io(v, IoRequest::Write, off, std::min<uint64_t>(1u << 20, buf.size() - off), buf.data() + off));
  }
  void write_random(GroupRig& rig, Volume& v, std::mt19937_64& rng, int count) {
    for (int i = 0; i < count; i++) {
      uint64_t blocks = 1 + rng() % 16, off = rng() % (buf.size() / 4096 - blocks) * 4096;
      fill_random(buf.data() + off, blocks * 4096, rng());
      ASSERT_EQ(0, rig.io(v, IoRequest::Write, off, blocks * 4096, buf.data() + off));
    }
  }
  // New content for [off, off + len), written in one request.
  void rewrite(GroupRig& rig, Volume& v, uint64_t off, uint64_t len, uint64_t seed) {
    fill_random(buf.data() + off, len, seed);
    ASSERT_EQ(0, rig.io(v, IoRequest::Write, off, len, buf.data() + off));
  }
  void check(GroupRig& rig, Volume& v) {
    AlignedBuf got(buf.size());
    ASSERT_EQ(0, rig.io(v, IoRequest::Read, 0, buf.size(), got.data()));
    ASSERT_EQ(0, memcmp(got.data(), buf.data(), buf.size()));
  }
  AlignedBuf buf;
};

}  // namespace gpuraid::test
