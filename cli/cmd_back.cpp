// Ways back, as mdadm has them: gpuraid dg start [--force] (--assemble
// [--force]), dg readd (--re-add), pd wipe (--zero-superblock).
#include <memory>

#include "cli/cli.h"
#include "cli/output.h"

namespace gpuraid::cli {

void add_dg_back_commands(Cli& c, CLI::App* dg) {
  {
    struct A {
      std::vector<std::string> paths;
      std::string name;
      bool force = false;
    };
    auto a = std::make_shared<A>();
    auto* s = dg->add_subcommand("import", "take in a group this daemon does not know, from its drives (moved from "
                                           "another host, or a registry lost), with its virtual drives");
    s->add_option("drives", a->paths, "the group's drives (paths): every one that is here")->required();
    s->add_option("--name", a->name, "another name, when the group's own is taken here");
    s->add_flag("--force", a->force, "as dg start --force: also when it stopped uncleanly while degraded");
    s->footer("The drives are registered as PDs and the group assembled from their superblocks (as mdadm "
              "--assemble); its virtual drives come back from the volume table on its members, not exported. "
              "Nothing is written to the drives unless the group assembles; a refusal registers nothing.");
    s->callback([&c, a] {
      c.action = [&c, a](Client& cl) {
        v1::ImportGroupRequest q;
        for (const auto& p : a->paths) q.add_paths(absolute_path(p));
        q.set_name(a->name);
        q.set_force(a->force);
        v1::ImportGroupResponse r;
        if (int rc = cl.call(&v1::Gpuraid::Stub::ImportGroup, q, &r)) return rc;
        if (c.g.json) return print_json(r), int(kOk);
        printf("%s\n", r.message().c_str());
        for (const auto& d : r.drives()) printf("  %s  %s\n", d.id().c_str(), d.path().c_str());
        for (const auto& v : r.volumes())
          printf("  virtual drive %s: %s (gpuraid vd export %s ...)\n", v.id().c_str(), size_str(v.size_bytes()).c_str(),
                 v.id().c_str());
        return int(kOk);
      };
    });
  }
  {
    struct A {
      std::string name;
      bool force = false;
    };
    auto a = std::make_shared<A>();
    auto* s = dg->add_subcommand("start", "assemble an offline group again (e.g. once a missing drive is back)");
    s->add_option("group", a->name, "group name")->required();
    s->add_flag("--force", a->force,
                "also when it stopped uncleanly while degraded: the parity of its dirty regions may be stale, so "
                "data of the missing members there may read wrong (the answer says how much); then rebuild it");
    s->callback([&c, a] {
      c.action = [&c, a](Client& cl) {
        v1::StartGroupRequest q;
        q.set_name(a->name);
        q.set_force(a->force);
        v1::StartGroupResponse r;
        if (int rc = cl.call(&v1::Gpuraid::Stub::StartGroup, q, &r)) return rc;
        if (c.g.json) return print_json(r), int(kOk);
        const v1::Group& g = r.group();
        printf("%s: started, %s\n", g.name().c_str(), v1::api_word(g.state()).c_str());
        if (!r.risk().empty()) printf("forced: %s\n", r.risk().c_str());
        if (g.rebuild().running()) printf("rebuild running (gpuraid dg show %s --watch)\n", g.name().c_str());
        else
          for (const auto& m : g.members())
            if (m.state() == v1::DRIVE_STATE_FAILED)
              printf("member %u (%s) is failed: rebuild it with gpuraid dg replace %s --member %u --with PD, or put "
                     "its drive back with gpuraid dg readd %s %s\n",
                     m.index(), m.drive().c_str(), g.name().c_str(), m.index(), g.name().c_str(), m.drive().c_str());
        return int(kOk);
      };
    });
  }
  {
    struct A {
      std::string group, drive;
      bool force = false;
    };
    auto a = std::make_shared<A>();
    auto* s = dg->add_subcommand(
        "readd", "put a failed or missing member's own drive back (only what it missed is rebuilt when known)");
    s->add_option("group", a->group, "group name")->required();
    s->add_option("drive", a->drive, "the member's drive (PD id)")->required();
    s->add_flag("--force", a->force, "rebuild it in full even if it now holds other data");
    s->footer(
        "With the write-intent bitmap, a drive that still carries its member's superblock and left while the "
        "group ran gets only the regions written since rebuilt; otherwise (it left before the daemon started, "
        "or it no longer is that member) it is rebuilt in full, and the answer says why. "
        "'gpuraid dg replace GROUP --old PD --with PD' (the same drive) does the same.");
    s->callback([&c, a] {
      c.action = [&c, a](Client& cl) {
        v1::ReaddMemberRequest q;
        q.set_group(a->group);
        q.set_drive(a->drive);
        q.set_force(a->force);
        v1::ReaddMemberResponse r;
        if (int rc = cl.call(&v1::Gpuraid::Stub::ReaddMember, q, &r)) return rc;
        if (c.g.json) return print_json(r), int(kOk);
        printf("%s: %s re-added, %s rebuild: %s\n", r.group().name().c_str(), a->drive.c_str(),
               r.partial() ? "partial" : "full", r.message().c_str());
        return int(kOk);
      };
    });
  }
}

void add_pd_wipe_command(Cli& c, CLI::App* pd) {
  struct A {
    std::string id;
    bool force = false;
  };
  auto a = std::make_shared<A>();
  auto* s = pd->add_subcommand(
      "wipe", "zero a drive's gpuraid metadata (superblocks, bitmap) so it can be used again; it becomes a free drive");
  s->add_option("drive", a->id, "drive id")->required();
  s->add_flag("--force", a->force, "also a member of an offline group (what it holds for that group is lost)");
  s->footer(
      "Refused for an active member of a running group and for a dedicated spare (unspare it). A failed member "
      "of a running group is wiped in place (putting it back then rebuilds it in full).");
  s->callback([&c, a] {
    c.action = [&c, a](Client& cl) {
      v1::WipeDriveRequest q;
      q.set_id(a->id);
      q.set_force(a->force);
      v1::WipeDriveResponse r;
      if (int rc = cl.call(&v1::Gpuraid::Stub::WipeDrive, q, &r)) return rc;
      if (c.g.json) return print_json(r), int(kOk);
      printf("%s\n", r.message().c_str());
      return int(kOk);
    };
  });
}

}  // namespace gpuraid::cli
