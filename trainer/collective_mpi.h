// The MPI collective's entry points for openCollective() (collective.cpp); private to trainer/.
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/trainer/collective.h"

#include <memory>

namespace sealtrain::trainer::internal {

// True when MPI is initialised in this process already (by us or by the embedding program).
[[nodiscard]] bool mpiInitialized();

// Initialises MPI with MPI_THREAD_FUNNELED unless it already is, and returns the collective over
// MPI_COMM_WORLD; MPI is finalised when it is destroyed if this call initialised it.
[[nodiscard]] Result<std::unique_ptr<Collective>> openMpiCollective();

}  // namespace sealtrain::trainer::internal
