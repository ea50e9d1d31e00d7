// nvmet configfs plans on a plain directory laid out as configfs would be:
// what is created, what is reused (a port with the same address, a host
// entry), what removal takes away (only what the daemon made and nothing
// else uses), rollback of a failed plan, and the listen probe.
#include "daemon/nvmet_config.h"
#include "daemon/nvmf_metrics.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <tuple>

namespace fs = std::filesystem;
using namespace gpuraid::daemon;

namespace {

class NvmetConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/nvmet_test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    root = tmpl;
    for (auto d : {"subsystems", "ports", "hosts"}) fs::create_directory(root + "/" + d);
  }
  void TearDown() override { fs::remove_all(root); }

  void put(const std::string& rel, const std::string& v) { std::ofstream(root + "/" + rel) << v << "\n"; }
  // A subsystem as the kernel shows it (default groups), serving `dev`.
  void subsystem(const std::string& nqn, const std::string& dev) {
    const std::string s = "subsystems/" + nqn;
    fs::create_directories(root + "/" + s + "/namespaces/1");
    fs::create_directories(root + "/" + s + "/allowed_hosts");
    put(s + "/attr_allow_any_host", "0");
    put(s + "/namespaces/1/device_path", dev);
    put(s + "/namespaces/1/enable", "1");
  }
  void port(const std::string& id, const std::string& addr, const std::string& svc) {
    fs::create_directories(root + "/ports/" + id + "/subsystems");
    put("ports/" + id + "/addr_trtype", "tcp");
    put("ports/" + id + "/addr_traddr", addr);
    put("ports/" + id + "/addr_trsvcid", svc);
  }
  void link(const std::string& rel, const std::string& target_rel) {
    fs::create_symlink(root + "/" + target_rel, root + "/" + rel);
  }
  NvmetExport spec() {
    NvmetExport x;
    nvmet_identity("group-uuid", "vd0", &x);
    x.nqn = "nqn.2026-11.io.gpuraid:vd:test";
    x.device_path = "/dev/ublkb0";
    x.traddr = "127.0.0.1";
    x.trsvcid = "4420";
    x.hosts = {"nqn.host:a"};
    return x;
  }
  bool has(const std::vector<NvmetOp>& ops, NvmetOp::Kind k, const std::string& rel) {
    for (const auto& o : ops)
      if (o.kind == k && o.path == root + "/" + rel) return true;
    return false;
  }

  std::string root;
};

TEST_F(NvmetConfigTest, CreatesEverythingOnAnEmptyTarget) {
  Nvmet t(root);
  NvmetOwned owned;
  std::vector<NvmetOp> ops;
  std::string err;
  ASSERT_TRUE(t.plan_create(spec(), &owned, &ops, &err)) << err;
  const std::string s = "subsystems/" + spec().nqn;
  EXPECT_TRUE(has(ops, NvmetOp::Mkdir, s));
  EXPECT_TRUE(has(ops, NvmetOp::Mkdir, s + "/namespaces/1"));
  EXPECT_TRUE(has(ops, NvmetOp::Mkdir, "hosts/nqn.host:a"));
  EXPECT_TRUE(has(ops, NvmetOp::Symlink, s + "/allowed_hosts/nqn.host:a"));
  EXPECT_TRUE(has(ops, NvmetOp::Mkdir, "ports/1"));
  EXPECT_TRUE(has(ops, NvmetOp::Symlink, "ports/1/subsystems/" + spec().nqn));
  // Any host stays off; the namespace is enabled after its identity is written, the port link comes last.
  for (const auto& o : ops)
    if (o.path == root + "/" + s + "/attr_allow_any_host") {
      EXPECT_EQ(o.value, "0");
    }
  EXPECT_EQ(ops.back().kind, NvmetOp::Symlink);
  EXPECT_EQ(owned.port_id, "1");
  EXPECT_TRUE(owned.port_created);
  EXPECT_EQ(owned.hosts_created, std::vector<std::string>{"nqn.host:a"});
}

