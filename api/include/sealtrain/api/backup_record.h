// Where this client's last backup went (issue #51): `sealtrainctl backup` and the desktop's
// Backup tab note each archive they receive in the profile's last-backup.json
// (docs/formats/client-profile.md), so that either can say where the newest one is, how old it
// is and whether it is still there. The archive's bytes are the control plane's; the note is
// this user's, and holds no secret: a path, a time, counts and the archive's SHA-256.
#pragma once

#include "sealtrain/api/platform_client.h"
#include "sealtrain/base/result.h"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace sealtrain::api {

class Profile;

struct BackupRecord {
    std::filesystem::path archive;  // absolute
    std::int64_t takenUnix = 0;
    std::string endpoint;  // the control plane it came from ("host:port" or "unix:/…")
    BackupReceived facts;
};

// Notes `record` as the profile's last backup, replacing the note before (written atomically).
[[nodiscard]] Result<void> rememberBackup(const Profile& profile, const BackupRecord& record);
// The profile's last backup; nullopt when none was noted. Integrity when the note is not one
// this library wrote.
[[nodiscard]] Result<std::optional<BackupRecord>> lastBackup(const Profile& profile);

}  // namespace sealtrain::api
