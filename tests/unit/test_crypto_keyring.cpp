// The key hierarchy: Argon2id against the reference `argon2` command, the parameter floor,
// unlock with the right and wrong secret, rotation, retirement, passphrase change, key files,
// and tampering with the keyring file.
#include "sealtrain/base/encoding.h"
#include "sealtrain/crypto/key_file.h"
#include "sealtrain/crypto/keyring.h"

#include "test_helpers.h"

#include <QtTest/QtTest>

#include <nlohmann/json.hpp>

#include <fstream>
#include <sys/stat.h>

using namespace sealtrain;
using namespace sealtrain::crypto;

using sealtrain::testing::secret;

namespace {

std::filesystem::path tempPath(const QTemporaryDir& dir, const char* name)
{
    return std::filesystem::path(dir.path().toStdString()) / name;
}

nlohmann::json readJson(const std::filesystem::path& path)
{
    std::ifstream in(path);
    return nlohmann::json::parse(in);
}

void writeJson(const std::filesystem::path& path, const nlohmann::json& json)
{
    std::ofstream(path) << json.dump(2);
}

bool sameKey(const Kek* a, const Kek* b)
{
    return a != nullptr && b != nullptr && a->id == b->id && a->version == b->version
           && a->key.equals(b->key);
}

const auto kFast = kArgon2Floor;

}  // namespace

class TestKeyring : public QObject {
    Q_OBJECT

private slots:
    void argon2idMatchesReferenceCommand_data()
    {
        QTest::addColumn<QString>("passphrase");
        QTest::addColumn<int>("passes");
        QTest::addColumn<int>("log2KiB");
        QTest::newRow("floor") << "correct horse battery staple" << 2 << 16;
        QTest::newRow("three passes") << "pässwörd with UTF-8" << 3 << 16;
        QTest::newRow("128 MiB") << "x" << 2 << 17;
    }

    void argon2idMatchesReferenceCommand()
    {
        QFETCH(QString, passphrase);
        QFETCH(int, passes);
        QFETCH(int, log2KiB);
        const QString salt = QStringLiteral("sealtrain-salt16");  // 16 bytes, as libsodium needs
        QProcess argon2;
        argon2.start(QStringLiteral("argon2"),
                     {salt, QStringLiteral("-id"), QStringLiteral("-t"), QString::number(passes),
                      QStringLiteral("-m"), QString::number(log2KiB), QStringLiteral("-p"),
                      QStringLiteral("1"), QStringLiteral("-l"), QStringLiteral("32"),
                      QStringLiteral("-r")});
        if (!argon2.waitForStarted()) {
            const char* message =
                "The reference 'argon2' command is not installed (Debian package argon2).";
            if (qEnvironmentVariable("SEALTRAIN_REQUIRE_TEST_VECTORS") == QLatin1String("1"))
                QFAIL(message);
            QSKIP(message);
        }
        argon2.write(passphrase.toUtf8());
        argon2.closeWriteChannel();
        QVERIFY(argon2.waitForFinished(60000));
        const QByteArray expected = argon2.readAllStandardOutput().trimmed();
        QCOMPARE(expected.size(), 64);

        Argon2Salt saltBytes{};
        const QByteArray saltUtf8 = salt.toUtf8();
        std::copy(saltUtf8.begin(), saltUtf8.end(), saltBytes.begin());
        const auto key =
            deriveArgon2id(secret(passphrase.toStdString()), saltBytes,
                           {static_cast<std::uint64_t>(passes), std::uint64_t{1024} << log2KiB});
        QVERIFY(key.ok());
        QCOMPARE(QByteArray::fromStdString(toHex(key->bytes())), expected);
    }