TEST_F(NvmetConfigTest, ReusesAPortWithTheSameAddressAndAHostEntry) {
  port("3", "127.0.0.1", "4420");
  port("7", "127.0.0.1", "4421");
  fs::create_directory(root + "/hosts/nqn.host:a");
  Nvmet t(root);
  NvmetOwned owned;
  std::vector<NvmetOp> ops;
  std::string err;
  ASSERT_TRUE(t.plan_create(spec(), &owned, &ops, &err)) << err;
  EXPECT_EQ(owned.port_id, "3");
  EXPECT_FALSE(owned.port_created);
  EXPECT_TRUE(owned.hosts_created.empty());
  for (const auto& o : ops) EXPECT_FALSE(o.kind == NvmetOp::Mkdir && o.path.find("/ports/") != std::string::npos) << o.path;
  EXPECT_TRUE(has(ops, NvmetOp::Symlink, "ports/3/subsystems/" + spec().nqn));
  // Another address: a new port after the highest id.
  auto x = spec();
  x.trsvcid = "4430";
  NvmetOwned o2;
  ops.clear();
  ASSERT_TRUE(t.plan_create(x, &o2, &ops, &err)) << err;
  EXPECT_EQ(o2.port_id, "8");
  EXPECT_TRUE(o2.port_created);
}

TEST_F(NvmetConfigTest, TakesOverWhatIsThereAfterARestart) {
  subsystem(spec().nqn, "/dev/ublkb0");
  fs::create_directory(root + "/hosts/nqn.host:a");
  link("subsystems/" + spec().nqn + "/allowed_hosts/nqn.host:a", "hosts/nqn.host:a");
  port("1", "127.0.0.1", "4420");
  link("ports/1/subsystems/" + spec().nqn, "subsystems/" + spec().nqn);
  Nvmet t(root);
  NvmetOwned owned{"1", true, {"nqn.host:a"}};
  std::vector<NvmetOp> ops;
  std::string err;
  ASSERT_TRUE(t.plan_create(spec(), &owned, &ops, &err)) << err;
  EXPECT_TRUE(ops.empty()) << ops.size() << " changes, first " << ops[0].path;
  EXPECT_EQ(owned.port_id, "1");
  EXPECT_TRUE(owned.port_created);
  EXPECT_EQ(owned.hosts_created, std::vector<std::string>{"nqn.host:a"});
  EXPECT_TRUE(t.serves(spec().nqn, "/dev/ublkb0"));
}

TEST_F(NvmetConfigTest, RefusesASubsystemServingAnotherDevice) {
  subsystem(spec().nqn, "/dev/nullb0");
  Nvmet t(root);
  NvmetOwned owned;
  std::vector<NvmetOp> ops;
  std::string err;
  EXPECT_FALSE(t.plan_create(spec(), &owned, &ops, &err));
  EXPECT_NE(err.find("already serves /dev/nullb0"), std::string::npos) << err;
}

