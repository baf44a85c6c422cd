// The backup's manifest and names (backup/format.h).
#include "backup/format.h"

#include "backup/tar.h"

#include <fmt/format.h>

#include <algorithm>

namespace sealtrain::core::internal {
namespace {

Error malformed(const std::string& what)
{
    return Error(ErrorCode::Integrity,
                 fmt::format("The backup's manifest is malformed ({}); use an intact copy of the "
                             "archive.",
                             what));
}

bool isHexDigest(const std::string& text)
{
    return text.size() == 64 && std::all_of(text.begin(), text.end(), [](char c) {
               return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
           });
}

}  // namespace

bool isRestorableName(std::string_view name)
{
    if (!isSafeMemberName(name))
        return false;
    if (std::find(kTopLevelFiles.begin(), kTopLevelFiles.end(), name) != kTopLevelFiles.end())
        return true;
    const auto slash = name.find('/');
    if (slash == std::string_view::npos)
        return false;
    const auto folder = name.substr(0, slash);
    return std::find(kObjectFolders.begin(), kObjectFolders.end(), folder) != kObjectFolders.end();
}

nlohmann::json manifestJson(const BackupManifest& manifest, const std::string& keyringSha256,
                            std::uint64_t keyringBytes, const std::string& payloadSha256,
                            std::uint64_t payloadBytes)
{
    return {{"format", kBackupFormat},
            {"created", manifest.created},
            {"sealtrain_version", manifest.version},
            {"head",
             {{"size", manifest.head}, {"root", manifest.headRoot}, {"note", manifest.headNote}}},
            {"ca_sha256", manifest.caSha256},
            {"members",
             {{std::string(kKeyringMember), {{"size", keyringBytes}, {"sha256", keyringSha256}}},
              {std::string(kPayloadMember), {{"size", payloadBytes}, {"sha256", payloadSha256}}}}},
            {"payload",
             {{"files", manifest.files},
              {"referenced", manifest.referenced},
              {"referenced_bytes", manifest.referencedBytes}}}};
}

Result<ParsedManifest> parseManifest(std::string_view text)
{
    const auto json = nlohmann::json::parse(text, nullptr, false);
    if (json.is_discarded() || !json.is_object())
        return malformed("not a JSON object");
    try {
        if (json.at("format").get<std::string>() != kBackupFormat)
            return Error(ErrorCode::Unsupported,
                         fmt::format("The archive is a '{}' backup, which this release can not "
                                     "restore; use the release that wrote it.",
                                     json.at("format").get<std::string>()));
        ParsedManifest parsed;
        BackupManifest& m = parsed.manifest;
        m.created = json.at("created").get<std::string>();
        m.version = json.at("sealtrain_version").get<std::string>();
        const auto& head = json.at("head");
        m.head = head.at("size").get<std::uint64_t>();
        m.headRoot = head.at("root").get<std::string>();
        m.headNote = head.at("note").get<std::string>();
        m.caSha256 = json.at("ca_sha256").get<std::string>();
        const auto& members = json.at("members");
        const auto& keyring = members.at(std::string(kKeyringMember));
        const auto& payload = members.at(std::string(kPayloadMember));
        parsed.keyringSha256 = keyring.at("sha256").get<std::string>();
        parsed.keyringBytes = keyring.at("size").get<std::uint64_t>();
        parsed.payloadSha256 = payload.at("sha256").get<std::string>();
        parsed.payloadBytes = payload.at("size").get<std::uint64_t>();
        const auto& counts = json.at("payload");
        m.files = counts.at("files").get<std::uint64_t>();
        m.referenced = counts.at("referenced").get<std::uint64_t>();
        m.referencedBytes = counts.at("referenced_bytes").get<std::uint64_t>();
        if (!isHexDigest(parsed.keyringSha256) || !isHexDigest(parsed.payloadSha256)
            || !isHexDigest(m.caSha256))
            return malformed("a digest is not 64 hex digits");
        return parsed;
    } catch (const nlohmann::json::exception& e) {
        return malformed(asClause(e.what()));
    }
}

}  // namespace sealtrain::core::internal
