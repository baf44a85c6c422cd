// The control plane's dataset calls: import and registration, listing, read grants and the
// read-key release check, each decision audited.
#include "sealtrain/core/datasets/datasets.h"

#include "store/audited_transaction.h"

#include "sealtrain/base/encoding.h"
#include "sealtrain/base/folder_cleanup.h"
#include "sealtrain/core/access/permissions.h"
#include "sealtrain/core/identity/identity.h"
#include "sealtrain/core/store/reason_codes.h"
#include "sealtrain/dataset/manifest.h"

#include <fmt/format.h>

#include <functional>
#include <optional>

namespace sealtrain::core {

std::filesystem::path datasetFolder(const std::filesystem::path& datasetsRoot,
                                    const std::string& id)
{
    return datasetsRoot / (id.rfind("sha256:", 0) == 0 ? id.substr(7) : id);
}

namespace {

constexpr std::string_view kColumns =
    "d.id, d.name, d.version, d.parent, d.classification, u.name, d.records, d.tokens, d.signer, "
    "d.created FROM datasets d JOIN users u ON u.id = d.creator";

DatasetInfo readInfo(const Statement& statement)
{
    DatasetInfo info;
    info.id = statement.text(0);
    info.name = statement.text(1);
    info.version = statement.integer(2);
    info.parent = statement.isNull(3) ? std::string() : statement.text(3);
    info.classification = statement.text(4);
    info.creator = statement.text(5);
    info.records = static_cast<std::uint64_t>(statement.integer(6));
    info.tokens = static_cast<std::uint64_t>(statement.integer(7));
    info.signer = statement.text(8);
    info.created = statement.integer(9);
    return info;
}

Error notFound(const std::string& reference)
{
    return {ErrorCode::NotFound, "There is no dataset '" + reference
                                     + "'; check the name, version or id with 'dataset list'."};
}

// An id, NAME (the latest version) or NAME@VERSION.
Result<DatasetInfo> findDataset(const Database& database, const std::string& reference)
{
    DatasetInfo info;
    const RowCallback read = [&](const Statement& row) { info = readInfo(row); };
    Result<bool> found = false;
    if (reference.rfind("sha256:", 0) == 0) {
        found = database.queryOne("SELECT " + std::string(kColumns) + " WHERE d.id = ?",
                                  {reference}, read);
    } else {
        const auto at = reference.find('@');
        const std::string name = reference.substr(0, at);
        std::int64_t version = 0;
        if (at != std::string::npos) {
            const std::string digits = reference.substr(at + 1);
            if (digits.empty() || digits.size() > 9
                || digits.find_first_not_of("0123456789") != std::string::npos)
                return Error(ErrorCode::InvalidArgument,
                             "The dataset reference '" + reference
                                 + "' is not NAME, NAME@VERSION or an id; check it.");
            version = std::stoll(digits);
        }
        found = database.queryOne("SELECT " + std::string(kColumns)
                                      + " WHERE d.name = ? AND (? = 0 OR d.version = ?) "
                                        "ORDER BY d.version DESC LIMIT 1",
                                  {name, version, version}, read);
    }
    if (!found)
        return found.error();
    if (!*found)
        return notFound(reference);
    return info;
}

// What a read grant or its revocation is about: the dataset `reference` and the id of `user`
// (whom the audit entry names first, so that a refusal says whom it was for).
struct GrantSubject {
    DatasetInfo dataset;
    std::int64_t userId = 0;
};

Result<GrantSubject> grantSubject(const Database& database, const std::string& reference,
                                  const std::string& user, audit::EntryDraft& draft)
{
    draft.details.push_back(audit::textDetail("user", user));
    auto dataset = findDataset(database, reference);
    if (!dataset)
        return dataset.error();
    auto id = userIdByName(database, user);
    if (!id)
        return id.error();
    return GrantSubject{std::move(dataset).value(), *id};
}

// The call `action` on the dataset `reference`. Its entry names the dataset's id when
// `reference` resolves, else the reference as given (the call then fails, and its refusal names
// what was asked for).
AuditedRequest datasetRequest(const Database& database, const std::string& action,
                              std::string_view permission, const std::string& reference)
{
    auto found = findDataset(database, reference);
    return {action, permission, {}, {"dataset", found ? found->id : reference}};
}

using ReaderView = DatasetReaderView;

Result<ReaderView> findForReader(const Database& database, const std::string& reference,
                                 std::int64_t userId)
{
    auto dataset = findDataset(database, reference);
    if (!dataset)
        return dataset.error();
    auto granted = database.exists(
        "SELECT 1 FROM dataset_grants WHERE dataset_id = ? AND user_id = ?", {dataset->id, userId});
    if (!granted)
        return granted.error();
    return ReaderView{std::move(dataset).value(), *granted};
}

// perform for a change of `user`'s read grant on the dataset `reference` (dataset.grant), which
// `change` gets resolved; the entry names the user even when either is not found.
Result<void> performOnReadGrant(AuditedTransactions& gate, const std::string& session,
                                const std::string& action, const std::string& reference,
                                const std::string& user,
                                const std::function<Result<void>(const Caller&, const GrantSubject&,
                                                                 audit::EntryDraft&)>& change)
{
    return gate.perform(
        session, datasetRequest(gate.database(), action, permission::kDatasetGrant, reference),
        [&](const Caller& caller, audit::EntryDraft& draft) -> Result<void> {
            auto subject = grantSubject(gate.database(), reference, user, draft);
            if (!subject)
                return subject.error();
            // A steward answers for the datasets they imported, and only for those (issue #27: a
            // puppet steward could otherwise hand anyone any dataset).
            if (subject->dataset.creator != caller.name)
                return denied(fmt::format("Only {}, who imported '{}' version {}, grants or "
                                          "revokes reading it; ask them.",
                                          subject->dataset.creator, subject->dataset.name,
                                          subject->dataset.version));
            return change(caller, *subject, draft);
        });
}

// Whether a new import would only repeat `previous`: the same sources, read and tokenized the
// same way, with the same classification.
bool sameContent(const dataset::Manifest& next, const dataset::Manifest& previous)
{
    const auto sources = [](const dataset::Manifest& m) {
        std::vector<std::pair<std::string, std::string>> list;
        for (const auto& source : m.sources)
            list.emplace_back(source.path, source.sha256);
        return list;
    };
    return sources(next) == sources(previous) && next.classification == previous.classification
           && next.inputFormat == previous.inputFormat && next.inputField == previous.inputField
           && next.tokenizer.id == previous.tokenizer.id
           && next.tokenizer.fileSha256 == previous.tokenizer.fileSha256
           && next.tokensPerShard == previous.tokensPerShard
           && next.validationBasisPoints == previous.validationBasisPoints
           && next.piiRedacted == previous.piiRedacted && next.counts == previous.counts;
}

// The new version's row and its creator's read grant; AlreadyExists when the id is known.
Result<void> insertDataset(const Database& database, const DatasetInfo& info,
                           std::int64_t creatorId)
{
    if (auto done = database.run(
            "INSERT INTO datasets (id, name, version, parent, classification, creator, records, "
            "tokens, signer, created) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            {info.id, info.name, info.version,
             info.parent.empty() ? SqlValue(nullptr) : SqlValue(info.parent), info.classification,
             creatorId, static_cast<std::int64_t>(info.records),
             static_cast<std::int64_t>(info.tokens), info.signer, info.created});
        !done)
        return Error(ErrorCode::AlreadyExists,
                     "The dataset " + info.id + " is already registered; see 'dataset show'.");
    return database.run("INSERT INTO dataset_grants (dataset_id, user_id, granted_by, created) "
                        "VALUES (?, ?, ?, ?)",
                        {info.id, creatorId, creatorId, info.created});
}

void addImportDetails(audit::EntryDraft& draft, const DatasetInfo& info,
                      const dataset::ImportReport& report)
{
    draft.details.push_back(audit::textDetail("name", info.name));
    draft.details.push_back(audit::textDetail("version", std::to_string(info.version)));
    if (!info.parent.empty())
        draft.details.push_back(audit::textDetail("parent", info.parent));
    draft.details.push_back(audit::textDetail("classification", info.classification));
    draft.details.push_back(audit::textDetail("records", std::to_string(info.records)));
    draft.details.push_back(audit::textDetail("tokens", std::to_string(info.tokens)));
    draft.details.push_back(audit::textDetail("pii_matches", std::to_string(report.piiTotal())));
    draft.details.push_back(audit::textDetail("signer", info.signer));
}

// Refuses a registration that another import of the same name overtook, or that only repeats
// the latest version.
Result<void> requireNewVersion(const Database& database, const DatasetImportRequest& request,
                               const std::optional<DatasetInfo>& previous,
                               const dataset::Manifest& manifest)
{
    auto latest = findDataset(database, request.name);
    if (!latest && latest.error().code() != ErrorCode::NotFound)
        return latest.error();
    const std::string latestId = latest ? latest->id : std::string();
    if (latestId != (previous ? previous->id : std::string()))
        return Error(ErrorCode::AlreadyExists, "Another import registered a new version of '"
                                                   + request.name
                                                   + "' meanwhile; import again to build on it.");
    if (!previous)
        return success();
    auto before =
        dataset::loadManifest(datasetFolder(request.datasetsRoot, previous->id), previous->id);
    if (before && sameContent(manifest, *before))
        return Error(ErrorCode::AlreadyExists, "The sources of '" + request.name
                                                   + "' are unchanged since version "
                                                   + std::to_string(previous->version) + " ("
                                                   + previous->id + "); nothing new was imported.");
    return success();
}

}  // namespace

