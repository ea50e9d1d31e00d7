// Prometheus lines for the states of groups and drives, in the words the
// CLI and the API's --json print (proto/api_words.h, docs/STATES.md): for
// every group and drive one series per state word, 1 for the state it is
// in and 0 for the others, so an alert can match a state by name.
#pragma once
#include <string>

#include "gpuraid/v1/gpuraid.pb.h"

namespace gpuraid::daemon {

std::string state_metrics(const gpuraid::v1::ListGroupsResponse& groups, const gpuraid::v1::ListDrivesResponse& drives);
// A Prometheus label value: backslash, double quote and newline escaped.
std::string prom_label(const std::string& s);

}  // namespace gpuraid::daemon
