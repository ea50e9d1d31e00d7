// gpuraid pd add|list|show|remove|fail|spare|unspare (discover|connect|disconnect: cmd_pd_fabrics.cpp; wipe: cmd_back.cpp)
#include <algorithm>
#include <memory>
#include <type_traits>

#include "cli/lookalike.h"
#include "cli/cli.h"
#include "cli/cmd_pd_examine.h"
#include "cli/cmd_pd_nvme.h"
#include "cli/errors.h"
#include "cli/id_command.h"
#include "cli/output.h"

namespace gpuraid::cli {

namespace {
std::string role(v1::DriveRole r) { return v1::api_word(r); }
std::string state(v1::DriveState s) { return v1::api_word(s); }
std::string dtype(v1::DriveType t) { return v1::api_word(t); }

void print_drive(const Globals& g, const v1::Drive& d) {
  if (g.json) return print_json(d);
  std::vector<std::pair<std::string, std::string>> kv{{"id", d.id()},
                {"path", d.path()},
                {"type", dtype(d.type())},
                {"size", size_str(d.size_bytes())},
                {"role", role(d.role())},
                {"state", state(d.state())},
                {"group", d.group().empty() ? "-" : d.group()},
                {"member", d.member_index() >= 0 ? std::to_string(d.member_index()) : "-"},
                {"uuid", d.uuid().empty() ? "-" : d.uuid()},
                {"note", d.note().empty() ? "-" : d.note()}};
  if (d.has_nvme()) nvme_fields(d.nvme(), &kv);
  print_fields(kv);
}

// A subcommand that takes one PD id: show and fail answer with the drive.
template <typename M>
void drive_command(Cli& c, CLI::App* pd, const char* name, const char* help, M rpc) {
  add_id_command<v1::DriveRef, v1::Drive>(c, pd, name, help, "drive", "drive id (pdN)", rpc,
                                         [&c](const v1::Drive& d, const std::string&) { print_drive(c.g, d); });
}
}  // namespace

void add_pd_commands(Cli& c) {
  auto* pd = c.app.add_subcommand("pd", "physical drives");
  pd->require_subcommand(1);

  {
    struct A {
      std::string path, type, size, id;
    };
    auto a = std::make_shared<A>();
    auto* s = pd->add_subcommand("add", "register a drive (block device, NVMe namespace, file)");
    s->add_option("path", a->path, "device or file path (absolute)")->required();
    s->add_option("--type", a->type, "file, block, mem, null or nvme-char (default: from the path)")
        ->check(CLI::IsMember({"file", "block", "mem", "null", "nvme-char"}));
    s->add_option("--size", a->size, "create the file (or mem drive) with this size")->check(kSize);
    s->add_option("--id", a->id, "id to give it (default pdN)");
    s->callback([&c, a] {
      c.action = [&c, a](Client& cl) {
        v1::AddDriveRequest q;
        q.set_path(a->path);
        v1::DriveType t = v1::DRIVE_TYPE_UNSPECIFIED;
        if (!a->type.empty()) {
          std::string name = upper(a->type);
          std::replace(name.begin(), name.end(), '-', '_');
          v1::DriveType_Parse("DRIVE_TYPE_" + name, &t);
        }
        q.set_type(t);
        if (!a->size.empty() && size_arg(a->size) == 0)  // 0 would read as "no size given"
          return usage_error("--size " + a->size + ": a drive of no bytes cannot be made");
        if (!a->size.empty()) q.set_create_size_bytes(size_arg(a->size));
        q.set_id(a->id);
        v1::Drive r;
        if (int rc = cl.call(&v1::Gpuraid::Stub::AddDrive, q, &r)) return rc;
        if (c.g.json) print_json(r);
        else printf("added %s: %s (%s, %s)\n", r.id().c_str(), r.path().c_str(), dtype(r.type()).c_str(),
                    size_str(r.size_bytes()).c_str());
        warn_if_lookalike(cl, NameKind::Drive, r.id());
        return int(kOk);
      };
    });
  }
  {
    auto* s = pd->add_subcommand("list", "list drives");
    s->callback([&c] {
      c.action = [&c](Client& cl) {
        v1::ListDrivesResponse r;
        if (int rc = cl.call(&v1::Gpuraid::Stub::ListDrives, v1::ListDrivesRequest(), &r)) return rc;
        if (c.g.json) return print_json(r), int(kOk);
        Table t({"ID", "PATH", "TYPE", "SIZE", "ROLE", "STATE", "GROUP", "MEMBER"});
        for (const auto& d : r.drives())
          t.add({d.id(), d.path(), dtype(d.type()), size_str(d.size_bytes()), role(d.role()), state(d.state()),
                 d.group().empty() ? "-" : d.group(), d.member_index() >= 0 ? std::to_string(d.member_index()) : "-"});
        t.print();
        return int(kOk);
      };
    });
  }
  add_pd_scan(c, pd);
  add_pd_examine(c, pd);
  drive_command(c, pd, "show", "show one drive", &v1::Gpuraid::Stub::GetDrive);
  add_id_command<v1::DriveRef, v1::Empty>(c, pd, "remove", "forget a drive that is in no group", "drive", "drive id (pdN)",
                                         &v1::Gpuraid::Stub::RemoveDrive, [](const v1::Empty&, const std::string& id) {
                                           printf("%s removed: forgotten by the daemon, its contents left as they are\n",
                                                  id.c_str());
                                         });
  drive_command(c, pd, "fail", "mark a drive failed (a member: its group goes on degraded)", &v1::Gpuraid::Stub::FailDrive);
  {
    struct A {
      std::string id, group;
      bool force = false;
    };
    auto a = std::make_shared<A>();
    auto* s = pd->add_subcommand("spare", "put a free drive into the spare pool (or dedicate it to a group)");
    s->add_option("drive", a->id, "drive id")->required();
    s->add_option("--group", a->group, "dedicate the spare to this group");
    s->add_flag("--force", a->force, "accept a drive that holds data");
    s->callback([&c, a] {
      c.action = [&c, a](Client& cl) {
        v1::SetDriveSpareRequest q;
        q.set_id(a->id);
        q.set_spare(true);
        q.set_group(a->group);
        q.set_force(a->force);
        v1::Drive r;
        if (int rc = cl.call(&v1::Gpuraid::Stub::SetDriveSpare, q, &r)) return rc;
        if (c.g.json) print_json(r);
        else if (r.role() == v1::DRIVE_ROLE_MEMBER)  // a degraded group took it from the pool at once
          printf("%s is a spare: %s took it for member %d and rebuilds onto it (gpuraid dg show %s --watch)\n",
                 r.id().c_str(), r.group().c_str(), r.member_index(), r.group().c_str());
        else printf("%s is a spare%s\n", r.id().c_str(), r.group().empty() ? " (global pool)" : (" of " + r.group()).c_str());
        return int(kOk);
      };
    });
  }
  {
    auto id = std::make_shared<std::string>();
    auto* s = pd->add_subcommand("unspare", "take a spare back: out of the pool, or out of its group (a dedicated "
                                            "spare: the group's spare slot is released and the drive wiped)");
    s->add_option("drive", *id, "drive id")->required();
    s->callback([&c, id] {
      c.action = [&c, id](Client& cl) {
        v1::SetDriveSpareRequest q;
        q.set_id(*id);
        q.set_spare(false);
        v1::Drive r;
        if (int rc = cl.call(&v1::Gpuraid::Stub::SetDriveSpare, q, &r)) return rc;
        if (c.g.json) print_json(r);
        else printf("%s is free\n", r.id().c_str());
        return int(kOk);
      };
    });
  }
  add_pd_wipe_command(c, pd);
  add_pd_fabrics_commands(c, pd);
}

}  // namespace gpuraid::cli
