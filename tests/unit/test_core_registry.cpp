// The model registry in core (issue #30; docs/registry.md): a recorded checkpoint registered as a
// version, an alias moved only by a promotion a second person approves for exactly the version's
// digest, the signed statements, and the attacks: self-approval, approval of another digest, an
// unrecorded or tampered checkpoint, the wrong role, unbounded input. Each refusal is audited
// with the real actor. The checkpoint files are the data directory's (test_api_registry checks
// them for real); here the registry's check of them is a stand-in the test can make fail.
#include "worker_world.h"

#include "sealtrain/audit/entry.h"
#include "sealtrain/core/registry/registry.h"
#include "sealtrain/core/registry/requests.h"
#include "sealtrain/crypto/dsse.h"

#include <QtTest/QtTest>

#include <nlohmann/json.hpp>

#include <set>

class TestCoreRegistry : public QObject {
    Q_OBJECT

private slots:
    void versionPromotedOnlyBySecondPersonForItsDigest();
    void tamperedOrUnrecordedCheckpointIsRefused();
    void onlyModelRolesRegisterPromoteAndRead();
    void rejectedPromotionMovesNothing();
    void whatACallerMayMakeItKeepIsBounded();
    void exportNeedsASecondPersonAndGoesToWhoAsked();
    void exportAppliesTheDataRule();
    void anExportIsDecidedOnce();
    void onlyModelApproveDecidesOnAnExport();
    void aModelBelongsToOneProject();
    void registeringNeedsToSeeTheJob();
    void aliasNamesAreChecked();
    void reasonsAndDescriptionsAreBoundedUtf8();
    void approvedPromotionStatementNamesWhatItChanged();
    void referencesAreParsed();
    void requestStatesAreTheDocumentedTable();
};

using namespace sealtrain;
using testing::WorkerWorld;

namespace {

// A world with eve's job `notes-run` run by n1 to its end, checkpoints at steps 2 and 4
// recorded, and the registry given a key and a check that fails for the steps in `tampered`.
struct RegistryWorld {
    WorkerWorld w;
    crypto::SigningKey key = crypto::SigningKey::generate().value();
    std::set<std::int64_t> tampered;
    std::int64_t job = 0;
    int checks = 0;

    int built = 0;
    QTemporaryDir staging;

    RegistryWorld()
    {
        registry().setSigningKey(&key);
        registry().setExportBuilder(
            [this](const core::JobCheckpoint& recorded, const std::string&,
                   const std::string& name) -> Result<core::ExportFolder> {
                ++built;
                return core::ExportFolder{{{name + ".txt", {1, 2, 3}}},
                                          "sha256:" + recorded.plaintextSha256};
            },
            staging.filePath("downloads").toStdString());
        registry().setCheckpointCheck([this](const core::JobCheckpoint& recorded,
                                             const std::string& signerPem) -> Result<std::string> {
            ++checks;
            if (signerPem.find("PUBLIC KEY") == std::string::npos)
                return Error(ErrorCode::Internal, "The signer's key was not passed.");
            if (tampered.count(recorded.step) != 0)
                return Error(ErrorCode::Integrity, "The sealed checkpoint is not the file the "
                                                   "audit log records.");
            return std::string(R"({"payload":"e30=","payloadType":)"
                               R"("application/vnd.in-toto+json","signatures":[]})");
        });
        job = w.queuedJob("notes-run", "notes", "cpu");
        const auto worker = w.enrolled("n1", "cpu");
        auto taken = w.scheduler().take(worker);
        if (!taken || !*taken)
            qFatal("n1 got no job");
        for (const std::int64_t step : {2, 4}) {
            const std::string plain(64, step == 2 ? 'a' : 'b');
            if (!w.scheduler().recordCheckpoint(worker,
                                                {job, step, 1, "", std::string(64, 'c'), plain,
                                                 "checkpoint-" + std::to_string(step), 0},
                                                []() -> Result<void> { return success(); }))
                qFatal("cannot record step %lld", static_cast<long long>(step));
        }
        if (!w.scheduler().finish(worker, job, 1, true, 0.0, ""))
            qFatal("cannot finish the job");
    }

    core::Registry& registry() const { return w.t.plane->registry(); }
    const std::string& session(const std::string& user) { return w.session(user); }

    // A job of eve's in `project` (which the policy is given a budget), approved by ann and run
    // to its end by a worker of its own named `node`, with one checkpoint recorded at step 2.
    std::int64_t finishedJob(const std::string& name, const std::string& project,
                             const std::string& node)
    {
        auto policy = core::parseJobPolicy(core::defaultJobPolicyText()).value();
        policy.budgets[project].gpuHours = 10.0;
        w.jobs().setPolicy(policy);
        w.scheduler().setPolicy(policy);
        std::string spec = testing::jobSpec(name, "notes", "cpu");
        spec.replace(spec.find(R"("demo")"), 6, "\"" + project + "\"");
        auto submitted = w.jobs().submit(session("eve"), spec);
        if (!submitted || submitted->state != core::JobState::Vetted)
            qFatal("cannot submit %s", name.c_str());
        if (!w.jobs().approve(session("ann"), submitted->id, submitted->specSha256))
            qFatal("cannot approve %s", name.c_str());
        if (!w.scheduler().enqueue(submitted->id))
            qFatal("cannot queue %s", name.c_str());
        const auto worker = w.enrolled(node, "cpu");
        auto taken = w.scheduler().take(worker);
        if (!taken || !*taken)
            qFatal("%s got no job", node.c_str());
        if (!w.scheduler().recordCheckpoint(worker,
                                            {submitted->id, 2, 1, "", std::string(64, 'e'),
                                             std::string(64, 'd'), "checkpoint-2", 0},
                                            []() -> Result<void> { return success(); }))
            qFatal("cannot record a checkpoint of %s", name.c_str());
        if (!w.scheduler().finish(worker, submitted->id, 1, true, 0.0, ""))
            qFatal("cannot finish %s", name.c_str());
        return submitted->id;
    }
};

// The statement inside `envelopeJson`, once its signature verifies under `key`.
nlohmann::json statementOf(const std::string& envelopeJson, const crypto::PublicKey& key)
{
    auto envelope = crypto::DsseEnvelope::fromJson(envelopeJson);
    if (!envelope)
        qFatal("not an envelope: %s", envelope.error().message().c_str());
    if (!crypto::verifyDsse(*envelope, key))
        qFatal("the envelope does not verify");
    return nlohmann::json::parse(std::string(envelope->payload.begin(), envelope->payload.end()));
}

}  // namespace

