// The model test replays its failures: runs model_test (its path comes from
// the build, MODEL_TEST_BIN) as a shell would and checks that
// - a deterministic run gives the same record twice (every request, result,
//   fault and latency change, member I/O counts: the --trace files are equal);
// - a deliberately broken read (the canary) fails the run, and the one
//   replay line it prints, executed as printed, fails the same episode at
//   the same op with the same message;
// - a threaded run's replay line says it may not reproduce exactly;
// - the line names the program by the path it ran from, quoted for a shell.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Result {
  int status = -1;  // exit code, or -1 when it did not exit normally
  std::string out;  // stdout and stderr together
};

// A command started as a shell would run it; finish() collects it.
struct Started {
  FILE* p = nullptr;
};

Started start(const std::string& cmd) { return Started{popen((cmd + " 2>&1").c_str(), "r")}; }

Result finish(Started s) {
  Result r;
  if (!s.p) return r;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, s.p)) > 0;) r.out.append(buf, n);
  int st = pclose(s.p);
  if (WIFEXITED(st)) r.status = WEXITSTATUS(st);
  return r;
}

Result sh(const std::string& cmd) { return finish(start(cmd)); }

std::string model_test() { return MODEL_TEST_BIN; }

// The lines of `out` that start with `prefix` (leading blanks ignored), prefix removed.
std::vector<std::string> lines_after(const std::string& out, const std::string& prefix) {
  std::vector<std::string> v;
  std::istringstream in(out);
  for (std::string l; std::getline(in, l);) {
    size_t b = l.find_first_not_of(' ');
    if (b != std::string::npos && l.compare(b, prefix.size(), prefix) == 0) v.push_back(l.substr(b + prefix.size()));
  }
  return v;
}

std::vector<std::string> read_lines(const std::string& path) {
  std::vector<std::string> v;
  std::ifstream in(path);
  for (std::string l; std::getline(in, l);) v.push_back(l);
  return v;
}

class ModelReplay : public ::testing::Test {
 protected:
  void SetUp() override {
    char t[] = "/tmp/gpuraid-replay-XXXXXX";
    ASSERT_NE(nullptr, mkdtemp(t));
    dir_ = t;
  }
  void TearDown() override {
    [[maybe_unused]] int rc = system(("rm -rf '" + dir_ + "'").c_str());
  }
  std::string dir_;
};

TEST_F(ModelReplay, DeterministicRunGivesTheSameRecordTwice) {
  // Every episode: 1 and 2 reactors, mem and file drives, faults and latency.
  const std::string args = " --deterministic --seed 5 --ops 30000";
  // Both at once: half the time (they mostly wait for I/O), and each run's
  // timing disturbs the other's, which must change nothing.
  Started sa = start(model_test() + args + " --trace " + dir_ + "/a");
  Started sb = start(model_test() + args + " --trace " + dir_ + "/b");
  Result a = finish(sa), b = finish(sb);
  ASSERT_EQ(0, a.status) << a.out;
  ASSERT_EQ(0, b.status) << b.out;
  std::vector<std::string> ta = read_lines(dir_ + "/a"), tb = read_lines(dir_ + "/b");
  ASSERT_GT(ta.size(), 30000u * 2);
  for (size_t i = 0; i < std::min(ta.size(), tb.size()); i++)
    ASSERT_EQ(ta[i], tb[i]) << "the two runs part at trace line " << i + 1;
  ASSERT_EQ(ta.size(), tb.size());
  // The record covers what makes runs differ: faults, latency, member errors.
  size_t faults = 0, latency = 0, member_errors = 0, ends = 0;
  for (const std::string& l : ta) {
    std::istringstream in(l);
    std::string ep, tag;
    in >> ep >> tag;
    faults += tag == "F";
    latency += tag == "L";
    ends += tag == "E";
    if (tag == "D") {
      uint64_t m, rd, wr, err;
      in >> m >> rd >> wr >> err;
      member_errors += err;
    }
  }
  EXPECT_EQ(21u, ends);  // one end line per episode (model_test.cpp, episodes(): 21 with raid50/60 and draid5/6)
  EXPECT_GT(faults, 15u);
  EXPECT_GT(latency, 100u);
  EXPECT_GT(member_errors, 0u);
  EXPECT_EQ(lines_after(a.out, "run digest"), lines_after(b.out, "run digest"));
}

