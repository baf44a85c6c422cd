// The worker registry (issue #16): the inventory's JSON parsed strictly, enrolment tokens that
// work once, until they expire, and are stored only as their SHA-256; every refused token
// answered with the same sentence, audited, changing nothing; who may make tokens, list and
// revoke; a revoked worker's certificate refused; heartbeats recorded without an audit entry.
#include "worker_world.h"

#include "sealtrain/audit/entry.h"
#include "sealtrain/base/encoding.h"
#include "sealtrain/crypto/hash.h"

#include <QtTest/QtTest>

class TestCoreWorkers : public QObject {
    Q_OBJECT

private slots:
    void inventoryRoundTrips();
    void inventoryIsParsedStrictly_data();
    void inventoryIsParsedStrictly();
    void tokenEnrollsOnce();
    void expiredAndWrongTokensAreRefusedAlike();
    void whoMayMakeTokensListAndRevoke();
    void revokedWorkerIsRefusedBySerial();
    void heartbeatIsNotAudited();
};

using namespace sealtrain;
using testing::WorkerWorld;

namespace {

constexpr const char* kTokenRefused =
    "The enrolment token is not valid; ask an administrator for a new one.";

std::int64_t count(const WorkerWorld& w, const std::string& sql)
{
    return w.t.database->queryInteger(sql, {}).value();
}

// The enrolment was refused with the one sentence, audited as denied for `reason`, and nothing
// was enrolled.
void verifyTokenRefused(const WorkerWorld& w, const Result<core::WorkerInfo>& result,
                        std::int64_t workersBefore, const std::string& reason)
{
    QVERIFY(!result);
    QCOMPARE(result.error().code(), ErrorCode::Unauthenticated);
    QCOMPARE(result.error().message(), std::string(kTokenRefused));
    const auto entry = w.last();
    QCOMPARE(entry.action, std::string("worker.enroll"));
    QCOMPARE(entry.outcome, audit::Outcome::Denied);
    QCOMPARE(entry.reason, reason);
    QCOMPARE(entry.actor.kind, audit::ActorKind::Worker);
    QCOMPARE(count(w, "SELECT count(*) FROM workers"), workersBefore);
}

template <typename T>
void verifyDenied(const WorkerWorld& w, const Result<T>& result, const std::string& action)
{
    QVERIFY(!result);
    QCOMPARE(result.error().code(), ErrorCode::PermissionDenied);
    QVERIFY(isOneSentence(result.error().message()));
    QCOMPARE(w.last().action, action);
    QCOMPARE(w.last().outcome, audit::Outcome::Denied);
}

}  // namespace

void TestCoreWorkers::inventoryRoundTrips()
{
    const std::string text =
        R"({"gpus": [{"model": "NVIDIA H200", "memory_bytes": 150000000000}], "cpu_cores": 16,
            "interconnect_encrypted": false, "backend": "cuda"})";
    auto parsed = core::parseWorkerInventory(text);
    QVERIFY2(parsed, parsed ? "" : parsed.error().message().c_str());
    QCOMPARE(parsed->gpus.size(), std::size_t{1});
    QCOMPARE(parsed->gpus[0].model, std::string("NVIDIA H200"));
    QCOMPARE(parsed->gpus[0].memoryBytes, std::uint64_t{150000000000});
    QCOMPARE(parsed->cpuCores, std::uint32_t{16});
    QCOMPARE(parsed->backend, std::string("cuda"));
    auto again = core::parseWorkerInventory(core::workerInventoryJson(*parsed));
    QVERIFY(again);
    QCOMPARE(core::workerInventoryJson(*again), core::workerInventoryJson(*parsed));
    // Every field may be left out.
    auto empty = core::parseWorkerInventory("{}");
    QVERIFY(empty);
    QCOMPARE(empty->backend, std::string("cpu"));
}

