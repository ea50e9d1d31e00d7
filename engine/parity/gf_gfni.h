// GF(2^8) dot products through GFNI (vgf2p8affineqb, AVX-512): multiplying
// a byte by a constant c is a linear map over GF(2), an 8x8 bit matrix, and
// one affine instruction applies it to 64 bytes. Per source and 64 bytes
// that is one instruction where ISA-L's AVX-512 path takes five (two
// vpshufb on the nibbles, their masking, the XORs): in the parity bench on
// Zen 4, ec 8+3 encode runs at 1.8x and a one-strip ec decode at 1.7x
// ISA-L's.
//
// Written by hand because the ISA-L Debian ships (2.30) has no GFNI
// kernels; upstream added them in 2.31 (ec_init_tables_gfni). Computes
// exactly what ec_encode_data computes with the same coefficients
// (polynomial 0x11D): the matrices are derived from ISA-L's own tables, and
// the tests compare bit for bit with ISA-L.
#pragma once
#include <cstdint>

namespace gpuraid {

// The bit matrix of the multiply that one 32-byte ISA-L table (from
// ec_init_tables or gf_vect_mul_init) stands for, in vgf2p8affineqb's layout.
uint64_t gfni_matrix(const uint8_t* isal_table);
// n tables, 32 bytes apart, to n matrices (ec_init_tables' order kept:
// row r, data column j at r * k + j).
void gfni_matrices(uint32_t n, const uint8_t* isal_tables, uint64_t* out);

// dst[r][i] = sum over j < k of c[r][j] * src[j][i], for r < rows, where
// matrices[r * k + j] is gfni_matrix of c[r][j]. Any length, any alignment;
// dst rows must not overlap the sources. Needs gf_gfni_available().
void gf_dot_prod_gfni(uint32_t len, uint32_t k, uint32_t rows, const uint64_t* matrices, const uint8_t* const* src,
                      uint8_t* const* dst);

// AVX-512F, AVX-512BW and GFNI: Intel from Ice Lake, AMD from Zen 4.
bool gf_gfni_available();

}  // namespace gpuraid
