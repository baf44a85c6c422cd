// Secrets on standard input (secret_line.h).
#include "secret_line.h"

#include "sealtrain/base/wipe.h"

#include <fmt/format.h>

#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdint>

namespace sealtrain::control {

Result<crypto::SecretBytes> readSecretLine(std::string_view what, std::string_view instead)
{
    std::array<char, 4096> line{};
    std::size_t length = 0;
    bool complete = false;
    while (length < line.size()) {
        char byte = 0;
        const ssize_t got = ::read(STDIN_FILENO, &byte, 1);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0 || byte == '\n') {
            complete = true;
            break;
        }
        line[length++] = byte;
    }
    if (length > 0 && line[length - 1] == '\r')
        --length;
    if (!complete) {
        wipeMemory({reinterpret_cast<std::uint8_t*>(line.data()), line.size()});
        return Error(ErrorCode::InvalidArgument,
                     fmt::format("The {} on standard input is longer than 4095 bytes; use a "
                                 "shorter one or {}.",
                                 what, instead));
    }
    if (length == 0)
        return Error(
            ErrorCode::InvalidArgument,
            fmt::format("No {} on standard input; pipe it in, one a line, or {}.", what, instead));
    auto secret = crypto::SecretBytes::fromBytes(
        {reinterpret_cast<const std::uint8_t*>(line.data()), length});
    wipeMemory({reinterpret_cast<std::uint8_t*>(line.data()), line.size()});
    return secret;
}

}  // namespace sealtrain::control
