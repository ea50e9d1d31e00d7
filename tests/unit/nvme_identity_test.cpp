// NVMe identify decoding on hand-built Identify Controller / Namespace
// structures (the host has no NVMe; the VM lane runs the real calls).
#include <endian.h>
#include <gtest/gtest.h>

#include <cstring>

#include "nvme/identity.h"
#include "nvme/parse.h"
#include "nvme/probe.h"

using namespace gpuraid::nvme;

namespace {
void put(char* dst, size_t n, const char* s) {
  memset(dst, ' ', n);
  memcpy(dst, s, strlen(s));
}

struct nvme_id_ctrl make_ctrl() {
  struct nvme_id_ctrl c;
  memset(&c, 0, sizeof(c));
  put(c.sn, sizeof(c.sn), "S4EWNX0R123456");
  put(c.mn, sizeof(c.mn), "Samsung SSD 980 PRO 1TB");
  put(c.fr, sizeof(c.fr), "5B2QGXA7");
  strcpy(c.subnqn, "nqn.2014.08.org.nvmexpress:144d144dS4EWNX0R123456");
  c.mdts = 9;
  c.vwc = 1;
  c.oncs = htole16(NVME_CTRL_ONCS_WRITE_ZEROES | NVME_CTRL_ONCS_DSM);
  return c;
}

// Two formats: 0 = 512 B, 1 = 4 KiB; plus optionally more.
struct nvme_id_ns make_ns(uint8_t flbas, uint8_t dlfeat) {
  struct nvme_id_ns ns;
  memset(&ns, 0, sizeof(ns));
  ns.nsze = htole64(1000);
  ns.nlbaf = 1;
  ns.flbas = flbas;
  ns.dlfeat = dlfeat;
  ns.lbaf[0].ds = 9;
  ns.lbaf[0].rp = 2;
  ns.lbaf[1].ds = 12;
  ns.lbaf[1].rp = 0;
  return ns;
}
}  // namespace

TEST(NvmeParse, MdtsUsesMpsmin) {
  EXPECT_EQ(mdts_bytes(0, 4096), 0u);  // no limit
  EXPECT_EQ(mdts_bytes(5, 4096), 128u << 10);
  EXPECT_EQ(mdts_bytes(9, 4096), 2u << 20);
  EXPECT_EQ(mdts_bytes(5, 16384), 512u << 10);
  EXPECT_EQ(mdts_bytes(5, 0), 128u << 10);  // CAP unknown: 4 KiB assumed
  EXPECT_EQ(mdts_bytes(255, 4096), 4096ull << 40);  // clamped, no undefined shift
}

TEST(NvmeParse, CapMpsmin) {
  EXPECT_EQ(cap_mpsmin_bytes(0), 4096u);
  EXPECT_EQ(cap_mpsmin_bytes(uint64_t(2) << 48), 16384u);
  EXPECT_EQ(cap_mpsmin_bytes((uint64_t(1) << 48) | (uint64_t(0xf) << 52) | 0xffff), 8192u);  // MPSMAX ignored
}

TEST(NvmeParse, DlfeatReadBehaviour) {
  EXPECT_TRUE(dlfeat_reads_zeroes(0x1));
  EXPECT_TRUE(dlfeat_reads_zeroes(0x9));    // + write zeroes deallocates
  EXPECT_TRUE(dlfeat_reads_zeroes(0x19));   // + guard CRC
  EXPECT_FALSE(dlfeat_reads_zeroes(0x0));   // not reported
  EXPECT_FALSE(dlfeat_reads_zeroes(0x2));   // reads 0xff
  EXPECT_FALSE(dlfeat_reads_zeroes(0x8));   // deallocates, read value not reported
  EXPECT_FALSE(dlfeat_reads_zeroes(0x3));   // reserved value
}