    void floorCanNotBeConfiguredBelow()
    {
        Argon2Salt salt{};
        const auto weakOps = deriveArgon2id(secret("pass"), salt, {1, kArgon2Floor.memLimitBytes});
        QVERIFY(!weakOps.ok());
        QVERIFY(isOneSentence(weakOps.error().message()));
        QVERIFY(!deriveArgon2id(secret("pass"), salt, {2, std::uint64_t{8} << 20}).ok());
        QVERIFY(!deriveArgon2id(SecretBytes{}, salt, kFast).ok());

        QTemporaryDir dir;
        const auto path = tempPath(dir, "keyring.json");
        QVERIFY(!Keyring::createWithPassphrase(path, secret("pass"), {1, 1 << 20}).ok());
        QVERIFY(!std::filesystem::exists(path));

        // A keyring file edited down to weak parameters is refused before any derivation.
        QVERIFY(Keyring::createWithPassphrase(path, secret("pass"), kFast).ok());
        auto json = readJson(path);
        json["master"]["ops_limit"] = 1;
        writeJson(path, json);
        const auto opened = Keyring::unlockWithPassphrase(path, secret("pass"));
        QVERIFY(!opened.ok());
        QCOMPARE(opened.error().code(), ErrorCode::Integrity);
    }

    void createAndUnlock()
    {
        QTemporaryDir dir;
        const auto path = tempPath(dir, "keyring.json");
        auto created = Keyring::createWithPassphrase(path, secret("open sesame"), kFast);
        QVERIFY2(created.ok(), created.ok() ? "" : created.error().message().c_str());
        QCOMPARE(created->list().size(), defaultKekPurposes().size());

        struct stat info {};
        QCOMPARE(::stat(path.c_str(), &info), 0);
        QCOMPARE(info.st_mode & 0777, 0600u);

        auto unlocked = Keyring::unlockWithPassphrase(path, secret("open sesame"));
        QVERIFY(unlocked.ok());
        for (const auto& purpose : defaultKekPurposes())
            QVERIFY(sameKey(*created->activeKek(purpose), *unlocked->activeKek(purpose)));

        // The file holds no key in the clear.
        std::ifstream in(path);
        const std::string text((std::istreambuf_iterator<char>(in)),
                               std::istreambuf_iterator<char>());
        const Kek* datasets = *unlocked->activeKek("datasets");
        QVERIFY(text.find(toBase64(datasets->key.bytes())) == std::string::npos);
        QVERIFY(text.find(toHex(datasets->key.bytes())) == std::string::npos);

        QVERIFY(!Keyring::createWithPassphrase(path, secret("again"), kFast).ok());
    }

    void wrongPassphrase()
    {
        QTemporaryDir dir;
        const auto path = tempPath(dir, "keyring.json");
        QVERIFY(Keyring::createWithPassphrase(path, secret("right passphrase"), kFast).ok());
        const auto wrong = Keyring::unlockWithPassphrase(path, secret("wrong passphrase"));
        QVERIFY(!wrong.ok());
        QCOMPARE(wrong.error().code(), ErrorCode::Unauthenticated);
        QVERIFY(isOneSentence(wrong.error().message()));
        QVERIFY(wrong.error().message().find("passphrase") != std::string::npos);
        QVERIFY(wrong.error().message().find("wrong passphrase") == std::string::npos);
    }

