// Linked into the parity test binaries: prints which ISA-L path the run
// covers before any test runs, and fails the run when GPURAID_EXPECT_ISAL_PATH
// names another (the emulated runs set it, so a CPU model that stops giving
// the path it was chosen for is noticed, not silently covering another).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "tests/support/isal_path.h"

namespace gpuraid::test {
namespace {

class IsalPathReport : public ::testing::Environment {
 public:
  void SetUp() override {
    const char* cpu = getenv("GPURAID_EMULATED_CPU");
    printf("%s%s%s\n", isal_path_line().c_str(), cpu ? ", emulated CPU: qemu-x86_64 -cpu " : "", cpu ? cpu : "");
    if (!cpu && isal_path() != IsalPath::Avx512)
      printf("ISA-L path: this CPU has no AVX-512, so no run here covers ISA-L's AVX-512 code (qemu cannot"
             " emulate it); the *_qemu_* tests cover the other paths\n");
    fflush(stdout);
    const char* want = getenv("GPURAID_EXPECT_ISAL_PATH");
    if (want && *want && std::string(want) != isal_path_name(isal_path()))
      FAIL() << "expected ISA-L path " << want << ", this CPU gives " << isal_path_name(isal_path());
  }
};

[[maybe_unused]] ::testing::Environment* const registered =
    ::testing::AddGlobalTestEnvironment(new IsalPathReport);

}  // namespace
}  // namespace gpuraid::test
