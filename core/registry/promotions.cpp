// The model registry's promotions (registry.h): asked by one person, approved or rejected by
// another, bound to the version's digest; and the rows the registry's calls read.
#include "sealtrain/core/registry/registry.h"
#include "sealtrain/core/registry/requests.h"

#include "registry/rows.h"
#include "sealtrain/base/utf8.h"
#include "sealtrain/core/access/permissions.h"
#include "sealtrain/core/store/reason_codes.h"
#include "store/audited_transaction.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>

namespace sealtrain::core {
namespace internal {
namespace {

constexpr std::string_view kVersionColumns =
    "v.name, v.version, v.project, v.description, v.job_id, v.step, v.digest, v.sealed_sha256, "
    "v.worker, v.dataset_id, u.name, v.registered, v.statement, v.id, v.source, v.tokenizer, "
    "v.shape, v.base "
    "FROM model_versions v JOIN users u ON u.id = v.registered_by";

constexpr std::string_view kPromotionColumns =
    "p.id, v.name, v.version, p.alias, p.digest, p.reason, r.name, p.requested, p.state, "
    "COALESCE(d.name, ''), COALESCE(p.decided, 0), p.decision_reason, "
    "COALESCE(p.previous_version, 0), COALESCE(p.statement, '') "
    "FROM model_promotions p JOIN model_versions v ON v.id = p.version_id "
    "JOIN users r ON r.id = p.requested_by LEFT JOIN users d ON d.id = p.decided_by";

ModelVersion readVersion(const Statement& row)
{
    ModelVersion version;
    version.name = row.text(0);
    version.version = row.integer(1);
    version.project = row.text(2);
    version.description = row.text(3);
    version.jobId = row.isNull(4) ? 0 : row.integer(4);
    version.step = row.integer(5);
    version.digest = row.text(6);
    version.sealedSha256 = row.text(7);
    version.worker = row.text(8);
    version.datasetId = row.text(9);
    version.registeredBy = row.text(10);
    version.registered = row.integer(11);
    version.statement = row.text(12);
    version.source = row.text(14);
    version.tokenizer = row.text(15);
    version.shape = row.text(16);
    version.base = row.text(17);
    return version;
}

PromotionState parsePromotionState(const std::string& text)
{
    if (text == "approved")
        return PromotionState::Approved;
    if (text == "rejected")
        return PromotionState::Rejected;
    return PromotionState::Pending;
}

Promotion readPromotion(const Statement& row)
{
    Promotion promotion;
    promotion.id = row.integer(0);
    promotion.model = row.text(1);
    promotion.version = row.integer(2);
    promotion.alias = row.text(3);
    promotion.digest = row.text(4);
    promotion.reason = row.text(5);
    promotion.requestedBy = row.text(6);
    promotion.requested = row.integer(7);
    promotion.state = parsePromotionState(row.text(8));
    promotion.decidedBy = row.text(9);
    promotion.decided = row.integer(10);
    promotion.decisionReason = row.text(11);
    promotion.previousVersion = row.integer(12);
    promotion.statement = row.text(13);
    return promotion;
}

Result<void> aliasesOf(const Database& database, ModelVersion& version)
{
    return database.query(
        "SELECT a.alias FROM model_aliases a JOIN model_versions v ON v.id = a.version_id WHERE "
        "v.name = ? AND v.version = ? ORDER BY a.alias",
        {version.name, version.version},
        [&](const Statement& row) { version.aliases.push_back(row.text(0)); });
}

}  // namespace

Result<std::optional<std::string>> modelProject(const Database& database, const std::string& name)
{
    std::optional<std::string> project;
    auto found = database.queryOne("SELECT project FROM model_versions WHERE name = ? LIMIT 1",
                                   {name}, [&](const Statement& row) { project = row.text(0); });
    if (!found)
        return found.error();
    return project;
}

bool mayReadModels(AuditedTransactions& gate, const Caller& caller, const std::string& project)
{
    return gate.holds(caller, permission::kModelRegister, project)
           || gate.holds(caller, permission::kModelApprove, project);
}

Result<ModelVersion> loadVersion(const Database& database, const std::string& name,
                                 std::int64_t version)
{
    std::optional<ModelVersion> loaded;
    auto found = database.queryOne(
        "SELECT " + std::string(kVersionColumns) + " WHERE v.name = ? AND v.version = ?",
        {name, version}, [&](const Statement& row) { loaded = readVersion(row); });
    if (!found)
        return found.error();
    if (!loaded)
        return Error(ErrorCode::NotFound,
                     fmt::format("The model '{}' has no version {}; see 'sealtrainctl model show "
                                 "{}'.",
                                 name, version, name));
    SEALTRAIN_TRY(aliasesOf(database, *loaded));
    return std::move(*loaded);
}

Result<ModelInfo> loadModel(AuditedTransactions& gate, const Caller& caller,
                            const std::string& name)
{
    const Database& database = gate.database();
    ModelInfo info;
    info.name = name;
    SEALTRAIN_TRY(database.query(
        "SELECT " + std::string(kVersionColumns) + " WHERE v.name = ? ORDER BY v.version", {name},
        [&](const Statement& row) { info.versions.push_back(readVersion(row)); }));
    if (info.versions.empty())
        return info;
    info.project = info.versions.front().project;
    if (!mayReadModels(gate, caller, info.project))
        return denied(fmt::format("The user '{}' may neither register nor approve models in "
                                  "project '{}'.",
                                  caller.name, info.project));
    for (ModelVersion& version : info.versions)
        SEALTRAIN_TRY(aliasesOf(database, version));
    SEALTRAIN_TRY(database.query(
        "SELECT " + std::string(kPromotionColumns) + " WHERE v.name = ? ORDER BY p.id", {name},
        [&](const Statement& row) { info.promotions.push_back(readPromotion(row)); }));
    SEALTRAIN_ASSIGN(info.exports, loadExports(database, name));
    return info;
}

Result<ModelVersion> resolveVersion(AuditedTransactions& gate, const Caller& caller,
                                    const ModelReference& reference)
{
    const Database& database = gate.database();
    auto project = modelProject(database, reference.name);
    if (!project)
        return project.error();
    if (!*project)
        return Error(ErrorCode::NotFound, fmt::format("There is no model '{}'; see 'sealtrainctl "
                                                      "model list'.",
                                                      reference.name));
    if (!mayReadModels(gate, caller, **project))
        return denied(fmt::format("The user '{}' may neither register nor approve models in "
                                  "project '{}'.",
                                  caller.name, **project));
    std::int64_t version = reference.version;
    if (!reference.alias.empty()) {
        auto named = database.queryInteger(
            "SELECT v.version FROM model_aliases a JOIN model_versions v ON v.id = a.version_id "
            "WHERE a.name = ? AND a.alias = ?",
            {reference.name, reference.alias});
        if (!named)
            return named.error();
        if (*named == 0)
            return Error(ErrorCode::NotFound,
                         fmt::format("No version of '{}' is {} yet; a promotion a second person "
                                     "approves moves an alias.",
                                     reference.name, reference.alias));
        version = *named;
    } else if (version == 0) {
        auto newest = database.queryInteger(
            "SELECT MAX(version) FROM model_versions WHERE name = ?", {reference.name});
        if (!newest)
            return newest.error();
        version = *newest;
    }
    return loadVersion(database, reference.name, version);
}

Result<Promotion> loadPromotion(const Database& database, std::int64_t id)
{
    std::optional<Promotion> loaded;
    auto found =
        database.queryOne("SELECT " + std::string(kPromotionColumns) + " WHERE p.id = ?", {id},
                          [&](const Statement& row) { loaded = readPromotion(row); });
    if (!found)
        return found.error();
    if (!loaded)
        return Error(
            ErrorCode::NotFound,
            fmt::format("There is no promotion {}; see 'sealtrainctl model show NAME'.", id));
    return std::move(*loaded);
}

}  // namespace internal

namespace {

// The project of promotion `id`'s model, read before the call's transaction (as a job's is).
std::string promotionProject(const Database& database, std::int64_t id)
{
    std::string project;
    (void)database.queryOne("SELECT v.project FROM model_promotions p JOIN model_versions v ON "
                            "v.id = p.version_id WHERE p.id = ?",
                            {id}, [&](const Statement& row) { project = row.text(0); });
    return project;
}

}  // namespace

Result<Promotion> Registry::requestPromotion(const std::string& session, const std::string& name,
                                             std::int64_t version, const std::string& alias,
                                             const std::string& reason)
{
    const auto project = internal::modelProject(gate_.database(), name);
    return gate_.performReturning(
        session,
        {"model.promote_request",
         permission::kModelRegister,
         project && project->has_value() ? **project : "",
         {"model", name + "@" + std::to_string(version)}},
        [&](const Caller& caller, audit::EntryDraft& draft) -> Result<Promotion> {
            draft.details.push_back(audit::textDetail("alias", alias));
            SEALTRAIN_TRY(requireValidName("alias", alias));
            if (reason.size() > kMaxPromotionReason || !isValidUtf8(reason))
                return Error(ErrorCode::InvalidArgument,
                             fmt::format("A promotion's reason is at most {} bytes of UTF-8; "
                                         "shorten it.",
                                         kMaxPromotionReason));
            auto target = internal::loadVersion(gate_.database(), name, version);
            if (!target)
                return target.error();
            if (std::find(target->aliases.begin(), target->aliases.end(), alias)
                != target->aliases.end())
                return Error(
                    ErrorCode::FailedPrecondition,
                    fmt::format("Model version {}@{} is {} already.", name, version, alias));
            auto pending = gate_.database().exists(
                "SELECT 1 FROM model_promotions p JOIN model_versions v ON v.id = p.version_id "
                "WHERE v.name = ? AND p.alias = ? AND p.state = 'pending'",
                {name, alias});
            if (!pending)
                return pending.error();
            if (*pending)
                return Error(ErrorCode::FailedPrecondition,
                             fmt::format("A promotion of '{}' to {} waits for approval already; "
                                         "have it approved or rejected first.",
                                         name, alias));
            auto aliases = gate_.database().queryInteger(
                "SELECT COUNT(*) FROM (SELECT alias FROM model_aliases WHERE name = ? UNION "
                "SELECT p.alias FROM model_promotions p JOIN model_versions v ON v.id = "
                "p.version_id WHERE v.name = ? AND p.state = 'pending') WHERE alias <> ?",
                {name, name, alias});
            if (!aliases)
                return aliases.error();
            if (*aliases >= kMaxModelAliases)
                return Error(ErrorCode::ResourceExhausted,
                             fmt::format("The model '{}' has {} aliases, the most it may have; "
                                         "reuse one of them.",
                                         name, kMaxModelAliases));
            SEALTRAIN_TRY(gate_.database().run(
                "INSERT INTO model_promotions (version_id, alias, digest, reason, requested_by, "
                "requested, state) SELECT id, ?, digest, ?, ?, ?, 'pending' FROM model_versions "
                "WHERE name = ? AND version = ?",
                {alias, reason, caller.userId, gate_.now(), name, version}));
            const std::int64_t id = gate_.database().lastInsertId();
            draft.details.push_back(audit::textDetail("promotion", std::to_string(id)));
            draft.details.push_back(audit::textDetail("digest", target->digest));
            return internal::loadPromotion(gate_.database(), id);
        });
}

Result<Promotion> Registry::approvePromotion(const std::string& session, std::int64_t id,
                                             const std::string& digest)
{
    return decide(session, id, digest, "", true);
}

Result<Promotion> Registry::rejectPromotion(const std::string& session, std::int64_t id,
                                            const std::string& reason)
{
    return decide(session, id, "", reason, false);
}

Result<Promotion> Registry::decide(const std::string& session, std::int64_t id,
                                   const std::string& digest, const std::string& reason,
                                   bool approve)
{
    return gate_.performReturning(
        session,
        {approve ? "model.promote_approve" : "model.promote_reject",
         permission::kModelApprove,
         promotionProject(gate_.database(), id),
         {"promotion", std::to_string(id)}},
        [&](const Caller& caller, audit::EntryDraft& draft) -> Result<Promotion> {
            if (approve)
                draft.details.push_back(audit::textDetail("digest", digest));
            else if (!reason.empty())
                draft.details.push_back(audit::textDetail("reason", reason));
            if (reason.size() > kMaxPromotionReason || !isValidUtf8(reason))
                return Error(ErrorCode::InvalidArgument,
                             fmt::format("A rejection's reason is at most {} bytes of UTF-8; "
                                         "shorten it.",
                                         kMaxPromotionReason));
            auto promotion = internal::loadPromotion(gate_.database(), id);
            if (!promotion)
                return promotion.error();
            draft.details.push_back(audit::textDetail(
                "model", promotion->model + "@" + std::to_string(promotion->version)));
            draft.details.push_back(audit::textDetail("alias", promotion->alias));
            auto requester = gate_.database().queryInteger(
                "SELECT requested_by FROM model_promotions WHERE id = ?", {id});
            if (!requester)
                return requester.error();
            if (*requester == caller.userId)
                return denied("Nobody may decide on their own promotion; ask another approver.")
                    .because(reason::kOwnApproval);
            const PromotionState from = promotion->state;
            if (!requestMayMove(RequestKind::Promotion, from,
                                approve ? PromotionState::Approved : PromotionState::Rejected,
                                RequestMover::Approver, draft.action))
                return Error(
                    ErrorCode::FailedPrecondition,
                    fmt::format("Promotion {} was {} already.", id, promotionStateName(from)));
            const std::int64_t now = gate_.now();
            if (!approve) {
                SEALTRAIN_TRY(gate_.database().run(
                    "UPDATE model_promotions SET state = 'rejected', decided_by = ?, decided = ?, "
                    "decision_reason = ? WHERE id = ? AND state = ?",
                    {caller.userId, now, reason, id, std::string(promotionStateName(from))}));
                return internal::loadPromotion(gate_.database(), id);
            }
            // Not a refusal of the approver: what they reviewed is not this version
            // (FailedPrecondition), so that a client shows them the digest to review.
            if (digest != promotion->digest)
                return Error(ErrorCode::FailedPrecondition,
                             fmt::format("Promotion {} is of {}@{} with digest {}; review that "
                                         "version with 'sealtrainctl model show {}' and approve "
                                         "its digest.",
                                         id, promotion->model, promotion->version,
                                         promotion->digest, promotion->model));
            auto version =
                internal::loadVersion(gate_.database(), promotion->model, promotion->version);
            if (!version)
                return version.error();
            // The files are checked again: a checkpoint altered since it was registered is not
            // promoted.
            SEALTRAIN_TRY(checkVersionFiles(*version));
            auto previous = gate_.database().queryInteger(
                "SELECT v.version FROM model_aliases a JOIN model_versions v ON v.id = "
                "a.version_id WHERE a.name = ? AND a.alias = ?",
                {promotion->model, promotion->alias});
            if (!previous)
                return previous.error();
            Promotion approved = std::move(promotion).value();
            approved.state = PromotionState::Approved;
            approved.decidedBy = caller.name;
            approved.decided = now;
            approved.previousVersion = *previous;
            approved.statement = internal::promotionStatement(approved, *key_);
            SEALTRAIN_TRY(gate_.database().run(
                "UPDATE model_promotions SET state = 'approved', decided_by = ?, decided = ?, "
                "previous_version = ?, statement = ? WHERE id = ? AND state = ?",
                {caller.userId, now, *previous == 0 ? SqlValue(nullptr) : SqlValue(*previous),
                 approved.statement, id, std::string(promotionStateName(from))}));
            SEALTRAIN_TRY(gate_.database().run(
                "INSERT OR REPLACE INTO model_aliases (name, alias, version_id, promotion_id) "
                "SELECT ?, ?, id, ? FROM model_versions WHERE name = ? AND version = ?",
                {approved.model, approved.alias, id, approved.model, approved.version}));
            draft.details.push_back(audit::textDetail("previous", std::to_string(*previous)));
            return approved;
        });
}

}  // namespace sealtrain::core