void TestCoreWorkers::inventoryIsParsedStrictly_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("field");
    QTest::newRow("not an object") << "[]"
                                   << "(whole)";
    QTest::newRow("unknown field") << R"({"gpu": []})"
                                   << "gpu";
    QTest::newRow("unknown gpu field") << R"({"gpus": [{"name": "x"}]})"
                                       << "gpus[0].name";
    QTest::newRow("negative memory") << R"({"gpus": [{"memory_bytes": -1}]})"
                                     << "gpus[0].memory_bytes";
    QTest::newRow("long model") << QString::fromStdString(R"({"gpus": [{"model": ")"
                                                          + std::string(129, 'x') + R"("}]})")
                                << "gpus[0].model";
    std::string many = R"({"gpus": [)";
    for (int i = 0; i < 65; ++i)
        many += std::string(i == 0 ? "" : ",") + "{}";
    QTest::newRow("65 gpus") << QString::fromStdString(many + "]}") << "gpus";
    // Issue #54: a model name that clears the screen, rings and forges a row of `worker list`,
    // or that reads backwards.
    QTest::newRow("model with terminal controls")
        << R"({"gpus": [{"model": "A100\u001b[2J\u0007\nnode-9 revoked"}]})"
        << "gpus[0].model";
    QTest::newRow("model with a C1 control") << R"({"gpus": [{"model": "A100\u009b2J"}]})"
                                             << "gpus[0].model";
    QTest::newRow("model with a right-to-left override")
        << R"({"gpus": [{"model": "H100\u202e08A"}]})"
        << "gpus[0].model";
    QTest::newRow("backend") << R"({"backend": "rocm"})"
                             << "backend";
    QTest::newRow("cores as text") << R"({"cpu_cores": "16"})"
                                   << "cpu_cores";
    QTest::newRow("encrypted as number") << R"({"interconnect_encrypted": 1})"
                                         << "interconnect_encrypted";
}

void TestCoreWorkers::inventoryIsParsedStrictly()
{
    QFETCH(QString, text);
    QFETCH(QString, field);
    auto parsed = core::parseWorkerInventory(text.toStdString());
    QVERIFY(!parsed);
    QCOMPARE(parsed.error().code(), ErrorCode::InvalidArgument);
    QVERIFY2(parsed.error().message().find("'" + field.toStdString() + "'") != std::string::npos,
             parsed.error().message().c_str());
    QVERIFY(isOneSentence(parsed.error().message()));
}

// A token made by the operator enrolls one worker, once; the database keeps only its SHA-256;
// the second use is refused with the one sentence, audited, and the token stays used.
void TestCoreWorkers::tokenEnrollsOnce()
{
    WorkerWorld w;
    auto made = w.workers().createEnrollToken(w.session("olivia"), "gpu-node-1", "gpu", 3600);
    QVERIFY2(made, made ? "" : made.error().message().c_str());
    QCOMPARE(made->token.size(), std::size_t{4 + 43});
    QVERIFY(made->token.rfind("swt_", 0) == 0);
    QCOMPARE(made->expires, w.t.clock.now().time_since_epoch() / std::chrono::seconds(1) + 3600);
    QCOMPARE(w.last().action, std::string("worker.enroll_token"));
    QCOMPARE(w.last().outcome, audit::Outcome::Ok);
    QCOMPARE(w.last().actor.id, std::string("olivia"));
    const auto stored = w.t.database->queryInteger(
        "SELECT count(*) FROM worker_tokens WHERE token_hash = ? AND used IS NULL",
        {core::SqlValue::blob(crypto::sha256(asBytes(made->token)))});
    QCOMPARE(stored.value(), std::int64_t{1});
    QCOMPARE(count(w, "SELECT count(*) FROM worker_tokens WHERE length(token_hash) != 32"),
             std::int64_t{0});

    auto worker = w.enroll(made->token);
    QVERIFY2(worker, worker ? "" : worker.error().message().c_str());
    QCOMPARE(worker->name, std::string("gpu-node-1"));
    QCOMPARE(worker->pool, std::string("gpu"));
    QCOMPARE(worker->state, core::WorkerState::Active);
    QCOMPARE(worker->serial.size(), std::size_t{32});  // a 128-bit serial in hex
    QCOMPARE(worker->inventory.cpuCores, std::uint32_t{4});
    QCOMPARE(w.last().action, std::string("worker.enroll"));
    QCOMPARE(w.last().outcome, audit::Outcome::Ok);
    QCOMPARE(w.last().actor.kind, audit::ActorKind::Worker);
    QCOMPARE(w.last().actor.id, std::string("gpu-node-1"));
    QCOMPARE(testing::detailOf(w.last(), "serial"), worker->serial);
    const auto usedAt = count(w, "SELECT used FROM worker_tokens WHERE worker = 'gpu-node-1'");
    QVERIFY(usedAt > 0);

    // The same token again, even once the first worker is gone, enrolls nobody.
    QVERIFY(w.workers().revoke(w.session("olivia"), "gpu-node-1", "retired"));
    w.t.clock.advance(std::chrono::seconds(5));
    verifyTokenRefused(w, w.enroll(made->token), 1, "enrolment token already used");
    QCOMPARE(count(w, "SELECT used FROM worker_tokens WHERE worker = 'gpu-node-1'"), usedAt);
    verifyTokenRefused(w, w.enroll(made->token), 1, "enrolment token already used");
}

