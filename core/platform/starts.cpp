// The control plane's starts, audited (platform/starts.h).
#include "platform/starts.h"

#include "sealtrain/audit/entry.h"
#include "sealtrain/core/store/database.h"
#include "sealtrain/core/store/platform_changes.h"

#include <optional>
#include <string>
#include <vector>

namespace sealtrain::core::internal {

Result<void> recordPlatformStart(Database& database, const PlatformChanges& changes,
                                 const PlatformStart& start, std::int64_t nowUnix)
{
    if (start.version.empty() || start.configSha256.size() != 64)
        return Error(ErrorCode::InvalidArgument,
                     "A start is recorded with its release and its configuration's SHA-256 (64 "
                     "hex digits); this is a bug.");
    auto schema = database.schemaVersion();
    if (!schema)
        return schema.error();
    struct Previous {
        std::string version;
        std::string configSha256;
    };
    std::optional<Previous> previous;
    auto found = database.queryOne(
        "SELECT version, config_sha256 FROM platform_starts ORDER BY id DESC LIMIT 1", {},
        [&](const Statement& row) {
            previous = Previous{row.text(0), row.text(1)};
        });
    if (!found)
        return found.error();

    // The upgrade first, then the start with its row in platform_starts, in the start entry's
    // transaction: a start that failed to record leaves the previous start the newest, so the
    // upgrade is recorded again at the next try, never lost.
    if (previous && previous->version != start.version)
        SEALTRAIN_TRY(changes.record("platform.upgrade",
                                     {audit::textDetail("from_version", previous->version),
                                      audit::textDetail("to_version", start.version)}));
    const char* configChanged = !previous                                      ? "first start"
                                : previous->configSha256 != start.configSha256 ? "yes"
                                                                               : "no";
    SEALTRAIN_TRY(changes.record(
        "platform.start",
        {audit::textDetail("version", start.version),
         audit::textDetail("schema_version", std::to_string(*schema)),
         audit::textDetail("config_sha256", start.configSha256),
         audit::textDetail("previous_version", previous ? previous->version : "none"),
         audit::textDetail("config_changed", configChanged)},
        [&] {
            return database.run(
                "INSERT INTO platform_starts (version, config_sha256, started) VALUES (?, ?, ?)",
                {start.version, start.configSha256, nowUnix});
        }));
    return success();
}

}  // namespace sealtrain::core::internal
