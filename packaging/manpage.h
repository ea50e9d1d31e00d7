// A man page (roff, man(7) macros) generated from a CLI11 command tree, so
// that gpuraid(8) and gpuraidd(8) list exactly the commands and options the
// programs parse. The sections that are prose (exit status, files,
// examples) come from the program beside its definitions.
#pragma once
#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace gpuraid::man {

struct Section {
  std::string title;  // "EXIT STATUS"
  std::string roff;   // its body, already roff (use escape() on plain text)
};

struct Page {
  std::string name;         // "gpuraid"
  std::string section = "8";
  std::string source;       // "gpuraid 0.1.0"
  std::string synopsis;     // roff; empty: "NAME [OPTIONS]"
  std::string description;  // roff, after the app's own description
  std::vector<Section> sections;  // after OPTIONS and COMMANDS
};

// Plain text made safe for roff: backslashes, leading dots and quotes, hyphens.
std::string escape(const std::string& text);
// "Code  meaning" pairs as a .TP list.
std::string tagged_list(const std::vector<std::pair<std::string, std::string>>& items);
// The whole page: NAME, SYNOPSIS, DESCRIPTION, OPTIONS, COMMANDS (each
// visible subcommand, depth first, with its arguments and options), then
// page.sections.
std::string render(const CLI::App& app, const Page& page);

}  // namespace gpuraid::man
