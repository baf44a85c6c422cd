// Audit entries: the v1 encoding round-trips, its bytes are fixed, and the strict reader refuses
// every kind of damage; sensitive values are stored only as keyed hashes.
#include "sealtrain/audit/entry.h"

#include "audit_fixture.h"
#include "sealtrain/base/encoding.h"
#include "sealtrain/crypto/hash.h"

#include <QtTest/QtTest>

using namespace sealtrain;
using namespace sealtrain::audit;

namespace {

Entry sampleEntry()
{
    Entry e;
    e.sequence = 7;
    e.timeNs = 1796029200123456789ULL;
    e.previousLeafHash.fill(0xab);
    e.actor = {ActorKind::User, "alice", "s-1", "password+totp"};
    e.action = "job.approve";
    e.target = {"job", "j-42"};
    e.outcome = Outcome::Denied;
    e.reason = "the submitter can not approve";
    e.requestId = "req-9";
    e.approvalIds = {"a-1", "a-2"};
    e.details = {textDetail("note", "größe ✓")};
    return e;
}

}  // namespace

class TestAuditEntry : public QObject {
    Q_OBJECT

private slots:
    void roundTrip()
    {
        const Entry e = sampleEntry();
        const auto bytes = encodeEntry(e);
        QVERIFY(bytes.ok());
        const auto decoded = decodeEntry(*bytes);
        QVERIFY2(decoded.ok(), decoded.ok() ? "" : decoded.error().message().c_str());
        QVERIFY(*decoded == e);
    }

    // The format is fixed: these bytes are what docs/formats/audit.md describes, byte by byte.
    void fixedBytes()
    {
        Entry e;
        e.sequence = 1;
        e.timeNs = 2;
        e.actor = {ActorKind::System, "ctl", "", ""};
        e.action = "audit.export";
        const auto bytes = encodeEntry(e);
        QVERIFY(bytes.ok());
        const std::string expected = "01"                      // version
                                     "0000000000000001"        // sequence
                                     "0000000000000002"        // time
                                     + std::string(64, '0') +  // previous leaf hash
                                     "03"
                                     "00000003"
                                     "63746c"  // actor kind, id
                                     "00000000"
                                     "00000000"  // session, auth
                                     "0000000c"
                                     "61756469742e6578706f7274"  // action
                                     "00000000"
                                     "00000000"  // target kind, id
                                     "01"
                                     "00000000"  // outcome, reason
                                     "00000000"  // request id
                                     "0000"      // approvals
                                     "00000000"  // keyed-hash key id
                                     "0000";     // details
        QCOMPARE(QString::fromStdString(toHex(*bytes)), QString::fromStdString(expected));
    }

    void refusesDamage_data()
    {
        QTest::addColumn<int>("position");
        const auto bytes = encodeEntry(sampleEntry());
        // Every length field and enum, plus the first byte (version).
        for (int position : {0, 49, 50, 58, 100, 120})
            QTest::newRow(qPrintable(QString::number(position))) << position;
        QVERIFY(bytes->size() > 120);
    }

    // Setting a structural byte to 0xff is always refused (lengths overrun, enums are unknown).
    void refusesDamage()
    {
        QFETCH(int, position);
        auto bytes = *encodeEntry(sampleEntry());
        bytes[static_cast<std::size_t>(position)] = 0xff;
        QVERIFY(!decodeEntry(bytes).ok());
    }

    void refusesTruncationAndTrailingBytes()
    {
        const auto bytes = *encodeEntry(sampleEntry());
        for (std::size_t length = 0; length < bytes.size(); ++length)
            QVERIFY(!decodeEntry(std::span(bytes).first(length)).ok());
        auto longer = bytes;
        longer.push_back(0);
        const auto error = decodeEntry(longer);
        QVERIFY(!error.ok());
        QVERIFY(isOneSentence(error.error().message()));
        QVERIFY(QString::fromStdString(error.error().message()).contains("length"));
    }

    void refusesUnknownVersion()
    {
        auto bytes = *encodeEntry(sampleEntry());
        bytes[0] = 2;
        const auto error = decodeEntry(bytes);
        QVERIFY(!error.ok());
        QCOMPARE(error.error().code(), ErrorCode::Unsupported);
    }

    void refusesInvalidUtf8()
    {
        Entry e = sampleEntry();
        e.actor.id = "x";
        auto bytes = *encodeEntry(e);
        // The actor id's only byte follows kind (1) + length (4) at offset 49.
        QCOMPARE(bytes[54], std::uint8_t{'x'});
        bytes[54] = 0xc0;  // a lone lead byte
        QVERIFY(!decodeEntry(bytes).ok());
    }