void TestCoreRegistry::versionPromotedOnlyBySecondPersonForItsDigest()
{
    RegistryWorld r;
    auto version =
        r.registry().registerVersion(r.session("eve"), {"notes-model", "the first try", r.job, 0});
    QVERIFY2(version, version ? "" : version.error().message().c_str());
    QCOMPARE(version->version, std::int64_t{1});
    QCOMPARE(version->step, std::int64_t{4});
    QCOMPARE(version->digest, "sha256:" + std::string(64, 'b'));
    QCOMPARE(version->project, std::string("demo"));
    QCOMPARE(r.w.last().action, std::string("model.register"));
    QCOMPARE(r.w.last().outcome, audit::Outcome::Ok);
    QCOMPARE(r.w.last().target.id, std::string("notes-model@1"));
    QCOMPARE(r.checks, 2);  // the whole chain: steps 2 and 4
    const auto registered = statementOf(version->statement, r.key.publicKey());
    QCOMPARE(registered["predicateType"].get<std::string>(),
             std::string("https://sealtrain.dev/registry/model-version/v1"));
    QCOMPARE(registered["subject"][0]["name"].get<std::string>(), std::string("notes-model@1"));
    QCOMPARE(registered["subject"][0]["digest"]["sha256"].get<std::string>(), std::string(64, 'b'));
    QCOMPARE(registered["predicate"]["job"]["approver"].get<std::string>(), std::string("ann"));
    QCOMPARE(registered["predicate"]["checkpoints"].size(), std::size_t{2});

    auto asked = r.registry().requestPromotion(r.session("eve"), "notes-model", 1, "production",
                                               "best validation loss so far");
    QVERIFY2(asked, asked ? "" : asked.error().message().c_str());
    QCOMPARE(asked->state, core::PromotionState::Pending);
    QCOMPARE(asked->digest, version->digest);

    // Whoever asked may not approve, even holding model.approve.
    QVERIFY(r.w.t.plane->access().grantRole(r.session("alice"), "eve", "approver", "").ok());
    auto self = r.registry().approvePromotion(r.session("eve"), asked->id, asked->digest);
    QVERIFY(!self);
    QCOMPARE(self.error().code(), ErrorCode::PermissionDenied);
    QCOMPARE(r.w.last().action, std::string("model.promote_approve"));
    QCOMPARE(r.w.last().outcome, audit::Outcome::Denied);
    QCOMPARE(r.w.last().actor.id, std::string("eve"));

    // An approval of another digest is refused and moves nothing.
    const std::string other = "sha256:" + std::string(64, 'a');
    auto wrong = r.registry().approvePromotion(r.session("ann"), asked->id, other);
    QVERIFY(!wrong);
    QCOMPARE(wrong.error().code(), ErrorCode::FailedPrecondition);
    QCOMPARE(r.w.last().outcome, audit::Outcome::Failed);
    QCOMPARE(r.w.last().actor.id, std::string("ann"));
    auto unmoved = r.registry().resolve(r.session("ann"), "notes-model@production", "sample");
    QVERIFY(!unmoved);
    QCOMPARE(unmoved.error().code(), ErrorCode::NotFound);

    auto approved = r.registry().approvePromotion(r.session("ann"), asked->id, asked->digest);
    QVERIFY2(approved, approved ? "" : approved.error().message().c_str());
    QCOMPARE(approved->state, core::PromotionState::Approved);
    QCOMPARE(approved->decidedBy, std::string("ann"));
    QCOMPARE(r.w.last().action, std::string("model.promote_approve"));
    QCOMPARE(r.w.last().outcome, audit::Outcome::Ok);
    const auto promoted = statementOf(approved->statement, r.key.publicKey());
    QCOMPARE(promoted["predicate"]["alias"].get<std::string>(), std::string("production"));
    QCOMPARE(promoted["predicate"]["requested_by"].get<std::string>(), std::string("eve"));
    QCOMPARE(promoted["predicate"]["approved_by"].get<std::string>(), std::string("ann"));
    QCOMPARE(promoted["subject"][0]["digest"]["sha256"].get<std::string>(), std::string(64, 'b'));

    auto resolved = r.registry().resolve(r.session("eve"), "notes-model@production", "sample");
    QVERIFY2(resolved, resolved ? "" : resolved.error().message().c_str());
    QCOMPARE(resolved->version.version, std::int64_t{1});
    QCOMPARE(resolved->checkpoint.step, std::int64_t{4});
    QCOMPARE(r.w.last().action, std::string("model.use"));
    const auto details = r.w.last().details;
    QVERIFY(std::any_of(details.begin(), details.end(), [&](const audit::Detail& detail) {
        return detail.name == "digest"
               && std::string(detail.value.begin(), detail.value.end()) == version->digest;
    }));

    auto shown = r.registry().show(r.session("ann"), "notes-model");
    QVERIFY2(shown, shown ? "" : shown.error().message().c_str());
    QCOMPARE(shown->versions.at(0).aliases, std::vector<std::string>{"production"});
    QCOMPARE(shown->promotions.size(), std::size_t{1});
    auto listed = r.registry().list(r.session("eve"));
    QVERIFY2(listed, listed ? "" : listed.error().message().c_str());
    QCOMPARE(listed->size(), std::size_t{1});
    QCOMPARE(listed->at(0).aliases.at(0).first, std::string("production"));

    // A second version of the older checkpoint, promoted over the first: the statement names the
    // version the alias named before.
    auto older = r.registry().registerVersion(r.session("eve"), {"notes-model", "", r.job, 2});
    QVERIFY2(older, older ? "" : older.error().message().c_str());
    QCOMPARE(older->version, std::int64_t{2});
    auto again =
        r.registry().requestPromotion(r.session("eve"), "notes-model", 2, "production", "");
    QVERIFY2(again, again ? "" : again.error().message().c_str());
    auto moved = r.registry().approvePromotion(r.session("ann"), again->id, older->digest);
    QVERIFY2(moved, moved ? "" : moved.error().message().c_str());
    QCOMPARE(moved->previousVersion, std::int64_t{1});
    QCOMPARE(
        r.registry().resolve(r.session("eve"), "notes-model@production", "sample")->version.version,
        std::int64_t{2});
    QCOMPARE(r.registry().resolve(r.session("eve"), "notes-model", "sample")->version.version,
             std::int64_t{2});
}

