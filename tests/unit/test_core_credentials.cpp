// Credentials: TOTP against the RFC 6238 Appendix B vectors, the otpauth URI, Argon2id password
// hashes and the password policy.
#include "core_fixture.h"

#include "sealtrain/core/identity/password.h"

#include <QtTest/QtTest>

using namespace sealtrain;

class TestCoreCredentials : public QObject {
    Q_OBJECT

private slots:
    void totpMatchesRfc6238_data()
    {
        QTest::addColumn<qint64>("time");
        QTest::addColumn<QString>("code");
        // RFC 6238 Appendix B, SHA-1 column, key "12345678901234567890", 8 digits.
        QTest::newRow("59") << qint64{59} << "94287082";
        QTest::newRow("1111111109") << qint64{1111111109} << "07081804";
        QTest::newRow("1111111111") << qint64{1111111111} << "14050471";
        QTest::newRow("1234567890") << qint64{1234567890} << "89005924";
        QTest::newRow("2000000000") << qint64{2000000000} << "69279037";
        QTest::newRow("20000000000") << qint64{20000000000} << "65353130";
    }

    void totpMatchesRfc6238()
    {
        QFETCH(qint64, time);
        QFETCH(QString, code);
        const auto key = testing::secret("12345678901234567890");
        const auto step = static_cast<std::uint64_t>(time) / 30;
        // system_clock counts nanoseconds in 64 bits, so it ends in 2262: the last vector
        // (year 2603) is given as its step number.
        if (time < 9'000'000'000)
            QCOMPARE(
                core::totpStep(std::chrono::system_clock::time_point{std::chrono::seconds{time}}),
                step);
        QCOMPARE(QString::fromStdString(core::totpCode(key, step, 8)), code);
        // Six digits are the last six of the eight.
        QCOMPARE(QString::fromStdString(core::totpCode(key, step)), code.right(6));
    }

    void totpAcceptsOneStepOfDriftOnly()
    {
        const auto key = testing::secret("12345678901234567890");
        const std::uint64_t step = 1000;
        QCOMPARE(core::matchTotp(key, step, core::totpCode(key, step)), step);
        QCOMPARE(core::matchTotp(key, step, core::totpCode(key, step - 1)), step - 1);
        QCOMPARE(core::matchTotp(key, step, core::totpCode(key, step + 1)), step + 1);
        QCOMPARE(core::matchTotp(key, step, core::totpCode(key, step + 2)), std::uint64_t{0});
        QCOMPARE(core::matchTotp(key, step, "12345"), std::uint64_t{0});
    }

    void otpauthUriCarriesTheSecretInBase32()
    {
        // RFC 4648 section 10 vector for base32.
        QCOMPARE(QString::fromStdString(core::base32(asBytes("foobar"))), QString("MZXW6YTBOI"));
        const auto key = testing::secret("12345678901234567890");
        const auto uri = core::otpauthUri("Sealtrain", "alice", key);
        QCOMPARE(QString::fromStdString(uri),
                 QString("otpauth://totp/Sealtrain:alice?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"
                         "&issuer=Sealtrain&algorithm=SHA1&digits=6&period=30"));
        QVERIFY(testing::totpSecretFromUri(uri).equals(key));
    }

    void passwordPolicy_data()
    {
        QTest::addColumn<QString>("password");
        QTest::addColumn<bool>("accepted");
        QTest::newRow("short") << "Tr0ub4dor&3" << false;
        QTest::newRow("contains name") << "my-ALICE-password-is-long" << false;
        QTest::newRow("common") << "Password1234" << false;
        QTest::newRow("good") << "correct horse battery staple" << true;
    }

    void passwordPolicy()
    {
        QFETCH(QString, password);
        QFETCH(bool, accepted);
        auto checked = core::checkPasswordPolicy("alice", testing::secret(password.toStdString()));
        QCOMPARE(checked.ok(), accepted);
        if (!checked)
            QVERIFY(isOneSentence(checked.error().message()));
    }

    void passwordHashIsArgon2idAndVerifies()
    {
        const auto password = testing::secret("correct horse battery staple");
        auto hash = core::hashPassword(password, crypto::kArgon2Floor);
        QVERIFY(hash.ok());
        QVERIFY(hash->rfind("$argon2id$", 0) == 0);
        QVERIFY(hash->find("correct") == std::string::npos);
        QVERIFY(core::verifyPassword(*hash, password));
        QVERIFY(!core::verifyPassword(*hash, testing::secret("correct horse battery stapler")));
        QVERIFY(!core::verifyPassword("not a hash", password));
        QVERIFY(!core::hashPassword(password, {1, crypto::kArgon2Floor.memLimitBytes}).ok());
    }
};

QTEST_APPLESS_MAIN(TestCoreCredentials)
#include "test_core_credentials.moc"
