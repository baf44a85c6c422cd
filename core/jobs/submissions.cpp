// Submissions and approvals bound to a content hash, each decision audited.
#include "sealtrain/core/jobs/submissions.h"

#include "store/audited_transaction.h"

#include "sealtrain/base/encoding.h"
#include "sealtrain/core/access/permissions.h"
#include "sealtrain/core/store/reason_codes.h"

#include <algorithm>
#include <functional>
#include <vector>

namespace sealtrain::core {

namespace {

struct Submission {
    std::string kind;
    std::string name;
    std::string project;
    std::int64_t submitter = 0;
    std::vector<std::uint8_t> contentHash;
};

Result<Submission> loadSubmission(const Database& database, std::int64_t id)
{
    Submission submission;
    auto found = database.queryOne(
        "SELECT kind, name, project, submitter, content_hash FROM submissions WHERE id = ?", {id},
        [&](const Statement& row) {
            submission = {row.text(0), row.text(1), row.text(2), row.integer(3), row.blob(4)};
        });
    if (!found)
        return found.error();
    if (!*found)
        return Error(ErrorCode::NotFound,
                     "There is no submission " + std::to_string(id) + "; check the number.");
    return submission;
}

// The call `verb` on submission `id`. Its project scopes the permission check, so it is read
// before the audited transaction begins; an unknown number is refused inside it, as a job's.
AuditedRequest requestOn(const Database& database, std::int64_t id, std::string_view verb,
                         std::string_view permission)
{
    auto peeked = loadSubmission(database, id);
    const std::string project = peeked ? peeked->project : std::string();
    const std::string kind = peeked ? peeked->kind : std::string("job");
    return {kind + "." + std::string(verb), permission, project, {kind, std::to_string(id)}};
}

// perform for a change of submission `id` that concerns `contentHash` (its entry names it):
// `change` gets the submission as it is now.
Result<void>
performOnSubmission(AuditedTransactions& gate, const std::string& session, std::int64_t id,
                    std::string_view verb, std::string_view permission,
                    const crypto::Sha256Digest& contentHash,
                    const std::function<Result<void>(const Caller&, const Submission&)>& change)
{
    return gate.perform(session, requestOn(gate.database(), id, verb, permission),
                        [&](const Caller& caller, audit::EntryDraft& draft) -> Result<void> {
                            auto submission = loadSubmission(gate.database(), id);
                            if (!submission)
                                return submission.error();
                            draft.details.push_back(
                                audit::textDetail("sha256", toHex(contentHash)));
                            return change(caller, *submission);
                        });
}

}  // namespace

Submissions::Submissions(AuditedTransactions& gate)
    : gate_(gate)
    , database_(gate.database())
{
}

Result<std::int64_t> Submissions::submit(const std::string& session, const std::string& kind,
                                         const std::string& name, const std::string& project,
                                         const crypto::Sha256Digest& contentHash)
{
    return gate_.performReturning(
        session, {kind + ".submit", permission::kJobSubmit, project, {kind, name}},
        [&](const Caller& caller, audit::EntryDraft& draft) -> Result<std::int64_t> {
            SEALTRAIN_TRY(database_.run(
                "INSERT INTO submissions (kind, name, project, submitter, "
                "content_hash, created) VALUES (?, ?, ?, ?, ?, ?)",
                {kind, name, project, caller.userId, SqlValue::blob(contentHash), gate_.now()}));
            const std::int64_t id = database_.lastInsertId();
            draft.details.push_back(audit::textDetail("submission", std::to_string(id)));
            draft.details.push_back(audit::textDetail("sha256", toHex(contentHash)));
            return id;
        });
}

Result<void> Submissions::edit(const std::string& session, std::int64_t id,
                               const crypto::Sha256Digest& contentHash)
{
    return performOnSubmission(
        gate_, session, id, "edit", permission::kJobSubmit, contentHash,
        [&](const Caller& caller, const Submission& submission) -> Result<void> {
            if (submission.submitter != caller.userId)
                return denied("Only the submitter may edit submission " + std::to_string(id)
                              + "; submit your own instead.");
            return database_.run("UPDATE submissions SET content_hash = ? WHERE id = ?",
                                 {SqlValue::blob(contentHash), id});
        });
}

Result<void> Submissions::approve(const std::string& session, std::int64_t id,
                                  const crypto::Sha256Digest& contentHash)
{
    return performOnSubmission(
        gate_, session, id, "approve", permission::kJobApprove, contentHash,
        [&](const Caller& caller, const Submission& submission) -> Result<void> {
            if (submission.submitter == caller.userId)
                return denied("Nobody may approve their own submission; ask another approver.")
                    .because(reason::kOwnApproval);
            if (!std::equal(submission.contentHash.begin(), submission.contentHash.end(),
                            contentHash.begin(), contentHash.end()))
                return denied("The approval is for content that differs from the submission's "
                              "current SHA-256; review the current version and approve that.");
            return database_.run("INSERT INTO approvals (submission_id, approver, content_hash, "
                                 "created) VALUES (?, ?, ?, ?)",
                                 {id, caller.userId, SqlValue::blob(contentHash), gate_.now()});
        });
}

Result<bool> Submissions::isApproved(const std::string& session, std::int64_t id)
{
    return gate_.performReturning(
        session, requestOn(database_, id, "status", permission::kJobSubmit),
        [&](const Caller&, audit::EntryDraft&) -> Result<bool> {
            auto approvals = database_.queryInteger(
                "SELECT count(*) FROM approvals a JOIN submissions s ON s.id = a.submission_id "
                "WHERE s.id = ? AND a.content_hash = s.content_hash AND a.approver != s.submitter",
                {id});
            if (!approvals)
                return approvals.error();
            return *approvals > 0;
        });
}

}  // namespace sealtrain::core