void TestCoreRegistry::tamperedOrUnrecordedCheckpointIsRefused()
{
    RegistryWorld r;
    auto unrecorded = r.registry().registerVersion(r.session("eve"), {"m", "", r.job, 3});
    QVERIFY(!unrecorded);
    QCOMPARE(unrecorded.error().code(), ErrorCode::NotFound);
    QCOMPARE(r.w.last().action, std::string("model.register"));
    QCOMPARE(r.w.last().outcome, audit::Outcome::Failed);

    r.tampered.insert(2);  // an older link of the chain
    auto tampered = r.registry().registerVersion(r.session("eve"), {"m", "", r.job, 4});
    QVERIFY(!tampered);
    QCOMPARE(tampered.error().code(), ErrorCode::Integrity);
    QCOMPARE(r.w.last().outcome, audit::Outcome::Failed);
    QCOMPARE(r.w.last().actor.id, std::string("eve"));
    auto none = r.registry().show(r.session("eve"), "m");
    QVERIFY(!none);
    QCOMPARE(none.error().code(), ErrorCode::NotFound);

    // Registered while intact, altered before the approval: not promoted, not used.
    r.tampered.clear();
    auto version = r.registry().registerVersion(r.session("eve"), {"m", "", r.job, 4});
    QVERIFY2(version, version ? "" : version.error().message().c_str());
    auto asked = r.registry().requestPromotion(r.session("eve"), "m", 1, "staging", "");
    QVERIFY2(asked, asked ? "" : asked.error().message().c_str());
    r.tampered.insert(4);
    auto approved = r.registry().approvePromotion(r.session("ann"), asked->id, version->digest);
    QVERIFY(!approved);
    QCOMPARE(approved.error().code(), ErrorCode::Integrity);
    QCOMPARE(r.w.last().outcome, audit::Outcome::Failed);
    QCOMPARE(r.registry().show(r.session("ann"), "m")->promotions.at(0).state,
             core::PromotionState::Pending);
    auto used = r.registry().resolve(r.session("eve"), "m@1", "sample");
    QVERIFY(!used);
    QCOMPARE(used.error().code(), ErrorCode::Integrity);
    QCOMPARE(r.w.last().action, std::string("model.use"));
    QCOMPARE(r.w.last().outcome, audit::Outcome::Failed);

    // The same checkpoint is one version of a model, not two.
    r.tampered.clear();
    auto twice = r.registry().registerVersion(r.session("eve"), {"m", "", r.job, 4});
    QVERIFY(!twice);
    QCOMPARE(twice.error().code(), ErrorCode::AlreadyExists);
}

void TestCoreRegistry::onlyModelRolesRegisterPromoteAndRead()
{
    RegistryWorld r;
    for (const std::string user : {"rita", "olivia", "sam", "ann"}) {
        auto refused = r.registry().registerVersion(r.session(user), {"m", "", r.job, 0});
        QVERIFY2(!refused, user.c_str());
        QCOMPARE(refused.error().code(), ErrorCode::PermissionDenied);
        QCOMPARE(r.w.last().outcome, audit::Outcome::Denied);
        QCOMPARE(r.w.last().actor.id, user);
    }
    auto anonymous = r.registry().registerVersion("not-a-session", {"m", "", r.job, 0});
    QVERIFY(!anonymous);
    QCOMPARE(anonymous.error().code(), ErrorCode::Unauthenticated);
    QCOMPARE(r.checks, 0);  // nobody refused got as far as the files

    QVERIFY(r.registry().registerVersion(r.session("eve"), {"m", "", r.job, 0}));
    for (const std::string user : {"rita", "olivia", "sam"}) {
        auto shown = r.registry().show(r.session(user), "m");
        QVERIFY2(!shown, user.c_str());
        QCOMPARE(shown.error().code(), ErrorCode::PermissionDenied);
        QCOMPARE(r.w.last().actor.id, user);
        auto listed = r.registry().list(r.session(user));
        QVERIFY2(listed, listed ? "" : listed.error().message().c_str());
        QVERIFY2(listed->empty(), user.c_str());
        auto used = r.registry().resolve(r.session(user), "m", "sample");
        QVERIFY(!used);
        QCOMPARE(used.error().code(), ErrorCode::PermissionDenied);
    }
    auto byApprover = r.registry().requestPromotion(r.session("ann"), "m", 1, "dev", "");
    QVERIFY(!byApprover);
    QCOMPARE(byApprover.error().code(), ErrorCode::PermissionDenied);
    auto asked = r.registry().requestPromotion(r.session("eve"), "m", 1, "dev", "");
    QVERIFY2(asked, asked ? "" : asked.error().message().c_str());
    auto byEngineer = r.registry().approvePromotion(r.session("sam"), asked->id, asked->digest);
    QVERIFY(!byEngineer);
    QCOMPARE(byEngineer.error().code(), ErrorCode::PermissionDenied);
    QCOMPARE(r.w.last().actor.id, std::string("sam"));

    // Model permissions are a data-and-job duty: no role gives them with administration or
    // infrastructure.
    for (const std::string other : {"user.manage", "worker.manage"}) {
        auto mixed =
            r.w.t.plane->access().createRole(r.session("alice"), "mixed", {"model.approve", other});
        QVERIFY2(!mixed, other.c_str());
        QCOMPARE(mixed.error().code(), ErrorCode::PermissionDenied);
    }
}