Datasets::Datasets(AuditedTransactions& gate)
    : gate_(gate)
    , database_(gate.database())
{
}

Result<void> Datasets::admitUpload(const std::string& session, const std::string& name)
{
    auto caller = gate_.admit(
        session, {"dataset.import", permission::kDatasetImport, {}, {"dataset", name}},
        [&](const Caller&, audit::EntryDraft&) { return requireValidName("dataset", name); });
    if (!caller)
        return caller.error();
    return success();
}

Result<void> Datasets::refuseBusyUpload(const std::string& session, const std::string& reason)
{
    return refuseUpload(session, "*", Error(ErrorCode::ResourceExhausted, reason));
}

Error Datasets::refuseUpload(const std::string& session, const std::string& name, const Error& why)
{
    auto caller = gate_.admit(
        session,
        {"dataset.import", permission::kDatasetImport, {}, {"dataset", name.substr(0, 256)}},
        [&](const Caller&, audit::EntryDraft&) -> Result<void> { return why; });
    if (!caller)
        return caller.error();
    return Error(ErrorCode::Internal, "A refused upload was let through; report it.");
}

Result<DatasetImported> Datasets::importDataset(const std::string& session,
                                                const DatasetImportRequest& request,
                                                dataset::Tokenizer& tokenizer,
                                                const crypto::Kek& kek,
                                                const crypto::SigningKey& platformKey)
{
    const AuditedRequest start{
        "dataset.import", permission::kDatasetImport, {}, {"dataset", request.name}};

    // The permission and the name first, so that a refused import reads and writes nothing.
    std::optional<DatasetInfo> previous;
    auto caller =
        gate_.admit(session, start, [&](const Caller&, audit::EntryDraft&) -> Result<void> {
            SEALTRAIN_TRY(requireValidName("dataset", request.name));
            auto latest = findDataset(database_, request.name);
            if (latest)
                previous = std::move(latest).value();
            else if (latest.error().code() != ErrorCode::NotFound)
                return latest.error();
            return success();
        });
    if (!caller)
        return caller.error();

    // The import itself runs outside any transaction: it may take minutes.
    dataset::ImportOptions options = request.options;
    options.name = request.name;
    options.creator = caller->name;
    options.createdAt = toRfc3339(gate_.now());
    options.parent = previous ? previous->id : std::string();
    options.outputRoot = request.datasetsRoot;
    std::error_code ec;
    std::filesystem::create_directories(request.datasetsRoot, ec);
    auto imported = dataset::importDataset(options, tokenizer, kek);
    if (!imported) {
        SEALTRAIN_TRY(
            gate_.recordRefusal(*caller, start, audit::Outcome::Failed, imported.error()));
        return imported.error();
    }
    FolderCleanup folder(imported->folder);  // until the dataset is registered

    DatasetImported result;
    result.folder = imported->folder;
    result.report = imported->report;
    const dataset::Manifest& manifest = imported->manifest;
    auto registered = gate_.perform(
        session,
        {"dataset.import", permission::kDatasetImport, {}, {"dataset", imported->datasetId}},
        [&](const Caller& current, audit::EntryDraft& draft) -> Result<void> {
            SEALTRAIN_TRY(requireNewVersion(database_, request, previous, manifest));
            SEALTRAIN_TRY(dataset::signManifest(imported->folder, platformKey));
            DatasetInfo& info = result.info;
            info.id = imported->datasetId;
            info.name = request.name;
            info.version = previous ? previous->version + 1 : 1;
            info.parent = options.parent;
            info.classification = manifest.classification;
            info.creator = current.name;
            info.records = manifest.train.records + manifest.validation.records;
            info.tokens = manifest.train.tokens + manifest.validation.tokens;
            info.signer = platformKey.publicKey().keyId();
            info.created = gate_.now();
            info.readers = {current.name};
            SEALTRAIN_TRY(insertDataset(database_, info, current.userId));
            addImportDetails(draft, info, result.report);
            return success();
        });
    if (!registered)
        return registered.error();
    folder.keep();
    return result;
}