TEST(NvmeParse, FlbasIndex) {
  EXPECT_EQ(flbas_index(0x01, 1), 1u);
  EXPECT_EQ(flbas_index(0x11, 1), 1u);      // bit 4 (extended metadata) is not part of the index
  EXPECT_EQ(flbas_index(0x60, 1), 0u);      // high bits only count above 16 formats
  EXPECT_EQ(flbas_index(0x23, 40), 0x13u);  // bits 6:5 = 01 -> index 16 + 3
  EXPECT_EQ(flbas_index(0x6f, 63), 0x3fu);
}

TEST(NvmeParse, HexIdsAndAsciiFields) {
  uint8_t eui[8] = {0x00, 0x25, 0x38, 0x5a, 0x91, 0x50, 0x2b, 0xc1};
  EXPECT_EQ(hex_id(eui, 8), "0025385a91502bc1");
  uint8_t zero[16] = {};
  EXPECT_EQ(hex_id(zero, 16), "");  // not reported
  uint8_t nguid[16] = {0x52, 0x54, 0, 0, 0, 0, 0, 1, 0xde, 0xad, 0xbe, 0xef, 0, 0, 0, 0xff};
  EXPECT_EQ(hex_id(nguid, 16), "5254000000000001deadbeef000000ff");
  char f[8];
  put(f, 8, "1.0");
  EXPECT_EQ(ascii_field(f, 8), "1.0");
  char g[8] = {' ', 'Q', 'E', 'M', 'U', '\0', 'x', 'x'};
  EXPECT_EQ(ascii_field(g, 8), "QEMU");  // stops at NUL, trims
  char h[4] = {'a', '\n', 'b', ' '};
  EXPECT_EQ(ascii_field(h, 4), "a?b");  // control characters replaced
}

TEST(NvmeParse, Controller) {
  Identity id;
  parse_ctrl(make_ctrl(), 4096, &id);
  EXPECT_EQ(id.serial, "S4EWNX0R123456");
  EXPECT_EQ(id.model, "Samsung SSD 980 PRO 1TB");
  EXPECT_EQ(id.firmware, "5B2QGXA7");
  EXPECT_EQ(id.subsystem_nqn, "nqn.2014.08.org.nvmexpress:144d144dS4EWNX0R123456");
  EXPECT_EQ(id.max_transfer_bytes, 2u << 20);
  EXPECT_TRUE(id.mpsmin_known);
  EXPECT_TRUE(id.volatile_write_cache);
  EXPECT_TRUE(id.write_zeroes);
  auto c = make_ctrl();
  c.vwc = 0x6;  // flush behaviour bits without a cache
  c.oncs = 0;
  parse_ctrl(c, 0, &id);
  EXPECT_FALSE(id.volatile_write_cache);
  EXPECT_FALSE(id.write_zeroes);
  EXPECT_FALSE(id.mpsmin_known);
}

TEST(NvmeParse, Namespace512And4K) {
  Identity id;
  parse_ns(make_ns(0x00, 0x09), &id);
  ASSERT_EQ(id.formats.size(), 2u);
  EXPECT_EQ(id.lba_bytes, 512u);
  EXPECT_EQ(id.capacity_bytes, 512000u);
  EXPECT_TRUE(id.formats[0].in_use);
  EXPECT_FALSE(id.formats[1].in_use);
  EXPECT_EQ(id.formats[0].relative_performance, 2u);
  EXPECT_TRUE(id.deallocated_reads_zeroes);
  EXPECT_TRUE(id.write_zeroes_deallocates);
  std::string why;
  EXPECT_TRUE(usable_format(id, &why));

  parse_ns(make_ns(0x01, 0x00), &id);
  EXPECT_EQ(id.lba_bytes, 4096u);
  EXPECT_EQ(id.capacity_bytes, 4096000u);
  EXPECT_FALSE(id.deallocated_reads_zeroes);
  EXPECT_TRUE(usable_format(id, &why));
}