void TestCoreRegistry::rejectedPromotionMovesNothing()
{
    RegistryWorld r;
    QVERIFY(r.registry().registerVersion(r.session("eve"), {"m", "", r.job, 0}));
    auto asked = r.registry().requestPromotion(r.session("eve"), "m", 1, "production", "");
    QVERIFY2(asked, asked ? "" : asked.error().message().c_str());
    auto own = r.registry().rejectPromotion(r.session("eve"), asked->id, "never mind");
    QVERIFY(!own);
    QCOMPARE(own.error().code(), ErrorCode::PermissionDenied);
    auto rejected = r.registry().rejectPromotion(r.session("ann"), asked->id, "not validated");
    QVERIFY2(rejected, rejected ? "" : rejected.error().message().c_str());
    QCOMPARE(rejected->state, core::PromotionState::Rejected);
    QCOMPARE(rejected->decisionReason, std::string("not validated"));
    QCOMPARE(r.w.last().action, std::string("model.promote_reject"));
    auto late = r.registry().approvePromotion(r.session("ann"), asked->id, asked->digest);
    QVERIFY(!late);
    QCOMPARE(late.error().code(), ErrorCode::FailedPrecondition);
    QVERIFY(!r.registry().resolve(r.session("eve"), "m@production", "sample"));
}

void TestCoreRegistry::whatACallerMayMakeItKeepIsBounded()
{
    RegistryWorld r;
    auto long_ = r.registry().registerVersion(
        r.session("eve"), {"m", std::string(core::kMaxModelDescription + 1, 'x'), r.job, 0});
    QVERIFY(!long_);
    QCOMPARE(long_.error().code(), ErrorCode::InvalidArgument);
    auto badName = r.registry().registerVersion(r.session("eve"), {"../m", "", r.job, 0});
    QVERIFY(!badName);
    QCOMPARE(badName.error().code(), ErrorCode::InvalidArgument);
    QVERIFY(r.registry().registerVersion(r.session("eve"), {"m", "", r.job, 0}));
    auto longReason = r.registry().requestPromotion(
        r.session("eve"), "m", 1, "dev", std::string(core::kMaxPromotionReason + 1, 'x'));
    QVERIFY(!longReason);
    QCOMPARE(longReason.error().code(), ErrorCode::InvalidArgument);
    QVERIFY(r.registry().requestPromotion(r.session("eve"), "m", 1, "dev", ""));
    auto twice = r.registry().requestPromotion(r.session("eve"), "m", 1, "dev", "");
    QVERIFY(!twice);
    QCOMPARE(twice.error().code(), ErrorCode::FailedPrecondition);
    for (std::int64_t i = 1; i < core::kMaxModelAliases; ++i)
        QVERIFY(r.registry().requestPromotion(r.session("eve"), "m", 1,
                                              "alias-" + std::to_string(i), ""));
    auto tooMany = r.registry().requestPromotion(r.session("eve"), "m", 1, "one-more", "");
    QVERIFY(!tooMany);
    QCOMPARE(tooMany.error().code(), ErrorCode::ResourceExhausted);
    QCOMPARE(r.w.last().outcome, audit::Outcome::Failed);
}

