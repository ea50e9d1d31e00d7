// NVMe namespaces in the CLI: identity fields for `pd show`, and `pd scan`.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "cli/cli.h"

namespace gpuraid::cli {

// The identity as "key: value" pairs (appended to *kv).
void nvme_fields(const v1::NvmeIdentity& n, std::vector<std::pair<std::string, std::string>>* kv);
// gpuraid pd scan
void add_pd_scan(Cli& c, CLI::App* pd);

}  // namespace gpuraid::cli
