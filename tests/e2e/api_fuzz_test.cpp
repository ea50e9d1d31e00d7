// API fuzz: >= 10,000 random and malformed requests against a real gpuraidd
// holding a RAID 5 group and a VD. Read-only calls get anything; every
// state-changing call carries at least one invalid field (unknown id,
// wrong enum, huge or malformed string, bad size) and must be refused;
// raw garbage goes to every method. Afterwards the daemon is the same
// process, and its drives, groups and volumes are exactly as before.
#include <gtest/gtest.h>
#include <grpcpp/generic/generic_stub.h>

#include <atomic>
#include <cstdlib>
#include <thread>

#include <condition_variable>
#include <functional>
#include <mutex>
#include <random>

#include "daemon_fixture.h"

namespace gpuraid::e2e {
namespace {

namespace v1 = gpuraid::v1;
using Rng = std::mt19937_64;

class Fuzz : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string err;
    ASSERT_TRUE(d_.start(&err)) << err;
    stub_ = d_.stub();
    for (int i = 0; i < 4; i++) {
      v1::AddDriveRequest q;
      q.set_path(d_.dir() + "/d" + std::to_string(i) + ".img");
      q.set_create_size_bytes(16 << 20);
      v1::Drive r;
      ASSERT_TRUE(call(&v1::Gpuraid::Stub::AddDrive, q, &r).ok());
    }
    v1::CreateGroupRequest g;
    g.set_level(v1::RAID_LEVEL_5);
    g.set_assume_zeroed(true);
    for (int i = 0; i < 4; i++) g.add_drives("pd" + std::to_string(i));
    v1::Group gr;
    auto s = call(&v1::Gpuraid::Stub::CreateGroup, g, &gr);
    ASSERT_TRUE(s.ok()) << s.error_message();
    v1::CreateVolumeRequest v;
    v.set_group("dg0");
    v.set_size_bytes(8 << 20);
    v1::Volume vr;
    ASSERT_TRUE(call(&v1::Gpuraid::Stub::CreateVolume, v, &vr).ok());
  }

  template <typename Req, typename Resp, typename M>
  grpc::Status call(M m, const Req& q, Resp* r) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    return (stub_.get()->*m)(&ctx, q, r);
  }

  // Everything an operator can see of the registry, as text.
  std::string snapshot() {
    v1::ListDrivesResponse d;
    v1::ListGroupsResponse g;
    v1::ListVolumesResponse v;
    EXPECT_TRUE(call(&v1::Gpuraid::Stub::ListDrives, v1::ListDrivesRequest(), &d).ok());
    EXPECT_TRUE(call(&v1::Gpuraid::Stub::ListGroups, v1::ListGroupsRequest(), &g).ok());
    EXPECT_TRUE(call(&v1::Gpuraid::Stub::ListVolumes, v1::ListVolumesRequest(), &v).ok());
    for (auto& x : *g.mutable_groups()) {  // progress figures move on their own
      x.clear_init();
      x.clear_resync();
      x.clear_rebuild();
      x.clear_scrub();
      x.clear_last_scrub();
      x.clear_generation();  // the engine bumps it on its own (init done, clean/dirty)
    }
    return d.DebugString() + g.DebugString() + v.DebugString();
  }

  DaemonProcess d_;
  std::unique_ptr<v1::Gpuraid::Stub> stub_;
};

// Field generators.
std::string any_string(Rng& r) {
  switch (r() % 10) {
    case 0: return "";
    case 1: return std::string(1 + r() % (1 << 20), char('a' + r() % 26));  // huge
    case 2: { std::string s(r() % 64, '\0'); for (auto& c : s) c = char(r()); return s; }  // binary
    case 3: return "../../etc/passwd";
    case 4: return "pd" + std::to_string(r() % 8);
    case 5: return "dg0";
    case 6: return "vd0";
    case 7: return "héllo wörld\n\t";
    case 8: return "/tmp/" + std::to_string(r());
    default: return "x" + std::to_string(r() % 100000);
  }
}
// A string that can never name an existing object or be a valid name/path.
std::string bad_string(Rng& r) {
  switch (r() % 5) {
    case 0: return "";
    case 1: return std::string(100 + r() % 200000, 'z');
    case 2: return "no-such-" + std::to_string(r());
    case 3: return std::string("bad\0name", 8);
    default: return "relative/path/" + std::to_string(r() % 100);
  }
}
uint64_t any_u64(Rng& r) {
  switch (r() % 6) {
    case 0: return 0;
    case 1: return UINT64_MAX - r() % 4;
    case 2: return r() % 4096;
    case 3: return (r() % 64) << 20;
    case 4: return uint64_t(1) << (r() % 64);
    default: return r();
  }
}
int any_enum(Rng& r) { return int(r() % 40) - 10; }

