// A backing file that `pd add --size` creates: removed again unless the
// request succeeds, so that a refused or failed add leaves nothing behind.
// Created with O_EXCL, so a file (or symlink) that was there before is
// never taken for one of ours and never removed.
#pragma once
#include <sys/types.h>

#include <string>

namespace gpuraid::daemon {

class CreatedFile {
 public:
  CreatedFile() = default;
  CreatedFile(const CreatedFile&) = delete;
  CreatedFile& operator=(const CreatedFile&) = delete;
  ~CreatedFile();
  // Creates an empty file at path: 0, or -errno (-EEXIST: something is there).
  int create(const std::string& path);
  // The request succeeded: the file stays.
  void keep() { path_.clear(); }

 private:
  std::string path_;  // "" when nothing is to be removed
  dev_t dev_ = 0;
  ino_t ino_ = 0;
};

}  // namespace gpuraid::daemon