TEST(NvmeParse, StableIdPrefersNguidThenEui64ThenSerial) {
  Identity id;
  id.serial = "vmlane3";
  id.nsid = 1;
  EXPECT_EQ(stable_id(id), "sn:vmlane3:nsid:1");
  auto ns = make_ns(0, 0);
  ns.eui64[7] = 0x42;
  parse_ns(ns, &id);
  EXPECT_EQ(stable_id(id), "eui64:0000000000000042");
  ns.nguid[0] = 0x11;
  parse_ns(ns, &id);
  EXPECT_EQ(stable_id(id), "nguid:11000000000000000000000000000000");
}

TEST(NvmeParse, RefusesLargeBlocksWithTheUsableFormats) {
  auto ns = make_ns(0x02, 0);
  ns.nlbaf = 2;
  ns.lbaf[2].ds = 13;  // 8 KiB, in use
  Identity id;
  id.block_path = "/dev/nvme3n1";
  parse_ns(ns, &id);
  EXPECT_EQ(id.lba_bytes, 8192u);
  std::string why;
  EXPECT_FALSE(usable_format(id, &why));
  EXPECT_NE(why.find("8192-byte logical blocks"), std::string::npos) << why;
  EXPECT_NE(why.find("0 (512 B), 1 (4096 B)"), std::string::npos) << why;
  EXPECT_NE(why.find("nvme format /dev/nvme3n1 --lbaf=N"), std::string::npos) << why;
}

TEST(NvmeParse, RefusesMetadata) {
  auto ns = make_ns(0x11, 0);  // format 1, extended metadata
  ns.lbaf[1].ms = htole16(8);
  Identity id;
  parse_ns(ns, &id);
  EXPECT_EQ(id.metadata_bytes, 8u);
  EXPECT_TRUE(id.metadata_extended);
  std::string why;
  EXPECT_FALSE(usable_format(id, &why));
  EXPECT_NE(why.find("8 bytes of metadata per 4096-byte block"), std::string::npos) << why;
  EXPECT_NE(why.find("usable LBA formats: 0 (512 B)"), std::string::npos) << why;
  // Only metadata formats: nothing to suggest.
  ns.lbaf[0].ms = htole16(16);
  parse_ns(ns, &id);
  EXPECT_FALSE(usable_format(id, &why));
  EXPECT_NE(why.find("lists no format gpuraid can use"), std::string::npos) << why;
}

TEST(NvmeParse, FormatIndexOutOfRange) {
  auto ns = make_ns(0x05, 0);  // format 5 of 2
  Identity id;
  parse_ns(ns, &id);
  EXPECT_EQ(id.lba_bytes, 0u);
  EXPECT_EQ(id.capacity_bytes, 0u);
  std::string why;
  EXPECT_FALSE(usable_format(id, &why));
  EXPECT_NE(why.find("does not list"), std::string::npos) << why;
}

TEST(NvmeParse, ManyFormatsAreBounded) {
  auto ns = make_ns(0, 0);
  ns.nlbaf = 255;  // a broken device: at most 64 are read
  Identity id;
  parse_ns(ns, &id);
  EXPECT_EQ(id.formats.size(), 64u);
  EXPECT_EQ(id.formats[5].data_bytes, 0u);  // LBADS 0: not a valid format
}

TEST(NvmeProbe, NamespaceNames) {
  EXPECT_TRUE(is_namespace_name("nvme0n1"));
  EXPECT_TRUE(is_namespace_name("nvme12n34"));
  EXPECT_FALSE(is_namespace_name("nvme0n1p1"));   // partition
  EXPECT_FALSE(is_namespace_name("nvme0c1n1"));   // hidden per-path device
  EXPECT_FALSE(is_namespace_name("nvme0"));
  EXPECT_FALSE(is_namespace_name("sda"));
}

TEST(NvmeProbe, NonNvmePathsAreNotNvme) {
  Identity id;
  std::string err;
  EXPECT_EQ(probe("/dev/null", &id, &err), Probe::NotNvme);  // a char device
  EXPECT_EQ(probe("/nonexistent/nvme0n1", &id, &err), Probe::NotNvme);
  EXPECT_EQ(probe("/proc/self/exe", &id, &err), Probe::NotNvme);
}
