// gpuraid: the command-line client of gpuraidd. Noun-verb commands:
//   gpuraid pd add /dev/nvme0n1        gpuraid dg create --level 6 --strip 64K pd0 pd1 ...
//   gpuraid vd create dg0 --size 1T    gpuraid vd export vd0 --ublk
//   gpuraid dg show dg0 --watch        gpuraid events --follow     gpuraid stats --watch
// Exit codes: cli/exit_codes.h (printed by --help).
#include <cstring>

#include "cli/cli.h"
#include "cli/completion.h"
#include "cli/errors.h"
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

namespace {

const char* kFooter =
    "Output: tables for people. With --json, one JSON document on stdout (events: JSON Lines, one object a line):\n"
    "numbers are JSON numbers, enum values the words the tables print (states: docs/STATES.md). An error is a\n"
    "message on stderr; with --json one JSON object on stderr: {\"error\": MESSAGE, \"kind\": KIND, \"code\": EXIT CODE}.\n";

std::string command_path(const CLI::App* a) {
  std::string p;
  for (; a && a->get_parent(); a = a->get_parent()) p = a->get_name() + (p.empty() ? "" : " " + p);
  return p;
}

std::string subcommand_names(const CLI::App* a) {
  std::string s;
  for (const CLI::App* sub : a->get_subcommands([](const CLI::App* x) { return !x->get_group().empty(); }))
    s += (s.empty() ? "" : ", ") + sub->get_name();
  return s;
}

// A command line that names no known subcommand where one is needed:
// CLI11 says "A subcommand is required"; say which word is not a command.
int explain_missing_subcommand(CLI::App& app, const CLI::ParseError& e) {
  CLI::App* at = &app;  // the deepest command given
  for (;;) {
    auto given = at->get_subcommands();
    if (given.empty()) break;
    at = given.front();
  }
  if (at->get_subcommands([](CLI::App*) { return true; }).empty()) return -1;  // a leaf: CLI11's message stands
  std::string word;
  for (const auto& r : app.remaining(true))
    if (!r.empty() && r[0] != '-') {
      word = r;
      break;
    }
  const std::string path = command_path(at);
  const std::string where = path.empty() ? "gpuraid" : "gpuraid " + path;
  if (!word.empty())
    return usage_error("unknown command '" + (path.empty() ? "" : path + " ") + word + "' (" + where +
                       " commands: " + subcommand_names(at) + "; see " + where + " --help)");
  return usage_error(where + ": say what to do: " + subcommand_names(at) + " (see " + where + " --help)");
}

}  // namespace
}  // namespace gpuraid::cli

using namespace gpuraid::cli;

int main(int argc, char** argv) {
  Cli c;
  CLI::App& app = c.app;
  // Errors are JSON from the start when --json is anywhere on the line.
  for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
    if (strcmp(argv[i], "--json") == 0) set_json_errors(true);
  app.fallthrough();  // global options may follow the subcommand
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("gpuraid ") + GPURAID_VERSION);
  app.footer(std::string(kFooter) + exit_codes_text());
  app.add_option("--socket", c.g.socket, "gpuraidd's Unix socket (default: $GPURAID_SOCKET, else /run/gpuraid/gpuraid.sock)");
  auto* connect = app.add_option("--connect", c.g.connect, "reach gpuraidd over TCP at HOST:PORT (TLS)");
  app.add_option("--tls-ca", c.g.tls_ca, "CA certificate (PEM) that the daemon's certificate chains to")
      ->needs(connect)->check(CLI::ExistingFile);
  app.add_option("--tls-cert", c.g.tls_cert, "client certificate (PEM)")->needs(connect)->check(CLI::ExistingFile);
  app.add_option("--tls-key", c.g.tls_key, "client private key (PEM)")->needs(connect)->check(CLI::ExistingFile);
  app.add_option("--tls-server-name", c.g.tls_server_name, "expected name in the daemon's certificate")->needs(connect);
  app.add_flag("--json", c.g.json, "JSON for scripts: numbers as numbers, enum values as the tables' words; errors as JSON on stderr");
  // From the environment too: scripts that run a slow (sanitized) daemon set it once.
  app.add_option("--timeout", c.g.timeout_s, "seconds to wait for an answer (default 60)")
      ->envname("GPURAID_TIMEOUT")
      ->check(CLI::Range(0.1, 86400.0));
  add_info_commands(c);
  add_pd_commands(c);
  add_dg_commands(c);
  add_vd_commands(c);
  add_completion_command(c);
  add_status_command(c);
  add_manpage_command(c);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    if (dynamic_cast<const CLI::RequiredError*>(&e) || dynamic_cast<const CLI::ExtrasError*>(&e))
      if (int rc = explain_missing_subcommand(app, e); rc >= 0) return rc;
    return usage_error(std::string(e.what()) + " (see gpuraid --help)");
  }
  if (!c.g.socket.empty() && !c.g.connect.empty()) return usage_error("give --socket or --connect, not both");
  if (!c.action) return usage_error("say what to do (see gpuraid --help)");
  Client client(c.g);
  return c.action(client);
}
