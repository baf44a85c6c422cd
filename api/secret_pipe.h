// Handing secrets to a child process of the client library (sealtrain-control serving, or one of
// its data directory tools) on its standard input: never in argv, the environment or a file.
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/crypto/secret_bytes.h"

#include <functional>
#include <vector>

namespace sealtrain::api {

// Writes each secret and a newline to `fd` and closes it; the copy it makes is wiped. SIGPIPE is
// blocked on this thread meanwhile, and one it raised taken, so that a child that ended before
// reading cannot end the client: false then (the child's exit says why). The pipe holds far more
// than a few lines, so this never waits for the child.
[[nodiscard]] Result<bool>
handSecretLines(int fd,
                const std::vector<std::reference_wrapper<const crypto::SecretBytes>>& lines);

}  // namespace sealtrain::api
