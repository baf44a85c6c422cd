// Process-wide protections every Sealtrain executable applies first thing in main().
#pragma once

namespace sealtrain {

// No core dumps of our own making: sets RLIMIT_CORE to zero and marks the process
// non-dumpable, so a crash can not write key material to disk.
void disableCoreDumps() noexcept;

}  // namespace sealtrain
