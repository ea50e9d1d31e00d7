// What the load generator drives: the RAID volume, or the same member
// drives without RAID ("raw": each logical I/O is one member I/O,
// round-robin over the members in bs-sized pieces, so sequential streams
// walk every member as fio does with several files).
#pragma once
#include <cstdint>
#include <string>

#include "engine/volume.h"

namespace gpuraid::bench {

class Target {
 public:
  virtual ~Target() = default;
  virtual const char* name() const = 0;
  virtual uint64_t size() const = 0;
  virtual int submit(Reactor& r, IoRequest* req) = 0;
};

class RaidTarget final : public Target {
 public:
  explicit RaidTarget(Volume& v) : v_(v) {}
  const char* name() const override { return "raid"; }
  uint64_t size() const override { return v_.size_bytes(); }
  int submit(Reactor& r, IoRequest* req) override { return v_.submit(r, req); }

 private:
  Volume& v_;
};

class RawTarget final : public Target {
 public:
  RawTarget(Volume& v, uint32_t bs) : v_(v), bs_(bs) {}
  const char* name() const override { return "raw"; }
  uint64_t size() const override {
    const Geometry& g = v_.geometry();
    return g.member_data_bytes / bs_ * bs_ * g.members;
  }
  // One request must lie within one bs-aligned piece (the generator's I/Os do).
  int submit(Reactor& r, IoRequest* req) override;

 private:
  Volume& v_;
  uint32_t bs_;
};

}  // namespace gpuraid::bench
