// DH-HMAC-CHAP secrets: the form the kernel takes (checked in full, as the
// kernel only checks it at the first connect), messages that never show
// the key, and the 0600 secret files in the state dir.
#include "daemon/dhchap_key.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "daemon/secret_files.h"

namespace fs = std::filesystem;
using namespace gpuraid::daemon;

namespace {

// Made by nvme-cli 2.3 (nvme gen-dhchap-key -s SECRET -m HASH -n nqn.x:h).
const char* kKey32 = "DHHC-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:";
const char* kKey32Sha256 = "DHHC-1:01:TDPW7/0RdusVx4EOA3yj8mkCtRsRWti7xCiJ1JW4EUjatKRR:";
const char* kKey48 = "DHHC-1:02:UhN32RSJ1zkPlromTPrLkdGxvJAFGu4f54/6wNQJmSyaaW7dziQRowLXAyNV21BluPWeUw==:";
const char* kKey64 =
    "DHHC-1:03:uH577wwV35Jv32/NDS72ZtReR0z8XiAvlJmz9XhGJcxOBaeck16+XOGFrJt66BBomcdV/i3QPGBqgtyW+YQELfMC/J8=:";

// The problem with `key`, checked not to quote any of the key's base64.
std::string problem(const std::string& key) {
  std::string why = dhchap_key_problem(key);
  if (key.size() > 14) {
    EXPECT_EQ(why.find(key.substr(10, 4)), std::string::npos) << why;
  }
  return why;
}

TEST(DhchapKey, TakesWhatNvmeCliMakes) {
  for (const char* k : {kKey32, kKey32Sha256, kKey48, kKey64}) EXPECT_EQ(problem(k), "") << k;
  EXPECT_EQ(dhchap_trim(std::string("  ") + kKey32 + "\n"), kKey32);
}

TEST(DhchapKey, RefusesOtherForms) {
  std::string k = kKey32;
  EXPECT_NE(problem(""), "");
  EXPECT_NE(problem("secret"), "");
  EXPECT_NE(problem("DHHC-2" + k.substr(6)), "");                // another version
  EXPECT_NE(problem(k.substr(0, k.size() - 1)), "");             // no trailing ':' (the kernel would read no key)
  EXPECT_NE(problem("DHHC-1:0:" + k.substr(10)), "");            // one-digit hash
  EXPECT_NE(problem("DHHC-1:04:" + k.substr(10)), "");           // no such hash
  EXPECT_NE(problem("DHHC-1:00:" + std::string(48, '*') + ":"), "");  // not base64
  EXPECT_NE(problem("DHHC-1:00:AAECAwQF:"), "");                // 6 bytes
  EXPECT_NE(problem("DHHC-1:00:" + std::string(300, 'A') + ":"), "");
}

TEST(DhchapKey, RefusesAChangedCharacter) {
  std::string k = kKey32;
  k[20] = k[20] == 'A' ? 'B' : 'A';
  const std::string why = problem(k);
  EXPECT_NE(why.find("CRC"), std::string::npos) << why;
}

class SecretFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/secret_files_test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    state = tmpl;
  }
  void TearDown() override { fs::remove_all(state); }
  std::string state;
};

TEST_F(SecretFilesTest, SavedOwnerOnlyLoadedAndRemoved) {
  SecretFiles s(state + "/secrets");
  std::string err, got;
  ASSERT_TRUE(s.save("nvmf-vd0.dhchap", kKey48, &err)) << err;
  struct stat st;
  ASSERT_EQ(stat((state + "/secrets").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ASSERT_EQ(stat(s.path("nvmf-vd0.dhchap").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_TRUE(s.load("nvmf-vd0.dhchap", &got, &err)) << err;
  EXPECT_EQ(got, kKey48);
  ASSERT_TRUE(s.save("nvmf-vd0.dhchap", kKey32, &err)) << err;  // replaced
  ASSERT_TRUE(s.load("nvmf-vd0.dhchap", &got, &err)) << err;
  EXPECT_EQ(got, kKey32);
  EXPECT_FALSE(fs::exists(s.path("nvmf-vd0.dhchap.tmp")));
  ASSERT_TRUE(s.remove("nvmf-vd0.dhchap", &err)) << err;
  EXPECT_FALSE(fs::exists(s.path("nvmf-vd0.dhchap")));
  EXPECT_TRUE(s.remove("nvmf-vd0.dhchap", &err)) << "a missing file is no error: " << err;
  EXPECT_FALSE(s.load("nvmf-vd0.dhchap", &got, &err));
  EXPECT_NE(err.find("nvmf-vd0.dhchap"), std::string::npos) << err;
}

TEST_F(SecretFilesTest, TightensAnOpenDirectory) {
  fs::create_directory(state + "/secrets");
  chmod((state + "/secrets").c_str(), 0755);
  SecretFiles s(state + "/secrets");
  std::string err;
  ASSERT_TRUE(s.save("k", kKey32, &err)) << err;
  struct stat st;
  ASSERT_EQ(stat((state + "/secrets").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
}

}  // namespace
