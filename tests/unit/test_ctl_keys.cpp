// sealtrainctl key id, signature verify and dsse verify: good inputs pass, altered ones fail
// with exit code 1 and one sentence, and usage errors exit 2.
#include "ctl_runner.h"

#include "sealtrain/base/encoding.h"
#include "sealtrain/crypto/dsse.h"
#include "sealtrain/crypto/signing.h"

#include <QtTest/QtTest>

#include <filesystem>
#include <fstream>
#include <sstream>

using namespace sealtrain;
using namespace sealtrain::crypto;

using sealtrain::testing::runCtl;

namespace {

void writeFile(const std::filesystem::path& path, std::span<const std::uint8_t> bytes)
{
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
}

void writeFile(const std::filesystem::path& path, std::string_view text)
{
    writeFile(path, asBytes(text));
}

// The one sentence after "sealtrainctl: ".
std::string sentence(const std::string& err)
{
    const std::string prefix = "sealtrainctl: ";
    if (err.rfind(prefix, 0) != 0 || err.empty() || err.back() != '\n')
        return {};
    return err.substr(prefix.size(), err.size() - prefix.size() - 1);
}

class Fixture {
public:
    Fixture()
        : key_(SigningKey::generate().value())
        , root_(dir_.path().toStdString())
    {
        writeFile(path("pub.pem"), key_.publicKey().toPem());
        writeFile(path("other.pem"), SigningKey::generate()->publicKey().toPem());
    }

    [[nodiscard]] std::string path(const char* name) const { return (root_ / name).string(); }
    [[nodiscard]] const SigningKey& key() const { return key_; }

private:
    SigningKey key_;
    QTemporaryDir dir_;
    std::filesystem::path root_;
};

}  // namespace

class TestCtlKeys : public QObject {
    Q_OBJECT

private slots:
    void keyIdPrintsTheId()
    {
        const Fixture fixture;
        const auto outcome = runCtl({"key", "id", fixture.path("pub.pem")});
        QCOMPARE(outcome.code, ctl::kExitOk);
        QCOMPARE(outcome.out, fixture.key().publicKey().keyId() + "\n");
    }

    void keyIdRefusesANonKey()
    {
        const Fixture fixture;
        writeFile(fixture.path("junk.pem"), "hello\n");
        const auto outcome = runCtl({"key", "id", fixture.path("junk.pem")});
        QCOMPARE(outcome.code, ctl::kExitFailure);
        QVERIFY2(isOneSentence(sentence(outcome.err)), outcome.err.c_str());
    }

    // A second key behind the first: which one would an auditor think they checked? Refused.
    void keyIdRefusesDataAfterTheKey()
    {
        const Fixture fixture;
        writeFile(fixture.path("two.pem"),
                  fixture.key().publicKey().toPem() + SigningKey::generate()->publicKey().toPem());
        const auto outcome = runCtl({"key", "id", fixture.path("two.pem")});
        QCOMPARE(outcome.code, ctl::kExitFailure);
        QVERIFY2(outcome.err.find("after its first PEM block") != std::string::npos,
                 outcome.err.c_str());
        QVERIFY(outcome.out.empty());
    }

    void signatureVerify_data()
    {
        QTest::addColumn<QString>("form");
        QTest::addColumn<QString>("change");
        QTest::addColumn<int>("code");
        QTest::newRow("raw") << "raw"
                             << "" << 0;
        QTest::newRow("base64") << "base64"
                                << "" << 0;
        QTest::newRow("base64 with newline") << "base64nl"
                                             << "" << 0;
        QTest::newRow("file altered") << "raw"
                                      << "file" << 1;
        QTest::newRow("signature altered") << "raw"
                                           << "signature" << 1;
        QTest::newRow("other key") << "raw"
                                   << "key" << 1;
        QTest::newRow("truncated signature") << "truncated"
                                             << "" << 1;
    }