TEST_F(ModelReplay, CanaryFailsAndItsReplayLineReproducesTheFailure) {
  // Episode 9: RAID 6, two reactors driven by one thread, faults armed.
  Result a = sh(model_test() + " --deterministic --seed 40 --episode 9 --ops 45000 --canary-read 1500");
  ASSERT_EQ(1, a.status) << a.out;
  auto failure = lines_after(a.out, "MODEL FAILURE: ");
  auto episode = lines_after(a.out, "episode ");
  auto replay = lines_after(a.out, "replay: ");
  ASSERT_EQ(1u, failure.size()) << a.out;
  ASSERT_EQ(1u, episode.size()) << a.out;
  ASSERT_EQ(1u, replay.size()) << a.out;
  EXPECT_EQ(0u, failure[0].find("read mismatch at byte ")) << failure[0];
  EXPECT_EQ(0u, episode[0].find("9: raid6")) << episode[0];
  // The seed printed is the one to pass back (episode 9 ran with 40 + 9).
  EXPECT_EQ(model_test() + " --seed 40 --episode 9 --ops 45000 --parity cpu --deterministic --canary-read 1500",
            replay[0]);
  // Struck at the first read from op #1500 on: the op number is in the message.
  size_t at = failure[0].find("op #");
  ASSERT_NE(std::string::npos, at);
  EXPECT_GE(std::stoull(failure[0].substr(at + 4)), 1500u);

  Result b = sh(replay[0]);
  ASSERT_EQ(1, b.status) << b.out;
  EXPECT_EQ(failure, lines_after(b.out, "MODEL FAILURE: "));
  EXPECT_EQ(episode, lines_after(b.out, "episode "));
  EXPECT_EQ(replay, lines_after(b.out, "replay: "));
}

TEST_F(ModelReplay, ThreadedReplayLineSaysItMayNotReproduceExactly) {
  Result a = sh(model_test() + " --seed 8 --episode 6 --ops 30000 --canary-read 300");
  ASSERT_EQ(1, a.status) << a.out;
  auto replay = lines_after(a.out, "replay: ");
  ASSERT_EQ(1u, replay.size()) << a.out;
  EXPECT_EQ(model_test() + " --seed 8 --episode 6 --ops 30000 --parity cpu --canary-read 300", replay[0]);
  EXPECT_NE(std::string::npos, a.out.find("threaded run: this may not reproduce exactly")) << a.out;
  // The canary strikes whatever the interleaving: the replay fails too, in the same episode.
  Result b = sh(replay[0]);
  ASSERT_EQ(1, b.status) << b.out;
  EXPECT_EQ(lines_after(a.out, "episode "), lines_after(b.out, "episode "));
  ASSERT_EQ(1u, lines_after(b.out, "MODEL FAILURE: read mismatch").size()) << b.out;
}

TEST_F(ModelReplay, ReplayLineNamesTheProgramItRanAsAndQuotesIt) {
  // A copy of model_test in a folder whose name needs quoting in a shell,
  // run from elsewhere: the line names the copy, quoted, by its full path.
  const std::string quoted_dir = "'" + dir_ + "/it'\\''s a dir'";
  const std::string quoted_copy = "'" + dir_ + "/it'\\''s a dir/model_test'";
  ASSERT_EQ(0, sh("mkdir " + quoted_dir + " && cp " + model_test() + " " + quoted_dir).status);
  Result a = sh("cd / && " + quoted_copy + " --deterministic --seed 3 --episode 0 --ops 30000 --canary-read 100");
  ASSERT_EQ(1, a.status) << a.out;
  auto replay = lines_after(a.out, "replay: ");
  ASSERT_EQ(1u, replay.size()) << a.out;
  EXPECT_EQ(quoted_copy + " --seed 3 --episode 0 --ops 30000 --parity cpu --deterministic --canary-read 100", replay[0]);
  Result b = sh(replay[0]);
  ASSERT_EQ(1, b.status) << b.out;
  EXPECT_EQ(lines_after(a.out, "MODEL FAILURE: "), lines_after(b.out, "MODEL FAILURE: "));
}

TEST_F(ModelReplay, DeterministicRefusesTimerDrivenParity) {
  Result r = sh(model_test() + " --deterministic --parity kernel-cpu --ops 10");
  EXPECT_EQ(2, r.status) << r.out;
  Result bad = sh(model_test() + " --parity gpu --ops 10");
  EXPECT_EQ(2, bad.status) << bad.out;
}

}  // namespace
