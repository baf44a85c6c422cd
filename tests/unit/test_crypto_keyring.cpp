// The key hierarchy: Argon2id against the reference `argon2` command, the parameter floor,
// unlock with the right and wrong secret, rotation, retirement, passphrase change, key files,
// tampering with the keyring file (its metadata MAC), its generation, and concurrent saves.
#include "sealtrain/base/encoding.h"
#include "sealtrain/crypto/hash.h"
#include "sealtrain/crypto/hkdf.h"
#include "sealtrain/crypto/key_file.h"
#include "sealtrain/crypto/keyring.h"

#include "test_helpers.h"

#include <QtTest/QtTest>

#include <nlohmann/json.hpp>

#include <atomic>
#include <fstream>
#include <map>
#include <sys/stat.h>
#include <thread>

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

// A keyring under a fresh master key file: two purposes, `datasets` rotated once (version 1
// decrypt-only, version 2 active).
struct RotatedKeyring {
    QTemporaryDir dir;
    std::filesystem::path path = tempPath(dir, "keyring.json");
    Kek master = generateKek("master", 1).value();

    RotatedKeyring()
    {
        auto keyring = Keyring::createWithMasterKey(path, master, {"datasets", "signing"});
        if (!keyring || !keyring->rotate("datasets"))
            qFatal("cannot make the test keyring");
    }

    [[nodiscard]] Result<Keyring> unlock() const
    {
        return Keyring::unlockWithMasterKey(path, master);
    }
};

