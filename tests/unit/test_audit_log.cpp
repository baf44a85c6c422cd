// The audit log: appends inside the caller's transaction, chains entries, signs heads by policy
// (count, time, heartbeat, on demand), writes the witness file, and refuses an altered store.
#include "sealtrain/audit/audit_log.h"

#include "audit_fixture.h"
#include "sealtrain/audit/proof.h"
#include "sealtrain/audit/witness.h"

#include <QtTest/QtTest>

using namespace sealtrain;
using namespace sealtrain::audit;
using sealtrain::testing::TestLog;

class TestAuditLog : public QObject {
    Q_OBJECT

private slots:
    void appendsInsideTheCallersTransaction()
    {
        TestLog t;
        auto transaction = t.store.begin();
        QCOMPARE(*t.log->append(*transaction, testing::draftNumber(0)), std::uint64_t{0});
        QCOMPARE(*t.log->append(*transaction, testing::draftNumber(1)), std::uint64_t{1});
        QCOMPARE(t.log->size(), std::uint64_t{0});  // not committed yet
        // A second transaction may not interleave.
        auto other = t.store.begin();
        QVERIFY(!t.log->append(*other, testing::draftNumber(2)).ok());
        transaction->commit();
        QCOMPARE(t.log->size(), std::uint64_t{2});
        QCOMPARE(*t.store.entryCount(), std::uint64_t{2});

        // A rolled back transaction leaves no entry and no gap.
        QCOMPARE(*t.log->append(*other, testing::draftNumber(2)), std::uint64_t{2});
        other->rollback();
        QCOMPARE(t.log->size(), std::uint64_t{2});
        auto third = t.store.begin();
        QCOMPARE(*t.log->append(*third, testing::draftNumber(3)), std::uint64_t{2});
        third.reset();  // abandoned: rolls back
        QCOMPARE(*t.store.entryCount(), std::uint64_t{2});
    }

    void entriesChainAndHashIntoTheTree()
    {
        TestLog t;
        t.append(10);
        const auto stored = *t.store.readEntries(0, 100);
        QCOMPARE(stored.size(), std::size_t{10});
        Hash previous{};
        for (const auto& s : stored) {
            const auto entry = *decodeEntry(s.bytes);
            QCOMPARE(entry.sequence, s.sequence);
            QCOMPARE(entry.previousLeafHash, previous);
            QCOMPARE(leafHash(s.bytes), t.log->tree().leaf(s.sequence));
            QVERIFY(t.auditKey.matches(
                entry, "file", "/data/patients-" + std::to_string(s.sequence % 3) + ".csv"));
            previous = s.leafHash;
        }
    }

    void refusesSensitiveValuesWithoutAnAuditKey()
    {
        MemoryStore store;
        testing::ManualClock clock;
        const auto key = testing::signingKeyFromByte(1);
        auto log = AuditLog::open(store, key, nullptr, clock, {"sealtrain.test/audit", {}, {}});
        QVERIFY(log.ok());
        auto transaction = store.begin();
        const auto appended = (*log)->append(*transaction, testing::draftNumber(0));
        QVERIFY(!appended.ok());
        QVERIFY(isOneSentence(appended.error().message()));
    }

    void headsEveryNEntries()
    {
        TestLog t(1, HeadPolicy{5, {}, {}});
        t.append(4);
        QVERIFY(t.store.readHeads()->empty());
        t.append(1);
        QCOMPARE(t.store.readHeads()->size(), std::size_t{1});
        QCOMPARE(t.log->lastHead()->size, std::uint64_t{5});
        t.append(9);
        QCOMPARE(t.store.readHeads()->size(), std::size_t{2});
        QCOMPARE(t.log->lastHead()->size, std::uint64_t{10});
    }

    void headsEveryTSecondsAndHeartbeats()
    {
        TestLog t(1, HeadPolicy{0, std::chrono::seconds{60}, std::chrono::seconds{3600}});
        QVERIFY(t.log->tick().ok());
        QVERIFY(t.store.readHeads()->empty());
        t.append(3);  // the fixture moves the clock 1 s per entry
        QVERIFY(t.log->tick().ok());
        QVERIFY(t.store.readHeads()->empty());  // only 3 s waited
        t.clock.advance(std::chrono::seconds{60});
        QVERIFY(t.log->tick().ok());
        QCOMPARE(t.store.readHeads()->size(), std::size_t{1});
        QCOMPARE(t.log->lastHead()->size, std::uint64_t{3});
        // Idle: nothing to sign until the heartbeat is due, then the same size, later time.
        t.clock.advance(std::chrono::seconds{600});
        QVERIFY(t.log->tick().ok());
        QCOMPARE(t.store.readHeads()->size(), std::size_t{1});
        const auto before = t.log->lastHead()->timeSeconds;
        t.clock.advance(std::chrono::seconds{3000});
        QVERIFY(t.log->tick().ok());
        QCOMPARE(t.store.readHeads()->size(), std::size_t{2});
        QCOMPARE(t.log->lastHead()->size, std::uint64_t{3});
        QCOMPARE(t.log->lastHead()->timeSeconds, before + 3600);
    }