TEST_F(NvmetConfigTest, RemovesOnlyWhatItMadeAndNothingElseUses) {
  const std::string nqn = spec().nqn, other = "nqn.other:sub";
  subsystem(nqn, "/dev/ublkb0");
  subsystem(other, "/dev/nullb0");
  for (auto h : {"nqn.host:a", "nqn.host:b", "nqn.host:admin"}) fs::create_directory(root + "/hosts/" + h);
  link("subsystems/" + nqn + "/allowed_hosts/nqn.host:a", "hosts/nqn.host:a");
  link("subsystems/" + nqn + "/allowed_hosts/nqn.host:b", "hosts/nqn.host:b");
  link("subsystems/" + nqn + "/allowed_hosts/nqn.host:admin", "hosts/nqn.host:admin");
  link("subsystems/" + other + "/allowed_hosts/nqn.host:b", "hosts/nqn.host:b");
  port("1", "127.0.0.1", "4420");  // made by gpuraid, now shared with `other`
  port("2", "127.0.0.1", "4421");  // someone else's, also serving ours
  link("ports/1/subsystems/" + nqn, "subsystems/" + nqn);
  link("ports/1/subsystems/" + other, "subsystems/" + other);
  link("ports/2/subsystems/" + nqn, "subsystems/" + nqn);
  Nvmet t(root);
  // Made by gpuraid: port 1, hosts a and b (not admin's).
  auto ops = t.plan_remove(nqn, NvmetOwned{"1", true, {"nqn.host:a", "nqn.host:b"}});
  const std::string s = "subsystems/" + nqn;
  EXPECT_TRUE(has(ops, NvmetOp::Unlink, "ports/1/subsystems/" + nqn));
  EXPECT_TRUE(has(ops, NvmetOp::Unlink, "ports/2/subsystems/" + nqn));
  EXPECT_TRUE(has(ops, NvmetOp::Rmdir, s + "/namespaces/1"));
  EXPECT_TRUE(has(ops, NvmetOp::Rmdir, s));
  EXPECT_TRUE(has(ops, NvmetOp::Rmdir, "hosts/nqn.host:a"));
  EXPECT_FALSE(has(ops, NvmetOp::Rmdir, "hosts/nqn.host:b")) << "still allowed by " << other;
  EXPECT_FALSE(has(ops, NvmetOp::Rmdir, "hosts/nqn.host:admin")) << "not made by gpuraid";
  EXPECT_FALSE(has(ops, NvmetOp::Rmdir, "ports/1")) << "still serves " << other;
  EXPECT_FALSE(has(ops, NvmetOp::Rmdir, "ports/2")) << "not made by gpuraid";
  for (const auto& o : ops) EXPECT_EQ(o.path.find(other), std::string::npos) << "touches " << o.path;
  // The namespace and links go before the subsystem, so the kernel lets it go.
  size_t ns = 0, sub = 0;
  for (size_t i = 0; i < ops.size(); i++) {
    if (ops[i].path == root + "/" + s + "/namespaces/1") ns = i;
    if (ops[i].path == root + "/" + s && ops[i].kind == NvmetOp::Rmdir) sub = i;
  }
  EXPECT_LT(ns, sub);
  // Once `other` leaves port 1, the port goes with ours.
  fs::remove(root + "/ports/1/subsystems/" + other);
  EXPECT_TRUE(has(t.plan_remove(nqn, NvmetOwned{"1", true, {}}), NvmetOp::Rmdir, "ports/1"));
  EXPECT_FALSE(has(t.plan_remove(nqn, NvmetOwned{"1", false, {}}), NvmetOp::Rmdir, "ports/1"));
}

TEST_F(NvmetConfigTest, AFailedStepUndoesTheStepsBeforeIt) {
  std::vector<NvmetOp> ops = {{NvmetOp::Mkdir, root + "/subsystems/x", ""},
                              {NvmetOp::Symlink, root + "/hosts/l", root + "/subsystems/x"},
                              {NvmetOp::Write, root + "/subsystems/x/missing/attr", "1"}};
  std::string err;
  EXPECT_FALSE(Nvmet::apply(ops, &err));
  EXPECT_NE(err.find("missing/attr"), std::string::npos) << err;
  EXPECT_FALSE(fs::exists(root + "/subsystems/x"));
  EXPECT_FALSE(fs::is_symlink(root + "/hosts/l"));
  ops.pop_back();
  EXPECT_TRUE(Nvmet::apply(ops, &err)) << err;
  EXPECT_TRUE(fs::is_directory(root + "/subsystems/x"));
}

// DH-HMAC-CHAP: the key goes into the host entries the daemon makes (and
// back into them after a restart); an entry that serves other subsystems
// without that key is refused, since nvmet keeps the key per host.
const char* kKey = "DHHC-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:";

