// The CLI's shared pieces: the parsed global options, the action chosen by
// the subcommand (run after parsing), and the option helpers every command
// uses (sizes with units, object names).
#pragma once
#include <CLI/CLI.hpp>

#include <functional>
#include <string>

#include "cli/client.h"

namespace gpuraid::cli {

struct Cli {
  CLI::App app{"gpuraid: manage gpuraidd (physical drives, drive groups, virtual drives)", "gpuraid"};
  Globals g;
  std::function<int(Client&)> action;
};

// Validates "4096", "64K", "1MiB", "2G", "1T"...
extern const CLI::Validator kSize;
uint64_t size_arg(const std::string& s);  // after kSize validated it

void add_info_commands(Cli& c);   // info, stats, events
void add_pd_commands(Cli& c);
void add_pd_fabrics_commands(Cli& c, CLI::App* pd);  // pd discover|connect|disconnect
void add_dg_commands(Cli& c);
void add_dg_back_commands(Cli& c, CLI::App* dg);  // dg start|readd (cmd_back.cpp)
void add_pd_wipe_command(Cli& c, CLI::App* pd);   // pd wipe
void add_vd_commands(Cli& c);
void add_status_command(Cli& c);  // status (cmd_status.cpp)
void add_manpage_command(Cli& c);  // manpage (hidden; cmd_manpage.cpp)

}  // namespace gpuraid::cli
