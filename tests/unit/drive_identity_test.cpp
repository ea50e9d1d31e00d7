// What storage a drive is: one file under other names; partitions, loop
// devices and an NVMe namespace's passthrough node on a made-up sysfs tree;
// a real loop device over a file (where this host lets the test make one).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/loop.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <thread>

#include "engine/io/drive.h"
#include "engine/io/drive_identity.h"

using namespace gpuraid;

namespace {

struct TempDir {
  TempDir() {
    char t[] = "/tmp/gpuraid-ident-XXXXXX";
    if (!mkdtemp(t)) throw std::runtime_error("mkdtemp");
    path = t;
  }
  ~TempDir() {
    std::string cmd = "rm -rf '" + path + "'";
    [[maybe_unused]] int rc = system(cmd.c_str());
  }
  std::string path;
};

void make_file(const std::string& p, uint64_t bytes) {
  int fd = ::open(p.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0) << p;
  ASSERT_EQ(0, ftruncate(fd, off_t(bytes)));
  close(fd);
}

void write_text(const std::string& p, const std::string& s) {
  std::ofstream f(p);
  f << s << "\n";
}

// A loop device over a file (partitions scanned), detached when the test
// closes it. Skips (with why) where the host does not allow it.
struct Loop {
  explicit Loop(const std::string& file) {
    int ctl = ::open("/dev/loop-control", O_RDWR | O_CLOEXEC);
    if (ctl < 0) {
      why = std::string("no /dev/loop-control: ") + strerror(errno);
      return;
    }
    int ffd = ::open(file.c_str(), O_RDWR | O_CLOEXEC);
    for (int tries = 0; tries < 20 && fd < 0 && ffd >= 0; tries++) {
      const int n = ioctl(ctl, LOOP_CTL_GET_FREE);
      if (n < 0) {
        why = std::string("LOOP_CTL_GET_FREE: ") + strerror(errno);
        break;
      }
      path = "/dev/loop" + std::to_string(n);
      int lfd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
      if (lfd < 0) {
        why = "cannot open " + path + ": " + strerror(errno);
        break;
      }
      loop_config cfg{};
      cfg.fd = uint32_t(ffd);
      cfg.info.lo_flags = LO_FLAGS_PARTSCAN | LO_FLAGS_AUTOCLEAR;
      if (ioctl(lfd, LOOP_CONFIGURE, &cfg) == 0) {
        fd = lfd;
        break;
      }
      why = std::string("LOOP_CONFIGURE: ") + strerror(errno);
      close(lfd);
      if (errno != EBUSY) break;  // taken by someone else meanwhile: try another
    }
    if (ffd >= 0) close(ffd);
    close(ctl);
  }
  ~Loop() {
    if (fd >= 0) close(fd);  // autoclear detaches it
  }
  // Waits for the partition's node (made by the kernel's devtmpfs).
  std::string part(int n) const {
    const std::string p = path + "p" + std::to_string(n);
    struct stat st;
    for (int i = 0; i < 200 && stat(p.c_str(), &st) != 0; i++) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    return p;
  }
  int fd = -1;
  std::string path, why;
};

// An MBR with two 2 MiB partitions (at 1 MiB and 4 MiB).
void write_mbr(const std::string& file) {
  uint8_t mbr[512] = {};
  auto entry = [&](int i, uint32_t start, uint32_t sectors) {
    uint8_t* e = mbr + 446 + 16 * i;
    e[4] = 0x83;
    memcpy(e + 8, &start, 4);
    memcpy(e + 12, &sectors, 4);
  };
  entry(0, 2048, 4096);
  entry(1, 8192, 4096);
  mbr[510] = 0x55;
  mbr[511] = 0xaa;
  int fd = ::open(file.c_str(), O_WRONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ssize_t(sizeof mbr), pwrite(fd, mbr, sizeof mbr, 0));
  close(fd);
}

}  // namespace

