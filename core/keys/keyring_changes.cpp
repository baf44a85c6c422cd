// Keyring changes through the audited transaction, the check that nothing sealed is still
// wrapped under a version before it is retired, and the generation the audit log vouches for.
#include "sealtrain/core/keys/keyring_changes.h"

#include "store/audited_transaction.h"

#include "sealtrain/base/encoding.h"
#include "sealtrain/core/access/permissions.h"
#include "sealtrain/core/identity/password.h"
#include "sealtrain/crypto/sealed.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <functional>
#include <system_error>

namespace sealtrain::core {
namespace {

// A session sealed under a retired version ends (its user signs in again); it does not hold up
// the retirement.
constexpr std::string_view kSessionContentType = "application/vnd.sealtrain.session";

AuditedRequest kekRequest(const std::string& action, const std::string& id)
{
    return {action, permission::kKeyringManage, {}, {"kek", id}};
}

void recordGeneration(audit::EntryDraft& draft, const crypto::Keyring& keyring)
{
    draft.details.push_back(audit::textDetail(std::string(kKeyringGenerationDetail),
                                              std::to_string(keyring.generation())));
}

Error unsearchable(const std::filesystem::path& folder, const std::error_code& ec)
{
    return Error(ErrorCode::InvalidArgument,
                 fmt::format("Cannot search '{}' for sealed objects ({}); check the folder and "
                             "its permissions, nothing was retired.",
                             folder.string(), ec.message()));
}

// The sealed objects under `folders` (every level) whose key block names KEK `id` at a version
// `wanted` accepts. Files that are not sealed objects are passed over; a folder that can not be
// searched to the end is an error, never a silent "nothing found".
Result<std::vector<std::filesystem::path>>
objectsSealedUnder(const std::vector<std::filesystem::path>& folders, const std::string& id,
                   const std::function<bool(std::uint32_t)>& wanted)
{
    std::vector<std::filesystem::path> found;
    for (const auto& folder : folders) {
        std::error_code ec;
        std::filesystem::recursive_directory_iterator it(folder, ec);
        for (; !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
            std::error_code notAFile;  // a broken link, say: nothing sealed there
            if (!it->is_regular_file(notAFile))
                continue;
            auto info = crypto::inspectSealedObject(it->path());
            if (info && info->kekId == id && wanted(info->kekVersion)
                && info->metadata.contentType != kSessionContentType)
                found.push_back(it->path());
        }
        if (ec)
            return unsearchable(folder, ec);
    }
    std::sort(found.begin(), found.end());  // the same message for the same tree
    return found;
}

Result<void> requireNothingWrapped(const KekRetirement& request)
{
    const auto wrapped =
        objectsSealedUnder(request.folders, request.id,
                           [&](std::uint32_t version) { return version == request.version; });
    if (!wrapped)
        return wrapped.error();
    if (wrapped->empty())
        return success();
    return Error(
        ErrorCode::InvalidArgument,
        fmt::format("Key '{}' version {} still wraps {} sealed object(s), among them '{}'; "
                    "re-wrap them with 'sealtrainctl keyring rewrap {}' before retiring it.",
                    request.id, request.version, wrapped->size(), wrapped->front().string(),
                    request.id));
}

std::optional<std::uint64_t> parseGeneration(const audit::Detail& detail)
{
    if (detail.name != kKeyringGenerationDetail || detail.kind != audit::Detail::Kind::Text)
        return std::nullopt;
    const auto* first = reinterpret_cast<const char*>(detail.value.data());
    std::uint64_t value = 0;
    const auto [end, ec] = std::from_chars(first, first + detail.value.size(), value);
    if (ec != std::errc() || end != first + detail.value.size())
        return std::nullopt;
    return value;
}

}  // namespace

KeyringChanges::KeyringChanges(AuditedTransactions& gate)
    : gate_(gate)
{
}

Result<crypto::KekInfo> KeyringChanges::rotate(const std::string& session, crypto::Keyring& keyring,
                                               const std::string& id)
{
    return gate_.performReturning(
        session, kekRequest("keyring.rotate", id),
        [&](const Caller&, audit::EntryDraft& draft) -> Result<crypto::KekInfo> {
            auto rotated = keyring.rotate(id);
            if (!rotated)
                return rotated.error();
            draft.details.push_back(
                audit::textDetail("version", std::to_string((*rotated)->version)));
            recordGeneration(draft, keyring);
            return crypto::KekInfo{
                (*rotated)->id, (*rotated)->version, crypto::KekState::Active, {}, {}};
        });
}

Result<void> KeyringChanges::retire(const std::string& session, crypto::Keyring& keyring,
                                    const KekRetirement& request)
{
    // The entry names the version itself (ID@VERSION), refusals included.
    const auto version = fmt::format("{}@{}", request.id, request.version);
    return gate_.perform(session, kekRequest("keyring.retire", version),
                         [&](const Caller&, audit::EntryDraft& draft) -> Result<void> {
                             SEALTRAIN_TRY(requireNothingWrapped(request));
                             SEALTRAIN_TRY(keyring.retire(request.id, request.version));
                             recordGeneration(draft, keyring);
                             return success();
                         });
}

Result<KeyedPaged<crypto::KekInfo>> KeyringChanges::list(const std::string& session,
                                                         const crypto::Keyring& keyring,
                                                         const KeyedPage& page)
{
    return gate_.performReturning(
        session, {"keyring.list", permission::kKeyringManage, {}, {"keyring", "keyring"}},
        [&](const Caller&, audit::EntryDraft& draft) -> Result<KeyedPaged<crypto::KekInfo>> {
            draft.details.push_back(audit::textDetail("after", page.after));
            SEALTRAIN_TRY(checkKeyedPage(page));
            return pageAfter(keyring.list(), page,
                             [](const crypto::KekInfo& kek) { return pageKey(kek); });
        });
}

Result<RewrapSummary> KeyringChanges::rewrapAll(const std::string& session,
                                                const crypto::Keyring& keyring,
                                                const std::string& id,
                                                const std::vector<std::filesystem::path>& folders)
{
    // The caller first: searching the data directory is work a caller without the permission
    // must not cause.
    auto active = gate_.performReturning(
        session, kekRequest("keyring.rewrap", id),
        [&](const Caller&, audit::EntryDraft& draft) -> Result<std::uint32_t> {
            auto kek = keyring.activeKek(id);
            if (!kek)
                return kek.error();
            draft.details.push_back(
                audit::textDetail("to_version", std::to_string((*kek)->version)));
            return (*kek)->version;
        });
    if (!active)
        return active.error();
    const auto older =
        objectsSealedUnder(folders, id, [&](std::uint32_t version) { return version != *active; });
    if (!older)
        return older.error();
    RewrapSummary summary;
    for (const auto& file : *older) {
        auto line = rewrap(session, keyring, file);
        if (!line)
            return line.error().withContext(fmt::format(
                "Re-wrapped {} object(s) before '{}' failed", summary.rewrapped, file.string()));
        summary.lines.push_back(std::move(line).value());
        ++summary.rewrapped;
    }
    return summary;
}

Result<std::string> KeyringChanges::rewrap(const std::string& session,
                                           const crypto::Keyring& keyring,
                                           const std::filesystem::path& file)
{
    auto info = crypto::inspectSealedObject(file);
    if (!info)
        return info.error();
    AuditedRequest request = kekRequest("keyring.rewrap", info->kekId);
    request.target = {"sealed-object", toHex(info->objectId)};
    return gate_.performReturning(
        session, request, [&](const Caller&, audit::EntryDraft& draft) -> Result<std::string> {
            draft.details.push_back(audit::textDetail("kek", info->kekId));
            draft.details.push_back(
                audit::textDetail("from_version", std::to_string(info->kekVersion)));
            auto active = keyring.activeKek(info->kekId);
            if (!active)
                return active.error();
            draft.details.push_back(
                audit::textDetail("to_version", std::to_string((*active)->version)));
            if ((*active)->version == info->kekVersion)
                return fmt::format("{}: already under '{}' version {}\n", file.string(),
                                   info->kekId, info->kekVersion);
            SEALTRAIN_TRY(crypto::rewrapKeyBlock(file, keyring.resolver(), **active));
            return fmt::format("{}: re-wrapped from '{}' version {} to version {}\n", file.string(),
                               info->kekId, info->kekVersion, (*active)->version);
        });
}

Result<void> KeyringChanges::changePassphrase(const std::string& session, crypto::Keyring& keyring,
                                              const crypto::SecretBytes& currentPassphrase,
                                              const crypto::SecretBytes& newPassphrase,
                                              crypto::Argon2Params params)
{
    return gate_.perform(
        session,
        {"keyring.change-passphrase", permission::kKeyringManage, {}, {"keyring", "keyring"}},
        [&](const Caller&, audit::EntryDraft& draft) -> Result<void> {
            SEALTRAIN_TRY(checkPassphrasePolicy(newPassphrase));
            if (auto opened =
                    crypto::Keyring::unlockWithPassphrase(keyring.path(), currentPassphrase);
                !opened) {
                if (opened.error().code() == ErrorCode::Unauthenticated)
                    return Error(ErrorCode::Unauthenticated,
                                 "The current passphrase does not open the keyring; nothing "
                                 "changed.");
                return opened.error();
            }
            SEALTRAIN_TRY(keyring.changePassphrase(newPassphrase, params));
            recordGeneration(draft, keyring);
            return success();
        });
}

Result<std::uint64_t> KeyringChanges::recordedGeneration() const
{
    // Entries are stored as their bytes only: the few that hold the detail's name are decoded,
    // and only successful keyring changes count (a user name could hold the same letters).
    const std::string needle(kKeyringGenerationDetail);
    std::uint64_t newest = 0;
    SEALTRAIN_TRY(
        gate_.database().query("SELECT bytes FROM audit_entries WHERE instr(bytes, ?) > 0",
                               {SqlValue::blob(asBytes(needle))}, [&](const Statement& row) {
                                   const auto entry = audit::decodeEntry(row.blob(0));
                                   if (!entry || entry->outcome != audit::Outcome::Ok
                                       || !entry->action.starts_with("keyring."))
                                       return;
                                   for (const auto& detail : entry->details)
                                       if (const auto generation = parseGeneration(detail))
                                           newest = std::max(newest, *generation);
                               }));
    return newest;
}

Result<void> KeyringChanges::requireNotRolledBack(const crypto::Keyring& keyring) const
{
    auto recorded = recordedGeneration();
    if (!recorded)
        return recorded.error();
    if (*recorded <= keyring.generation())
        return success();
    return Error(ErrorCode::Integrity,
                 fmt::format("The keyring '{}' is at generation {} but the audit log records "
                             "generation {}: it is an older copy (rolled back or restored from a "
                             "backup); put the newest keyring.json back.",
                             keyring.path().string(), keyring.generation(), *recorded));
}

}  // namespace sealtrain::core
