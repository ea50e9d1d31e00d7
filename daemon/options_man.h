// gpuraidd(8): the prose parts of the daemon's man page (exit status, files,
// signals, examples); the options come from the CLI11 definitions
// (options.cpp, `gpuraidd --manpage`).
#pragma once
#include "packaging/manpage.h"

namespace gpuraid::daemon {

man::Page daemon_man_page();

}  // namespace gpuraid::daemon
