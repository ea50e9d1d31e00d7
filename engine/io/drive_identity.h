// What storage a drive is, whatever its path says: one file or device must
// not be two members (or two registered drives) under two names — a
// symlink, a hard link, `dir//name`, `./name`, a bind mount, or an NVMe
// namespace's block node (/dev/nvmeXnY) and passthrough node (/dev/ngXnY).
// A regular file is its (st_dev, st_ino); a block device its dev_t; an NVMe
// generic char device the dev_t of its namespace's block device.
//
// What a block device sits on is followed as far as sysfs says so cheaply:
// a partition's whole disk, a loop device's backing file (and both: a
// partition of a loop device); two drives that both sit on a third (two
// loop devices over one file) share it. Not followed: device-mapper and md
// stacks (an LVM volume or md array over a member), a file on a filesystem
// that lives on a member device; two loop devices over disjoint parts of
// one file are reported as sharing it.
#pragma once
#include <sys/stat.h>

#include <cstdint>
#include <string>
#include <vector>

namespace gpuraid {

struct StorageKey {
  enum Kind : uint8_t { File, Block, Char };
  Kind kind = File;
  uint64_t dev = 0;  // File: st_dev; Block/Char: the device number
  uint64_t ino = 0;  // File: st_ino; else 0
  bool operator==(const StorageKey&) const = default;
};

struct DriveIdentity {
  // chain[0]: the drive itself; chain[i]: what chain[i-1] sits on, via[i]
  // saying how ("a partition of", "a loop device over"). Empty: unknown (a
  // null drive, a path where nothing is).
  std::vector<StorageKey> chain;
  std::vector<std::string> via;  // via[0] is ""
  bool known() const { return !chain.empty(); }
};

// From an open descriptor / a path (symlinks followed; nothing there: an
// empty identity). `sysfs` is the sysfs root (tests give a made-up tree).
DriveIdentity identify_fd(int fd, const std::string& sysfs = "/sys");
DriveIdentity identify_path(const std::string& path, const std::string& sysfs = "/sys");
// From a stat result (what both of those use).
DriveIdentity identify_stat(const struct stat& st, const std::string& sysfs = "/sys");

// How a drive named a_name and one named b_name share storage: "" when
// they do not, else a sentence: "A is the same file as B", "A is a
// partition of B", "B is a loop device over A", "A and B sit on one file:
// A is a loop device over it, B a loop device over it", ...
std::string shared_storage(const DriveIdentity& a, const std::string& a_name, const DriveIdentity& b,
                           const std::string& b_name);

}  // namespace gpuraid