void TestCoreRegistry::exportNeedsASecondPersonAndGoesToWhoAsked()
{
    RegistryWorld r;
    auto version = r.registry().registerVersion(r.session("eve"), {"m", "", r.job, 0});
    QVERIFY2(version, version ? "" : version.error().message().c_str());
    auto byAlias = r.registry().requestExport(r.session("eve"), "m@production", "");
    QVERIFY(!byAlias);
    QCOMPARE(byAlias.error().code(), ErrorCode::InvalidArgument);
    auto asked = r.registry().requestExport(r.session("eve"), "m@1", "for a partner");
    QVERIFY2(asked, asked ? "" : asked.error().message().c_str());
    QCOMPARE(r.w.last().action, std::string("model.export_request"));

    // Not before an approval, and not by whoever asked, whatever roles they hold.
    auto early = r.registry().exportModel(r.session("eve"), asked->id);
    QVERIFY(!early);
    QCOMPARE(early.error().code(), ErrorCode::PermissionDenied);
    QCOMPARE(r.w.last().action, std::string("model.export"));
    QCOMPARE(r.w.last().outcome, audit::Outcome::Denied);
    QVERIFY(r.w.t.plane->access().grantRole(r.session("alice"), "eve", "approver", "").ok());
    auto self = r.registry().approveExport(r.session("eve"), asked->id, asked->digest);
    QVERIFY(!self);
    QCOMPARE(self.error().code(), ErrorCode::PermissionDenied);
    QCOMPARE(r.w.last().outcome, audit::Outcome::Denied);
    auto wrong =
        r.registry().approveExport(r.session("ann"), asked->id, "sha256:" + std::string(64, 'a'));
    QVERIFY(!wrong);
    QCOMPARE(wrong.error().code(), ErrorCode::FailedPrecondition);
    QCOMPARE(r.built, 0);

    auto approved = r.registry().approveExport(r.session("ann"), asked->id, version->digest);
    QVERIFY2(approved, approved ? "" : approved.error().message().c_str());
    QCOMPARE(approved->state, core::PromotionState::Approved);
    // Someone else of the project, even holding model.register, does not receive it.
    QVERIFY(r.w.t.plane->access().grantRole(r.session("alice"), "ann", "engineer", "").ok());
    auto byAnn = r.registry().exportModel(r.session("ann"), asked->id);
    QVERIFY(!byAnn);
    QCOMPARE(byAnn.error().code(), ErrorCode::PermissionDenied);
    QCOMPARE(r.built, 0);
    auto folder = r.registry().exportModel(r.session("eve"), asked->id);
    QVERIFY2(folder, folder ? "" : folder.error().message().c_str());
    QCOMPARE(r.built, 1);
    QCOMPARE(folder->files().at(0).name, std::string("m-1.txt"));
    std::vector<std::uint8_t> received;
    QVERIFY(folder->read(0, 2, [&](std::span<const std::uint8_t> piece) {
        received.insert(received.end(), piece.begin(), piece.end());
        return true;
    }));
    QCOMPARE(received, (std::vector<std::uint8_t>{1, 2, 3}));
    QCOMPARE(r.w.last().action, std::string("model.export"));
    QCOMPARE(r.w.last().outcome, audit::Outcome::Ok);
    const auto details = r.w.last().details;
    QVERIFY(std::any_of(details.begin(), details.end(), [&](const audit::Detail& detail) {
        return detail.name == "folder_digest"
               && std::string(detail.value.begin(), detail.value.end()) == folder->digest();
    }));
    auto shown = r.registry().show(r.session("ann"), "m");
    QVERIFY2(shown, shown ? "" : shown.error().message().c_str());
    QCOMPARE(shown->exports.at(0).downloads, std::int64_t{1});
    QCOMPARE(shown->exports.at(0).folderDigest, folder->digest());

    // Altered on disk since: not exported.
    r.tampered.insert(4);
    auto tampered = r.registry().exportModel(r.session("eve"), asked->id);
    QVERIFY(!tampered);
    QCOMPARE(tampered.error().code(), ErrorCode::Integrity);
    QCOMPARE(r.built, 1);

    // A rejected export is never built.
    r.tampered.clear();
    auto second = r.registry().requestExport(r.session("eve"), "m@1", "");
    QVERIFY2(second, second ? "" : second.error().message().c_str());
    QVERIFY(r.registry().rejectExport(r.session("ann"), second->id, "no partner agreement"));
    auto rejected = r.registry().exportModel(r.session("eve"), second->id);
    QVERIFY(!rejected);
    QCOMPARE(rejected.error().code(), ErrorCode::PermissionDenied);
    QCOMPARE(r.built, 1);
}

// Issue #48 item 3: an export is a way out like sampling: its requester must read the dataset the
// version was trained on, and its classification must be one the policy lets leave, at the
// request and again at the download (a read revoked after the approval stops it), each refusal
// audited with the requester as the actor.
void TestCoreRegistry::exportAppliesTheDataRule()
{
    RegistryWorld r;
    auto version = r.registry().registerVersion(r.session("eve"), {"m", "", r.job, 0});
    QVERIFY2(version, version ? "" : version.error().message().c_str());
    auto asked = r.registry().requestExport(r.session("eve"), "m@1", "for a partner");
    QVERIFY2(asked, asked ? "" : asked.error().message().c_str());
    QVERIFY(r.registry().approveExport(r.session("ann"), asked->id, version->digest));
    // The steward takes eve's read away after the approval: no download.
    QVERIFY(r.w.t.plane->datasets().revokeRead(r.session("sam"), "notes", "eve"));
    auto revoked = r.registry().exportModel(r.session("eve"), asked->id);
    QVERIFY(!revoked);
    QCOMPARE(revoked.error().code(), ErrorCode::PermissionDenied);
    QVERIFY2(revoked.error().message().find("read grant") != std::string::npos,
             revoked.error().message().c_str());
    QCOMPARE(r.w.last().action, std::string("model.export"));
    QCOMPARE(r.w.last().outcome, audit::Outcome::Denied);
    QCOMPARE(r.w.last().actor.id, std::string("eve"));
    QCOMPARE(r.built, 0);
    auto again = r.registry().requestExport(r.session("eve"), "m@1", "once more");
    QVERIFY(!again);
    QCOMPARE(again.error().code(), ErrorCode::PermissionDenied);
    QCOMPARE(r.w.last().action, std::string("model.export_request"));
    // Given back, it goes out; then the policy stops letting internal data leave.
    QVERIFY(r.w.t.plane->datasets().grantRead(r.session("sam"), "notes", "eve"));
    QVERIFY(r.registry().exportModel(r.session("eve"), asked->id));
    QCOMPARE(r.built, 1);
    core::JobPolicy policy = r.w.scheduler().policy();
    policy.exportClassifications = {"public"};
    r.w.scheduler().setPolicy(policy);
    auto classified = r.registry().exportModel(r.session("eve"), asked->id);
    QVERIFY(!classified);
    QCOMPARE(classified.error().code(), ErrorCode::PermissionDenied);
    QVERIFY2(classified.error().message().find("exports.classifications") != std::string::npos,
             classified.error().message().c_str());
    QVERIFY(!r.registry().requestExport(r.session("eve"), "m@1", "and again"));
    QCOMPARE(r.built, 1);
}

