// gpuraid pd discover|connect|disconnect: NVMe over Fabrics (TCP) targets.
// The daemon checks every field; the CLI only bounds the obvious.
#include <memory>

#include "cli/cli.h"
#include "cli/output.h"

namespace gpuraid::cli {

namespace {

struct Address {
  std::string transport = "tcp", traddr, trsvcid = "4420";
  void add_to(CLI::App* s) {
    s->add_option("--transport,-t", transport, "transport (tcp)");
    s->add_option("--traddr,-a", traddr, "target address (IPv4 or IPv6)")->required();
    s->add_option("--trsvcid,-s", trsvcid, "target port (default 4420)");
  }
  void to(v1::FabricsAddress* a) const {
    a->set_transport(transport);
    a->set_traddr(traddr);
    a->set_trsvcid(trsvcid);
  }
};

}  // namespace

void add_pd_fabrics_commands(Cli& c, CLI::App* pd) {
  {
    auto a = std::make_shared<Address>();
    auto* s = pd->add_subcommand("discover", "list the subsystems an NVMe-oF target offers (its discovery log)");
    a->add_to(s);
    s->callback([&c, a] {
      c.action = [&c, a](Client& cl) {
        v1::FabricsDiscoverRequest q;
        a->to(q.mutable_address());
        v1::FabricsDiscoverResponse r;
        if (int rc = cl.call_on(cl.fabrics(), &v1::Fabrics::Stub::Discover, q, &r)) return rc;
        if (c.g.json) return print_json(r), int(kOk);
        Table t({"SUBTYPE", "TRANSPORT", "ADDRESS", "PORT", "PORTID", "NQN"});
        for (const auto& e : r.entries())
          t.add({e.subtype(), e.transport(), e.traddr(), e.trsvcid(), std::to_string(e.portid()), e.subnqn()});
        t.print();
        return int(kOk);
      };
    });
  }
  {
    struct A : Address {
      std::string nqn;
      uint32_t ctrl_loss = 0, reconnect = 0, fast_fail = 0;
    };
    auto a = std::make_shared<A>();
    auto* s = pd->add_subcommand("connect", "connect an NVMe-oF subsystem; its namespaces become drives");
    a->add_to(s);
    s->add_option("--nqn,-n", a->nqn, "subsystem NQN")->required();
    s->add_option("--ctrl-loss-tmo", a->ctrl_loss,
                  "seconds a lost path is retried (the member is missing meanwhile, then failed); default 600")
        ->check(CLI::Range(1u, 86400u));
    s->add_option("--reconnect-delay", a->reconnect, "seconds between reconnect attempts (default 10)")
        ->check(CLI::Range(1u, 86400u));
    s->add_option("--fast-io-fail-tmo", a->fast_fail,
                  "seconds after which I/O to a lost path fails (the group goes on degraded); default 5")
        ->check(CLI::Range(1u, 86400u));
    s->callback([&c, a] {
      c.action = [&c, a](Client& cl) {
        v1::FabricsConnectRequest q;
        a->to(q.mutable_address());
        q.set_nqn(a->nqn);
        q.set_ctrl_loss_tmo_s(a->ctrl_loss);
        q.set_reconnect_delay_s(a->reconnect);
        q.set_fast_io_fail_tmo_s(a->fast_fail);
        v1::FabricsConnectResponse r;
        if (int rc = cl.call_on(cl.fabrics(), &v1::Fabrics::Stub::Connect, q, &r)) return rc;
        if (c.g.json) return print_json(r), int(kOk);
        printf("connected %s as %s (host %s)\n", a->nqn.c_str(), r.controller().c_str(), r.host_nqn().c_str());
        Table t({"ID", "PATH", "SIZE"});
        for (const auto& d : r.drives()) t.add({d.id(), d.path(), size_str(d.size_bytes())});
        t.print();
        return int(kOk);
      };
    });
  }
  {
    struct A : Address {
      std::string nqn;
    };
    auto a = std::make_shared<A>();
    auto* s = pd->add_subcommand("disconnect", "remove a connected subsystem's drives (free ones only) and disconnect it");
    a->add_to(s);
    s->add_option("--nqn,-n", a->nqn, "subsystem NQN")->required();
    s->callback([&c, a] {
      c.action = [&c, a](Client& cl) {
        v1::FabricsDisconnectRequest q;
        a->to(q.mutable_address());
        q.set_nqn(a->nqn);
        v1::FabricsDisconnectResponse r;
        if (int rc = cl.call_on(cl.fabrics(), &v1::Fabrics::Stub::Disconnect, q, &r)) return rc;
        if (c.g.json) return print_json(r), int(kOk);
        std::string ctrls, drives;
        for (const auto& n : r.controllers()) ctrls += (ctrls.empty() ? "" : ", ") + n;
        for (const auto& d : r.removed_drives()) drives += (drives.empty() ? "" : ", ") + d;
        printf("disconnected %s (%s); drives removed: %s\n", a->nqn.c_str(), ctrls.empty() ? "-" : ctrls.c_str(),
               drives.empty() ? "none" : drives.c_str());
        return int(kOk);
      };
    });
  }
}

}  // namespace gpuraid::cli
