#include "engine/invariant.h"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>

namespace gpuraid {

void invariant_failed(const char* cond, const char* file, int line, const char* func, const char* fmt, ...) {
  char what[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  // One write, so that lines from other threads dying at once do not interleave.
  fprintf(stderr, "gpuraid: invariant broken: %s (%s) at %s:%d in %s()\n", what, cond, file, line, func);
  fflush(stderr);
  abort();
}

}  // namespace gpuraid