TEST_F(Fuzz, BadRequestsChangeNothing) {
  // Let init and the first events settle, then take the reference state.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const std::string before = snapshot();
  v1::DaemonInfo info0;
  ASSERT_TRUE(call(&v1::Gpuraid::Stub::GetInfo, v1::GetInfoRequest(), &info0).ok());

  // 10^5 requests per run (GPURAID_API_FUZZ_CASES to change it, e.g. 10^7
  // for a long run), from 4 client threads with their own seeds: the daemon
  // serves them at once, as it would several operators.
  const char* env = getenv("GPURAID_API_FUZZ_CASES");
  const int cases = env ? atoi(env) : 100000, kThreads = 4;
  std::atomic<int> accepted_mutations{0};
  std::mutex first_mu;
  std::string first_accepted;
  auto worker = [&](uint64_t seed, int count) {
  Rng rng(seed);
  auto& r = rng;
  int n = 0;
  // Each mutator builds a request with random fields plus one that cannot be valid.
  std::vector<std::function<grpc::Status()>> mutators = {
      [&] {
        v1::AddDriveRequest q;
        // Never openable: relative, or under a directory that does not exist.
        q.set_path((r() % 2 ? "relative/" : "/nonexistent/") + any_string(r));
        q.set_type(v1::DriveType(any_enum(r)));
        q.set_create_size_bytes(any_u64(r));
        q.set_id(any_string(r));
        v1::Drive x;
        return call(&v1::Gpuraid::Stub::AddDrive, q, &x);
      },
      [&] {
        v1::DriveRef q;
        q.set_id(bad_string(r));
        v1::Empty x;
        return call(&v1::Gpuraid::Stub::RemoveDrive, q, &x);
      },
      [&] {
        v1::DriveRef q;
        q.set_id(bad_string(r));
        v1::Drive x;
        return call(&v1::Gpuraid::Stub::FailDrive, q, &x);
      },
      [&] {
        v1::SetDriveSpareRequest q;
        q.set_id(bad_string(r));
        q.set_spare(r() % 2);
        q.set_group(any_string(r));
        q.set_force(r() % 2);
        v1::Drive x;
        return call(&v1::Gpuraid::Stub::SetDriveSpare, q, &x);
      },
      [&] {
        v1::CreateGroupRequest q;
        q.set_name(any_string(r));
        q.set_level(v1::RaidLevel(any_enum(r)));
        q.set_parity(uint32_t(any_u64(r)));
        q.set_strip_bytes(uint32_t(any_u64(r)));
        int k = int(r() % 8);
        for (int i = 0; i < k; i++) q.add_drives(any_string(r));
        q.add_drives(bad_string(r));  // never all valid
        q.set_force(r() % 2);
        v1::Group x;
        return call(&v1::Gpuraid::Stub::CreateGroup, q, &x);
      },
      [&] {
        v1::DeleteGroupRequest q;
        q.set_name(bad_string(r));
        q.set_force(r() % 2);
        q.set_unexport(r() % 2);
        v1::DeleteGroupResponse x;
        return call(&v1::Gpuraid::Stub::DeleteGroup, q, &x);
      },
      [&] {
        v1::StartGroupRequest q;  // dg0 is running: nothing to start
        q.set_name(r() % 2 ? bad_string(r) : "dg0");
        q.set_force(r() % 2);
        v1::StartGroupResponse x;
        return call(&v1::Gpuraid::Stub::StartGroup, q, &x);
      },
      [&] {
        v1::ReaddMemberRequest q;  // dg0's members are active: nothing to re-add
        q.set_group(r() % 2 ? bad_string(r) : "dg0");
        q.set_drive(r() % 2 ? bad_string(r) : "pd" + std::to_string(r() % 6));
        q.set_force(r() % 2);
        v1::ReaddMemberResponse x;
        return call(&v1::Gpuraid::Stub::ReaddMember, q, &x);
      },
      [&] {
        v1::WipeDriveRequest q;
        q.set_id(bad_string(r));
        q.set_force(r() % 2);
        v1::WipeDriveResponse x;
        return call(&v1::Gpuraid::Stub::WipeDrive, q, &x);
      },
      [&] {
        v1::ImportGroupRequest q;  // never a path of an unregistered member: always refused
        for (int i = 0, k = int(r() % 4); i < k; i++) q.add_paths(any_string(r));
        q.add_paths(bad_string(r));
        q.set_name(any_string(r));
        q.set_force(r() % 2);
        v1::ImportGroupResponse x;
        return call(&v1::Gpuraid::Stub::ImportGroup, q, &x);
      },
      [&] {
        v1::ReplaceMemberRequest q;
        q.set_group(any_string(r));
        if (r() % 2) q.set_index(uint32_t(any_u64(r)));
        else q.set_drive(any_string(r));
        q.set_new_drive(bad_string(r));
        v1::Group x;
        return call(&v1::Gpuraid::Stub::ReplaceMember, q, &x);
      },
      [&] {
        v1::ControlTaskRequest q;
        q.set_group(r() % 2 ? bad_string(r) : "dg0");
        // On dg0: a task/action pair that is always refused (no rebuild runs).
        q.set_task(q.group() == "dg0" ? v1::TASK_REBUILD : v1::Task(any_enum(r)));
        q.set_action(q.group() == "dg0" ? v1::TaskAction(r() % 2 ? any_enum(r) : 3) : v1::TaskAction(any_enum(r)));
        if (q.group() == "dg0" && q.action() == v1::TASK_ACTION_RESUME) q.set_action(v1::TASK_ACTION_PAUSE);
        v1::Group x;
        return call(&v1::Gpuraid::Stub::ControlTask, q, &x);
      },
      [&] {
        v1::SetRatesRequest q;
        q.set_group(r() % 2 ? bad_string(r) : "dg0");
        if (q.group() == "dg0") q.set_rebuild_bytes_s((uint64_t(1) << 51) + r() % 1000);  // past the limit
        else if (r() % 2) q.set_scrub_bytes_s(any_u64(r));
        v1::Group x;
        return call(&v1::Gpuraid::Stub::SetRates, q, &x);
      },
      [&] {
        v1::CreateVolumeRequest q;
        q.set_group(r() % 2 ? bad_string(r) : "dg0");
        q.set_size_bytes(q.group() == "dg0" ? (uint64_t(1) << 40) + any_u64(r) % 4096 : any_u64(r));  // too big
        q.set_rest(q.group() != "dg0" && r() % 2);
        q.set_id(any_string(r));
        v1::Volume x;
        return call(&v1::Gpuraid::Stub::CreateVolume, q, &x);
      },
      [&] {
        v1::ResizeVolumeRequest q;
        q.set_id(r() % 2 ? bad_string(r) : "vd0");
        q.set_size_bytes(q.id() == "vd0" ? any_u64(r) % (8 << 20) : any_u64(r));  // vd0: never larger
        v1::Volume x;
        return call(&v1::Gpuraid::Stub::ResizeVolume, q, &x);
      },
      [&] {
        v1::VolumeRef q;
        q.set_id(bad_string(r));
        v1::Empty x;
        return call(&v1::Gpuraid::Stub::DeleteVolume, q, &x);
      },
      [&] {
        v1::ExportVolumeRequest q;
        q.set_id(r() % 2 ? bad_string(r) : "vd0");
        q.set_kind(q.id() == "vd0" ? v1::ExportKind(r() % 2 ? 0 : 7 + r() % 10) : v1::ExportKind(any_enum(r)));
        q.set_listen(any_string(r));
        v1::Volume x;
        return call(&v1::Gpuraid::Stub::ExportVolume, q, &x);
      },
      [&] {
        v1::VolumeRef q;
        q.set_id(r() % 2 ? bad_string(r) : "vd0");  // vd0 is not exported
        v1::Volume x;
        return call(&v1::Gpuraid::Stub::UnexportVolume, q, &x);
      },
      [&] {
        v1::WriteVolumeRequest q;
        q.set_id(r() % 2 ? bad_string(r) : "vd0");
        // vd0: misaligned, empty or past the end.
        uint64_t off = q.id() == "vd0" ? (r() % 2 ? 1 + r() % 4095 : (16u << 20) + 4096 * (r() % 10)) : any_u64(r);
        q.set_offset_bytes(off);
        q.set_data(std::string(size_t(r() % 3) * 4096, 'q'));
        v1::WriteVolumeResponse x;
        return call(&v1::Gpuraid::Stub::WriteVolume, q, &x);
      },
  };
  // Read-only calls: any fields at all.
  std::vector<std::function<void()>> readers = {
      [&] { v1::DaemonInfo x; call(&v1::Gpuraid::Stub::GetInfo, v1::GetInfoRequest(), &x); },
      [&] { v1::DriveRef q; q.set_id(any_string(r)); v1::Drive x; call(&v1::Gpuraid::Stub::GetDrive, q, &x); },
      [&] { v1::ScanDrivesResponse x; call(&v1::Gpuraid::Stub::ScanDrives, v1::ScanDrivesRequest(), &x); },
      [&] { v1::GroupRef q; q.set_name(any_string(r)); v1::Group x; call(&v1::Gpuraid::Stub::GetGroup, q, &x); },
      [&] { v1::VolumeRef q; q.set_id(any_string(r)); v1::Volume x; call(&v1::Gpuraid::Stub::GetVolume, q, &x); },
      [&] {
        v1::ListVolumesRequest q;
        q.set_group(any_string(r));
        v1::ListVolumesResponse x;
        call(&v1::Gpuraid::Stub::ListVolumes, q, &x);
      },
      [&] {
        v1::GetStatsRequest q;
        q.set_volume(r() % 3 ? "" : any_string(r));
        q.set_group(r() % 3 ? "" : any_string(r));
        q.set_drive(r() % 3 ? "" : any_string(r));
        v1::Stats x;
        call(&v1::Gpuraid::Stub::GetStats, q, &x);
      },
      [&] {
        v1::ReadVolumeRequest q;
        q.set_id(r() % 2 ? "vd0" : any_string(r));
        q.set_offset_bytes(r() % 2 ? (r() % 2048) * 4096 : any_u64(r));
        q.set_length_bytes(r() % 2 ? (1 + r() % 256) * 4096 : any_u64(r));
        v1::ReadVolumeResponse x;
        call(&v1::Gpuraid::Stub::ReadVolume, q, &x);
      },
      [&] {
        v1::WatchEventsRequest q;
        q.set_after_seq(any_u64(r));
        grpc::ClientContext ctx;
        ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
        auto rd = stub_->WatchEvents(&ctx, q);
        v1::Event e;
        while (rd->Read(&e)) {
        }
        rd->Finish();
      },
  };
  // Raw bytes to any method (and to methods that do not exist).
  grpc::GenericStub generic(d_.channel());
  const char* methods[] = {"GetInfo", "AddDrive", "CreateGroup", "DeleteGroup", "CreateVolume", "ReadVolume",
                           "WriteVolume", "SetRates", "NoSuchMethod"};
  auto garbage = [&] {
    std::string m = methods[r() % 9];
    bool read_only = m == "GetInfo" || m == "ReadVolume" || m == "NoSuchMethod";
    std::string bytes(r() % 512, '\0');
    for (auto& c : bytes) c = char(r());
    // Mutators get a length prefix past the end: never a parsable message.
    if (!read_only) bytes = std::string("\x0a\xff\xff\xff\xff\x0f", 6) + bytes;
    grpc::Slice s(bytes);
    grpc::ByteBuffer req(&s, 1), resp;
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
    grpc::Status st;
    generic.UnaryCall(&ctx, "/gpuraid.v1.Gpuraid/" + m, grpc::StubOptions(), &req, &resp, [&](grpc::Status x) {
      std::lock_guard<std::mutex> g(mu);
      st = x;
      done = true;
      cv.notify_one();
    });
    std::unique_lock<std::mutex> g(mu);
    cv.wait(g, [&] { return done; });
    if (!read_only) {
      EXPECT_FALSE(st.ok()) << "garbage to " << m << " was accepted";
    }
  };

  for (; n < count; n++) {
    int pick = int(r() % 10);
    if (pick < 6) {
      size_t i = r() % mutators.size();
      grpc::Status s = mutators[i]();
      if (s.ok()) {
        accepted_mutations++;
        std::lock_guard<std::mutex> g(first_mu);
        if (first_accepted.empty())
          first_accepted = "mutator " + std::to_string(i) + " at request " + std::to_string(n) + " of seed " +
                           std::to_string(seed);
      }
      ASSERT_NE(s.error_code(), grpc::StatusCode::UNAVAILABLE) << "the daemon went away at request " << n;
    } else if (pick < 9) {
      readers[r() % readers.size()]();
    } else {
      garbage();
    }
  }
  };
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> th;
  for (int t = 0; t < kThreads; t++) th.emplace_back(worker, 20260501 + t, cases / kThreads + (t < cases % kThreads));
  for (auto& t : th) t.join();
  printf("api_fuzz: %d requests from %d threads in %.1f s\n", cases, kThreads,
         std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  EXPECT_EQ(accepted_mutations.load(), 0) << "first: " << first_accepted;
  ASSERT_TRUE(d_.alive()) << "gpuraidd died";
  v1::DaemonInfo info1;
  ASSERT_TRUE(call(&v1::Gpuraid::Stub::GetInfo, v1::GetInfoRequest(), &info1).ok());
  EXPECT_EQ(info0.pid(), info1.pid());
  EXPECT_EQ(before, snapshot());
  EXPECT_EQ(d_.stop(), 0) << "gpuraidd did not stop cleanly";
}

}  // namespace
}  // namespace gpuraid::e2e
