// gpuraid pd examine (cmd_pd_examine.cpp).
#pragma once
#include "cli/cli.h"

namespace gpuraid::cli {

void add_pd_examine(Cli& c, CLI::App* pd);

}  // namespace gpuraid::cli
