// The key hierarchy end to end: objects sealed under a keyring's KEK, rotation that re-wraps
// only key blocks, retirement that locks out anything not re-wrapped, and a passphrase change
// that leaves every object readable.
#include "sealtrain/base/encoding.h"
#include "sealtrain/crypto/keyring.h"
#include "sealtrain/crypto/sealed.h"

#include "test_helpers.h"

#include <QtTest/QtTest>

#include <fstream>

using namespace sealtrain;
using namespace sealtrain::crypto;

using sealtrain::testing::secret;

namespace {

std::vector<std::uint8_t> readFile(const std::filesystem::path& path)
{
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<std::uint8_t> plaintext(std::size_t size, std::uint8_t seed)
{
    std::vector<std::uint8_t> bytes(size);
    for (std::size_t i = 0; i < size; ++i)
        bytes[i] = static_cast<std::uint8_t>(seed + i * 31);
    return bytes;
}

void seal(const std::filesystem::path& path, const Kek& kek, const std::vector<std::uint8_t>& data)
{
    auto writer = SealedWriter::create(path, kek, {"application/octet-stream", "{}"});
    QVERIFY(writer.ok());
    QVERIFY(writer->write(data).ok());
    QVERIFY(writer->finish().ok());
}

Result<std::vector<std::uint8_t>> unseal(const std::filesystem::path& path, const Keyring& keyring)
{
    auto reader = SealedReader::open(path, keyring.resolver());
    if (!reader)
        return reader.error();
    MemorySink sink;
    if (auto all = reader->readAll(sink); !all)
        return all.error();
    return sink.take();
}

}  // namespace

class TestKeyRotation : public QObject {
    Q_OBJECT

private slots:
    void rotateRewrapRetire()
    {
        QTemporaryDir dir;
        const std::filesystem::path root = dir.path().toStdString();
        auto keyring = Keyring::createWithPassphrase(root / "keyring.json", secret("pass"),
                                                     kArgon2Floor, {"datasets"});
        QVERIFY(keyring.ok());
        const auto dataA = plaintext(100'000, 1);
        const auto dataB = plaintext(5'000, 2);
        seal(root / "a.sealed", **keyring->activeKek("datasets"), dataA);
        seal(root / "b.sealed", **keyring->activeKek("datasets"), dataB);

        const auto before = readFile(root / "a.sealed");
        const auto infoBefore = inspectSealedObject(root / "a.sealed");
        QVERIFY(infoBefore.ok());
        QCOMPARE(infoBefore->kekVersion, 1u);

        auto v2 = keyring->rotate("datasets");
        QVERIFY(v2.ok());
        QVERIFY(rewrapKeyBlock(root / "a.sealed", keyring->resolver(), **v2).ok());

        // Only the key block changed: the header and every payload byte are as before.
        const auto after = readFile(root / "a.sealed");
        const auto infoAfter = inspectSealedObject(root / "a.sealed");
        QVERIFY(infoAfter.ok());
        QCOMPARE(infoAfter->kekVersion, 2u);
        QCOMPARE(infoAfter->objectId, infoBefore->objectId);
        QCOMPARE(after.size() - infoAfter->payloadOffset,
                 before.size() - infoBefore->payloadOffset);
        QVERIFY(std::equal(before.begin() + static_cast<std::ptrdiff_t>(infoBefore->payloadOffset),
                           before.end(),
                           after.begin() + static_cast<std::ptrdiff_t>(infoAfter->payloadOffset)));
        QVERIFY(std::equal(before.begin(),
                           before.begin() + static_cast<std::ptrdiff_t>(infoBefore->headerSize),
                           after.begin()));

        // Before retirement both objects open, under versions 2 and 1.
        QCOMPARE(*unseal(root / "a.sealed", *keyring), dataA);
        QCOMPARE(*unseal(root / "b.sealed", *keyring), dataB);

        QVERIFY(keyring->retire("datasets", 1).ok());
        QCOMPARE(*unseal(root / "a.sealed", *keyring), dataA);
        const auto locked = unseal(root / "b.sealed", *keyring);
        QVERIFY(!locked.ok());
        QCOMPARE(locked.error().code(), ErrorCode::PermissionDenied);
        QVERIFY(locked.error().message().find("retired") != std::string::npos);
        QVERIFY(isOneSentence(locked.error().message()));

        // A reopened keyring agrees, and a rewrap of the locked object is refused too.
        auto reopened = Keyring::unlockWithPassphrase(root / "keyring.json", secret("pass"));
        QVERIFY(reopened.ok());
        QVERIFY(!unseal(root / "b.sealed", *reopened).ok());
        QVERIFY(!rewrapKeyBlock(root / "b.sealed", reopened->resolver(),
                                **reopened->activeKek("datasets"))
                     .ok());
        QCOMPARE(*unseal(root / "a.sealed", *reopened), dataA);
    }

    void passphraseChangeKeepsObjectsReadable()
    {
        QTemporaryDir dir;
        const std::filesystem::path root = dir.path().toStdString();
        auto keyring = Keyring::createWithPassphrase(root / "keyring.json", secret("old"),
                                                     kArgon2Floor, {"checkpoints"});
        QVERIFY(keyring.ok());
        const auto data = plaintext(40'000, 7);
        seal(root / "c.sealed", **keyring->activeKek("checkpoints"), data);
        const auto bytes = readFile(root / "c.sealed");
        QVERIFY(keyring->changePassphrase(secret("new"), kArgon2Floor).ok());
        auto reopened = Keyring::unlockWithPassphrase(root / "keyring.json", secret("new"));
        QVERIFY(reopened.ok());
        QCOMPARE(*unseal(root / "c.sealed", *reopened), data);
        QCOMPARE(readFile(root / "c.sealed"), bytes);  // nothing was rewritten
    }

    void objectFromAnotherKeyringIsRefused()
    {
        QTemporaryDir dir;
        const std::filesystem::path root = dir.path().toStdString();
        auto mine = Keyring::createWithPassphrase(root / "mine.json", secret("a"), kArgon2Floor,
                                                  {"datasets"});
        auto theirs = Keyring::createWithPassphrase(root / "theirs.json", secret("a"), kArgon2Floor,
                                                    {"datasets"});
        QVERIFY(mine.ok() && theirs.ok());
        seal(root / "x.sealed", **theirs->activeKek("datasets"), plaintext(10, 3));
        // Same id and version, different key: the key block does not unwrap.
        const auto refused = unseal(root / "x.sealed", *mine);
        QVERIFY(!refused.ok());
        QCOMPARE(refused.error().code(), ErrorCode::Unauthenticated);
    }
};

QTEST_APPLESS_MAIN(TestKeyRotation)
#include "test_crypto_key_rotation.moc"