// docs/registry.md, "Exports" (issue #48): an export is decided once: an approved one is not
// rejected afterwards, nor a rejected one approved; the first decision stands.
void TestCoreRegistry::anExportIsDecidedOnce()
{
    RegistryWorld r;
    auto version = r.registry().registerVersion(r.session("eve"), {"m", "", r.job, 0});
    QVERIFY2(version, version ? "" : version.error().message().c_str());
    auto first = r.registry().requestExport(r.session("eve"), "m@1", "for a partner");
    QVERIFY2(first, first ? "" : first.error().message().c_str());
    QVERIFY(r.registry().approveExport(r.session("ann"), first->id, version->digest));
    auto unapproved = r.registry().rejectExport(r.session("ann"), first->id, "changed my mind");
    QVERIFY(!unapproved);
    QCOMPARE(unapproved.error().code(), ErrorCode::FailedPrecondition);
    QCOMPARE(r.w.last().action, std::string("model.export_reject"));
    QCOMPARE(r.w.last().outcome, audit::Outcome::Failed);

    auto second = r.registry().requestExport(r.session("eve"), "m@1", "for another partner");
    QVERIFY2(second, second ? "" : second.error().message().c_str());
    QVERIFY(r.registry().rejectExport(r.session("ann"), second->id, "no partner agreement"));
    auto late = r.registry().approveExport(r.session("ann"), second->id, version->digest);
    QVERIFY(!late);
    QCOMPARE(late.error().code(), ErrorCode::FailedPrecondition);
    QCOMPARE(r.w.last().action, std::string("model.export_approve"));
    QCOMPARE(r.w.last().outcome, audit::Outcome::Failed);

    auto shown = r.registry().show(r.session("ann"), "m");
    QVERIFY2(shown, shown ? "" : shown.error().message().c_str());
    QCOMPARE(shown->exports.at(0).state, core::PromotionState::Approved);
    QCOMPARE(shown->exports.at(1).state, core::PromotionState::Rejected);
    QCOMPARE(shown->exports.at(1).decisionReason, std::string("no partner agreement"));
    QVERIFY(!r.registry().exportModel(r.session("eve"), second->id));
    QCOMPARE(r.built, 0);
    QVERIFY(r.registry().exportModel(r.session("eve"), first->id));
    QCOMPARE(r.built, 1);
}

// docs/registry.md, "Who may" (issue #48): an export is approved or rejected only with
// model.approve in the model's project; anyone else is refused, audited, and it stays pending.
void TestCoreRegistry::onlyModelApproveDecidesOnAnExport()
{
    RegistryWorld r;
    auto version = r.registry().registerVersion(r.session("eve"), {"m", "", r.job, 0});
    QVERIFY2(version, version ? "" : version.error().message().c_str());
    auto asked = r.registry().requestExport(r.session("eve"), "m@1", "");
    QVERIFY2(asked, asked ? "" : asked.error().message().c_str());
    for (const std::string user : {"sam", "rita", "olivia"}) {
        auto approved = r.registry().approveExport(r.session(user), asked->id, version->digest);
        QVERIFY2(!approved, user.c_str());
        QCOMPARE(approved.error().code(), ErrorCode::PermissionDenied);
        QCOMPARE(r.w.last().action, std::string("model.export_approve"));
        QCOMPARE(r.w.last().outcome, audit::Outcome::Denied);
        QCOMPARE(r.w.last().actor.id, user);
        auto rejected = r.registry().rejectExport(r.session(user), asked->id, "not today");
        QVERIFY2(!rejected, user.c_str());
        QCOMPARE(rejected.error().code(), ErrorCode::PermissionDenied);
        QCOMPARE(r.w.last().action, std::string("model.export_reject"));
    }
    auto shown = r.registry().show(r.session("ann"), "m");
    QVERIFY2(shown, shown ? "" : shown.error().message().c_str());
    QCOMPARE(shown->exports.at(0).state, core::PromotionState::Pending);
    QVERIFY(!r.registry().exportModel(r.session("eve"), asked->id));
    QCOMPARE(r.built, 0);
}

// docs/registry.md, "Versions" (issue #48): a model belongs to the project of its first version;
// a job of another project is refused under its name (audited as denied) and registered under
// another.
void TestCoreRegistry::aModelBelongsToOneProject()
{
    RegistryWorld r;
    QVERIFY(r.registry().registerVersion(r.session("eve"), {"m", "", r.job, 0}));
    const std::int64_t elsewhere = r.finishedJob("lab-run", "lab", "n2");
    const int checked = r.checks;
    auto refused = r.registry().registerVersion(r.session("eve"), {"m", "", elsewhere, 0});
    QVERIFY(!refused);
    QCOMPARE(refused.error().code(), ErrorCode::PermissionDenied);
    QCOMPARE(r.w.last().action, std::string("model.register"));
    QCOMPARE(r.w.last().outcome, audit::Outcome::Denied);
    QCOMPARE(r.w.last().actor.id, std::string("eve"));
    QCOMPARE(r.checks, checked);
    auto shown = r.registry().show(r.session("eve"), "m");
    QVERIFY2(shown, shown ? "" : shown.error().message().c_str());
    QCOMPARE(shown->project, std::string("demo"));
    QCOMPARE(shown->versions.size(), std::size_t{1});
    auto apart = r.registry().registerVersion(r.session("eve"), {"lab-model", "", elsewhere, 0});
    QVERIFY2(apart, apart ? "" : apart.error().message().c_str());
    QCOMPARE(apart->project, std::string("lab"));
    QCOMPARE(apart->version, std::int64_t{1});
}