    void signatureVerify()
    {
        QFETCH(QString, form);
        QFETCH(QString, change);
        QFETCH(int, code);
        const Fixture fixture;
        std::string message = "checkpoint step 1000\n";
        auto signature = fixture.key().sign(asBytes(message));
        if (change == "file")
            message[0] = 'C';
        if (change == "signature")
            signature[5] ^= 0x10;
        writeFile(fixture.path("file"), message);
        if (form == "raw")
            writeFile(fixture.path("sig"), signature);
        else if (form == "base64")
            writeFile(fixture.path("sig"), toBase64(signature));
        else if (form == "base64nl")
            writeFile(fixture.path("sig"), toBase64(signature) + "\n");
        else
            writeFile(fixture.path("sig"), std::span(signature).first(63));
        const auto outcome = runCtl({"signature", "verify", "--key",
                                     fixture.path(change == "key" ? "other.pem" : "pub.pem"),
                                     "--signature", fixture.path("sig"), fixture.path("file")});
        QCOMPARE(outcome.code, code);
        if (code == 0) {
            QVERIFY(outcome.out.find(fixture.key().publicKey().keyId()) != std::string::npos);
            QVERIFY(outcome.err.empty());
        } else {
            QVERIFY2(isOneSentence(sentence(outcome.err)), outcome.err.c_str());
            QVERIFY(outcome.out.empty());
        }
    }

    void dsseVerify_data()
    {
        QTest::addColumn<QString>("change");
        QTest::addColumn<int>("code");
        QTest::newRow("intact") << "" << 0;
        QTest::newRow("payload changed") << "payload" << 1;
        QTest::newRow("type changed") << "type" << 1;
        QTest::newRow("other key") << "key" << 1;
        QTest::newRow("not json") << "json" << 1;
    }

    void dsseVerify()
    {
        QFETCH(QString, change);
        QFETCH(int, code);
        const Fixture fixture;
        auto envelope = signDsse("application/vnd.sealtrain.checkpoint+json",
                                 asBytes(R"({"step":1000})"), fixture.key());
        if (change == "payload")
            envelope.payload.back() = ']';
        if (change == "type")
            envelope.payloadType = "text/plain";
        writeFile(fixture.path("envelope.json"), change == "json" ? "{" : envelope.toJson());
        const auto outcome = runCtl({"dsse", "verify", "--key",
                                     fixture.path(change == "key" ? "other.pem" : "pub.pem"),
                                     fixture.path("envelope.json")});
        QCOMPARE(outcome.code, code);
        if (change != "json") {
            QVERIFY(outcome.out.find("payloadType: " + envelope.payloadType) != std::string::npos);
        }
        if (code == 0) {
            QVERIFY(outcome.out.find("verdict: verified by " + fixture.key().publicKey().keyId())
                    != std::string::npos);
        } else {
            QVERIFY2(isOneSentence(sentence(outcome.err)), outcome.err.c_str());
            QVERIFY(outcome.out.find("verified by") == std::string::npos);
        }
    }

    void usageErrors_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::newRow("key without subcommand") << QStringList{"key"};
        QTest::newRow("key id without file") << QStringList{"key", "id"};
        QTest::newRow("missing key file") << QStringList{"key", "id", "/nonexistent/pub.pem"};
        QTest::newRow("verify without key") << QStringList{"signature", "verify", "x"};
        QTest::newRow("dsse without envelope") << QStringList{"dsse", "verify", "--key", "k"};
    }

    void usageErrors()
    {
        QFETCH(QStringList, args);
        std::vector<std::string> argv;
        for (const auto& arg : args)
            argv.push_back(arg.toStdString());
        const auto outcome = runCtl(argv);
        QCOMPARE(outcome.code, ctl::kExitUsage);
        QVERIFY(outcome.err.find("--help") != std::string::npos);
    }
};

QTEST_APPLESS_MAIN(TestCtlKeys)
#include "test_ctl_keys.moc"
