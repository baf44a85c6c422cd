// explicit_bzero (glibc) for wipeMemory: a store the optimiser may not drop.
#include "sealtrain/base/wipe.h"

#include <cstring>

namespace sealtrain {

void wipeMemory(std::span<std::uint8_t> bytes) noexcept
{
    if (!bytes.empty())
        explicit_bzero(bytes.data(), bytes.size());
}

}  // namespace sealtrain
