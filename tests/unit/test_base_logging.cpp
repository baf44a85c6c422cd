// Structured logging and the secrets rule: a deliberate secret passed to the logger never
// appears in its output, in either format.
#include "sealtrain/base/logging.h"
#include "sealtrain/crypto/secret_bytes.h"

#include <QtTest/QtTest>

#include <nlohmann/json.hpp>

#include <sstream>

namespace slog = sealtrain::log;
using sealtrain::crypto::SecretBytes;

namespace {

std::string hex(std::span<const std::uint8_t> bytes)
{
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string out;
    for (auto b : bytes) {
        out += kDigits[b >> 4];
        out += kDigits[b & 0xf];
    }
    return out;
}

std::string base64(std::span<const std::uint8_t> bytes)
{
    const QByteArray raw(reinterpret_cast<const char*>(bytes.data()),
                         static_cast<qsizetype>(bytes.size()));
    return raw.toBase64().toStdString();
}

// Every way a key's bytes could show up in text.
void verifyAbsent(const std::string& output, const SecretBytes& key)
{
    const auto bytes = key.bytes();
    const std::string raw(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    QVERIFY2(output.find(raw) == std::string::npos, "raw key bytes reached the log");
    QVERIFY2(output.find(hex(bytes)) == std::string::npos, "hex key reached the log");
    QVERIFY2(output.find(base64(bytes)) == std::string::npos, "base64 key reached the log");
    // Not even a prefix long enough to narrow a search.
    QVERIFY2(output.find(hex(bytes).substr(0, 16)) == std::string::npos,
             "key prefix reached the log");
}

}  // namespace

class TestLogging : public QObject {
    Q_OBJECT

private slots:
    void cleanup() { slog::configure(slog::Options{}); }

    void secretsNeverReachTheLog_data()
    {
        QTest::addColumn<int>("format");
        QTest::newRow("text") << static_cast<int>(slog::Format::Text);
        QTest::newRow("json") << static_cast<int>(slog::Format::Json);
    }

    void secretsNeverReachTheLog()
    {
        QFETCH(int, format);
        std::ostringstream sink;
        slog::configure(
            {slog::Level::Trace, static_cast<slog::Format>(format), std::nullopt, &sink});

        auto key = SecretBytes::random(32);
        QVERIFY(key.ok());
        const std::string keyHex = hex(key->bytes());
        const std::string keyBase64 = base64(key->bytes());

        // 1. The SecretBytes itself, formatted into a message.
        slog::info("test", fmt::format("unlocking with {}", *key));
        // 2. The key's text forms in a field whose name marks it secret.
        slog::info("test", "derived", {{"dek", keyHex}, {"passphrase", "correct horse battery"}});
        // 3. A careless caller puts the hex or base64 key straight into a message or a field.
        slog::warn("test", "master key is " + keyHex);
        slog::warn("test", "wrapped", {{"blob", keyBase64}});
        // 4. A PEM private key and an otpauth URI with its secret.
        slog::error("test", "loaded -----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIG\n-----END "
                            "PRIVATE KEY----- ok");
        slog::info("test",
                   "enrol otpauth://totp/Sealtrain:alice?secret=JBSWY3DPEHPK3PXP&issuer=Sealtrain");
        slog::flush();

        const std::string output = sink.str();
        verifyAbsent(output, *key);
        QVERIFY(output.find("correct horse battery") == std::string::npos);
        QVERIFY(output.find("MC4CAQAwBQYDK2VwBCIEIG") == std::string::npos);
        QVERIFY(output.find("JBSWY3DPEHPK3PXP") == std::string::npos);
        QVERIFY(output.find("SecretBytes(32 bytes)") != std::string::npos);
        QVERIFY(output.find("[redacted]") != std::string::npos);
    }

    void publicFactsSurvive()
    {
        std::ostringstream sink;
        slog::configure({slog::Level::Info, slog::Format::Text, std::nullopt, &sink});
        const std::string digest = "sha256:" + std::string(64, 'a');
        slog::info("dataset", "imported",
                   {{"records", 1200}, {"dataset_id", digest}, {"key_id", "kek-datasets-v2"}});
        slog::flush();
        const std::string output = sink.str();
        QVERIFY2(output.find("records=1200") != std::string::npos, output.c_str());
        QVERIFY2(output.find(digest) != std::string::npos, output.c_str());
        QVERIFY2(output.find("key_id=kek-datasets-v2") != std::string::npos, output.c_str());
        QVERIFY2(output.find("[dataset] imported") != std::string::npos, output.c_str());
    }

    void jsonLinesAreStructured()
    {
        std::ostringstream sink;
        slog::configure({slog::Level::Debug, slog::Format::Json, std::nullopt, &sink});
        slog::debug("ctl", "quote \" and newline \n inside",
                    {{"count", 3}, {"ok", true}, {"ratio", 0.5}});
        slog::flush();
        std::istringstream lines(sink.str());
        std::string line;
        QVERIFY(std::getline(lines, line));
        const auto parsed = nlohmann::json::parse(line);
        QCOMPARE(QString::fromStdString(parsed["component"].get<std::string>()),
                 QStringLiteral("ctl"));
        QCOMPARE(QString::fromStdString(parsed["level"].get<std::string>()),
                 QStringLiteral("debug"));
        QCOMPARE(parsed["fields"]["count"].get<int>(), 3);
        QCOMPARE(parsed["fields"]["ok"].get<bool>(), true);
        QVERIFY(parsed["msg"].get<std::string>().find('\n') != std::string::npos);
        QVERIFY(parsed["ts"].get<std::string>().ends_with("Z"));
    }

    void levelsFilter()
    {
        std::ostringstream sink;
        slog::configure({slog::Level::Warning, slog::Format::Text, std::nullopt, &sink});
        slog::info("test", "hidden");
        slog::warn("test", "shown");
        slog::flush();
        QVERIFY(sink.str().find("hidden") == std::string::npos);
        QVERIFY(sink.str().find("shown") != std::string::npos);
        QVERIFY(slog::parseLevel("warning") == slog::Level::Warning);
        QVERIFY(!slog::parseLevel("loud").has_value());
    }

    void secretFieldNames_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<bool>("secret");
        QTest::newRow("password") << "password" << true;
        QTest::newRow("api token") << "api_token" << true;
        QTest::newRow("master key") << "masterKey" << true;
        QTest::newRow("totp") << "totp_code" << true;
        QTest::newRow("key id") << "key_id" << false;
        QTest::newRow("public key") << "public_key" << false;
        QTest::newRow("records") << "records" << false;
    }

    void secretFieldNames()
    {
        QFETCH(QString, name);
        QFETCH(bool, secret);
        QCOMPARE(slog::isSecretFieldName(name.toStdString()), secret);
    }
};

QTEST_APPLESS_MAIN(TestLogging)
#include "test_base_logging.moc"