void TestCoreWorkers::expiredAndWrongTokensAreRefusedAlike()
{
    WorkerWorld w;
    const std::string token = w.token("cpu-node-1", "cpu", 60);
    w.t.clock.advance(std::chrono::seconds(61));
    verifyTokenRefused(w, w.enroll(token), 0, "enrolment token expired");
    QCOMPARE(w.last().actor.id, std::string("cpu-node-1"));
    QCOMPARE(count(w, "SELECT count(*) FROM worker_tokens WHERE used IS NOT NULL"),
             std::int64_t{0});

    const std::string fresh = w.token("cpu-node-1", "cpu");
    std::string wrong = fresh;
    wrong.back() = wrong.back() == 'A' ? 'B' : 'A';
    verifyTokenRefused(w, w.enroll(wrong), 0, "unknown enrolment token");
    QCOMPARE(w.last().actor.id, std::string("unknown"));
    verifyTokenRefused(w, w.enroll(""), 0, "unknown enrolment token");
    // The right one still works: the wrong ones changed nothing.
    QVERIFY(w.enroll(fresh));

    // The token's own lifetime is bounded.
    auto tooLong =
        w.workers().createEnrollToken(w.session("olivia"), "x", "cpu", std::int64_t{8} * 24 * 3600);
    QVERIFY(!tooLong);
    QCOMPARE(tooLong.error().code(), ErrorCode::InvalidArgument);
    auto badName = w.workers().createEnrollToken(w.session("olivia"), "Bad_Name", "cpu", 600);
    QVERIFY(!badName);
    QCOMPARE(badName.error().code(), ErrorCode::InvalidArgument);
}

