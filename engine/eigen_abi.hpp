// Eigen, with the alignment settings every program linked with dprl must share.
//
// Eigen's dynamic allocations (Matrix, the nn::Buffer allocator) and the layout of its fixed-size
// types depend on EIGEN_MAX_ALIGN_BYTES and EIGEN_MAX_STATIC_ALIGN_BYTES, whose defaults follow the
// instruction set (-march). dprl's libraries are compiled for x86-64-v3 by default, a consumer
// often for baseline x86-64 or -march=native: with the defaults the two sides allocate and free
// Eigen buffers differently (plain malloc against an offset, aligned block), and a buffer resized
// inside the library and freed in the program corrupts the heap. The libraries therefore pin
//   EIGEN_MAX_ALIGN_BYTES=64         dynamic allocations aligned to 64 bytes by every instruction
//                                    set up to AVX-512 (Eigen's allocation alignment is the larger
//                                    of this and the instruction set's own, so 64 makes it equal)
//   EIGEN_MAX_STATIC_ALIGN_BYTES=32  the alignment of fixed-size members, whatever the -march
// and export them as usage requirements of their CMake targets (CMakeLists.txt), so a consumer gets
// them. A program compiled without them, or with other values, fails here at compile time instead
// of crashing at run time.
#pragma once

#include <Eigen/Core>

static_assert(EIGEN_MAX_ALIGN_BYTES == 64 && EIGEN_DEFAULT_ALIGN_BYTES == 64 &&
                  EIGEN_MAX_STATIC_ALIGN_BYTES == 32,
              "dprl needs -DEIGEN_MAX_ALIGN_BYTES=64 -DEIGEN_MAX_STATIC_ALIGN_BYTES=32 in every "
              "translation unit linked with it (link the dprl:: CMake targets, which set them)");