    void rulesAreEnforcedOnBothSides_data()
    {
        QTest::addColumn<QString>("what");
        for (const char* what : {"action", "ok-with-reason", "denied-without-reason",
                                 "keyed-without-key-id", "empty-actor", "short-keyed-hash"})
            QTest::newRow(what) << what;
    }

    void rulesAreEnforcedOnBothSides()
    {
        QFETCH(QString, what);
        Entry e = sampleEntry();
        if (what == "action")
            e.action = "Approve";
        else if (what == "ok-with-reason")
            e.outcome = Outcome::Ok;
        else if (what == "denied-without-reason")
            e.reason.clear();
        else if (what == "keyed-without-key-id")
            e.details.push_back({"file", Detail::Kind::KeyedHash, std::vector<std::uint8_t>(32)});
        else if (what == "empty-actor")
            e.actor.id.clear();
        else if (what == "short-keyed-hash") {
            e.keyedHashKeyId = "k";
            e.details.push_back({"file", Detail::Kind::KeyedHash, std::vector<std::uint8_t>(31)});
        }
        const auto encoded = encodeEntry(e);
        QVERIFY(!encoded.ok());
        QCOMPARE(encoded.error().code(), ErrorCode::InvalidArgument);
    }

    void actionNames_data()
    {
        QTest::addColumn<QString>("action");
        QTest::addColumn<bool>("valid");
        QTest::newRow("job.approve") << "job.approve" << true;
        QTest::newRow("three words") << "model.promote.request" << true;
        QTest::newRow("one word") << "approve" << false;
        QTest::newRow("capital") << "Job.approve" << false;
        QTest::newRow("double dot") << "job..approve" << false;
        QTest::newRow("trailing dot") << "job." << false;
        QTest::newRow("space") << "job. approve" << false;
    }

    void actionNames()
    {
        QFETCH(QString, action);
        QFETCH(bool, valid);
        QCOMPARE(isValidAction(action.toStdString()), valid);
    }

    void sensitiveValuesAreKeyedHashes()
    {
        const AuditKey key = testing::testAuditKey();
        Entry e = sampleEntry();
        e.keyedHashKeyId = key.keyId();
        e.details.push_back(key.keyedDetail("file", "/data/patients.csv"));
        const auto bytes = *encodeEntry(e);
        const std::string raw(bytes.begin(), bytes.end());
        QVERIFY(raw.find("patients") == std::string::npos);
        const auto decoded = *decodeEntry(bytes);
        QVERIFY(key.matches(decoded, "file", "/data/patients.csv"));
        QVERIFY(!key.matches(decoded, "file", "/data/other.csv"));
        // Another key does not find it.
        std::vector<std::uint8_t> other(32, 0x11);
        const auto otherKey =
            AuditKey::create(crypto::SecretBytes::fromBytes(other).value(), key.keyId()).value();
        QVERIFY(!otherKey.matches(decoded, "file", "/data/patients.csv"));
    }

    // The keyed hash binds the field name: the same value recorded under another field, or a
    // hash moved into a detail of another name, does not match.
    void keyedHashBindsTheFieldName()
    {
        const AuditKey key = testing::testAuditKey();
        Entry e = sampleEntry();
        e.keyedHashKeyId = key.keyId();
        e.details.push_back(key.keyedDetail("user_name", "alice"));
        QVERIFY(key.matches(e, "user_name", "alice"));
        QVERIFY(!key.matches(e, "display_name", "alice"));
        QVERIFY(key.keyedDetail("user_name", "alice").value
                != key.keyedDetail("display_name", "alice").value);
        Entry moved = e;
        moved.details.back().name = "display_name";
        QVERIFY(!key.matches(moved, "display_name", "alice"));
        QVERIFY(!key.matches(moved, "user_name", "alice"));
        // The construction of docs/formats/audit.md: HMAC-SHA-256(key, u32 len || name || value).
        const std::string message("\0\0\0\x09user_namealice", 18);
        const auto expected = crypto::hmacSha256(
            crypto::SecretBytes::fromBytes(std::vector<std::uint8_t>(32, 0x5a)).value(),
            asBytes(message));
        QVERIFY(std::equal(expected.begin(), expected.end(), e.details.back().value.begin(),
                           e.details.back().value.end()));
    }
};

QTEST_APPLESS_MAIN(TestAuditEntry)
#include "test_audit_entry.moc"
