// Which ISA-L versions this CPU runs, found the way ISA-L's dispatchers find
// it (include/multibinary.asm, mbin_dispatch_init6: CPUID leaves 1 and 7
// and XGETBV), so that a test run can say which code path it covered.
#pragma once
#include <string>

namespace gpuraid::test {

enum class IsalPath { Base, Sse, Avx, Avx2, Avx512 };

IsalPath isal_path();
const char* isal_path_name(IsalPath p);  // "base", "sse", "avx", "avx2", "avx512"
// "ISA-L path: avx2 (xor_gen_avx, pq_gen_avx2, ec_encode_data_avx2)"
std::string isal_path_line();

}  // namespace gpuraid::test
