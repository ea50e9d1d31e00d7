// The daemon's reading of NVMe controller states and subsystem namespaces,
// on a made-up sysfs tree (the real one is exercised by the VM lane).
#include "daemon/nvme_sysfs.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

using namespace gpuraid::daemon;
namespace fs = std::filesystem;

namespace {

struct FakeSys {
  fs::path root = fs::temp_directory_path() / ("nvme_sysfs_test." + std::to_string(getpid()));
  FakeSys() { fs::create_directories(root); }
  ~FakeSys() { fs::remove_all(root); }
  void put(const std::string& rel, const std::string& text) {
    fs::create_directories((root / rel).parent_path());
    std::ofstream(root / rel) << text << "\n";
  }
  void ctrl(const std::string& name, const std::string& state, const std::string& port, const std::string& nqn,
            const std::string& transport = "tcp") {
    put("class/nvme/" + name + "/state", state);
    put("class/nvme/" + name + "/transport", transport);
    put("class/nvme/" + name + "/address", "traddr=127.0.0.1,trsvcid=" + port + ",src_addr=127.0.0.1");
    put("class/nvme/" + name + "/subsysnqn", nqn);
  }
  std::string sys() const { return root.string(); }
};

const FabricsPath kPath{"tcp", "127.0.0.1", "4421", "nqn.2026-11.test:a"};

}  // namespace

TEST(NvmeSysfs, PathStatesFollowTheControllers) {
  FakeSys s;
  EXPECT_EQ(path_state(kPath, s.sys()), PathState::Gone) << "no controller at all";
  s.ctrl("nvme0", "live", "4420", kPath.nqn);           // another port
  s.ctrl("nvme1", "live", "4421", "nqn.2026-11.test:b");  // another subsystem
  s.ctrl("nvme2", "live", "4421", kPath.nqn, "rdma");     // another transport
  EXPECT_EQ(path_state(kPath, s.sys()), PathState::Gone);
  s.ctrl("nvme3", "connecting", "4421", kPath.nqn);
  EXPECT_EQ(path_state(kPath, s.sys()), PathState::Reconnecting);
  s.ctrl("nvme3", "resetting", "4421", kPath.nqn);
  EXPECT_EQ(path_state(kPath, s.sys()), PathState::Reconnecting);
  s.ctrl("nvme3", "deleting", "4421", kPath.nqn);
  EXPECT_EQ(path_state(kPath, s.sys()), PathState::Gone);
  s.ctrl("nvme3", "live", "4421", kPath.nqn);
  EXPECT_EQ(path_state(kPath, s.sys()), PathState::Live);
  EXPECT_EQ(nvme_controllers(s.sys()).size(), 4u);
}

TEST(NvmeSysfs, NamespacesOfASubsystem) {
  FakeSys s;
  s.put("class/nvme-subsystem/nvme-subsys4/subsysnqn", kPath.nqn);
  s.put("class/nvme-subsystem/nvme-subsys4/nvme4n1/size", "0");
  s.put("class/nvme-subsystem/nvme-subsys4/nvme4n2/size", "0");
  s.put("class/nvme-subsystem/nvme-subsys4/nvme4/state", "live");
  s.put("class/nvme-subsystem/nvme-subsys5/subsysnqn", "nqn.2026-11.test:b");
  s.put("class/nvme-subsystem/nvme-subsys5/nvme5n1/size", "0");
  EXPECT_EQ(subsystem_namespaces(kPath.nqn, s.sys()), (std::vector<std::string>{"/dev/nvme4n1", "/dev/nvme4n2"}));
  EXPECT_TRUE(subsystem_namespaces("nqn.2026-11.test:none", s.sys()).empty());
  // Without multipath the namespaces hang off the controller.
  s.put("class/nvme-subsystem/nvme-subsys6/subsysnqn", "nqn.2026-11.test:c");
  s.put("class/nvme-subsystem/nvme-subsys6/nvme6/nvme6n1/size", "0");
  EXPECT_EQ(subsystem_namespaces("nqn.2026-11.test:c", s.sys()), (std::vector<std::string>{"/dev/nvme6n1"}));
}