TEST(DriveIdentity, OneFileUnderOtherNamesIsTheSameFile) {
  TempDir t;
  const std::string a = t.path + "/a", b = t.path + "/b";
  make_file(a, 1 << 20);
  make_file(b, 1 << 20);
  ASSERT_EQ(0, symlink(a.c_str(), (t.path + "/sym").c_str()));
  ASSERT_EQ(0, symlink("sym", (t.path + "/sym2").c_str()));  // a link to the link
  ASSERT_EQ(0, link(a.c_str(), (t.path + "/hard").c_str()));
  const DriveIdentity ia = identify_path(a);
  ASSERT_TRUE(ia.known());
  EXPECT_EQ(ia.chain[0].kind, StorageKey::File);
  for (const std::string& n : {t.path + "/sym", t.path + "/sym2", t.path + "/hard", t.path + "//a", t.path + "/./a",
                               t.path + "/../" + t.path.substr(5) + "/a"})
    EXPECT_EQ(shared_storage(identify_path(n), n, ia, "A"), n + " is the same file as A") << n;
  EXPECT_EQ(shared_storage(identify_path(b), "B", ia, "A"), "");
  // Nothing there: unknown, the same as nothing.
  EXPECT_FALSE(identify_path(t.path + "/none").known());
  EXPECT_EQ(shared_storage(identify_path(t.path + "/none"), "N", ia, "A"), "");
  // The same through an open descriptor, as Drive::open records it.
  std::string err;
  auto d1 = Drive::open(DriveSpec{DriveType::File, t.path + "/hard", 0, false}, &err);
  auto d2 = Drive::open(DriveSpec{DriveType::File, a, 0, false}, &err);
  auto d3 = Drive::open(DriveSpec{DriveType::File, b, 0, false}, &err);
  auto n1 = Drive::open(DriveSpec{DriveType::Null, "", 1 << 20, false}, &err);
  auto n2 = Drive::open(DriveSpec{DriveType::Null, "", 1 << 20, false}, &err);
  ASSERT_TRUE(d1 && d2 && d3 && n1 && n2) << err;
  EXPECT_EQ(shared_storage({d3.get(), d1.get(), n1.get(), n2.get()}), "");
  EXPECT_EQ(shared_storage({d1.get(), d3.get(), d2.get()}), a + " is the same file as " + t.path + "/hard");
}

namespace {
struct stat device(mode_t type, unsigned ma, unsigned mi) {
  struct stat st{};
  st.st_mode = type | 0600;
  st.st_rdev = makedev(ma, mi);
  return st;
}

StorageKey block_key(unsigned ma, unsigned mi) { return StorageKey{StorageKey::Block, makedev(ma, mi), 0}; }

// A made-up sysfs: a disk 8:0 with partitions 8:1 and 8:2, a loop device
// 7:0 over `backing`, its partition 259:0, an unbound loop device 7:1, a
// second loop device 7:2 over `backing` too, and
// an NVMe namespace whose generic char device 242:0 is ng0n1 (block twin
// nvme0n1, 259:5).
std::string fake_sysfs(const std::string& root, const std::string& backing) {
  const std::string s = root + "/sys", dev = s + "/devices";
  const std::string dirs[] = {dev + "/sda/sda1", dev + "/sda/sda2", dev + "/loop0/loop", dev + "/loop0/loop0p1",
                              dev + "/loop1/loop", dev + "/loop2/loop", dev + "/ng0n1", s + "/block/nvme0n1", s + "/dev/block", s + "/dev/char"};
  for (const auto& d : dirs) EXPECT_EQ(0, system(("mkdir -p '" + d + "'").c_str()));
  write_text(dev + "/sda/dev", "8:0");
  write_text(dev + "/sda/sda1/dev", "8:1");
  write_text(dev + "/sda/sda1/partition", "1");
  write_text(dev + "/sda/sda2/dev", "8:2");
  write_text(dev + "/sda/sda2/partition", "2");
  write_text(dev + "/loop0/dev", "7:0");
  write_text(dev + "/loop0/loop/backing_file", backing);
  write_text(dev + "/loop0/loop0p1/dev", "259:0");
  write_text(dev + "/loop0/loop0p1/partition", "1");
  write_text(dev + "/loop1/dev", "7:1");
  write_text(dev + "/loop2/dev", "7:2");
  write_text(dev + "/loop2/loop/backing_file", backing);
  write_text(s + "/block/nvme0n1/dev", "259:5");
  const std::pair<const char*, const char*> links[] = {{"block/8:0", "sda"}, {"block/8:1", "sda/sda1"},
      {"block/8:2", "sda/sda2"}, {"block/7:0", "loop0"}, {"block/259:0", "loop0/loop0p1"}, {"block/7:1", "loop1"},
      {"block/7:2", "loop2"}, {"char/242:0", "ng0n1"}};
  for (const auto& [from, to] : links)
    EXPECT_EQ(0, symlink(("../../devices/" + std::string(to)).c_str(), (s + "/dev/" + from).c_str()));
  return s;
}
}  // namespace

