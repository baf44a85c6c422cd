// Process-wide protections (Linux): no core dumps, no ptrace by other users' processes, no
// secret left readable on standard input.
#include "sealtrain/base/process.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

namespace sealtrain {

void disableCoreDumps() noexcept
{
    const rlimit none{0, 0};
    (void)setrlimit(RLIMIT_CORE, &none);
    (void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}

void detachStandardInput() noexcept
{
    const int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (null < 0)
        return;
    if (null == STDIN_FILENO) {  // descriptor 0 was closed: keep /dev/null there for children
        (void)::fcntl(null, F_SETFD, 0);
        return;
    }
    (void)::dup2(null, STDIN_FILENO);  // dup2 clears close-on-exec on descriptor 0
    (void)::close(null);
}

}  // namespace sealtrain
