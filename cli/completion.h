// gpuraid completion bash: a bash completion script generated from the
// CLI11 command tree itself, so it never drifts from the commands.
#pragma once
#include <string>

#include "cli/cli.h"

namespace gpuraid::cli {

// The `completion` subcommand.
void add_completion_command(Cli& c);
// The script for `app` (the program named app.get_name()).
std::string bash_completion(const CLI::App& app);

}  // namespace gpuraid::cli