TEST(DriveIdentity, DevicesAndWhatTheySitOnFromSysfs) {
  TempDir t;
  const std::string f = t.path + "/backing.img";
  make_file(f, 1 << 20);
  const std::string sys = fake_sysfs(t.path, f);
  const DriveIdentity disk = identify_stat(device(S_IFBLK, 8, 0), sys), p1 = identify_stat(device(S_IFBLK, 8, 1), sys),
                      p2 = identify_stat(device(S_IFBLK, 8, 2), sys), loop = identify_stat(device(S_IFBLK, 7, 0), sys),
                      lp1 = identify_stat(device(S_IFBLK, 259, 0), sys), file = identify_path(f),
                      unbound = identify_stat(device(S_IFBLK, 7, 1), sys);
  ASSERT_EQ(p1.chain.size(), 2u);
  EXPECT_EQ(p1.chain[1], block_key(8, 0));
  EXPECT_EQ(shared_storage(p1, "P1", disk, "D"), "P1 is a partition of D");
  EXPECT_EQ(shared_storage(disk, "D", p2, "P2"), "P2 is a partition of D");
  EXPECT_EQ(shared_storage(p1, "P1", p2, "P2"), "");  // two partitions of one disk do not overlap
  EXPECT_EQ(shared_storage(p1, "P1", identify_stat(device(S_IFBLK, 8, 1), sys), "Q"), "P1 is the same device as Q");
  EXPECT_EQ(shared_storage(loop, "L", file, "F"), "L is a loop device over F");
  EXPECT_EQ(shared_storage(file, "F", loop, "L"), "L is a loop device over F");
  EXPECT_EQ(shared_storage(lp1, "LP", file, "F"), "LP is a partition of a loop device over F");
  EXPECT_EQ(shared_storage(lp1, "LP", loop, "L"), "LP is a partition of L");
  // Two loop devices over one file (issue 33, item 1): neither sits on the other.
  const DriveIdentity loop2 = identify_stat(device(S_IFBLK, 7, 2), sys);
  EXPECT_EQ(shared_storage(loop, "L", loop2, "L2"),
            "L and L2 sit on one file: L is a loop device over it, L2 a loop device over it");
  EXPECT_EQ(shared_storage(lp1, "LP", loop2, "L2"),
            "LP and L2 sit on one file: LP is a partition of a loop device over it, L2 a loop device over it");
  EXPECT_EQ(unbound.chain.size(), 1u);
  EXPECT_EQ(shared_storage(unbound, "U", file, "F"), "");
  EXPECT_EQ(shared_storage(disk, "D", loop, "L"), "");
  // The NVMe passthrough node is its namespace's block device, whatever
  // path named it; any other char device is only itself.
  const DriveIdentity ng = identify_stat(device(S_IFCHR, 242, 0), sys);
  ASSERT_TRUE(ng.known());
  EXPECT_EQ(ng.chain[0], block_key(259, 5));
  EXPECT_EQ(shared_storage(ng, "/dev/ng0n1", identify_stat(device(S_IFBLK, 259, 5), sys), "pd1 (/dev/nvme0n1)"),
            "/dev/ng0n1 is the same device as pd1 (/dev/nvme0n1)");
  const DriveIdentity other = identify_stat(device(S_IFCHR, 1, 3), sys);
  EXPECT_EQ(other.chain[0], (StorageKey{StorageKey::Char, makedev(1, 3), 0}));
  EXPECT_EQ(shared_storage(other, "C", identify_stat(device(S_IFBLK, 1, 3), sys), "B"), "");
}

// The kernel's own answer: a loop device over a file (and its partitions,
// where this kernel scans them).
TEST(DriveIdentity, RealLoopDeviceSitsOnItsFile) {
  TempDir t;
  const std::string f = t.path + "/disk.img";
  make_file(f, 8 << 20);
  write_mbr(f);
  Loop loop(f);
  if (loop.fd < 0) GTEST_SKIP() << "cannot make a loop device here: " << loop.why;
  std::string err;
  auto fd = Drive::open(DriveSpec{DriveType::File, f, 0, false}, &err);
  auto ld = Drive::open(DriveSpec{DriveType::Block, loop.path, 0, false}, &err);
  ASSERT_TRUE(fd && ld) << err;
  EXPECT_EQ(shared_storage({fd.get(), ld.get()}), loop.path + " is a loop device over " + f);
  {  // A second loop device over the same file: one storage (issue 33, item 1).
    Loop loop2(f);
    ASSERT_GE(loop2.fd, 0) << loop2.why;
    auto ld2 = Drive::open(DriveSpec{DriveType::Block, loop2.path, 0, false}, &err);
    ASSERT_TRUE(ld2) << err;
    const std::string why = shared_storage({ld.get(), ld2.get()});
    EXPECT_NE(why.find(" sit on one file: "), std::string::npos) << why;
    EXPECT_NE(why.find(loop.path), std::string::npos) << why;
    EXPECT_NE(why.find(loop2.path), std::string::npos) << why;
  }
  const std::string p1 = loop.part(1), p2 = loop.part(2);
  struct stat st;
  if (stat(p1.c_str(), &st) != 0) GTEST_SKIP() << "no partition node " << p1 << " (this kernel scans no MBR?)";
  EXPECT_EQ(shared_storage(identify_path(p1), "P1", identify_path(f), "F"), "P1 is a partition of a loop device over F");
  EXPECT_EQ(shared_storage(identify_path(p1), "P1", identify_path(p2), "P2"), "");
}
