// After a PD, DG or VD is created: a warning on stderr when its name only
// looks like another one's (mixed scripts: Cyrillic "ес42" beside Latin
// "ec42"), by ICU's confusable skeletons (engine/unicode_names.h). Names
// that differ only in composition are one name (the daemon compares NFC).
#pragma once
#include <string>

namespace gpuraid::cli {

class Client;
enum class NameKind { Drive, Group, Volume };

// Looks the other names of that kind up; says nothing when none look alike
// (or when they cannot be listed).
void warn_if_lookalike(Client& cl, NameKind kind, const std::string& name);

}  // namespace gpuraid::cli
