#include "engine/io/drive_identity.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <fstream>

#include "engine/io/nvme_char.h"

namespace gpuraid {

namespace {
constexpr int kMaxDepth = 8;  // a partition of a loop device over a file is 3 deep

bool read_line(const std::string& file, std::string* out) {
  std::ifstream f(file);
  return bool(std::getline(f, *out));
}

std::string devnum(uint64_t dev) { return std::to_string(major(dev)) + ":" + std::to_string(minor(dev)); }

bool parse_devnum(const std::string& s, uint64_t* dev) {
  unsigned ma = 0, mi = 0;
  if (sscanf(s.c_str(), "%u:%u", &ma, &mi) != 2) return false;
  *dev = makedev(ma, mi);
  return true;
}

void push(DriveIdentity* id, StorageKey k, const char* via) {
  id->chain.push_back(k);
  id->via.push_back(via);
}

// Follows a block device down what it sits on: a partition to its whole
// disk (the parent directory in sysfs), a loop device to its backing file.
void follow_block(uint64_t dev, const std::string& sysfs, DriveIdentity* id) {
  for (int depth = 0; depth < kMaxDepth; depth++) {
    const std::string dir = sysfs + "/dev/block/" + devnum(dev);
    std::string line;
    struct stat st;
    if (stat((dir + "/partition").c_str(), &st) == 0) {
      uint64_t disk = 0;
      if (!read_line(dir + "/../dev", &line) || !parse_devnum(line, &disk) || disk == dev) return;
      push(id, {StorageKey::Block, disk, 0}, "a partition of");
      dev = disk;
      continue;
    }
    // An unbound loop device has no backing_file (or an empty one).
    if (!read_line(dir + "/loop/backing_file", &line) || stat(line.c_str(), &st) != 0) return;
    if (S_ISBLK(st.st_mode)) {
      push(id, {StorageKey::Block, st.st_rdev, 0}, "a loop device over");
      dev = st.st_rdev;
      continue;
    }
    push(id, {StorageKey::File, st.st_dev, st.st_ino}, "a loop device over");
    return;
  }
}

// An NVMe generic char device (/dev/ngXnY, found by its number in sysfs,
// whatever path named it): the number of its namespace's block device.
bool nvme_char_block(uint64_t rdev, const std::string& sysfs, uint64_t* block) {
  char buf[PATH_MAX];
  const ssize_t n = readlink((sysfs + "/dev/char/" + devnum(rdev)).c_str(), buf, sizeof buf - 1);
  if (n <= 0) return false;
  buf[n] = 0;
  const std::string link(buf);
  const std::string twin = nvme_block_twin(link.substr(link.find_last_of('/') + 1));
  std::string line;
  return !twin.empty() && read_line(sysfs + "/block/" + twin + "/dev", &line) && parse_devnum(line, block);
}

int position(const DriveIdentity& a, const StorageKey& k) {
  for (size_t i = 0; i < a.chain.size(); i++)
    if (a.chain[i] == k) return int(i);
  return -1;
}

// "a partition of a loop device over": how chain[0] sits on chain[upto].
std::string via_phrase(const DriveIdentity& a, int upto) {
  std::string s;
  for (int i = 1; i <= upto; i++) s += (s.empty() ? "" : " ") + a.via[size_t(i)];
  return s;
}
}  // namespace

DriveIdentity identify_stat(const struct stat& st, const std::string& sysfs) {
  DriveIdentity id;
  uint64_t block = 0;
  if (S_ISBLK(st.st_mode)) {
    push(&id, {StorageKey::Block, st.st_rdev, 0}, "");
    follow_block(st.st_rdev, sysfs, &id);
  } else if (S_ISCHR(st.st_mode) && nvme_char_block(st.st_rdev, sysfs, &block)) {
    push(&id, {StorageKey::Block, block, 0}, "");
    follow_block(block, sysfs, &id);
  } else if (S_ISCHR(st.st_mode)) {
    push(&id, {StorageKey::Char, st.st_rdev, 0}, "");
  } else {
    push(&id, {StorageKey::File, st.st_dev, st.st_ino}, "");
  }
  return id;
}

DriveIdentity identify_fd(int fd, const std::string& sysfs) {
  struct stat st;
  if (fstat(fd, &st) != 0) return {};
  return identify_stat(st, sysfs);
}

DriveIdentity identify_path(const std::string& path, const std::string& sysfs) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return {};
  return identify_stat(st, sysfs);
}

std::string shared_storage(const DriveIdentity& a, const std::string& a_name, const DriveIdentity& b,
                           const std::string& b_name) {
  if (!a.known() || !b.known()) return "";
  const int i = position(a, b.chain[0]);
  if (i == 0)
    return a_name + " is the same " + (a.chain[0].kind == StorageKey::File ? "file" : "device") + " as " + b_name;
  if (i > 0) return a_name + " is " + via_phrase(a, i) + " " + b_name;
  const int j = position(b, a.chain[0]);
  if (j > 0) return b_name + " is " + via_phrase(b, j) + " " + a_name;
  // Neither sits on the other, but both on a third: two loop devices over
  // one file (or a partition of one of them). Two partitions of one disk
  // are disjoint, and so not shared.
  static const std::string kPartition = "a partition of";
  for (size_t ia = 1; ia < a.chain.size(); ia++) {
    const int jb = position(b, a.chain[ia]);
    if (jb <= 0 || (a.via[ia] == kPartition && b.via[size_t(jb)] == kPartition)) continue;
    const std::string what = a.chain[ia].kind == StorageKey::File ? "file" : "device";
    return a_name + " and " + b_name + " sit on one " + what + ": " + a_name + " is " + via_phrase(a, int(ia)) + " it, " +
           b_name + " " + via_phrase(b, jb) + " it";
  }
  return "";
}

}  // namespace gpuraid
