// Read-modify-write parity update in one pass: for every parity row r,
//   dst[r] ^= c_r * (old ^ new)      (GF(2^8), with ISA-L's multiply tables)
// which is what ec_encode_data_update does once the delta old ^ new is in
// memory. Written by hand because ISA-L has no call that takes old and new
// data: the engine XORed the delta into a buffer first and ISA-L read it
// back, one strip more moved and two passes.
//
// AVX-512BW (vpshufb on the low and high nibbles, 64 bytes a step: the
// method of ISA-L's own gf_Nvect_mad_avx512). A version for AVX2 was tried
// and was no faster than the two passes; CPUs without AVX-512BW keep them.
// Any pointer alignment, any length.
#pragma once
#include <cstdint>

namespace gpuraid {

// tables: ISA-L's 32-byte multiply table of this data column for row 0;
// row r's is at tables + r * row_stride (ec_init_tables' layout:
// row_stride = 32 * k). 1 <= m <= 4 rows. dst rows must not overlap old,
// new or each other.
void gf_update_fused_avx512(uint32_t len, uint32_t m, const uint8_t* tables, uint32_t row_stride,
                            const uint8_t* old_data, const uint8_t* new_data, uint8_t* const* dst);
bool gf_update_fused_available();

// The same, byte by byte through the same tables: the tail of the vector
// version, and the test's second reference.
void gf_update_fused_bytes(uint32_t len, uint32_t m, const uint8_t* tables, uint32_t row_stride,
                           const uint8_t* old_data, const uint8_t* new_data, uint8_t* const* dst);

}  // namespace gpuraid