TEST_F(NvmetConfigTest, SetsTheKeyOnTheHostEntriesItMakes) {
  auto x = spec();
  x.hosts = {"nqn.host:a", "nqn.host:b"};
  x.dhchap_key = kKey;
  Nvmet t(root);
  NvmetOwned owned;
  std::vector<NvmetOp> ops;
  std::string err;
  ASSERT_TRUE(t.plan_create(x, &owned, &ops, &err)) << err;
  for (auto h : {"nqn.host:a", "nqn.host:b"}) {
    const std::string key = root + "/hosts/" + h + "/dhchap_key";
    size_t mk = ops.size(), wr = ops.size(), ln = ops.size();
    for (size_t i = 0; i < ops.size(); i++) {
      if (ops[i].kind == NvmetOp::Mkdir && ops[i].path == root + "/hosts/" + h) mk = i;
      if (ops[i].kind == NvmetOp::Write && ops[i].path == key) wr = i;
      if (ops[i].kind == NvmetOp::Symlink && ops[i].path.find("/allowed_hosts/" + std::string(h)) != std::string::npos) ln = i;
    }
    ASSERT_LT(wr, ops.size()) << "no key written for " << h;
    EXPECT_EQ(ops[wr].value, kKey);
    EXPECT_TRUE(ops[wr].secret);
    EXPECT_LT(mk, wr);
    EXPECT_LT(wr, ln) << "the host is allowed only once its key is set";
  }
  // Without a key nothing is written under hosts/.
  ops.clear();
  NvmetOwned o2;
  ASSERT_TRUE(t.plan_create(spec(), &o2, &ops, &err)) << err;
  for (const auto& o : ops) EXPECT_FALSE(o.kind == NvmetOp::Write && o.path.find("/hosts/") != std::string::npos) << o.path;
}

TEST_F(NvmetConfigTest, PutsTheKeyBackOnlyWhereItIsNotSet) {
  auto x = spec();
  x.dhchap_key = kKey;
  subsystem(x.nqn, "/dev/ublkb0");
  fs::create_directory(root + "/hosts/nqn.host:a");
  put("hosts/nqn.host:a/dhchap_key", "");  // as the kernel shows an entry without a key
  link("subsystems/" + x.nqn + "/allowed_hosts/nqn.host:a", "hosts/nqn.host:a");
  port("1", "127.0.0.1", "4420");
  link("ports/1/subsystems/" + x.nqn, "subsystems/" + x.nqn);
  Nvmet t(root);
  NvmetOwned owned{"1", true, {"nqn.host:a"}};  // the daemon's entry
  std::vector<NvmetOp> ops;
  std::string err;
  ASSERT_TRUE(t.plan_create(x, &owned, &ops, &err)) << err;
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_TRUE(ops[0] == (NvmetOp{NvmetOp::Write, root + "/hosts/nqn.host:a/dhchap_key", kKey, true}));
  put("hosts/nqn.host:a/dhchap_key", kKey);  // the kernel has it (a restart after SIGKILL)
  ops.clear();
  ASSERT_TRUE(t.plan_create(x, &owned, &ops, &err)) << err;
  EXPECT_TRUE(ops.empty());
}

TEST_F(NvmetConfigTest, RefusesAKeyOnSomeoneElsesHostEntry) {
  auto x = spec();
  x.dhchap_key = kKey;
  fs::create_directory(root + "/hosts/nqn.host:a");
  put("hosts/nqn.host:a/dhchap_key", "");
  Nvmet t(root);
  NvmetOwned owned;
  std::vector<NvmetOp> ops;
  std::string err;
  EXPECT_FALSE(t.plan_create(x, &owned, &ops, &err));
  EXPECT_NE(err.find("without a DH-HMAC-CHAP key"), std::string::npos) << err;
  put("hosts/nqn.host:a/dhchap_key", "DHHC-1:00:another:");
  EXPECT_FALSE(t.plan_create(x, &owned, &ops, &err));
  EXPECT_NE(err.find("another DH-HMAC-CHAP key"), std::string::npos) << err;
  EXPECT_EQ(err.find("DHHC-1"), std::string::npos) << "a key in a message: " << err;
  // The same key: the entry is shared as it is.
  put("hosts/nqn.host:a/dhchap_key", kKey);
  ops.clear();
  ASSERT_TRUE(t.plan_create(x, &owned, &ops, &err)) << err;
  for (const auto& o : ops) EXPECT_EQ(o.path.find("/hosts/"), std::string::npos) << o.path;
  EXPECT_TRUE(owned.hosts_created.empty());
}

TEST(NvmetApply, NeverShowsASecretInAnError) {
  std::string err;
  // /dev/full takes the open and refuses the write (ENOSPC).
  EXPECT_FALSE(Nvmet::apply({{NvmetOp::Write, "/dev/full", kKey, true}}, &err));
  EXPECT_NE(err.find("DH-HMAC-CHAP key"), std::string::npos) << err;
  EXPECT_EQ(err.find("DHHC-1"), std::string::npos) << err;
  EXPECT_FALSE(Nvmet::apply({{NvmetOp::Write, "/dev/full", "1"}}, &err));
  EXPECT_NE(err.find("cannot write 1 to /dev/full"), std::string::npos) << err;
}

