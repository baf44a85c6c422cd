// The control plane's dataset calls (issue #6): who may import, list, read and grant sealed
// datasets, versions and lineage by name, the platform's signature over each manifest, and the
// audit entry that goes with every decision. The bytes themselves are sealtrain_dataset's.
#include "sealtrain/core/control_plane.h"

#include "control_plane_internal.h"

#include "sealtrain/base/encoding.h"
#include "sealtrain/core/access.h"
#include "sealtrain/dataset/manifest.h"

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
    std::optional<Statement> statement;
    if (reference.rfind("sha256:", 0) == 0) {
        auto s = database.prepare("SELECT " + std::string(kColumns) + " WHERE d.id = ?");
        if (!s)
            return s.error();
        s->bind(1, reference);
        statement.emplace(std::move(s).value());
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
        auto s = database.prepare("SELECT " + std::string(kColumns)
                                  + " WHERE d.name = ? AND (? = 0 OR d.version = ?) "
                                    "ORDER BY d.version DESC LIMIT 1");
        if (!s)
            return s.error();
        s->bind(1, name).bind(2, version).bind(3, version);
        statement.emplace(std::move(s).value());
    }
    auto row = statement->step();
    if (!row)
        return row.error();
    if (!*row)
        return notFound(reference);
    return readInfo(*statement);
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

// What a dataset command's audit entry names: the dataset's id when `reference` resolves, else
// the reference as given (the command then fails, and its refusal names what was asked for).
std::string auditTarget(const Database& database, const std::string& reference)
{
    auto found = findDataset(database, reference);
    return found ? found->id : reference;
}

Result<bool> holdsReadGrant(const Database& database, const std::string& datasetId,
                            std::int64_t userId)
{
    auto statement =
        database.prepare("SELECT 1 FROM dataset_grants WHERE dataset_id = ? AND user_id = ?");
    if (!statement)
        return statement.error();
    statement->bind(1, datasetId).bind(2, userId);
    return statement->step();
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

// Removes a dataset folder that could not be registered, unless it was registered earlier.
class UnregisteredFolder final {
public:
    explicit UnregisteredFolder(std::filesystem::path path)
        : path_(std::move(path))
    {
    }
    ~UnregisteredFolder()
    {
        if (!path_.empty()) {
            std::error_code ec;
            std::filesystem::remove_all(path_, ec);
        }
    }
    UnregisteredFolder(const UnregisteredFolder&) = delete;
    UnregisteredFolder& operator=(const UnregisteredFolder&) = delete;
    void keep() noexcept { path_.clear(); }

private:
    std::filesystem::path path_;
};

}  // namespace

