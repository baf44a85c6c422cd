// Process-wide protections every Sealtrain executable applies first thing in main().
#pragma once

namespace sealtrain {

// No core dumps of our own making: sets RLIMIT_CORE to zero and marks the process
// non-dumpable, so a crash can not write key material to disk.
void disableCoreDumps() noexcept;

// Points standard input at /dev/null once a secret was read from it (a passphrase piped or
// redirected from a file), so that neither this process nor any child it starts can read it
// again through descriptor 0 (issue #27: a trainer read the daemon's passphrase file so).
void detachStandardInput() noexcept;

}  // namespace sealtrain
