// The daemon's monitoring pieces on their own: repetitive events summarised
// per task, the event log on disk (sequence, rotation, torn lines),
// Prometheus histograms.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "daemon/event_log.h"
#include "daemon/event_summary.h"
#include "daemon/latency_hist.h"
#include "daemon/prom_text.h"

using namespace gpuraid;
using namespace gpuraid::daemon;
namespace v1 = gpuraid::v1;

namespace {
v1::Event ev(v1::EventKind k, const std::string& group, const std::string& msg = "") {
  v1::Event e;
  e.set_kind(k);
  e.set_group(group);
  e.set_message(msg);
  return e;
}

struct TempDir {
  std::string path;
  TempDir() {
    char t[] = "/tmp/gpuraid-monitor-XXXXXX";
    path = mkdtemp(t);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
};
}  // namespace

TEST(EventSummary, FirstFewThenOneSummaryAtTheTaskEnd) {
  EventSummary s(8);
  auto now = EventSummary::Clock::now();
  size_t passed = 0;
  s.admit(ev(v1::EVENT_KIND_SCRUB_STARTED, "dg0"), now);
  for (int i = 0; i < 512; i++)
    passed += s.admit(ev(v1::EVENT_KIND_MISMATCH_FOUND, "dg0", "stripe " + std::to_string(i)), now).size();
  // Another group's mismatches count apart.
  EXPECT_EQ(s.admit(ev(v1::EVENT_KIND_MISMATCH_FOUND, "dg1"), now).size(), 1u);
  EXPECT_EQ(passed, 8u);
  auto out = s.admit(ev(v1::EVENT_KIND_SCRUB_FINISHED, "dg0"), now);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].kind(), v1::EVENT_KIND_EVENTS_SUPPRESSED);
  EXPECT_EQ(out[0].summarised_kind(), v1::EVENT_KIND_MISMATCH_FOUND);
  EXPECT_EQ(out[0].summarised_count(), 504u);
  EXPECT_NE(out[0].message().find("stripe 511"), std::string::npos) << out[0].message();
  EXPECT_EQ(out[1].kind(), v1::EVENT_KIND_SCRUB_FINISHED);
  // The next task starts counting afresh.
  EXPECT_EQ(s.admit(ev(v1::EVENT_KIND_MISMATCH_FOUND, "dg0"), now).size(), 1u);
}

TEST(EventSummary, LongRunsGetASummaryPerInterval) {
  EventSummary s(2, std::chrono::seconds(60));
  auto t0 = EventSummary::Clock::now();
  for (int i = 0; i < 10; i++) s.admit(ev(v1::EVENT_KIND_REBUILD_PROGRESS, "dg0", std::to_string(i) + "%"), t0);
  EXPECT_TRUE(s.due(t0 + std::chrono::seconds(59)).empty());
  auto out = s.due(t0 + std::chrono::seconds(60));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].summarised_count(), 8u);
  EXPECT_TRUE(s.due(t0 + std::chrono::seconds(200)).empty());  // nothing new left out
  // Other events pass untouched.
  EXPECT_EQ(s.admit(ev(v1::EVENT_KIND_DRIVE_ADDED, ""), t0).size(), 1u);
}

TEST(EventLog, SequenceGoesOnAndRotates) {
  TempDir d;
  uint64_t last = 0;
  std::vector<v1::Event> recent;
  std::string err;
  {
    EventLog log(d.path, 16384);
    ASSERT_TRUE(log.open(4096, &recent, &last, &err)) << err;
    EXPECT_EQ(last, 0u);
    for (uint64_t i = 1; i <= 300; i++) {
      auto e = ev(v1::EVENT_KIND_DRIVE_ADDED, "", std::string(40, 'x'));
      e.set_seq(i);
      ASSERT_TRUE(log.append(e, &err)) << err;
    }
    ASSERT_TRUE(log.sync(&err)) << err;
  }
  auto size = [&](const char* f) { return std::filesystem::file_size(d.path + "/" + f); };
  EXPECT_LE(size("events.jsonl"), 16384u);
  EXPECT_LE(size("events.jsonl.1"), 16384u);
  // A torn last line (a crash mid-write) is cut; the rest is read back.
  std::ofstream(d.path + "/events.jsonl", std::ios::app) << "{\"seq\": \"301\", \"kin";
  EventLog again(d.path, 16384);
  ASSERT_TRUE(again.open(50, &recent, &last, &err)) << err;
  EXPECT_EQ(last, 300u);
  ASSERT_EQ(recent.size(), 50u);
  EXPECT_EQ(recent.front().seq(), 251u);
  EXPECT_EQ(recent.back().seq(), 300u);
  std::ifstream in(d.path + "/events.jsonl");
  std::string all((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(all.back(), '\n');
}

TEST(PromText, HistogramIsCumulativeWithSumAndCount) {
  LatencyHist h;
  h.add(800);          // <= 1 us
  h.add(40'000);       // <= 50 us
  h.add(40'000);
  h.add(20'000'000'000ull);  // above 10 s
  PromText p;
  p.family("x_seconds", "histogram", "test");
  p.histogram("x_seconds", {{"vd", "a\"b"}}, h.on_edges());
  std::string s = p.str();
  EXPECT_NE(s.find("gpuraid_x_seconds_bucket{vd=\"a\\\"b\",le=\"1e-06\"} 1\n"), std::string::npos) << s;
  EXPECT_NE(s.find("le=\"2.5e-05\"} 1\n"), std::string::npos) << s;
  EXPECT_NE(s.find("le=\"5e-05\"} 3\n"), std::string::npos) << s;
  EXPECT_NE(s.find("le=\"10\"} 3\n"), std::string::npos) << s;
  EXPECT_NE(s.find("le=\"+Inf\"} 4\n"), std::string::npos) << s;
  EXPECT_NE(s.find("gpuraid_x_seconds_count{vd=\"a\\\"b\"} 4\n"), std::string::npos) << s;
  EXPECT_NE(s.find("gpuraid_x_seconds_sum{vd=\"a\\\"b\"} 20.0000808\n"), std::string::npos) << s;
}
