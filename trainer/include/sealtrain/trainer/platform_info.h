// Versions of the trainer's CPU-side libraries (MPI, BLAS), for `sealtrainctl doctor`.
#pragma once

#include <string>

namespace sealtrain::trainer {

// MPI_Get_library_version's first line; callable before MPI_Init.
[[nodiscard]] std::string mpiLibraryVersion();
// The BLAS build's self-description (OpenBLAS: version, target core, threads).
[[nodiscard]] std::string blasDescription();

}  // namespace sealtrain::trainer
