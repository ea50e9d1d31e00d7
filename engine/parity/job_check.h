// The rules every parity backend checks a job against (parity_backend.h
// states them) and the one way a job that cannot run fails.
#pragma once
#include "engine/parity/parity_backend.h"

namespace gpuraid {

// Why j breaks the interface's rules, or nullptr when every backend must
// run it. Checks what the op reads: the code, len, counts, row indices and
// non-null pointers (not overlap: see parity_backend.h).
const char* parity_job_invalid(const ParityJob& j);

// Fails j with status = err (a -errno). A Verify also reports every parity
// row as mismatched, so that no caller takes unchecked parity for good.
void fail_parity_job(ParityJob* j, int err);

}  // namespace gpuraid
