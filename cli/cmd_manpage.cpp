// gpuraid manpage: gpuraid(8) in roff, generated from the command tree (the
// build writes build/man/gpuraid.8 with it). Hidden from --help and completion.
#include "cli/cli.h"
#include "cli/exit_codes.h"
#include "packaging/manpage.h"

namespace gpuraid::cli {

namespace {

man::Page page() {
  man::Page p;
  p.name = "gpuraid";
  p.source = std::string("gpuraid ") + GPURAID_VERSION;
  p.synopsis = "\\fBgpuraid\\fR [\\fIGLOBAL OPTIONS\\fR] \\fICOMMAND\\fR [\\fIARGUMENTS\\fR] [\\fIOPTIONS\\fR]";
  p.description = man::escape(
      "gpuraid is the operator's command for gpuraidd(8), the gpuraid RAID daemon: physical drives (pd), drive "
      "groups (dg, RAID 0, 1, 10, 5, 6 and k+m erasure coding), virtual drives (vd) and their exports as "
      "/dev/ublkbN block devices or over NBD. It talks to the daemon over its Unix socket (or TCP with TLS). "
      "Global options may follow the command. With --json every command prints one JSON document on stdout "
      "(events: one object a line) and errors as a JSON object on stderr.");
  std::vector<std::pair<std::string, std::string>> codes;
  for (const auto& e : kExitCodes) codes.emplace_back(std::to_string(int(e.code)), e.meaning);
  p.sections.push_back({"EXIT STATUS", man::tagged_list(codes)});
  p.sections.push_back({"ENVIRONMENT", man::tagged_list({{"GPURAID_SOCKET", "the daemon's socket when --socket is not given"},
                                                    {"GPURAID_TIMEOUT", "seconds to wait for an answer when --timeout is not given (default 60)"}})});
  p.sections.push_back(
      {"FILES", man::tagged_list({{"/run/gpuraid/gpuraid.sock", "gpuraidd's API socket (group gpuraid, mode 0660: members of "
                                                                  "the gpuraid group may use gpuraid without root)"},
                                  {"/usr/share/bash-completion/completions/gpuraid", "bash completion (also: gpuraid completion bash)"},
                                  {"/usr/share/doc/gpuraid/OPERATIONS.md", "the operator's guide"}})});
  p.sections.push_back({"EXAMPLES", man::escape(
      "A RAID 6 group over six NVMe namespaces, a volume on it exported as a block device:\n") +
      ".PP\n.nf\n.RS\n" + man::escape(
      "gpuraid pd add /dev/nvme0n1     # once per drive: pd0 .. pd5\n"
      "gpuraid dg create --level 6 --strip 64K --name r6 pd0 pd1 pd2 pd3 pd4 pd5\n"
      "gpuraid vd create r6 --size 1T --name v1\n"
      "gpuraid vd export v1 --ublk      # /dev/ublkbN\n"
      "gpuraid status\n") + ".RE\n.fi\n.PP\n" + man::escape(
      "A failed member replaced by a new drive, and the rebuild followed:\n") +
      ".PP\n.nf\n.RS\n" + man::escape(
      "gpuraid pd add /dev/nvme6n1     # pd6\n"
      "gpuraid dg replace r6 --old pd2 --with pd6\n"
      "gpuraid dg show r6 --watch\n"
      "gpuraid pd remove pd2\n") + ".RE\n.fi\n.PP\n" + man::escape("A scrub, and its findings:\n") +
      ".PP\n.nf\n.RS\n" + man::escape("gpuraid dg scrub r6 start\ngpuraid dg show r6\n") + ".RE\n.fi\n"});
  p.sections.push_back({"SEE ALSO", "\\fBgpuraidd\\fR(8), \\fBmdadm\\fR(8), \\fBfio\\fR(1)"});
  return p;
}

}  // namespace

void add_manpage_command(Cli& c) {
  auto* s = c.app.add_subcommand("manpage", "print gpuraid(8) (roff)");
  s->group("");  // hidden: a build step, not an operator's command
  s->callback([&c] {
    c.action = [&c](Client&) {
      printf("%s", man::render(c.app, page()).c_str());
      return int(kOk);
    };
  });
}

}  // namespace gpuraid::cli
