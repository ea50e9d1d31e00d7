// One owner per drive (Drive::claim, engine/io/drive_claim.cpp; issue 33,
// item 9: a second gpuraidd over a copied registry assembled every group
// the first one ran). A file's claim is an open file description lock, so
// a second drive object over it fails here as a second process would.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/io/drive.h"
#include "tests/support/group_rig.h"

using namespace gpuraid;
using namespace gpuraid::test;

TEST(DriveClaim, AFileHasOneOwnerUntilItGoes) {
  GroupRig rig(2);
  std::string err;
  auto a = rig.open(0), b = rig.open(0);
  ASSERT_TRUE(a->claim(&err)) << err;
  EXPECT_TRUE(a->claim(&err)) << "claiming again is a no-op";
  EXPECT_FALSE(b->claim(&err));
  EXPECT_NE(err.find("is in use"), std::string::npos) << err;
  a.reset();
  EXPECT_TRUE(b->claim(&err)) << err;
  EXPECT_TRUE(rig.open(1)->claim(&err)) << "another file";
}

TEST(DriveClaim, ASecondProcessCannotAssembleARunningGroup) {
  GroupRig rig(4);
  std::string err;
  auto g = rig.create(test_group_config(Level::R5), 0, 4, &err);
  ASSERT_TRUE(g) << err;
  const pid_t child = fork();
  if (child == 0) {  // another process with its own drive objects: refused
    std::string e;
    std::vector<std::unique_ptr<Drive>> d;
    for (uint32_t i = 0; i < 4; i++) d.push_back(Drive::open(DriveSpec{DriveType::File, rig.path(i), 0, false}, &e));
    const bool refused = !d[0]->claim(&e) && e.find("in use") != std::string::npos;
    _exit(refused ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the other process could claim a running group's member";
  ASSERT_TRUE(g->stop(&err)) << err;
}
