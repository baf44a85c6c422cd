// The control plane's starts, audited for change management (issue #49): the release and the
// configuration each start ran with, and what changed since the one before
// (docs/operations/compliance.md, CC8.1).
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/core/platform/platform_start.h"

#include <cstdint>

namespace sealtrain::core {

class PlatformChanges;
class Database;

namespace internal {

// Writes platform.upgrade when `start.version` is not the previous start's release, then
// platform.start (version, schema version, configuration digest, the previous start's release
// and whether the configuration changed), keeping the start in platform_starts in the start
// entry's transaction.
[[nodiscard]] Result<void> recordPlatformStart(Database& database, const PlatformChanges& changes,
                                               const PlatformStart& start, std::int64_t nowUnix);

}  // namespace internal
}  // namespace sealtrain::core
