// Secrets to a child on a pipe (secret_pipe.h).
#include "secret_pipe.h"

#include "sealtrain/base/byte_io.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>

namespace sealtrain::api {

Result<bool>
handSecretLines(int fd, const std::vector<std::reference_wrapper<const crypto::SecretBytes>>& lines)
{
    std::size_t total = 0;
    for (const crypto::SecretBytes& line : lines)
        total += line.size() + 1;
    auto buffer = crypto::SecretBytes::allocate(total);
    if (!buffer) {
        ::close(fd);
        return buffer.error();
    }
    auto at = buffer->mutableBytes().begin();
    for (const crypto::SecretBytes& line : lines) {
        at = std::copy(line.bytes().begin(), line.bytes().end(), at);
        *at++ = '\n';
    }
    sigset_t pipeSignal;
    sigemptyset(&pipeSignal);
    sigaddset(&pipeSignal, SIGPIPE);
    sigset_t previous;
    pthread_sigmask(SIG_BLOCK, &pipeSignal, &previous);
    const bool handed = writeAll(fd, buffer->bytes(), "the secrets pipe").ok();
    ::close(fd);
    buffer->wipe();
    if (!handed) {
        const timespec now{};
        (void)::sigtimedwait(&pipeSignal, nullptr, &now);
    }
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    return handed;
}

}  // namespace sealtrain::api