TEST_F(NvmetConfigTest, SaysWhatIsMissing) {
  EXPECT_EQ(Nvmet(root).unavailable(), "");
  EXPECT_NE(Nvmet(root + "/none").unavailable(), "");
  EXPECT_EQ(Nvmet::transport_missing("nosuchtransport"), "modprobe nvmet-nosuchtransport");
}

// Connected hosts (vd show, metrics): one debugfs directory per controller
// when the kernel has nvmet debugfs, else the established TCP peers of the port.
TEST_F(NvmetConfigTest, ConnectedControllersFromDebugfs) {
  const NvmetExport x = spec();
  const std::string dbg = "debug/" + x.nqn;
  for (auto [c, host, addr, state] : {std::tuple{"ctrl1", "nqn.host:a", "127.0.0.1", "ready"},
                                      std::tuple{"ctrl2", "nqn.host:b", "192.0.2.7", "ready|shutdown"}}) {
    fs::create_directories(root + "/" + dbg + "/" + c);
    put(dbg + "/" + c + "/hostnqn", host);
    put(dbg + "/" + c + "/host_traddr", addr);
    put(dbg + "/" + c + "/state", state);
  }
  fs::create_directories(root + "/" + dbg + "/other");  // not a controller
  auto hosts = Nvmet(root, root + "/debug", root + "/net").connected(x.nqn, x);
  ASSERT_EQ(hosts.size(), 2u);
  EXPECT_EQ(hosts[0].host_nqn, "nqn.host:a");
  EXPECT_EQ(hosts[0].address, "127.0.0.1");
  EXPECT_EQ(hosts[0].state, "ready");
  EXPECT_EQ(hosts[1].host_nqn, "nqn.host:b");
  EXPECT_EQ(hosts[1].state, "ready|shutdown");
  EXPECT_TRUE(Nvmet(root, root + "/debug", root + "/net").connected("nqn.other", x).empty());
}

TEST_F(NvmetConfigTest, ConnectedPeersFromTheTcpTable) {
  const NvmetExport x = spec();  // port 4420 = 0x1144
  fs::create_directories(root + "/net");
  const char* hdr = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n";
  std::ofstream(root + "/net/tcp") << hdr
      << "   0: 0100007F:1144 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1\n"  // listening
      << "   1: 0100007F:1144 0100007F:C350 01 00000000:00000000 00:00000000 00000000     0        0 2\n"
      << "   2: 0100007F:1144 0100007F:C351 01 00000000:00000000 00:00000000 00000000     0        0 3\n"
      << "   3: 0100007F:1145 070200C0:C352 01 00000000:00000000 00:00000000 00000000     0        0 4\n"  // another port
      << "   4: 0100007F:1144 070200C0:C353 06 00000000:00000000 00:00000000 00000000     0        0 5\n";  // TIME_WAIT
  std::ofstream(root + "/net/tcp6") << hdr
      << "   0: 00000000000000000000000001000000:1144 00000000000000000000000001000000:D000 01 0:0 0:0 0 0 0 6\n";
  auto hosts = Nvmet(root, root + "/debug", root + "/net").connected(x.nqn, x);
  ASSERT_EQ(hosts.size(), 2u);
  EXPECT_EQ(hosts[0].host_nqn, "");
  EXPECT_EQ(hosts[0].address, "127.0.0.1");
  EXPECT_EQ(hosts[0].state, "2 TCP connections");
  EXPECT_EQ(hosts[1].address, "::1");
  EXPECT_EQ(hosts[1].state, "1 TCP connection");
}

