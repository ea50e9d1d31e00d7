// gpuraid: the command-line client of gpuraidd. Noun-verb commands:
//   gpuraid pd add /dev/nvme0n1        gpuraid dg create --level 6 --strip 64K pd0 pd1 ...
//   gpuraid vd create dg0 --size 1T    gpuraid vd export vd0 --ublk
//   gpuraid dg show dg0 --watch        gpuraid events --follow     gpuraid stats --watch
//   gpuraid status
// Exit codes: 0 ok, 1 the daemon refused or failed the request, 2 usage
// error, 3 the daemon could not be reached, 4 data verification failed.
#include "cli/cli.h"
#include "engine/units.h"

namespace gpuraid::cli {

const CLI::Validator kSize(
    [](std::string& s) {
      uint64_t v;
      return parse_size(s, &v) ? std::string() : "'" + s + "' is not a size (e.g. 4096, 64K, 1MiB, 10G, 1T)";
    },
    "SIZE");

uint64_t size_arg(const std::string& s) {
  uint64_t v = 0;
  parse_size(s, &v);
  return v;
}

}  // namespace gpuraid::cli

using namespace gpuraid::cli;

int main(int argc, char** argv) {
  Cli c;
  CLI::App& app = c.app;
  app.fallthrough();  // global options may follow the subcommand
  app.require_subcommand(1);
  app.add_option("--socket", c.g.socket, "gpuraidd's Unix socket (default: $GPURAID_SOCKET, else /run/gpuraid/gpuraid.sock)");
  auto* connect = app.add_option("--connect", c.g.connect, "reach gpuraidd over TCP at HOST:PORT (TLS)");
  app.add_option("--tls-ca", c.g.tls_ca, "CA certificate (PEM) that the daemon's certificate chains to")
      ->needs(connect)->check(CLI::ExistingFile);
  app.add_option("--tls-cert", c.g.tls_cert, "client certificate (PEM)")->needs(connect)->check(CLI::ExistingFile);
  app.add_option("--tls-key", c.g.tls_key, "client private key (PEM)")->needs(connect)->check(CLI::ExistingFile);
  app.add_option("--tls-server-name", c.g.tls_server_name, "expected name in the daemon's certificate")->needs(connect);
  app.add_flag("--json", c.g.json, "print protobuf JSON instead of tables");
  app.add_option("--timeout", c.g.timeout_s, "seconds to wait for an answer")->check(CLI::Range(0.1, 86400.0));
  add_info_commands(c);
  add_pd_commands(c);
  add_dg_commands(c);
  add_vd_commands(c);
  add_status_command(c);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? kOk : kUsage;
  }
  if (!c.g.socket.empty() && !c.g.connect.empty()) {
    fprintf(stderr, "gpuraid: give --socket or --connect, not both\n");
    return kUsage;
  }
  if (!c.action) {
    fprintf(stderr, "gpuraid: say what to do (see gpuraid --help)\n");
    return kUsage;
  }
  Client client(c.g);
  return c.action(client);
}
