// Ed25519: Wycheproof (every valid signature verifies, every invalid one is refused), RFC 8032 /
// sign.input from python3-cryptography-vectors (our signatures equal the expected ones),
// interop with the openssl command in both directions, PEM and key id forms, and tampering. PEM
// input is one block, and an encrypted key is refused without a prompt, with or without a
// terminal.
#include "cryptography_vectors.h"
#include "testvectors.h"

#include "sealtrain/base/encoding.h"
#include "sealtrain/crypto/hash.h"
#include "sealtrain/crypto/signing.h"

#include "test_helpers.h"

#include <QtTest/QtTest>

#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

using namespace sealtrain;
using namespace sealtrain::crypto;

using sealtrain::testing::hex;

namespace {

std::vector<std::uint8_t> jsonHex(const QJsonValue& value)
{
    return hex(value.toString().toStdString());
}

QJsonObject readJson(const std::filesystem::path& path)
{
    QFile file(QString::fromStdString(path.string()));
    if (!file.open(QIODevice::ReadOnly))
        qFatal("cannot read %s", path.c_str());
    return QJsonDocument::fromJson(file.readAll()).object();
}

std::string readText(const std::filesystem::path& path)
{
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

void writeBytes(const std::filesystem::path& path, std::span<const std::uint8_t> bytes)
{
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
}

// An Ed25519 key encrypted with 'openssl pkcs8 -topk8 -v2 aes-256-cbc' under kTypedPassword.
constexpr std::string_view kEncryptedKey =
    "-----BEGIN ENCRYPTED PRIVATE KEY-----\n"
    "MIGbMFcGCSqGSIb3DQEFDTBKMCkGCSqGSIb3DQEFDDAcBAhq57BwQKFyVgICCAAw\n"
    "DAYIKoZIhvcNAgkFADAdBglghkgBZQMEASoEEDDXS+imvtsYClhXeVLUqWwEQGrt\n"
    "1ZamriUZQxCXbslEsSPC2fhsQTjKrtM8PHL8ZMoGEk0JnJHIm+exT/hJPh1wzp29\n"
    "Poj21KoEvPNp5m5Y3WU=\n"
    "-----END ENCRYPTED PRIVATE KEY-----\n";
constexpr std::string_view kTypedPassword = "typed-on-the-tty\n";

// Exit codes of the child that reads kEncryptedKey.
constexpr int kRefusedAsEncrypted = 0;
constexpr int kDecrypted = 1;
constexpr int kRefusedOtherwise = 2;

[[noreturn]] void readEncryptedKeyAndExit()
{
    const auto key = SigningKey::fromPrivatePem(kEncryptedKey);
    if (key.ok())
        _exit(kDecrypted);
    _exit(key.error().message().find("is encrypted") != std::string::npos ? kRefusedAsEncrypted
                                                                          : kRefusedOtherwise);
}

// Types kTypedPassword on `terminal` (a pty's master side) whenever a password prompt shows up
// there, for as long as the other side is open (at most five seconds).
void answerPasswordPrompt(int terminal)
{
    std::string shown;
    for (int tick = 0; tick < 500; ++tick) {
        pollfd ready{terminal, POLLIN, 0};
        if (::poll(&ready, 1, 10) <= 0)
            continue;
        std::array<char, 256> buffer{};
        const ssize_t got = ::read(terminal, buffer.data(), buffer.size());
        if (got <= 0)
            return;  // the child closed the terminal: it has exited
        shown.append(buffer.data(), static_cast<std::size_t>(got));
        if (shown.find("pass phrase") != std::string::npos) {
            shown.clear();
            if (::write(terminal, kTypedPassword.data(), kTypedPassword.size()) <= 0)
                return;
        }
    }
}

// The child's exit code, or -1 when it is still running after ten seconds (a prompt waiting).
int waitForChild(pid_t child)
{
    for (int tick = 0; tick < 1000; ++tick) {
        int status = 0;
        if (::waitpid(child, &status, WNOHANG) == child)
            return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ::kill(child, SIGKILL);
    ::waitpid(child, nullptr, 0);
    return -1;
}

SigningKey keyFromSeed(const std::vector<std::uint8_t>& seed)
{
    auto secret = SecretBytes::fromBytes(seed);
    if (!secret)
        qFatal("cannot allocate a test seed");
    auto key = SigningKey::fromSeed(*secret);
    if (!key)
        qFatal("%s", key.error().message().c_str());
    return std::move(*key);
}

SigningKey freshKey()
{
    auto key = SigningKey::generate();
    if (!key)
        qFatal("%s", key.error().message().c_str());
    return std::move(*key);
}

struct ProcessResult {
    int exitCode = -1;
    QByteArray output;
};

ProcessResult runTool(const QString& program, const QStringList& arguments)
{
    QProcess process;
    process.setProcessChannelMode(QProcess::MergedChannels);
    process.start(program, arguments);
    if (!process.waitForFinished(30000))
        return {};
    return {process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1,
            process.readAll()};
}

QString qpath(const std::filesystem::path& path)
{
    return QString::fromStdString(path.string());
}

}  // namespace

class TestSigning : public QObject {
    Q_OBJECT

private slots:
    void wycheproof()
    {
        SEALTRAIN_REQUIRE_TEST_VECTORS(dir, "wycheproof");
        const auto json = readJson(dir / "ed25519_test.json");
        int valid = 0;
        int invalid = 0;
        for (const auto& groupValue : json["testGroups"].toArray()) {
            const auto group = groupValue.toObject();
            const auto publicKey = PublicKey::fromRaw(jsonHex(group["publicKey"].toObject()["pk"]));
            QVERIFY(publicKey.ok());
            // The same key arrives as PEM too; both forms must agree.
            const auto fromPem = PublicKey::fromPem(group["publicKeyPem"].toString().toStdString());
            QVERIFY(fromPem.ok());
            QVERIFY(*fromPem == *publicKey);
            for (const auto& testValue : group["tests"].toArray()) {
                const auto test = testValue.toObject();
                const auto id = "tcId " + std::to_string(test["tcId"].toInt());
                const bool verified = publicKey->verify(jsonHex(test["msg"]), jsonHex(test["sig"]));
                const auto result = test["result"].toString();
                if (result == "valid") {
                    QVERIFY2(verified, id.c_str());
                    ++valid;
                } else {
                    QCOMPARE(result, QString("invalid"));  // Ed25519 has no "acceptable" cases
                    QVERIFY2(!verified, id.c_str());
                    ++invalid;
                }
            }
        }
        QCOMPARE(valid + invalid, json["numberOfTests"].toInt());
        QVERIFY(valid > 0 && invalid > 0);
    }

    void signInput()
    {
        // sign.input (the ed25519 reference's test file): sk||pk : pk : msg : sig||msg :
        SEALTRAIN_REQUIRE_CRYPTOGRAPHY_VECTORS(vectors);
        std::ifstream in(vectors / "asymmetric" / "Ed25519" / "sign.input");
        std::string line;
        int checked = 0;
        while (std::getline(in, line)) {
            std::vector<std::string> fields;
            std::istringstream parts(line);
            std::string field;
            while (std::getline(parts, field, ':'))
                fields.push_back(field);
            QVERIFY(fields.size() >= 4);
            const auto secretAndPublic = hex(fields[0]);
            const auto publicRaw = hex(fields[1]);
            const auto message = hex(fields[2]);
            const auto signatureAndMessage = hex(fields[3]);
            QCOMPARE(secretAndPublic.size(), std::size_t{64});
            const auto key = keyFromSeed({secretAndPublic.begin(), secretAndPublic.begin() + 32});
            QVERIFY(std::equal(publicRaw.begin(), publicRaw.end(), key.publicKey().raw().begin(),
                               key.publicKey().raw().end()));
            const auto signature = key.sign(message);
            QVERIFY2(std::equal(signature.begin(), signature.end(), signatureAndMessage.begin()),
                     fields[1].c_str());
            QVERIFY(key.publicKey().verify(message, signature));
            ++checked;
        }
        QCOMPARE(checked, 1024);
    }

    void rfc8032FirstVector()
    {
        // RFC 8032 section 7.1, TEST 1, so the check runs even without the Debian vectors.
        const auto key =
            keyFromSeed(hex("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60"));
        QCOMPARE(toHex(key.publicKey().raw()),
                 std::string("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a"));
        QCOMPARE(toHex(key.sign({})),
                 std::string("e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb"
                             "8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"));
    }

    void pemRoundTripsAndKeyId()
    {
        const auto key = freshKey();
        const auto pem = key.publicKey().toPem();
        QVERIFY(pem.starts_with("-----BEGIN PUBLIC KEY-----\n"));
        const auto back = PublicKey::fromPem(pem);
        QVERIFY(back.ok());
        QVERIFY(*back == key.publicKey());

        const auto privatePem = key.toPrivatePem();
        QVERIFY(privatePem.ok());
        QVERIFY(privatePem->starts_with("-----BEGIN PRIVATE KEY-----\n"));
        const auto reloaded = SigningKey::fromPrivatePem(*privatePem);
        QVERIFY(reloaded.ok());
        QVERIFY(reloaded->seed().equals(key.seed()));

        const auto id = key.publicKey().keyId();
        QCOMPARE(id, "sha256:" + toHex(sha256(key.publicKey().raw())));
        QCOMPARE(id.size(), std::size_t{7 + 64});
        QVERIFY(freshKey().publicKey().keyId() != id);
    }

    void badImportsAreRefused_data()
    {
        QTest::addColumn<QString>("pem");
        QTest::newRow("empty") << "";
        QTest::newRow("garbage")
            << "-----BEGIN PUBLIC KEY-----\nnot base64\n-----END PUBLIC KEY-----\n";
        // An X25519 key is a valid SPKI but not a signing key.
        QTest::newRow("x25519") << "-----BEGIN PUBLIC KEY-----\n"
                                   "MCowBQYDK2VuAyEA3p7bfXt9wbTTW2HC7OQ1Nz+DQ8hbeGdNrfx+FG+IK08=\n"
                                   "-----END PUBLIC KEY-----\n";
    }

    void badImportsAreRefused()
    {
        QFETCH(QString, pem);
        const auto key = PublicKey::fromPem(pem.toStdString());
        QVERIFY(!key.ok());
        QVERIFY(isOneSentence(key.error().message()));
        QVERIFY(!SigningKey::fromPrivatePem(pem.toStdString()).ok());
    }

    void pemWithDataAfterTheBlockIsRefused()
    {
        const auto key = SigningKey::generate().value();
        const std::string publicPem = key.publicKey().toPem();
        const std::string otherPem = SigningKey::generate()->publicKey().toPem();
        const std::string privatePem = key.toPrivatePem().value();
        for (const auto& text : {publicPem + otherPem, publicPem + "trailing words\n"}) {
            const auto refused = PublicKey::fromPem(text);
            QVERIFY(!refused.ok());
            QVERIFY2(refused.error().message().find("after its first PEM block")
                         != std::string::npos,
                     refused.error().message().c_str());
        }
        const auto refused = SigningKey::fromPrivatePem(privatePem + publicPem);
        QVERIFY(!refused.ok());
        QVERIFY(refused.error().message().find("after its first PEM block") != std::string::npos);
        QVERIFY(isOneSentence(refused.error().message()));
        QVERIFY(PublicKey::fromPem(publicPem + "\r\n\n").ok());
        QVERIFY(SigningKey::fromPrivatePem(privatePem + "\n").ok());
    }

    // No terminal and nothing on standard input: the encrypted key fails at once, with the
    // sentence that says why, instead of waiting for a password.
    void encryptedKeyWithoutTerminalFailsClearly()
    {
        const pid_t child = ::fork();
        QVERIFY(child >= 0);
        if (child == 0) {
            ::setsid();  // no controlling terminal any more
            const int devNull = ::open("/dev/null", O_RDONLY);
            ::dup2(devNull, STDIN_FILENO);
            readEncryptedKeyAndExit();
        }
        QCOMPARE(waitForChild(child), kRefusedAsEncrypted);
    }

    // A terminal where someone types the key's password: OpenSSL's default callback would read
    // it and decrypt the key. Sealtrain never asks, so the key stays refused.
    void encryptedKeyIgnoresTheTerminal()
    {
        int terminal = -1;
        const pid_t child = ::forkpty(&terminal, nullptr, nullptr, nullptr);
        QVERIFY(child >= 0);
        if (child == 0)
            readEncryptedKeyAndExit();
        answerPasswordPrompt(terminal);
        const int code = waitForChild(child);
        ::close(terminal);
        QCOMPARE(code, kRefusedAsEncrypted);
    }

    void rawKeyChecks()
    {
        QVERIFY(!PublicKey::fromRaw(std::vector<std::uint8_t>(31, 1)).ok());
        QVERIFY(!PublicKey::fromRaw(std::vector<std::uint8_t>(33, 1)).ok());
        // The identity point (a small-order point) can never be a real key.
        std::vector<std::uint8_t> identity(32, 0);
        identity[0] = 1;
        QVERIFY(!PublicKey::fromRaw(identity).ok());
        // y = p (not canonical).
        auto nonCanonical = hex("edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f");
        QVERIFY(!PublicKey::fromRaw(nonCanonical).ok());
        auto seedTooShort = SecretBytes::fromBytes(std::vector<std::uint8_t>(16, 7));
        QVERIFY(seedTooShort.ok());
        QVERIFY(!SigningKey::fromSeed(*seedTooShort).ok());
    }

    void opensslVerifiesOurSignature()
    {
        QTemporaryDir dir;
        const std::filesystem::path root = dir.path().toStdString();
        const auto key = freshKey();
        const auto message = asBytes("Sealtrain checkpoint 42\n");
        const auto signature = key.sign(message);
        {
            std::ofstream(root / "pub.pem") << key.publicKey().toPem();
        }
        writeBytes(root / "msg", message);
        writeBytes(root / "sig", signature);
        const QStringList verify{"pkeyutl",
                                 "-verify",
                                 "-pubin",
                                 "-inkey",
                                 qpath(root / "pub.pem"),
                                 "-rawin",
                                 "-in",
                                 qpath(root / "msg"),
                                 "-sigfile",
                                 qpath(root / "sig")};
        const auto good = runTool("openssl", verify);
        QVERIFY2(good.exitCode == 0, good.output.constData());
        QVERIFY(good.output.contains("Signature Verified Successfully"));

        auto tampered = std::vector<std::uint8_t>(message.begin(), message.end());
        tampered[0] ^= 0x01;
        writeBytes(root / "msg", tampered);
        const auto bad = runTool("openssl", verify);
        QVERIFY(bad.exitCode != 0);

        // The key id is reproducible with openssl and sha256sum (docs/formats/keys.md).
        const auto keyId =
            runTool("sh", {"-c", "openssl pkey -pubin -in '" + qpath(root / "pub.pem")
                                     + "' -outform DER | tail -c 32 | sha256sum"});
        QCOMPARE(keyId.exitCode, 0);
        QCOMPARE("sha256:" + keyId.output.left(64).toStdString(), key.publicKey().keyId());
    }

    void weVerifyOpensslSignature()
    {
        QTemporaryDir dir;
        const std::filesystem::path root = dir.path().toStdString();
        QCOMPARE(runTool("openssl",
                         {"genpkey", "-algorithm", "ed25519", "-out", qpath(root / "key.pem")})
                     .exitCode,
                 0);
        QCOMPARE(runTool("openssl", {"pkey", "-in", qpath(root / "key.pem"), "-pubout", "-out",
                                     qpath(root / "pub.pem")})
                     .exitCode,
                 0);
        const auto message = asBytes("signed by openssl");
        writeBytes(root / "msg", message);
        QCOMPARE(
            runTool("openssl", {"pkeyutl", "-sign", "-inkey", qpath(root / "key.pem"), "-rawin",
                                "-in", qpath(root / "msg"), "-out", qpath(root / "sig")})
                .exitCode,
            0);
        const auto signatureText = readText(root / "sig");
        const std::vector<std::uint8_t> signature(signatureText.begin(), signatureText.end());
        QCOMPARE(signature.size(), kEd25519SignatureSize);

        const auto publicKey = PublicKey::fromPem(readText(root / "pub.pem"));
        QVERIFY(publicKey.ok());
        QVERIFY(publicKey->verify(message, signature));
        QVERIFY(!publicKey->verify(asBytes("signed by openssL"), signature));

        // Their private key loads, derives the same public key, and (Ed25519 being
        // deterministic) makes the same signature.
        const auto privateKey = SigningKey::fromPrivatePem(readText(root / "key.pem"));
        QVERIFY(privateKey.ok());
        QVERIFY(privateKey->publicKey() == *publicKey);
        const auto ours = privateKey->sign(message);
        QVERIFY(std::equal(ours.begin(), ours.end(), signature.begin(), signature.end()));
    }

    void everyBitFlipIsRefused()
    {
        const auto key = freshKey();
        const auto messageText = asBytes("move 10 GPUs to job 7");
        const std::vector<std::uint8_t> message(messageText.begin(), messageText.end());
        const auto signature = key.sign(message);
        QVERIFY(key.publicKey().verify(message, signature));

        for (std::size_t bit = 0; bit < message.size() * 8; ++bit) {
            auto flipped = message;
            flipped[bit / 8] ^= static_cast<std::uint8_t>(1U << (bit % 8));
            QVERIFY2(!key.publicKey().verify(flipped, signature), std::to_string(bit).c_str());
        }
        for (std::size_t bit = 0; bit < signature.size() * 8; ++bit) {
            auto flipped = signature;
            flipped[bit / 8] ^= static_cast<std::uint8_t>(1U << (bit % 8));
            QVERIFY2(!key.publicKey().verify(message, flipped), std::to_string(bit).c_str());
        }
        for (std::size_t bit = 0; bit < kEd25519PublicKeySize * 8; ++bit) {
            std::vector<std::uint8_t> raw(key.publicKey().raw().begin(),
                                          key.publicKey().raw().end());
            raw[bit / 8] ^= static_cast<std::uint8_t>(1U << (bit % 8));
            const auto other = PublicKey::fromRaw(raw);
            // Either the flipped key is not a valid point, or it does not verify.
            QVERIFY2(!other.ok() || !other->verify(message, signature),
                     std::to_string(bit).c_str());
        }
    }

    void otherKeysAndShapesAreRefused()
    {
        const auto key = freshKey();
        const auto other = freshKey();
        const auto message = asBytes("payload");
        const auto signature = key.sign(message);
        QVERIFY(!other.publicKey().verify(message, signature));
        QVERIFY(!key.publicKey().verify(message, std::span(signature).first(63)));
        std::vector<std::uint8_t> longer(signature.begin(), signature.end());
        longer.push_back(0);
        QVERIFY(!key.publicKey().verify(message, longer));
        QVERIFY(!key.publicKey().verify(message, std::vector<std::uint8_t>(64, 0)));
    }
};

QTEST_APPLESS_MAIN(TestSigning)
#include "test_crypto_signing.moc"