bool Datasets::isSteward(const Caller& caller)
{
    return gate_.holds(caller, permission::kDatasetGrant, {})
           || gate_.holds(caller, permission::kDatasetImport, {});
}

Result<KeyedPaged<DatasetInfo>> Datasets::list(const std::string& session, const KeyedPage& page)
{
    return gate_.performReturning(
        session, {"dataset.list", permission::kDatasetRead, {}, {"dataset", "*"}},
        [&](const Caller& caller, audit::EntryDraft& draft) -> Result<KeyedPaged<DatasetInfo>> {
            draft.details.push_back(audit::textDetail("after", page.after));
            SEALTRAIN_TRY(checkKeyedPage(page));
            std::vector<DatasetInfo> datasets;
            const bool steward = isSteward(caller);
            SEALTRAIN_TRY(database_.query(
                "SELECT " + std::string(kColumns)
                    + " WHERE ? OR EXISTS (SELECT 1 FROM dataset_grants g WHERE g.dataset_id = "
                      "d.id AND g.user_id = ?) ORDER BY d.name, d.version DESC",
                {std::int64_t{steward ? 1 : 0}, caller.userId},
                [&](const Statement& row) { datasets.push_back(readInfo(row)); }));
            return pageAfter(std::move(datasets), page,
                             [](const DatasetInfo& dataset) { return pageKey(dataset); });
        });
}