    void headsAreConsistentAndWitnessed()
    {
        QTemporaryDir dir;
        const std::filesystem::path witness = dir.filePath("witness").toStdString();
        TestLog t(1, HeadPolicy{0, {}, {}}, witness);
        TreeHead previous;
        for (int round = 0; round < 5; ++round) {
            t.append(round * 3 + 1);
            const auto head = t.log->signHead();
            QVERIFY(head.ok());
            QCOMPARE(head->root, *t.log->tree().rootAt(head->size));
            if (round > 0) {
                const auto proof = t.log->tree().consistencyProof(previous.size, head->size);
                QVERIFY(
                    verifyConsistency(previous.size, head->size, *proof, previous.root, head->root)
                        .ok());
            }
            previous = *head;
        }
        const auto witnessed = readWitness(witness);
        QVERIFY(witnessed.ok());
        QCOMPARE(*witnessed, *t.store.readHeads());
        QCOMPARE(witnessed->size(), std::size_t{5});
    }

    // A restored backup brings back revoked sessions and grants: a store older than the newest
    // head in the witness file is refused at open, and so is one rewritten under a witnessed
    // head or a witness line that this log did not sign.
    void refusesAStoreOlderThanItsWitness_data()
    {
        QTest::addColumn<QString>("attack");
        QTest::addColumn<QString>("expected");
        QTest::newRow("restored backup") << "restored backup"
                                         << "older copy";
        QTest::newRow("rewritten entry") << "rewritten entry"
                                         << "was rewritten";
        QTest::newRow("forged witness line") << "forged witness line"
                                             << "not a head signed";
        QTest::newRow("untouched") << "none"
                                   << "";
    }

    void refusesAStoreOlderThanItsWitness()
    {
        QFETCH(QString, attack);
        QFETCH(QString, expected);
        QTemporaryDir dir;
        const std::filesystem::path witness = dir.filePath("witness").toStdString();
        TestLog t(1, HeadPolicy{0, {}, {}}, witness);
        t.append(6, 3);
        MemoryStore backup = t.store;  // a copy taken at size 6
        t.append(6, 3);                // the log goes on to 12, witnessed
        // Someone holding every key writes another history, longer than the witnessed one, and
        // signs heads for it.
        TestLog rewritten(1);
        rewritten.next = 100;
        rewritten.append(13, 13);
        MemoryStore& opened = attack == "restored backup"   ? backup
                              : attack == "rewritten entry" ? rewritten.store
                                                            : t.store;
        if (attack == "forged witness line") {
            TreeHead forged = *t.log->lastHead();
            forged.size = 1000;
            QVERIFY(
                appendWitness(witness, signTreeHead(forged, testing::signingKeyFromByte(9))).ok());
        }
        LogOptions options{"sealtrain.test/audit", {}, witness};
        auto reopened = AuditLog::open(opened, t.signingKey, &t.auditKey, t.clock, options);
        if (expected.isEmpty()) {
            QVERIFY(reopened.ok());
            return;
        }
        QVERIFY(!reopened.ok());
        QCOMPARE(reopened.error().code(), ErrorCode::Integrity);
        QVERIFY2(QString::fromStdString(reopened.error().message()).contains(expected),
                 reopened.error().message().c_str());
        QVERIFY(isOneSentence(reopened.error().message()));
    }

    void reopensAndChecksTheStore()
    {
        TestLog t;
        t.append(20, 7);
        auto reopened = AuditLog::open(t.store, t.signingKey, &t.auditKey, t.clock,
                                       {"sealtrain.test/audit", {}, {}});
        QVERIFY(reopened.ok());
        QCOMPARE((*reopened)->size(), std::uint64_t{20});
        QCOMPARE(*(*reopened)->tree().rootAt(20), *t.log->tree().rootAt(20));
        QCOMPARE((*reopened)->lastHead()->size, std::uint64_t{14});
    }

    void refusesAnAlteredStore_data()
    {
        QTest::addColumn<QString>("attack");
        for (const char* attack : {"changed byte", "deleted entry", "swapped entries",
                                   "recomputed hash", "head from another key"})
            QTest::newRow(attack) << attack;
    }

    void refusesAnAlteredStore()
    {
        QFETCH(QString, attack);
        TestLog t;
        t.append(12, 4);
        auto& entries = t.store.rawEntries();
        if (attack == "changed byte") {
            entries[5].bytes[60] ^= 0x01;
        } else if (attack == "deleted entry") {
            entries.erase(entries.begin() + 5);
        } else if (attack == "swapped entries") {
            std::swap(entries[5], entries[6]);
        } else if (attack == "recomputed hash") {
            // Alter the entry and fix its stored hash: the chain and the signed head show it.
            entries[11].bytes[60] ^= 0x01;
            entries[11].leafHash = leafHash(entries[11].bytes);
        } else {
            (void)t.store.appendHead(
                signTreeHead(*t.log->lastHead(), testing::signingKeyFromByte(9)));
        }
        auto reopened = AuditLog::open(t.store, t.signingKey, &t.auditKey, t.clock,
                                       {"sealtrain.test/audit", {}, {}});
        QVERIFY(!reopened.ok());
        QVERIFY(isOneSentence(reopened.error().message()));
    }
};

QTEST_APPLESS_MAIN(TestAuditLog)
#include "test_audit_log.moc"