    void rotationAndRetirement()
    {
        QTemporaryDir dir;
        const auto path = tempPath(dir, "keyring.json");
        auto keyring = Keyring::createWithPassphrase(path, secret("pass"), kFast, {"datasets"});
        QVERIFY(keyring.ok());
        const Kek* v1 = *keyring->activeKek("datasets");
        auto v1Copy = v1->key.copy();

        auto v2 = keyring->rotate("datasets");
        QVERIFY(v2.ok());
        QCOMPARE((*v2)->version, 2u);
        QVERIFY(!(*v2)->key.equals(*v1Copy));
        QCOMPARE((*keyring->activeKek("datasets"))->version, 2u);
        // The old version still unwraps until retired, through the resolver too.
        const auto resolver = keyring->resolver();
        QVERIFY(resolver("datasets", 1).ok());
        QVERIFY((*resolver("datasets", 1))->key.equals(*v1Copy));

        QVERIFY(!keyring->retire("datasets", 2).ok());  // the active one can not be retired
        QVERIFY(keyring->retire("datasets", 1).ok());
        const auto retired = resolver("datasets", 1);
        QVERIFY(!retired.ok());
        QCOMPARE(retired.error().code(), ErrorCode::PermissionDenied);
        QVERIFY(isOneSentence(retired.error().message()));
        QCOMPARE(resolver("datasets", 9).error().code(), ErrorCode::NotFound);

        // Retirement survives reopening, and the key material is gone from the file.
        auto reopened = Keyring::unlockWithPassphrase(path, secret("pass"));
        QVERIFY(reopened.ok());
        QCOMPARE(reopened->findKek("datasets", 1).error().code(), ErrorCode::PermissionDenied);
        QVERIFY(reopened->findKek("datasets", 2).ok());
        const auto json = readJson(path);
        for (const auto& entry : json["keks"]) {
            if (entry["version"] == 1)
                QVERIFY(!entry.contains("wrapped"));
        }
        const auto states = reopened->list();
        QCOMPARE(states.size(), std::size_t{2});
        QCOMPARE(states[0].state, KekState::Retired);
        QCOMPARE(states[1].state, KekState::Active);
    }

    void passphraseChangeRewrapsOnlyKeks()
    {
        QTemporaryDir dir;
        const auto path = tempPath(dir, "keyring.json");
        auto keyring = Keyring::createWithPassphrase(path, secret("old"), kFast);
        QVERIFY(keyring.ok());
        auto before = (*keyring->activeKek("checkpoints"))->key.copy();
        const auto saltBefore = readJson(path)["master"]["salt"];

        QVERIFY(keyring->changePassphrase(secret("new"), kFast).ok());
        QVERIFY(readJson(path)["master"]["salt"] != saltBefore);
        QCOMPARE(Keyring::unlockWithPassphrase(path, secret("old")).error().code(),
                 ErrorCode::Unauthenticated);
        auto reopened = Keyring::unlockWithPassphrase(path, secret("new"));
        QVERIFY(reopened.ok());
        // The KEKs themselves are unchanged, so every DEK wrapped under them still unwraps.
        QVERIFY((*reopened->activeKek("checkpoints"))->key.equals(*before));
    }

    void masterKeyFileMode()
    {
        QTemporaryDir dir;
        const auto path = tempPath(dir, "keyring.json");
        const auto keyPath = tempPath(dir, "master.key");
        auto master = generateKek("master", 1);
        QVERIFY(master.ok());
        QVERIFY(writeKekFile(keyPath, *master).ok());
        auto read = readKekFile(keyPath);
        QVERIFY(read.ok());
        QVERIFY(Keyring::createWithMasterKey(path, *read).ok());
        QVERIFY(Keyring::unlockWithMasterKey(path, *master).ok());
        const auto other = generateKek("master", 1);
        QCOMPARE(Keyring::unlockWithMasterKey(path, *other).error().code(),
                 ErrorCode::Unauthenticated);
        // The wrong unlock method is explained, not attempted.
        QCOMPARE(Keyring::unlockWithPassphrase(path, secret("x")).error().code(),
                 ErrorCode::InvalidArgument);
    }

    void tamperedKeyringRefused_data()
    {
        QTest::addColumn<QString>("tamper");
        QTest::newRow("swapped wrapped keys") << "swap";
        QTest::newRow("flipped bit in a wrapped key") << "flip";
        QTest::newRow("version renumbered") << "renumber";
        QTest::newRow("check value changed") << "check";
        QTest::newRow("not JSON") << "garbage";
    }

