#include "daemon/metrics_states.h"

#include <sstream>

#include "proto/api_words.h"

namespace gpuraid::daemon {

namespace v1 = gpuraid::v1;
namespace pb = google::protobuf;

std::string prom_label(const std::string& s) {
  std::string o;
  for (char c : s) o += c == '\\' ? "\\\\" : c == '"' ? "\\\"" : c == '\n' ? "\\n" : std::string(1, c);
  return o;
}

namespace {
// One series per word of `type` (UNSPECIFIED left out): 1 for `value`.
void one_hot(std::ostringstream& o, const char* metric, const std::string& labels, const char* key,
             const pb::EnumDescriptor* type, int value) {
  for (int i = 0; i < type->value_count(); i++) {
    const int v = type->value(i)->number();
    if (v == 0) continue;
    o << "gpuraid_" << metric << "{" << labels << "," << key << "=\"" << v1::api_word(type, v) << "\"} "
      << (v == value ? 1 : 0) << "\n";
  }
}

void help(std::ostringstream& o, const char* name, const char* text) {
  o << "# HELP gpuraid_" << name << " " << text << "\n# TYPE gpuraid_" << name << " gauge\n";
}
}  // namespace

std::string state_metrics(const v1::ListGroupsResponse& groups, const v1::ListDrivesResponse& drives) {
  std::ostringstream o;
  help(o, "dg_state", "Drive group state: 1 for the state it is in (words: docs/STATES.md).");
  for (const auto& g : groups.groups())
    one_hot(o, "dg_state", "dg=\"" + prom_label(g.name()) + "\"", "state", v1::GroupState_descriptor(), g.state());
  help(o, "dg_redundancy", "Drive group redundancy: 1 for the word that applies now (docs/STATES.md).");
  for (const auto& g : groups.groups())
    one_hot(o, "dg_redundancy", "dg=\"" + prom_label(g.name()) + "\"", "redundancy", v1::Redundancy_descriptor(),
            g.redundancy());
  help(o, "dg_failures_tolerated", "Further member failures the drive group survives now.");
  for (const auto& g : groups.groups())
    o << "gpuraid_dg_failures_tolerated{dg=\"" << prom_label(g.name()) << "\"} " << g.failures_tolerated() << "\n";
  help(o, "pd_state", "Physical drive state: 1 for the state it is in (words: docs/STATES.md).");
  for (const auto& d : drives.drives())
    one_hot(o, "pd_state", "pd=\"" + prom_label(d.id()) + "\"", "state", v1::DriveState_descriptor(), d.state());
  return o.str();
}

}  // namespace gpuraid::daemon
