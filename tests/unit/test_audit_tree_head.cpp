// Signed tree heads: the signed-note spec's own example verifies (key id, vkey, note parsing),
// our checkpoints sign and verify, and forged, re-signed or malformed heads are refused.
#include "sealtrain/audit/tree_head.h"

#include "audit_fixture.h"
#include "sealtrain/base/encoding.h"

#include <QtTest/QtTest>

using namespace sealtrain;
using namespace sealtrain::audit;

namespace {

TreeHead sampleCheckpoint()
{
    TreeHead c;
    c.origin = "sealtrain.test/audit";
    c.size = 1024;
    c.root = leafHash(asBytes("root"));
    c.timeSeconds = 1796029200;
    return c;
}

}  // namespace

class TestAuditCheckpoint : public QObject {
    Q_OBJECT

private slots:
    // The example of c2sp.org/signed-note ("Verifier keys"): its vkey and signed note.
    void signedNoteSpecExample()
    {
        const auto verifier = NoteVerifier::fromVkey(
            "example.com/foo+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k");
        QVERIFY2(verifier.ok(), verifier.ok() ? "" : verifier.error().message().c_str());
        QCOMPARE(verifier->keyId(), std::uint32_t{0x530d903a});
        const std::string note = "This is an example message.\n\n\xE2\x80\x94 example.com/foo "
                                 "Uw2QOkn8srV1yJGh2VYRlL1Tnagv1YEq6TfXppzi2ONncAlTgK7Ztg1ERYNZXsYj"
                                 "OBH3mFXmRKuwHjG1Yu72IneyaQM=\n";
        const auto parsed = parseSignedNote(note);
        QVERIFY(parsed.ok());
        QCOMPARE(parsed->text, std::string("This is an example message.\n"));
        QCOMPARE(parsed->signatures.size(), std::size_t{1});
        QCOMPARE(parsed->signatures[0].keyId, verifier->keyId());
        QVERIFY(verifier->key.verify(asBytes(parsed->text), parsed->signatures[0].signature));
        QCOMPARE(formatSignedNote(*parsed), note);
    }

    void signAndVerify()
    {
        const auto key = testing::signingKeyFromByte(1);
        const TreeHead c = sampleCheckpoint();
        const std::string note = signTreeHead(c, key);
        QVERIFY(note.starts_with("sealtrain.test/audit\n1024\n"));
        QVERIFY(note.find("\ntime 2026-11-30T09:00:00Z\n\n\xE2\x80\x94 sealtrain.test/audit ")
                != std::string::npos);
        const auto verified = verifyTreeHead(note, NoteVerifier{c.origin, key.publicKey()});
        QVERIFY(verified.ok());
        QVERIFY(*verified == c);
        const auto vkey = NoteVerifier{c.origin, key.publicKey()}.vkey();
        QVERIFY(verifyTreeHead(note, *NoteVerifier::fromVkey(vkey)).ok());
    }

    void otherKeyIsRefused()
    {
        const TreeHead c = sampleCheckpoint();
        const std::string note = signTreeHead(c, testing::signingKeyFromByte(2));
        const auto real = testing::signingKeyFromByte(1);
        const auto verified = verifyTreeHead(note, NoteVerifier{c.origin, real.publicKey()});
        QVERIFY(!verified.ok());
        QCOMPARE(verified.error().code(), ErrorCode::Unauthenticated);
        QVERIFY(isOneSentence(verified.error().message()));
        QVERIFY(QString::fromStdString(verified.error().message()).contains("another key"));
    }

    void forgedSignatureIsRefused()
    {
        const auto key = testing::signingKeyFromByte(1);
        const TreeHead c = sampleCheckpoint();
        auto note = *parseSignedNote(signTreeHead(c, key));
        note.signatures[0].signature[10] ^= 0x01;
        const auto verified =
            verifyTreeHead(formatSignedNote(note), NoteVerifier{c.origin, key.publicKey()});
        QVERIFY(!verified.ok());
        QVERIFY(QString::fromStdString(verified.error().message()).contains("forged"));
    }

    void alteredTextIsRefused()
    {
        const auto key = testing::signingKeyFromByte(1);
        std::string note = signTreeHead(sampleCheckpoint(), key);
        note.replace(note.find("1024"), 4, "1025");
        QVERIFY(!verifyTreeHead(note, NoteVerifier{"sealtrain.test/audit", key.publicKey()}).ok());
    }

    void malformedNotes_data()
    {
        QTest::addColumn<QString>("note");
        const QString signature = QString::fromUtf8("\n\xE2\x80\x94 a ") + "AAAAAAE=" + "\n";
        QTest::newRow("no blank line") << "text\n\xE2\x80\x94 a AAAAAAE=\n";
        QTest::newRow("no signature") << "text\n\n";
        QTest::newRow("hyphen not em dash") << "text\n\n- a AAAAAAE=\n";
        QTest::newRow("control character") << "te\x01xt\n" + signature;
        QTest::newRow("plus in key name")
            << QString::fromUtf8("text\n\n\xE2\x80\x94 a+b AAAAAAE=\n");
        QTest::newRow("bad base64") << QString::fromUtf8("text\n\n\xE2\x80\x94 a AAAAAAE\n");
        QTest::newRow("no final newline") << QString::fromUtf8("text\n\n\xE2\x80\x94 a AAAAAAE=");
    }

    void malformedNotes()
    {
        QFETCH(QString, note);
        QVERIFY(!parseSignedNote(note.toStdString()).ok());
    }

    void checkpointTextIsStrict_data()
    {
        QTest::addColumn<QString>("text");
        const QString root = QString::fromStdString(toBase64(sampleCheckpoint().root));
        QTest::newRow("leading zero") << "o\n01\n" + root + "\ntime 2026-11-30T09:00:00Z\n";
        QTest::newRow("negative") << "o\n-1\n" + root + "\ntime 2026-11-30T09:00:00Z\n";
        QTest::newRow("short root") << "o\n1\nAAAA\ntime 2026-11-30T09:00:00Z\n";
        QTest::newRow("no time") << "o\n1\n" + root + "\n";
        QTest::newRow("bad time") << "o\n1\n" + root + "\ntime 2026-13-30T09:00:00Z\n";
        QTest::newRow("extra line") << "o\n1\n" + root + "\ntime 2026-11-30T09:00:00Z\nx\n";
        QTest::newRow("space in origin") << "o o\n1\n" + root + "\ntime 2026-11-30T09:00:00Z\n";
    }

    void checkpointTextIsStrict()
    {
        QFETCH(QString, text);
        QVERIFY(!parseTreeHeadText(text.toStdString()).ok());
    }

    void utcTimes()
    {
        QCOMPARE(QString::fromStdString(formatUtcSeconds(0)), QString("1970-01-01T00:00:00Z"));
        QCOMPARE(*parseUtcSeconds("2026-11-30T09:00:00Z"), std::int64_t{1796029200});
        QVERIFY(!parseUtcSeconds("2026-02-30T09:00:00Z").ok());
        QVERIFY(!parseUtcSeconds("2026-11-30 09:00:00Z").ok());
    }
};

QTEST_APPLESS_MAIN(TestAuditCheckpoint)
#include "test_audit_tree_head.moc"
