// Verifying a live log where it is kept (audit/store_verify.h, Audit.VerifyLog): a store read
// through a wrapper that alters what it returns, as someone with write access to the database
// would, after the control plane opened it. Every alteration is found and named; an untouched
// store verifies with its heads and witness heads counted.
#include "sealtrain/audit/store_verify.h"

#include "audit_fixture.h"
#include "sealtrain/audit/witness.h"

#include <QtTest/QtTest>

#include <functional>

using namespace sealtrain;
using namespace sealtrain::audit;
using sealtrain::testing::TestLog;

namespace {

// The store as an attacker with the database's key leaves it: `alter` edits the entries read,
// `count` may lie, `heads` replaces the stored heads when set.
class AlteredStore final : public AuditStore {
public:
    explicit AlteredStore(const MemoryStore& inner)
        : inner_(inner)
    {
    }

    std::function<void(std::vector<StoredEntry>&)> alter;
    std::optional<std::uint64_t> count;
    std::optional<std::vector<std::string>> heads;

    Result<void> appendEntry(StoreTransaction&, const StoredEntry&) override
    {
        return Error(ErrorCode::Internal, "Read only.");
    }
    Result<std::uint64_t> entryCount() const override
    {
        return count ? Result<std::uint64_t>(*count) : inner_.entryCount();
    }
    Result<std::vector<StoredEntry>> readEntries(std::uint64_t first,
                                                 std::uint64_t n) const override
    {
        const std::uint64_t total = *entryCount();
        if (first >= total)
            return std::vector<StoredEntry>{};
        auto all = inner_.readEntries(0, total);
        if (!all)
            return all.error();
        if (alter)
            alter(*all);
        std::vector<StoredEntry> page;
        for (std::uint64_t i = first; i < std::min<std::uint64_t>(total, first + n); ++i)
            if (i < all->size())
                page.push_back((*all)[i]);
        return page;
    }
    Result<void> appendHead(const std::string&) override
    {
        return Error(ErrorCode::Internal, "Read only.");
    }
    Result<std::vector<std::string>> readHeads() const override
    {
        return heads ? Result<std::vector<std::string>>(*heads) : inner_.readHeads();
    }
    Result<void> underWriteLock(const std::function<Result<void>()>& body) override
    {
        return body();
    }

private:
    const MemoryStore& inner_;
};

}  // namespace

class TestAuditStoreVerify : public QObject {
    Q_OBJECT

private slots:
    void untouchedStoreVerifies()
    {
        QTemporaryDir dir;
        const std::filesystem::path witness = dir.filePath("witness").toStdString();
        TestLog t(1, HeadPolicy{0, {}, {}}, witness);
        t.append(12, 4);
        const auto heads = readWitness(witness);
        QVERIFY(heads);
        const StoreVerification result = verifyStore(t.store, t.log->verifier(), *heads);
        QVERIFY2(result.ok(), result.failure ? result.failure->message().c_str() : "");
        QCOMPARE(result.entries, std::uint64_t{12});
        QCOMPARE(result.heads, std::uint64_t{3});
        QCOMPARE(result.witnessHeads, std::uint64_t{3});
        QVERIFY(result.newestHead);
        QCOMPARE(result.newestHead->size, std::uint64_t{12});
        QCOMPARE(result.newestHead->root, t.log->lastHead()->root);
    }

    void alterationsAreFound_data()
    {
        QTest::addColumn<QString>("attack");
        QTest::addColumn<QString>("names");
        QTest::newRow("byte flipped in an entry") << "flip"
                                                  << "entry 5";
        QTest::newRow("entry rewritten with its hash") << "rewrite"
                                                       << "entry 6";
        QTest::newRow("newest entries removed") << "truncate"
                                                << "were removed";
        QTest::newRow("entry removed in the middle") << "remove"
                                                     << "entry 5";
        QTest::newRow("head signed by another key") << "foreign head"
                                                    << "Signed head 1";
        QTest::newRow("heads reordered") << "reorder"
                                         << "smaller";
        QTest::newRow("witness head of another history") << "witness"
                                                         << "Witness head 1";
    }

    void alterationsAreFound()
    {
        QFETCH(QString, attack);
        QFETCH(QString, names);
        TestLog t;
        t.append(12, 4);
        AlteredStore store(t.store);
        std::vector<std::string> witness;
        if (attack == "flip") {
            store.alter = [](std::vector<StoredEntry>& entries) {
                entries[5].bytes[entries[5].bytes.size() / 2] ^= 0x01U;
            };
        } else if (attack == "rewrite") {
            // Entry 5's text changed and its stored hash updated to match: entry 6 no longer
            // follows it, and the heads no longer match.
            store.alter = [](std::vector<StoredEntry>& entries) {
                auto& bytes = entries[5].bytes;
                const std::string note = "entry number 5";
                auto at = std::search(bytes.begin(), bytes.end(), note.begin(), note.end());
                QVERIFY(at != bytes.end());
                *(at + static_cast<std::ptrdiff_t>(note.size()) - 1) = '9';
                entries[5].leafHash = leafHash(bytes);
            };
        } else if (attack == "truncate") {
            store.count = 10;
        } else if (attack == "remove") {
            store.alter = [](std::vector<StoredEntry>& entries) {
                entries.erase(entries.begin() + 5);
                for (std::size_t i = 5; i < entries.size(); ++i)
                    entries[i].sequence = i;
            };
            store.count = 11;
        } else if (attack == "foreign head") {
            TreeHead head = *t.log->lastHead();
            store.heads =
                std::vector<std::string>{signTreeHead(head, testing::signingKeyFromByte(9))};
        } else if (attack == "reorder") {
            auto heads = *t.store.readHeads();
            std::reverse(heads.begin(), heads.end());
            store.heads = heads;
        } else if (attack == "witness") {
            TestLog other;  // the same key, another history
            other.next = 50;
            other.append(8, 8);
            witness = *other.store.readHeads();
            QCOMPARE(witness.size(), std::size_t{1});
        }
        const StoreVerification result = verifyStore(store, t.log->verifier(), witness);
        QVERIFY2(!result.ok(), qPrintable(attack));
        const QString message = QString::fromStdString(result.failure->message());
        QVERIFY2(message.contains(names, Qt::CaseInsensitive), qPrintable(message));
        QVERIFY2(isOneSentence(result.failure->message()), result.failure->message().c_str());
    }
};

QTEST_APPLESS_MAIN(TestAuditStoreVerify)
#include "test_audit_store_verify.moc"