// worker.enroll (the operator's) makes tokens and revokes; worker.read lists; the admin, who
// administers identities, holds neither (separation of duties), nor does an engineer.
void TestCoreWorkers::whoMayMakeTokensListAndRevoke()
{
    WorkerWorld w;
    for (const char* user : {"eve", "alice", "vic"}) {
        verifyDenied(w, w.workers().createEnrollToken(w.session(user), "n1", "cpu", 600),
                     "worker.enroll_token");
    }
    QCOMPARE(count(w, "SELECT count(*) FROM worker_tokens"), std::int64_t{0});
    w.enrolled("n1", "cpu");
    w.enrolled("n0", "gpu");

    auto listed = w.workers().list(w.session("vic"));
    QVERIFY2(listed, listed ? "" : listed.error().message().c_str());
    QCOMPARE(listed->size(), std::size_t{2});
    QCOMPARE(listed->front().name, std::string("n0"));  // by name
    QCOMPARE(w.last().action, std::string("worker.list"));
    verifyDenied(w, w.workers().list(w.session("eve")), "worker.list");

    verifyDenied(w, w.workers().revoke(w.session("vic"), "n1", ""), "worker.revoke");
    verifyDenied(w, w.workers().revoke(w.session("alice"), "n1", ""), "worker.revoke");
    QCOMPARE(count(w, "SELECT count(*) FROM workers WHERE state = 'active'"), std::int64_t{2});
    auto revoked = w.workers().revoke(w.session("olivia"), "n1", "disk failed");
    QVERIFY2(revoked, revoked ? "" : revoked.error().message().c_str());
    QCOMPARE(revoked->state, core::WorkerState::Revoked);
    QCOMPARE(w.last().action, std::string("worker.revoke"));
    QCOMPARE(testing::detailOf(w.last(), "reason"), std::string("disk failed"));
    auto again = w.workers().revoke(w.session("olivia"), "n1", "");
    QVERIFY(!again);
    QCOMPARE(again.error().code(), ErrorCode::NotFound);
}

// A revoked worker's certificate serial is refused (audited) and listed for the CRL; its name
// may be enrolled again, while an active worker's may not.
void TestCoreWorkers::revokedWorkerIsRefusedBySerial()
{
    WorkerWorld w;
    const auto worker = w.enrolled("n1", "cpu");
    auto found = w.workers().bySerial(worker.serial);
    QVERIFY(found);
    QCOMPARE(found->id, worker.id);
    auto taken = w.workers().createEnrollToken(w.session("olivia"), "n1", "cpu", 600);
    QVERIFY(!taken);
    QCOMPARE(taken.error().code(), ErrorCode::AlreadyExists);

    QVERIFY(w.workers().revoke(w.session("olivia"), "n1", "stolen"));
    verifyDenied(w, w.workers().bySerial(worker.serial), "worker.connect");
    QCOMPARE(w.last().actor.id, std::string("n1"));
    QCOMPARE(w.workers().revokedSerials().value(), std::vector<std::string>{worker.serial});
    auto unknown = w.workers().bySerial("00");
    QVERIFY(!unknown);
    QCOMPARE(unknown.error().code(), ErrorCode::NotFound);

    QCOMPARE(w.workers().byName("n1").value().state, core::WorkerState::Revoked);
    const auto again = w.enrolled("n1", "cpu");
    QVERIFY(again.serial != worker.serial);
    QCOMPARE(w.workers().byName("n1").value().id, again.id);
    QCOMPARE(w.workers().byName("n2").error().code(), ErrorCode::NotFound);
    QVERIFY(w.workers().bySerial(again.serial));
    verifyDenied(w, w.workers().bySerial(worker.serial), "worker.connect");
}

void TestCoreWorkers::heartbeatIsNotAudited()
{
    WorkerWorld w;
    const auto worker = w.enrolled("n1", "cpu");
    const auto before = w.auditSize();
    w.t.clock.advance(std::chrono::seconds(30));
    core::WorkerInventory inventory;
    inventory.backend = "cuda";
    inventory.gpus.push_back({"NVIDIA H200", 150'000'000'000});
    QVERIFY(w.workers().heartbeat(worker.id, inventory));
    QCOMPARE(w.auditSize(), before);
    const auto seen = w.workers().bySerial(worker.serial).value();
    QCOMPARE(seen.lastSeen, worker.lastSeen + 30);
    QCOMPARE(seen.inventory.gpus.size(), std::size_t{1});
    QCOMPARE(seen.inventory.backend, std::string("cuda"));

    QVERIFY(w.workers().revoke(w.session("olivia"), "n1", ""));
    auto refused = w.workers().heartbeat(worker.id, inventory);
    QVERIFY(!refused);
    QCOMPARE(refused.error().code(), ErrorCode::NotFound);
}

QTEST_GUILESS_MAIN(TestCoreWorkers)
#include "test_core_workers.moc"
