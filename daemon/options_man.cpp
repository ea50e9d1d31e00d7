#include "daemon/options_man.h"

#ifndef GPURAID_VERSION
#define GPURAID_VERSION "0.0.0"
#endif

namespace gpuraid::daemon {

namespace {

std::string example(const std::string& text, const std::string& lines) {
  return man::escape(text) + "\n.PP\n.nf\n.RS\n" + man::escape(lines) + ".RE\n.fi\n.PP\n";
}

}  // namespace

man::Page daemon_man_page() {
  man::Page p;
  p.name = "gpuraidd";
  p.source = std::string("gpuraid ") + GPURAID_VERSION;
  p.synopsis = "\\fBgpuraidd\\fR \\-\\-state\\-dir \\fIDIR\\fR [\\fIOPTIONS\\fR]\n.br\n"
               "\\fBgpuraidd\\fR \\-\\-config \\fIFILE\\fR [\\fIOPTIONS\\fR]";
  p.description = man::escape(
      "gpuraidd is the gpuraid daemon: it assembles the drive groups recorded in its state directory, runs "
      "their I/O (io_uring member I/O, parity on the CPU with ISA-L or on a GPU with CUDA), exports virtual "
      "drives as ublk block devices (/dev/ublkbN) or over NBD, and serves the gRPC API that gpuraid(8) uses. "
      "It runs in the foreground and logs to stderr (or --log-file); the packaged systemd unit "
      "gpuraidd.service starts it with --config /etc/gpuraid/gpuraidd.conf.");
  p.sections.push_back(
      {"CONFIGURATION FILE",
       man::escape("--config FILE reads options from FILE: one \"key = value\" a line, the keys being the long option "
                   "names without the leading dashes (state-dir = /var/lib/gpuraid); flags take true or false; an "
                   "option given more than once (scan) as a list: scan = [\"/dev/disk/by-id\", \"/srv/drives\"]; "
                   "# starts a comment. Options given on the command line win over the file. An unknown key is an "
                   "error (exit status 2).")});
  p.sections.push_back({"SIGNALS", man::tagged_list({
      {"SIGTERM, SIGINT", "clean stop: exports end (ublk devices are deleted, or with --ublk-on-exit keep left "
                          "waiting with their queued I/O for the next daemon), groups are marked clean, exit status 0. "
                          "systemctl stop gpuraidd sends SIGTERM."},
      {"SIGHUP", "reopen the --log-file (log rotation)"},
      {"SIGKILL", "no data is lost: the write-intent bitmap resyncs what was in flight at the next start, and ublk "
                  "devices are recovered by the next daemon (same /dev/ublkbN)"}})});
  p.sections.push_back({"EXIT STATUS", man::tagged_list({
      {"0", "clean stop (SIGTERM or SIGINT), or --help/--version"},
      {"1", "failure at start: the state directory, the socket or the engine could not be set up"},
      {"2", "bad options or configuration file"}})});
  p.sections.push_back({"FILES", man::tagged_list({
      {"/etc/gpuraid/gpuraidd.conf", "the packaged configuration (a conffile)"},
      {"/var/lib/gpuraid/", "the state directory: the registry of drives, groups and volumes, events.jsonl (the event "
                            "log), gpuraidd.lock (one daemon per directory), NBD sockets by default"},
      {"/run/gpuraid/gpuraid.sock", "the API socket, group gpuraid, mode 0660"},
      {"/lib/systemd/system/gpuraidd.service", "the unit; gpuraid-scrub.timer starts a monthly scrub of every group"}})});
  p.sections.push_back({"EXAMPLES",
      example("As the systemd unit starts it:", "gpuraidd --config /etc/gpuraid/gpuraidd.conf\n") +
      example("By hand, with metrics on port 9400 and a hook for every event:",
              "gpuraidd --state-dir /var/lib/gpuraid --socket-group gpuraid --metrics 9400 \\\n"
              "    --event-hook /usr/libexec/gpuraid/gpuraid-alert\n") +
      example("A restart that keeps mounted ublk volumes (package upgrades do this with the packaged configuration):",
              "gpuraidd --config /etc/gpuraid/gpuraidd.conf --ublk-on-exit keep\n")});
  p.sections.push_back({"SEE ALSO", "\\fBgpuraid\\fR(8), \\fBsystemctl\\fR(1), \\fBmdadm\\fR(8)"});
  return p;
}

}  // namespace gpuraid::daemon