    void tamperedKeyringRefused()
    {
        QFETCH(QString, tamper);
        QTemporaryDir dir;
        const auto path = tempPath(dir, "keyring.json");
        QVERIFY(Keyring::createWithPassphrase(path, secret("pass"), kFast, {"a", "b"}).ok());
        auto json = readJson(path);
        if (tamper == "swap") {
            std::swap(json["keks"][0]["wrapped"], json["keks"][1]["wrapped"]);
            std::swap(json["keks"][0]["nonce"], json["keks"][1]["nonce"]);
        } else if (tamper == "flip") {
            auto bytes = *fromBase64(json["keks"][0]["wrapped"].get<std::string>());
            bytes[3] ^= 0x10;
            json["keks"][0]["wrapped"] = toBase64(bytes);
        } else if (tamper == "renumber") {
            json["keks"][0]["version"] = 2;
        } else if (tamper == "check") {
            auto bytes = *fromBase64(json["check"]["tag"].get<std::string>());
            bytes[0] ^= 1;
            json["check"]["tag"] = toBase64(bytes);
        }
        if (tamper == "garbage")
            std::ofstream(path) << "{ not json";
        else
            writeJson(path, json);
        const auto opened = Keyring::unlockWithPassphrase(path, secret("pass"));
        QVERIFY(!opened.ok());
        QVERIFY(isOneSentence(opened.error().message()));
        QVERIFY(opened.error().code() == ErrorCode::Integrity
                || opened.error().code() == ErrorCode::Unauthenticated);
    }

    void keyFileRules()
    {
        QTemporaryDir dir;
        const auto path = tempPath(dir, "datasets.key");
        auto kek = generateKek("datasets", 3);
        QVERIFY(kek.ok());
        QVERIFY(writeKekFile(path, *kek).ok());
        struct stat info {};
        QCOMPARE(::stat(path.c_str(), &info), 0);
        QCOMPARE(info.st_mode & 0777, 0600u);
        auto read = readKekFile(path);
        QVERIFY(read.ok());
        QVERIFY(sameKey(&*kek, &*read));

        QCOMPARE(writeKekFile(path, *kek).error().code(), ErrorCode::AlreadyExists);

        // Readable by the group alone is as exposed as readable by everyone.
        for (const mode_t mode : {0644U, 0640U, 0604U, 0620U}) {
            ::chmod(path.c_str(), mode);
            const auto exposed = readKekFile(path);
            QCOMPARE(exposed.error().code(), ErrorCode::PermissionDenied);
            QVERIFY(exposed.error().message().find("chmod 600") != std::string::npos);
        }
        ::chmod(path.c_str(), 0600);

        const auto writeRaw = [&](const char* name, const std::string& content) {
            auto file = tempPath(dir, name);
            std::ofstream(file) << content;
            ::chmod(file.c_str(), 0600);
            return file;
        };
        const std::string key = toBase64(kek->key.bytes());
        QVERIFY(!readKekFile(writeRaw("short.key", "sealtrain-kek-v1 a 1 "
                                                       + toBase64(std::vector<std::uint8_t>(16))))
                     .ok());
        QVERIFY(!readKekFile(writeRaw("magic.key", "sealtrain-kek-v2 a 1 " + key)).ok());
        QVERIFY(!readKekFile(writeRaw("id.key", "sealtrain-kek-v1 A! 1 " + key)).ok());
        QVERIFY(!readKekFile(writeRaw("version.key", "sealtrain-kek-v1 a 0 " + key)).ok());
        QVERIFY(!readKekFile(writeRaw("extra.key", "sealtrain-kek-v1 a 1 " + key + " x")).ok());
        QVERIFY(readKekFile(writeRaw("ok.key", "sealtrain-kek-v1 a 1 " + key + "\n")).ok());
        QCOMPARE(readKekFile(tempPath(dir, "missing.key")).error().code(), ErrorCode::NotFound);
        QVERIFY(!generateKek("Bad Id", 1).ok());
    }
};

QTEST_APPLESS_MAIN(TestKeyring)
#include "test_crypto_keyring.moc"
