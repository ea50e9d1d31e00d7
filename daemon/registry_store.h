// The registry file in the state directory: registry.json (protobuf JSON
// of gpuraid.state.v1.Registry), replaced atomically (write a temporary
// file, fsync, rename, fsync the directory), so that a crash leaves either
// the old or the new registry, never a torn one. A lock file keeps a
// second daemon off the same state directory.
#pragma once
#include <string>

#include "gpuraid/v1/state.pb.h"

namespace gpuraid::daemon {

class RegistryStore {
 public:
  explicit RegistryStore(std::string dir) : dir_(std::move(dir)) {}
  ~RegistryStore();
  // Creates the directory if needed and takes its lock.
  bool open(std::string* err);
  // A missing registry is an empty one.
  bool load(gpuraid::state::v1::Registry* out, std::string* err) const;
  bool save(const gpuraid::state::v1::Registry& r, std::string* err) const;
  const std::string& dir() const { return dir_; }
  std::string path() const { return dir_ + "/registry.json"; }

 private:
  std::string dir_;
  int lock_fd_ = -1;
};

}  // namespace gpuraid::daemon
