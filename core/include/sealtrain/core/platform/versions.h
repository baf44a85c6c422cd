// Versions of the control plane's libraries, for `sealtrainctl doctor`.
#pragma once

#include <string>

namespace sealtrain::core {

struct PlatformVersions {
    std::string qt;
    std::string sqlcipher;  // SQLCipher's own version, from PRAGMA cipher_version
    std::string sqlite;     // the SQLite it is built on
    std::string grpc;
    std::string protobuf;
};

[[nodiscard]] PlatformVersions platformVersions();

}  // namespace sealtrain::core