// docs/registry.md, "Who may" (issue #48): registering needs model.register in the job's project
// and that the caller may see the job (job.submit or job.approve there): model.register alone
// registers nothing, and the refusal comes before any file is checked.
void TestCoreRegistry::registeringNeedsToSeeTheJob()
{
    RegistryWorld r;
    const std::string& admin = r.session("alice");
    QVERIFY(r.w.t.plane->access().createRole(admin, "modeller", {"model.register"}).ok());
    auto mona = testing::enrolUser(r.w.t.plane->identity(), admin, "mona",
                                   testing::secret(testing::kWorldPassword));
    QVERIFY2(mona, mona ? "" : mona.error().message().c_str());
    r.w.uris["mona"] = mona->otpauthUri;
    QVERIFY(r.w.t.plane->access().grantRole(admin, "mona", "modeller", "").ok());
    auto refused = r.registry().registerVersion(r.session("mona"), {"m", "", r.job, 0});
    QVERIFY(!refused);
    QCOMPARE(refused.error().code(), ErrorCode::PermissionDenied);
    QCOMPARE(r.w.last().action, std::string("model.register"));
    QCOMPARE(r.w.last().outcome, audit::Outcome::Denied);
    QCOMPARE(r.w.last().actor.id, std::string("mona"));
    QCOMPARE(r.checks, 0);
    auto none = r.registry().show(r.session("eve"), "m");
    QVERIFY(!none);
    QCOMPARE(none.error().code(), ErrorCode::NotFound);
    // Her model.register holds: once eve registered the job, she reads the model.
    QVERIFY(r.registry().registerVersion(r.session("eve"), {"m", "", r.job, 0}));
    auto shown = r.registry().show(r.session("mona"), "m");
    QVERIFY2(shown, shown ? "" : shown.error().message().c_str());
}

// docs/registry.md, "Limits" (issue #48): an alias is a name of 1 to 64 of a-z, 0-9, _ and -,
// like a model's; a promotion to any other is refused and nothing waits.
void TestCoreRegistry::aliasNamesAreChecked()
{
    RegistryWorld r;
    QVERIFY(r.registry().registerVersion(r.session("eve"), {"m", "", r.job, 0}));
    for (const std::string& alias : std::vector<std::string>{"", "Production", "../prod",
                                                             "pro duction", std::string(65, 'a')}) {
        auto asked = r.registry().requestPromotion(r.session("eve"), "m", 1, alias, "");
        QVERIFY2(!asked, alias.c_str());
        QCOMPARE(asked.error().code(), ErrorCode::InvalidArgument);
        QCOMPARE(r.w.last().action, std::string("model.promote_request"));
        QCOMPARE(r.w.last().outcome, audit::Outcome::Failed);
    }
    auto shown = r.registry().show(r.session("eve"), "m");
    QVERIFY2(shown, shown ? "" : shown.error().message().c_str());
    QVERIFY(shown->promotions.empty());
    QVERIFY(r.registry().requestPromotion(r.session("eve"), "m", 1, "prod_2-a", ""));
}

// docs/registry.md, "Limits" (issue #48): a reason is at most 500 bytes of UTF-8 wherever a caller
// gives one (a promotion's rejection, an export's request and its rejection), and a description
// is UTF-8; anything else is refused and changes nothing.
void TestCoreRegistry::reasonsAndDescriptionsAreBoundedUtf8()
{
    RegistryWorld r;
    const std::string tooLong(core::kMaxPromotionReason + 1, 'x');
    const std::string notUtf8("not \xff\xfe text");
    auto badDescription = r.registry().registerVersion(r.session("eve"), {"m", notUtf8, r.job, 0});
    QVERIFY(!badDescription);
    QCOMPARE(badDescription.error().code(), ErrorCode::InvalidArgument);
    QVERIFY(r.registry().registerVersion(r.session("eve"), {"m", "", r.job, 0}));
    auto asked = r.registry().requestPromotion(r.session("eve"), "m", 1, "production", "");
    QVERIFY2(asked, asked ? "" : asked.error().message().c_str());
    for (const std::string& reason : {tooLong, notUtf8}) {
        auto rejected = r.registry().rejectPromotion(r.session("ann"), asked->id, reason);
        QVERIFY(!rejected);
        QCOMPARE(rejected.error().code(), ErrorCode::InvalidArgument);
        QCOMPARE(r.w.last().action, std::string("model.promote_reject"));
        auto exportAsked = r.registry().requestExport(r.session("eve"), "m@1", reason);
        QVERIFY(!exportAsked);
        QCOMPARE(exportAsked.error().code(), ErrorCode::InvalidArgument);
        QCOMPARE(r.w.last().action, std::string("model.export_request"));
    }
    auto exportAsked = r.registry().requestExport(r.session("eve"), "m@1", "");
    QVERIFY2(exportAsked, exportAsked ? "" : exportAsked.error().message().c_str());
    for (const std::string& reason : {tooLong, notUtf8}) {
        auto rejected = r.registry().rejectExport(r.session("ann"), exportAsked->id, reason);
        QVERIFY(!rejected);
        QCOMPARE(rejected.error().code(), ErrorCode::InvalidArgument);
    }
    auto shown = r.registry().show(r.session("ann"), "m");
    QVERIFY2(shown, shown ? "" : shown.error().message().c_str());
    QCOMPARE(shown->promotions.at(0).state, core::PromotionState::Pending);
    QCOMPARE(shown->exports.size(), std::size_t{1});
    QCOMPARE(shown->exports.at(0).state, core::PromotionState::Pending);
}

