// Asks each library for its version at run time (the one actually loaded, not the headers').
#include "sealtrain/core/platform/versions.h"

#include <QtGlobal>
#include <google/protobuf/stubs/common.h>
#include <grpcpp/grpcpp.h>
#include <sqlite3.h>

namespace sealtrain::core {
namespace {

std::string sqlcipherVersion()
{
    sqlite3* db = nullptr;
    std::string version;
    if (sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr)
        == SQLITE_OK) {
        sqlite3_stmt* statement = nullptr;
        if (sqlite3_prepare_v2(db, "PRAGMA cipher_version;", -1, &statement, nullptr) == SQLITE_OK
            && sqlite3_step(statement) == SQLITE_ROW) {
            if (const auto* text = sqlite3_column_text(statement, 0))
                version = reinterpret_cast<const char*>(text);
        }
        sqlite3_finalize(statement);
    }
    sqlite3_close(db);
    return version;
}

}  // namespace

PlatformVersions platformVersions()
{
    PlatformVersions versions;
    versions.qt = qVersion();
    versions.sqlcipher = sqlcipherVersion();
    versions.sqlite = sqlite3_libversion();
    versions.grpc = grpc::Version();
    versions.protobuf = google::protobuf::internal::VersionString(GOOGLE_PROTOBUF_VERSION);
    return versions;
}

}  // namespace sealtrain::core
