// The words operators read for the API's enums (proto/api_words.h), and
// docs/STATES.md: every state word is documented there.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "gpuraid/v1/gpuraid.pb.h"
#include "proto/api_json.h"
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

// One JSON for scripts (proto/api_json.h): numbers as numbers, enum values
// as words; read back, and protobuf's own mapping too (older event logs).
TEST(ApiJson, WritesNumbersAndWordsAndReadsBothForms) {
  v1::Event e;
  e.set_seq(1ull << 40);
  e.set_time_unix_ms(1795000000123);
  e.set_kind(v1::EVENT_KIND_MEMBER_FAILED);
  e.set_group("r5 \"ü\"");
  e.set_member(-1);
  const std::string line = v1::api_json(e, true);
  EXPECT_EQ(line.find('\n'), std::string::npos) << line;
  EXPECT_NE(line.find("\"seq\":1099511627776"), std::string::npos) << line;
  EXPECT_NE(line.find("\"kind\":\"member_failed\""), std::string::npos) << line;
  v1::Event back;
  std::string err;
  ASSERT_TRUE(v1::api_json_parse(line, &back, &err)) << err;
  EXPECT_EQ(back.SerializeAsString(), e.SerializeAsString());
  ASSERT_TRUE(v1::api_json_parse(
      R"({"seq":"7","time_unix_ms":"1700","kind":"EVENT_KIND_SPARE_TAKEN","group":"g","member":2,"newer_field":1})", &back,
      &err))
      << err;
  EXPECT_EQ(back.seq(), 7u);
  EXPECT_EQ(back.time_unix_ms(), 1700);
  EXPECT_EQ(back.kind(), v1::EVENT_KIND_SPARE_TAKEN);
  EXPECT_EQ(back.member(), 2);
  EXPECT_FALSE(v1::api_json_parse(R"({"seq":"x"})", &back, &err));
  EXPECT_FALSE(v1::api_json_parse(R"({"kind":"no_such_kind"})", &back, &err));
  EXPECT_FALSE(v1::api_json_parse("{\"seq\":", &back, &err));
}