// docs/registry.md, "Promotions" (issue #48): an approved promotion is kept as a signed statement
// of who asked, who approved, the reason and the version the alias named before.
void TestCoreRegistry::approvedPromotionStatementNamesWhatItChanged()
{
    RegistryWorld r;
    QVERIFY(r.registry().registerVersion(r.session("eve"), {"m", "", r.job, 2}));
    QVERIFY(r.registry().registerVersion(r.session("eve"), {"m", "", r.job, 4}));
    auto first =
        r.registry().requestPromotion(r.session("eve"), "m", 1, "production", "passed review");
    QVERIFY2(first, first ? "" : first.error().message().c_str());
    auto approvedFirst = r.registry().approvePromotion(r.session("ann"), first->id, first->digest);
    QVERIFY2(approvedFirst, approvedFirst ? "" : approvedFirst.error().message().c_str());
    const auto before = statementOf(approvedFirst->statement, r.key.publicKey())["predicate"];
    QCOMPARE(before.value("reason", std::string()), std::string("passed review"));
    QCOMPARE(before.value("previous_version", std::int64_t{-1}), std::int64_t{0});

    auto second =
        r.registry().requestPromotion(r.session("eve"), "m", 2, "production", "lower loss");
    QVERIFY2(second, second ? "" : second.error().message().c_str());
    auto approvedSecond =
        r.registry().approvePromotion(r.session("ann"), second->id, second->digest);
    QVERIFY2(approvedSecond, approvedSecond ? "" : approvedSecond.error().message().c_str());
    const auto after = statementOf(approvedSecond->statement, r.key.publicKey())["predicate"];
    QCOMPARE(after.value("version", std::int64_t{-1}), std::int64_t{2});
    QCOMPARE(after.value("previous_version", std::int64_t{-1}), std::int64_t{1});
    QCOMPARE(after.value("reason", std::string()), std::string("lower loss"));
    QCOMPARE(after.value("requested_by", std::string()), std::string("eve"));
    QCOMPARE(after.value("approved_by", std::string()), std::string("ann"));
    QVERIFY(!after.value("approved", std::string()).empty());
}

void TestCoreRegistry::referencesAreParsed()
{
    auto byVersion = core::parseModelReference("fortunes@3");
    QVERIFY(byVersion);
    QCOMPARE(byVersion->name, std::string("fortunes"));
    QCOMPARE(byVersion->version, std::int64_t{3});
    auto byAlias = core::parseModelReference("fortunes@production");
    QVERIFY(byAlias);
    QCOMPARE(byAlias->alias, std::string("production"));
    QCOMPARE(byAlias->version, std::int64_t{0});
    auto newest = core::parseModelReference("fortunes");
    QVERIFY(newest);
    QVERIFY(newest->alias.empty());
    for (const char* bad :
         {"", "Fortunes", "fortunes@", "fortunes@0", "fortunes@-1", "a/b@1", "fortunes@Prod"})
        QVERIFY2(!core::parseModelReference(bad), bad);
}

// The registry's state table (issue #50) is the one docs/registry.md ("Request states") writes,
// row for row, kept apart from the code's so that a change to either is seen; every other move
// is refused, and the calls obey it: a decided request is not decided again, an export is
// received only once approved and only by whoever asked.
void TestCoreRegistry::requestStatesAreTheDocumentedTable()
{
    const std::set<std::string> documented = {
        "promotion pending>approved approver model.promote_approve",
        "promotion pending>rejected approver model.promote_reject",
        "export pending>approved approver model.export_approve",
        "export pending>rejected approver model.export_reject",
        "export approved>approved requester model.export"};
    auto text = [](core::RequestKind kind, core::PromotionState from, core::PromotionState to,
                   core::RequestMover by, std::string_view action) {
        return std::string(kind == core::RequestKind::Promotion ? "promotion" : "export") + " "
               + std::string(core::promotionStateName(from)) + ">"
               + std::string(core::promotionStateName(to)) + " " + core::requestMoverName(by) + " "
               + std::string(action);
    };
    std::set<std::string> table;
    std::set<std::string> actions;
    for (const core::RequestTransition& t : core::requestTransitions()) {
        const std::string row = text(t.kind, t.from, t.to, t.by, t.action);
        QVERIFY2(table.insert(row).second, ("a row twice: " + row).c_str());
        QVERIFY2(documented.count(row) == 1, ("a row the docs do not have: " + row).c_str());
        actions.insert(std::string(t.action));
    }
    QCOMPARE(table, documented);
    const core::PromotionState states[] = {core::PromotionState::Pending,
                                           core::PromotionState::Approved,
                                           core::PromotionState::Rejected};
    int refused = 0;
    for (const auto kind : {core::RequestKind::Promotion, core::RequestKind::Export})
        for (const auto from : states)
            for (const auto to : states)
                for (const auto by : {core::RequestMover::Requester, core::RequestMover::Approver})
                    for (const std::string& action : actions) {
                        const bool listed = documented.count(text(kind, from, to, by, action)) == 1;
                        QCOMPARE(core::requestMayMove(kind, from, to, by, action), listed);
                        refused += listed ? 0 : 1;
                    }
    QVERIFY(refused > 0);

    // The calls obey it: an approved promotion is not rejected after, nor approved again.
    RegistryWorld r;
    QVERIFY(r.registry().registerVersion(r.session("eve"), {"m", "", r.job, 0}));
    auto asked = r.registry().requestPromotion(r.session("eve"), "m", 1, "production", "");
    QVERIFY2(asked, asked ? "" : asked.error().message().c_str());
    QVERIFY(r.registry().approvePromotion(r.session("ann"), asked->id, asked->digest));
    for (bool again : {true, false}) {
        auto late = again
                        ? r.registry().approvePromotion(r.session("ann"), asked->id, asked->digest)
                        : r.registry().rejectPromotion(r.session("ann"), asked->id, "late");
        QVERIFY(!late);
        QCOMPARE(late.error().code(), ErrorCode::FailedPrecondition);
        QCOMPARE(r.w.last().outcome, audit::Outcome::Failed);
    }
    QCOMPARE(r.registry().show(r.session("eve"), "m")->promotions.front().state,
             core::PromotionState::Approved);
}

QTEST_GUILESS_MAIN(TestCoreRegistry)
#include "test_core_registry.moc"