Result<DatasetImported> ControlPlane::importDataset(const std::string& session,
                                                    const DatasetImportRequest& request,
                                                    dataset::Tokenizer& tokenizer,
                                                    const crypto::Kek& kek,
                                                    const crypto::SigningKey& platformKey)
{
    const Request start{
        "dataset.import", permission::kDatasetImport, {}, {"dataset", request.name}};

    // The permission first, so that a refused import reads and writes nothing.
    auto transaction = database_.begin();
    if (!transaction)
        return transaction.error();
    auto caller = authenticate(session);
    if (!caller) {
        (*transaction)->rollback();
        // perform() records the refusal for a session that is not valid, naming its owner.
        auto refused =
            perform(session, start, [](const Caller&, audit::EntryDraft&) { return success(); });
        return refused ? caller.error() : refused.error();
    }
    const audit::Actor actor{audit::ActorKind::User, caller->name, caller->sessionId,
                             std::string(kAuthMethod)};
    if (auto allowed = authorize(*caller, start.permission, start.project); !allowed) {
        (*transaction)->rollback();
        SEALTRAIN_TRY(recordRefusal(actor, start, audit::Outcome::Denied, allowed.error(),
                                    caller->breakGlass));
        return allowed.error();
    }
    std::optional<DatasetInfo> previous;
    if (!isValidName(request.name)) {
        const Error error(ErrorCode::InvalidArgument,
                          "The dataset name must be 1 to 64 of a-z, 0-9, '_' and '-'; choose "
                          "another.");
        (*transaction)->rollback();
        SEALTRAIN_TRY(
            recordRefusal(actor, start, audit::Outcome::Failed, error, caller->breakGlass));
        return error;
    }
    if (auto latest = findDataset(database_, request.name); latest) {
        previous = std::move(latest).value();
    } else if (latest.error().code() != ErrorCode::NotFound) {
        return latest.error();
    }
    SEALTRAIN_TRY((*transaction)->commit());  // the session's last use

    // The import itself runs outside any transaction: it may take minutes.
    dataset::ImportOptions options = request.options;
    options.name = request.name;
    options.creator = caller->name;
    options.createdAt = toRfc3339(now());
    options.parent = previous ? previous->id : std::string();
    options.outputRoot = request.datasetsRoot;
    std::error_code ec;
    std::filesystem::create_directories(request.datasetsRoot, ec);
    auto imported = dataset::importDataset(options, tokenizer, kek);
    if (!imported) {
        SEALTRAIN_TRY(recordRefusal(actor, start, audit::Outcome::Failed, imported.error(),
                                    caller->breakGlass));
        return imported.error();
    }
    UnregisteredFolder folder(imported->folder);

    DatasetImported result;
    result.folder = imported->folder;
    result.report = imported->report;
    const dataset::Manifest& manifest = imported->manifest;
    const Request registration{
        "dataset.import", permission::kDatasetImport, {}, {"dataset", imported->datasetId}};
    auto performed = perform(
        session, registration,
        [&](const Caller& current, audit::EntryDraft& draft) -> Result<void> {
            // Another import of the same name may have registered a version meanwhile.
            auto latest = findDataset(database_, request.name);
            if (!latest && latest.error().code() != ErrorCode::NotFound)
                return latest.error();
            const std::string latestId = latest ? latest->id : std::string();
            if (latestId != options.parent)
                return Error(ErrorCode::AlreadyExists,
                             "Another import registered a new version of '" + request.name
                                 + "' meanwhile; import again to build on it.");
            if (previous) {
                auto before = dataset::loadManifest(
                    datasetFolder(request.datasetsRoot, previous->id), previous->id);
                if (before && sameContent(manifest, *before))
                    return Error(ErrorCode::AlreadyExists, "The sources of '" + request.name
                                                               + "' are unchanged since version "
                                                               + std::to_string(previous->version)
                                                               + " (" + previous->id
                                                               + "); nothing new was imported.");
            }
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
            info.created = now();
            info.readers = {current.name};
            auto insert = database_.prepare(
                "INSERT INTO datasets (id, name, version, parent, classification, creator, "
                "records, tokens, signer, created) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
            if (!insert)
                return insert.error();
            insert->bind(1, info.id).bind(2, info.name).bind(3, info.version);
            if (info.parent.empty())
                insert->bindNull(4);
            else
                insert->bind(4, info.parent);
            insert->bind(5, info.classification)
                .bind(6, current.userId)
                .bind(7, static_cast<std::int64_t>(info.records))
                .bind(8, static_cast<std::int64_t>(info.tokens))
                .bind(9, info.signer)
                .bind(10, info.created);
            if (auto done = insert->run(); !done)
                return Error(ErrorCode::AlreadyExists, "The dataset " + info.id
                                                           + " is already registered; see 'dataset "
                                                             "show'.");
            auto grant = database_.prepare("INSERT INTO dataset_grants (dataset_id, user_id, "
                                           "granted_by, created) VALUES (?, ?, ?, ?)");
            if (!grant)
                return grant.error();
            grant->bind(1, info.id).bind(2, current.userId).bind(3, current.userId).bind(4, now());
            SEALTRAIN_TRY(grant->run());
            draft.details.push_back(audit::textDetail("name", info.name));
            draft.details.push_back(audit::textDetail("version", std::to_string(info.version)));
            if (!info.parent.empty())
                draft.details.push_back(audit::textDetail("parent", info.parent));
            draft.details.push_back(audit::textDetail("classification", info.classification));
            draft.details.push_back(audit::textDetail("records", std::to_string(info.records)));
            draft.details.push_back(audit::textDetail("tokens", std::to_string(info.tokens)));
            draft.details.push_back(
                audit::textDetail("pii_matches", std::to_string(result.report.piiTotal())));
            draft.details.push_back(audit::textDetail("signer", info.signer));
            return success();
        });
    if (!performed)
        return performed.error();
    folder.keep();
    return result;
}

bool ControlPlane::isDatasetSteward(const Caller& caller)
{
    return authorize(caller, permission::kDatasetGrant, {}).ok()
           || authorize(caller, permission::kDatasetImport, {}).ok();
}

Result<std::vector<DatasetInfo>> ControlPlane::listDatasets(const std::string& session)
{
    std::vector<DatasetInfo> datasets;
    auto performed = perform(
        session, {"dataset.list", permission::kDatasetRead, {}, {"dataset", "*"}},
        [&](const Caller& caller, audit::EntryDraft&) -> Result<void> {
            const bool steward = isDatasetSteward(caller);
            auto statement = database_.prepare(
                "SELECT " + std::string(kColumns)
                + " WHERE ? OR EXISTS (SELECT 1 FROM dataset_grants g WHERE g.dataset_id = d.id "
                  "AND g.user_id = ?) ORDER BY d.name, d.version DESC");
            if (!statement)
                return statement.error();
            statement->bind(1, std::int64_t{steward ? 1 : 0}).bind(2, caller.userId);
            return forEachRow(*statement,
                              [&](const Statement& row) { datasets.push_back(readInfo(row)); });
        });
    if (!performed)
        return performed.error();
    return datasets;
}

Result<DatasetInfo> ControlPlane::showDataset(const std::string& session,
                                              const std::string& reference)
{
    const std::string target = auditTarget(database_, reference);
    DatasetInfo info;
    auto performed = perform(
        session, {"dataset.show", permission::kDatasetRead, {}, {"dataset", target}},
        [&](const Caller& caller, audit::EntryDraft&) -> Result<void> {
            auto dataset = findDataset(database_, reference);
            if (!dataset)
                return dataset.error();
            auto granted = holdsReadGrant(database_, dataset->id, caller.userId);
            if (!granted)
                return granted.error();
            const bool steward = isDatasetSteward(caller);
            if (!*granted && !steward)
                return notFound(reference);  // no hint that a dataset one may not read exists
            info = std::move(dataset).value();
            auto readers = database_.prepare(
                "SELECT u.name FROM dataset_grants g JOIN users u ON u.id = g.user_id "
                "WHERE g.dataset_id = ? ORDER BY u.name");
            if (!readers)
                return readers.error();
            readers->bind(1, info.id);
            return forEachRow(*readers,
                              [&](const Statement& row) { info.readers.push_back(row.text(0)); });
        });
    if (!performed)
        return performed.error();
    return info;
}

Result<void> ControlPlane::grantDatasetRead(const std::string& session,
                                            const std::string& reference, const std::string& user)
{
    const std::string target = auditTarget(database_, reference);
    return perform(
        session, {"dataset.grant", permission::kDatasetGrant, {}, {"dataset", target}},
        [&](const Caller& caller, audit::EntryDraft& draft) -> Result<void> {
            auto subject = grantSubject(database_, reference, user, draft);
            if (!subject)
                return subject.error();
            const DatasetInfo& dataset = subject->dataset;
            draft.details.push_back(audit::textDetail("name", dataset.name));
            draft.details.push_back(audit::textDetail("version", std::to_string(dataset.version)));
            auto insert = database_.prepare(
                "INSERT INTO dataset_grants (dataset_id, user_id, granted_by, created) "
                "VALUES (?, ?, ?, ?)");
            if (!insert)
                return insert.error();
            insert->bind(1, dataset.id)
                .bind(2, subject->userId)
                .bind(3, caller.userId)
                .bind(4, now());
            if (auto done = insert->run(); !done)
                return Error(ErrorCode::AlreadyExists, "The user '" + user + "' may already read '"
                                                           + dataset.name + "' version "
                                                           + std::to_string(dataset.version)
                                                           + "; nothing to grant.");
            return success();
        });
}

Result<void> ControlPlane::revokeDatasetRead(const std::string& session,
                                             const std::string& reference, const std::string& user)
{
    const std::string target = auditTarget(database_, reference);
    return perform(session, {"dataset.revoke", permission::kDatasetGrant, {}, {"dataset", target}},
                   [&](const Caller&, audit::EntryDraft& draft) -> Result<void> {
                       auto subject = grantSubject(database_, reference, user, draft);
                       if (!subject)
                           return subject.error();
                       const DatasetInfo& dataset = subject->dataset;
                       auto statement = database_.prepare(
                           "DELETE FROM dataset_grants WHERE dataset_id = ? AND user_id = ?");
                       if (!statement)
                           return statement.error();
                       statement->bind(1, dataset.id).bind(2, subject->userId);
                       SEALTRAIN_TRY(statement->run());
                       if (database_.changes() == 0)
                           return Error(ErrorCode::NotFound, "The user '" + user
                                                                 + "' holds no read grant on '"
                                                                 + dataset.name + "' version "
                                                                 + std::to_string(dataset.version)
                                                                 + "; check with 'dataset show'.");
                       return success();
                   });
}

Result<DatasetInfo> ControlPlane::authorizeDatasetRead(const std::string& session,
                                                       const std::string& reference,
                                                       const std::string& purpose)
{
    const std::string target = auditTarget(database_, reference);
    DatasetInfo info;
    auto performed = perform(
        session, {"dataset.read_key_release", permission::kDatasetRead, {}, {"dataset", target}},
        [&](const Caller& caller, audit::EntryDraft& draft) -> Result<void> {
            draft.details.push_back(audit::textDetail("purpose", purpose));
            auto dataset = findDataset(database_, reference);
            if (!dataset)
                return dataset.error();
            auto granted = holdsReadGrant(database_, dataset->id, caller.userId);
            if (!granted)
                return granted.error();
            if (!*granted)
                return Error(ErrorCode::PermissionDenied,
                             "The user '" + caller.name + "' holds no read grant on '"
                                 + dataset->name + "' version " + std::to_string(dataset->version)
                                 + "; ask a data steward for one.");
            draft.details.push_back(audit::textDetail("classification", dataset->classification));
            info = std::move(dataset).value();
            return success();
        });
    if (!performed)
        return performed.error();
    return info;
}

}  // namespace sealtrain::core
