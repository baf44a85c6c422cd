// SecretBytes: allocation, moves, explicit copies, constant-time equality, wiping.
#include "sealtrain/crypto/random.h"
#include "sealtrain/crypto/secret_bytes.h"

#include <QtTest/QtTest>

#include <type_traits>

using sealtrain::crypto::SecretBytes;

static_assert(!std::is_copy_constructible_v<SecretBytes>, "secrets are not copied by accident");
static_assert(!std::is_copy_assignable_v<SecretBytes>, "secrets are not copied by accident");
static_assert(!std::is_convertible_v<SecretBytes, std::string>, "secrets convert to no string");
static_assert(std::is_nothrow_move_constructible_v<SecretBytes>);

class TestSecretBytes : public QObject {
    Q_OBJECT

private slots:
    void allocateIsZeroed()
    {
        auto secret = SecretBytes::allocate(64);
        QVERIFY(secret.ok());
        QCOMPARE(secret->size(), std::size_t{64});
        for (auto b : secret->bytes())
            QCOMPARE(b, std::uint8_t{0});
    }

    void randomDiffers()
    {
        auto a = SecretBytes::random(32);
        auto b = SecretBytes::random(32);
        QVERIFY(a.ok() && b.ok());
        QVERIFY(!a->equals(*b));
        auto copy = a->copy();
        QVERIFY(copy.ok());
        QVERIFY(copy->equals(*a));
        QVERIFY(copy->bytes().data() != a->bytes().data());
    }

    void moveLeavesSourceEmpty()
    {
        auto secret = SecretBytes::random(16);
        QVERIFY(secret.ok());
        SecretBytes moved = std::move(secret).value();
        QCOMPARE(moved.size(), std::size_t{16});
        SecretBytes target;
        target = std::move(moved);
        QCOMPARE(target.size(), std::size_t{16});
        QVERIFY(moved.empty());  // NOLINT(bugprone-use-after-move): checking the moved-from state
    }

    void wipeEmpties()
    {
        auto secret = SecretBytes::random(24);
        QVERIFY(secret.ok());
        secret->wipe();
        QVERIFY(secret->empty());
        QVERIFY(secret->bytes().empty());
    }

    void fromBytesCopies()
    {
        std::vector<std::uint8_t> source{1, 2, 3, 4};
        auto secret = SecretBytes::fromBytes(source);
        QVERIFY(secret.ok());
        sealtrain::crypto::wipeMemory(source);
        QCOMPARE(source, (std::vector<std::uint8_t>{0, 0, 0, 0}));
        QCOMPARE(secret->bytes()[3], std::uint8_t{4});
    }

    void equalityNeedsSameLength()
    {
        auto a = SecretBytes::allocate(8);
        auto b = SecretBytes::allocate(9);
        QVERIFY(a.ok() && b.ok());
        QVERIFY(!a->equals(*b));
        QVERIFY(SecretBytes{}.equals(SecretBytes{}));
    }

    void uniformInRange()
    {
        for (int i = 0; i < 1000; ++i)
            QVERIFY(sealtrain::crypto::randomUniform(10) < 10);
    }

    void formatsWithoutBytes()
    {
        auto secret = SecretBytes::random(32);
        QVERIFY(secret.ok());
        QCOMPARE(QString::fromStdString(fmt::format("{}", *secret)),
                 QStringLiteral("SecretBytes(32 bytes)"));
    }
};

QTEST_APPLESS_MAIN(TestSecretBytes)
#include "test_crypto_secret_bytes.moc"