Result<DatasetInfo> Datasets::show(const std::string& session, const std::string& reference)
{
    return gate_.performReturning(
        session, datasetRequest(database_, "dataset.show", permission::kDatasetRead, reference),
        [&](const Caller& caller, audit::EntryDraft&) -> Result<DatasetInfo> {
            auto view = findForReader(database_, reference, caller.userId);
            if (!view)
                return view.error();
            if (!view->granted && !isSteward(caller))
                return notFound(reference);  // no hint that a dataset one may not read exists
            DatasetInfo& info = view->dataset;
            SEALTRAIN_TRY(database_.query(
                "SELECT u.name FROM dataset_grants g JOIN users u ON u.id = g.user_id "
                "WHERE g.dataset_id = ? ORDER BY u.name",
                {info.id}, [&](const Statement& row) { info.readers.push_back(row.text(0)); }));
            return info;
        });
}

Result<void> Datasets::grantRead(const std::string& session, const std::string& reference,
                                 const std::string& user)
{
    return performOnReadGrant(
        gate_, session, "dataset.grant", reference, user,
        [&](const Caller& caller, const GrantSubject& subject,
            audit::EntryDraft& draft) -> Result<void> {
            const DatasetInfo& dataset = subject.dataset;
            draft.details.push_back(audit::textDetail("name", dataset.name));
            draft.details.push_back(audit::textDetail("version", std::to_string(dataset.version)));
            if (subject.userId == caller.userId)
                return denied("Nobody grants themselves a read; the importer's own read comes "
                              "with the import.")
                    .because(reason::kOwnApproval);
            if (auto done = database_.run("INSERT INTO dataset_grants (dataset_id, user_id, "
                                          "granted_by, created) VALUES (?, ?, ?, ?)",
                                          {dataset.id, subject.userId, caller.userId, gate_.now()});
                !done)
                return Error(ErrorCode::AlreadyExists, "The user '" + user + "' may already read '"
                                                           + dataset.name + "' version "
                                                           + std::to_string(dataset.version)
                                                           + "; nothing to grant.");
            return success();
        });
}

Result<void> Datasets::revokeRead(const std::string& session, const std::string& reference,
                                  const std::string& user)
{
    return performOnReadGrant(
        gate_, session, "dataset.revoke", reference, user,
        [&](const Caller&, const GrantSubject& subject, audit::EntryDraft&) -> Result<void> {
            const DatasetInfo& dataset = subject.dataset;
            SEALTRAIN_TRY(
                database_.run("DELETE FROM dataset_grants WHERE dataset_id = ? AND user_id = ?",
                              {dataset.id, subject.userId}));
            if (database_.changes() == 0)
                return Error(ErrorCode::NotFound, "The user '" + user + "' holds no read grant on '"
                                                      + dataset.name + "' version "
                                                      + std::to_string(dataset.version)
                                                      + "; check with 'dataset show'.");
            return success();
        });
}

Result<DatasetInfo> Datasets::authorizeRead(const std::string& session,
                                            const std::string& reference,
                                            const std::string& purpose)
{
    return gate_.performReturning(
        session,
        datasetRequest(database_, "dataset.read_key_release", permission::kDatasetRead, reference),
        [&](const Caller& caller, audit::EntryDraft& draft) -> Result<DatasetInfo> {
            draft.details.push_back(audit::textDetail("purpose", purpose));
            auto view = findForReader(database_, reference, caller.userId);
            if (!view)
                return view.error();
            const DatasetInfo& dataset = view->dataset;
            if (!view->granted)
                return denied("The user '" + caller.name + "' holds no read grant on '"
                              + dataset.name + "' version " + std::to_string(dataset.version)
                              + "; ask a data steward for one.");
            draft.details.push_back(audit::textDetail("classification", dataset.classification));
            return dataset;
        });
}

Result<DatasetReaderView> datasetForReader(const Database& database, const std::string& reference,
                                           std::int64_t userId)
{
    return findForReader(database, reference, userId);
}

}  // namespace sealtrain::core