std::map<std::string, int> versionCounts(const std::filesystem::path& path)
{
    std::map<std::string, int> counts;
    const auto json = readJson(path);
    for (const auto& entry : json["keks"])
        ++counts[entry["id"].get<std::string>()];
    return counts;
}

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

    // The file's metadata is under a MAC: an edit that would make an old key active again, drop
    // a version, or change the generation is refused, even though every wrapped key still
    // unwraps.
    void editedMetadataRefused_data()
    {
        QTest::addColumn<QString>("edit");
        QTest::newRow("old version made active") << "state";
        QTest::newRow("newest version removed") << "remove";
        QTest::newRow("generation raised") << "generation";
        QTest::newRow("creation date changed") << "created";
        QTest::newRow("field added") << "added";
    }

    void editedMetadataRefused()
    {
        QFETCH(QString, edit);
        RotatedKeyring keyring;
        auto json = readJson(keyring.path);
        auto& keks = json["keks"];
        const auto find = [&](const std::string& id, int version) -> nlohmann::json& {
            for (auto& entry : keks)
                if (entry["id"] == id && entry["version"] == version)
                    return entry;
            qFatal("no such entry");
        };
        if (edit == "state") {
            find("datasets", 1)["state"] = "active";
            find("datasets", 2)["state"] = "decrypt-only";
        } else if (edit == "remove") {
            auto& list = keks.get_ref<nlohmann::json::array_t&>();
            list.erase(std::remove_if(list.begin(), list.end(),
                                      [](const nlohmann::json& e) {
                                          return e["id"] == "datasets" && e["version"] == 2;
                                      }),
                       list.end());
        } else if (edit == "generation") {
            json["generation"] = json["generation"].get<std::uint64_t>() + 1;
        } else if (edit == "created") {
            find("signing", 1)["created"] = "2020-01-01T00:00:00Z";
        } else {
            json["note"] = "harmless?";
        }
        writeJson(keyring.path, json);
        const auto opened = keyring.unlock();
        QVERIFY(!opened.ok());
        QCOMPARE(opened.error().code(), ErrorCode::Integrity);
        QVERIFY2(opened.error().message().find("changed outside Sealtrain") != std::string::npos,
                 opened.error().message().c_str());
        QVERIFY(isOneSentence(opened.error().message()));
    }

    void missingMacOrOldFormatRefused()
    {
        RotatedKeyring keyring;
        auto json = readJson(keyring.path);
        json.erase("mac");
        writeJson(keyring.path, json);
        QCOMPARE(keyring.unlock().error().code(), ErrorCode::Integrity);

        // A keyring of format v1 has no MAC to check: refused with a sentence that says so.
        json["format"] = "sealtrain-keyring-v1";
        json.erase("generation");
        writeJson(keyring.path, json);
        const auto old = keyring.unlock();
        QCOMPARE(old.error().code(), ErrorCode::Unsupported);
        QVERIFY(old.error().message().find("no integrity check") != std::string::npos);
        QVERIFY(isOneSentence(old.error().message()));
    }

    // docs/formats/keyring.md: mac = HMAC-SHA-256(HKDF-SHA-256(master, "", label), the document
    // without "mac", keys sorted, no whitespace).
    void macIsTheDocumentedConstruction()
    {
        RotatedKeyring keyring;
        auto json = readJson(keyring.path);
        const auto mac = *fromBase64(json["mac"].get<std::string>());
        json.erase("mac");
        const auto key = hkdf(HkdfHash::Sha256, keyring.master.key.bytes(), {},
                              asBytes("sealtrain-keyring-mac-v2"), 32);
        QVERIFY(key.ok());
        const auto expected = hmacSha256(*key, asBytes(json.dump()));
        QCOMPARE(toHex(mac), toHex(expected));
    }

    // Every save is the next generation; a copy taken before a change keeps the older number, which
    // is what the data directory compares with the audit log (core/keys/keyring_changes.h).
    void generationCountsSaves()
    {
        RotatedKeyring keyring;
        auto opened = keyring.unlock();
        QVERIFY(opened.ok());
        QCOMPARE(opened->generation(), std::uint64_t{2});  // created, rotated
        const auto copy = tempPath(keyring.dir, "copy.json");
        std::filesystem::copy_file(keyring.path, copy);
        QVERIFY(opened->rotate("signing").ok());
        QVERIFY(opened->retire("datasets", 1).ok());
        QCOMPARE(opened->generation(), std::uint64_t{4});
        QCOMPARE(keyring.unlock()->generation(), std::uint64_t{4});
        std::filesystem::copy_file(copy, keyring.path,
                                   std::filesystem::copy_options::overwrite_existing);
        // The old copy is genuine, so it unlocks: only its generation gives it away.
        QCOMPARE(keyring.unlock()->generation(), std::uint64_t{2});
    }

    // Two keyrings opened on one file: the second save would write back a file without the
    // first one's new version (and every object sealed under it would be lost). It is refused,
    // its own change undone, and both objects' views stay true to the file.
    void concurrentSaveRefusedNotLost()
    {
        RotatedKeyring keyring;
        auto first = keyring.unlock();
        auto second = keyring.unlock();
        QVERIFY(first.ok() && second.ok());
        QVERIFY(first->rotate("signing").ok());
        const auto refused = second->rotate("datasets");
        QVERIFY(!refused.ok());
        QCOMPARE(refused.error().code(), ErrorCode::AlreadyExists);
        QVERIFY(refused.error().message().find("another process") != std::string::npos);
        QVERIFY(isOneSentence(refused.error().message()));
        QCOMPARE((*second->activeKek("datasets"))->version, 2u);
        QCOMPARE(second->retire("datasets", 1).error().code(), ErrorCode::AlreadyExists);
        QCOMPARE(second->findKek("datasets", 1).ok(), true);  // the undone retirement kept it

        auto reopened = keyring.unlock();
        QVERIFY(reopened.ok());
        QCOMPARE((*reopened->activeKek("signing"))->version, 2u);
        QCOMPARE((*reopened->activeKek("datasets"))->version, 2u);
        QVERIFY(reopened->findKek("datasets", 1).ok());
    }

    // Two threads, each with its own Keyring on one file, rotate as fast as they can: every
    // rotation that reported success is in the file at the end.
    void concurrentThreadsKeepEveryVersion()
    {
        RotatedKeyring keyring;
        std::map<std::string, std::atomic<int>> succeeded;
        succeeded["datasets"] = 0;
        succeeded["signing"] = 0;
        const auto rotateMany = [&](const std::string& id) {
            for (int round = 0; round < 8; ++round) {
                auto mine = keyring.unlock();
                if (mine && mine->rotate(id))
                    ++succeeded[id];
            }
        };
        std::thread a(rotateMany, std::string("datasets"));
        std::thread b(rotateMany, std::string("signing"));
        a.join();
        b.join();
        QVERIFY(succeeded["datasets"] + succeeded["signing"] > 0);
        const auto counts = versionCounts(keyring.path);
        QCOMPARE(counts.at("datasets"), 2 + succeeded["datasets"].load());
        QCOMPARE(counts.at("signing"), 1 + succeeded["signing"].load());
        QVERIFY(keyring.unlock().ok());
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
