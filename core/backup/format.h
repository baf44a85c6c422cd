// What the writer and the reader of a backup share (docs/formats/backup.md): the members' names,
// the files and folders of a data directory a backup holds, and the manifest's JSON. Not
// installed.
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/core/backup/backup.h"

#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace sealtrain::core::internal {

// The outer archive's members, in this order.
inline constexpr std::string_view kManifestMember = "backup.json";
inline constexpr std::string_view kEnvelopeMember = "backup.dsse.json";
inline constexpr std::string_view kKeyringMember = "keyring.json";
inline constexpr std::string_view kPayloadMember = "payload.sealed";
// The payload's last member: every file with its size and digest, and those referenced.
inline constexpr std::string_view kIndexMember = "index.json";
inline constexpr std::string_view kPayloadContentType =
    "application/vnd.sealtrain.backup-payload+tar";
// The KEK the payload is sealed under (its active version).
inline constexpr std::string_view kPayloadKekId = "database";

inline constexpr std::uint64_t kMaxSmallMember = std::uint64_t{1} << 20U;   // manifest, keyring
inline constexpr std::uint64_t kMaxIndexMember = std::uint64_t{64} << 20U;  // index.json

// The top-level files a backup copies when they exist (keyring.json travels outside the payload,
// the database as a copy the backup API made).
inline constexpr std::array<std::string_view, 17> kTopLevelFiles{"signing.key.sealed",
                                                                 "signing.pub.pem",
                                                                 "manifests.key.sealed",
                                                                 "manifests.pub.pem",
                                                                 "checkpoints.key.sealed",
                                                                 "checkpoints.pub.pem",
                                                                 "registry.key.sealed",
                                                                 "registry.pub.pem",
                                                                 "model-signing.key.sealed",
                                                                 "model-signing.crt",
                                                                 "ca.crt",
                                                                 "ca.key.sealed",
                                                                 "artefact-ca.crt",
                                                                 "artefact-ca.key.sealed",
                                                                 "audit.witness",
                                                                 "job-policy.json",
                                                                 "control.db"};
// The folders of sealed objects, copied whole (but for hidden staging folders and
// jobs/incoming/), their big files referenced by digest.
inline constexpr std::array<std::string_view, 4> kObjectFolders{"datasets", "runs", "jobs",
                                                                "models"};

// Whether a payload member may be restored at `name`: a top-level file above, or a file under
// one of the object folders.
[[nodiscard]] bool isRestorableName(std::string_view name);

[[nodiscard]] nlohmann::json manifestJson(const BackupManifest& manifest,
                                          const std::string& keyringSha256,
                                          std::uint64_t keyringBytes,
                                          const std::string& payloadSha256,
                                          std::uint64_t payloadBytes);

// The manifest's fields and the members' digests it names; Integrity when malformed.
struct ParsedManifest {
    BackupManifest manifest;
    std::string keyringSha256;
    std::uint64_t keyringBytes = 0;
    std::string payloadSha256;
    std::uint64_t payloadBytes = 0;
};
[[nodiscard]] Result<ParsedManifest> parseManifest(std::string_view text);

}  // namespace sealtrain::core::internal