// The metrics of an NVMe-oF export: its identity, how many hosts are
// connected, and each (host, address, state) with its count.
TEST(NvmfMetrics, ExportAndConnectedHosts) {
  std::vector<gpuraid::v1::Volume> vols(3);
  vols[0].set_id("vd0");
  vols[0].set_group("r5");
  auto* e = vols[0].mutable_export_();
  e->set_kind(gpuraid::v1::EXPORT_KIND_NVMF);
  auto* n = e->mutable_nvmf();
  n->set_nqn("nqn.2026-11.io.gpuraid:vd:x");
  n->set_transport("tcp");
  n->set_traddr("127.0.0.1");
  n->set_trsvcid("4420");
  n->set_port_id("1");
  n->set_dhchap(true);
  for (auto [h, a] : {std::pair{"nqn.host:a", "127.0.0.1"}, std::pair{"nqn.host:a", "127.0.0.1"},
                      std::pair{"nqn.host:b", "192.0.2.7"}}) {
    auto* c = n->add_connected_hosts();
    c->set_host_nqn(h);
    c->set_address(a);
    c->set_state("ready");
  }
  vols[1] = vols[0];  // a second export, on IPv6, nobody connected
  vols[1].set_id("vd1");
  vols[1].mutable_export_()->mutable_nvmf()->set_nqn("nqn.2026-11.io.gpuraid:vd:y");
  vols[1].mutable_export_()->mutable_nvmf()->set_traddr("::1");
  vols[1].mutable_export_()->mutable_nvmf()->clear_connected_hosts();
  vols[2].set_id("vd2");  // not exported over NVMe-oF: no series
  vols[2].mutable_export_()->set_kind(gpuraid::v1::EXPORT_KIND_NBD);
  PromText p;
  nvmf_metrics(p, vols);
  const std::string t = p.str(), l0 = R"(vd="vd0",dg="r5",nqn="nqn.2026-11.io.gpuraid:vd:x")";
  for (const std::string& want :
       {"gpuraid_vd_nvmf_info{" + l0 + R"(,transport="tcp",address="127.0.0.1:4420",port="1",dhchap="1",allow_any_host="0"} 1)",
        std::string(R"(gpuraid_vd_nvmf_info{vd="vd1",dg="r5",nqn="nqn.2026-11.io.gpuraid:vd:y",transport="tcp",address="[::1]:4420")"),
        "gpuraid_vd_nvmf_connected_hosts{" + l0 + "} 3",
        std::string(R"(gpuraid_vd_nvmf_connected_hosts{vd="vd1",dg="r5",nqn="nqn.2026-11.io.gpuraid:vd:y"} 0)"),
        "gpuraid_vd_nvmf_host_state{" + l0 + R"(,host="nqn.host:a",address="127.0.0.1",state="ready"} 2)",
        "gpuraid_vd_nvmf_host_state{" + l0 + R"(,host="nqn.host:b",address="192.0.2.7",state="ready"} 1)"})
    EXPECT_NE(t.find(want), std::string::npos) << want << "\nnot in:\n" << t;
  EXPECT_EQ(t.find("vd2"), std::string::npos) << t;
}

TEST(NvmetIdentity, StablePerVolumeAndDistinct) {
  NvmetExport a, b, c;
  nvmet_identity("g1", "vd0", &a);
  nvmet_identity("g1", "vd0", &b);
  nvmet_identity("g1", "vd1", &c);
  EXPECT_EQ(a.uuid, b.uuid);
  EXPECT_EQ(a.nguid, b.nguid);
  EXPECT_EQ(a.serial, b.serial);
  EXPECT_NE(a.uuid, c.uuid);
  EXPECT_NE(a.uuid, a.nguid);
  ASSERT_EQ(a.uuid.size(), 36u);
  EXPECT_EQ(a.uuid[14], '8');  // version 8
  EXPECT_LE(a.serial.size(), 20u);
}

TEST(NvmetProbe, PortInUseAndAddressNotHere) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(listen(fd, 1), 0);
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  const std::string port = std::to_string(ntohs(a.sin_port));
  std::string why = nvmet_probe_listen("ipv4", "127.0.0.1", port);
  EXPECT_NE(why.find("in use by another application"), std::string::npos) << why;
  close(fd);
  EXPECT_EQ(nvmet_probe_listen("ipv4", "127.0.0.1", port), "");
  why = nvmet_probe_listen("ipv4", "192.0.2.1", "4420");  // TEST-NET-1: on no host
  EXPECT_NE(why.find("not an address of this host"), std::string::npos) << why;
}

}  // namespace
