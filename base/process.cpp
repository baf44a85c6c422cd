// Core-dump suppression (Linux: setrlimit + prctl).
#include "sealtrain/base/process.h"

#include <sys/prctl.h>
#include <sys/resource.h>

namespace sealtrain {

void disableCoreDumps() noexcept
{
    const rlimit none{0, 0};
    (void)setrlimit(RLIMIT_CORE, &none);
    (void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}

}  // namespace sealtrain
