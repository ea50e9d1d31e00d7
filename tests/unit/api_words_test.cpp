// The words operators read for the API's enums (proto/api_words.h), and
// docs/STATES.md: every state word is documented there.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "gpuraid/v1/gpuraid.pb.h"
#include "proto/api_words.h"

namespace v1 = gpuraid::v1;
namespace pb = google::protobuf;

TEST(ApiWords, AreTheValueNamesWithoutPrefixLowercased) {
  EXPECT_EQ(v1::api_word(v1::GROUP_STATE_OPTIMAL), "optimal");
  EXPECT_EQ(v1::api_word(v1::GROUP_STATE_INITIALIZING), "initializing");
  EXPECT_EQ(v1::api_word(v1::DRIVE_STATE_OFFLINE), "offline");
  EXPECT_EQ(v1::api_word(v1::DRIVE_TYPE_NVME_CHAR), "nvme_char");
  EXPECT_EQ(v1::api_word(v1::REDUNDANCY_PENDING), "pending");
  EXPECT_EQ(v1::api_word(v1::EVENT_KIND_MEMBER_FAILED), "member_failed");
  EXPECT_EQ(v1::api_word(v1::RAID_LEVEL_6), "raid6");
  EXPECT_EQ(v1::api_word(v1::RAID_LEVEL_10), "raid10");
  EXPECT_EQ(v1::api_word(v1::RAID_LEVEL_EC), "ec");
  EXPECT_EQ(v1::api_word(v1::GroupState(177)), "177") << "a value newer than the build reads as its number";
}

TEST(ApiWords, ReadBackToTheirValues) {
  for (const pb::EnumDescriptor* t : {v1::GroupState_descriptor(), v1::DriveState_descriptor(),
                                      v1::Redundancy_descriptor(), v1::RaidLevel_descriptor(),
                                      v1::DriveType_descriptor(), v1::EventKind_descriptor()})
    for (int i = 0; i < t->value_count(); i++) {
      int v = -1;
      ASSERT_TRUE(v1::api_value(t, v1::api_word(t, t->value(i)->number()), &v)) << t->value(i)->name();
      EXPECT_EQ(v, t->value(i)->number());
    }
  int v = -1;
  EXPECT_TRUE(v1::api_value(v1::DriveType_descriptor(), "nvme-char", &v));
  EXPECT_EQ(v, v1::DRIVE_TYPE_NVME_CHAR);
  EXPECT_FALSE(v1::api_value(v1::GroupState_descriptor(), "happy", &v));
}

TEST(ApiWords, EveryStateWordIsInStatesMd) {
  std::ifstream f(STATES_DOC);
  ASSERT_TRUE(f) << "cannot read " << STATES_DOC;
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string doc = ss.str();
  for (const pb::EnumDescriptor* t : {v1::GroupState_descriptor(), v1::DriveState_descriptor(),
                                      v1::Redundancy_descriptor(), v1::DriveRole_descriptor()})
    for (int i = 0; i < t->value_count(); i++) {
      if (t->value(i)->number() == 0) continue;  // unspecified: never reported
      const std::string row = "| `" + v1::api_word(t, t->value(i)->number()) + "` |";
      EXPECT_NE(doc.find(row), std::string::npos) << t->value(i)->name() << ": no row " << row << " in docs/STATES.md";
    }
}
