// The control plane's transport (docs/api.md, "Transport"), tried against a running
// sealtrain-control: the CA pinned by its fingerprint, TLS 1.3 only, no plaintext, a client
// certificate from the platform CA, valid now, with its own key, and not signed out; the server's
// certificate names the host the client expects. Each refusal is a handshake that fails, or an
// UNAUTHENTICATED answer, and audited.
#include "daemon_fixture.h"

#include "sealtrain/api/client.h"
#include "sealtrain/crypto/certificate_authority.h"

#include "sealtrain/v1/control.grpc.pb.h"

#include <QtTest/QtTest>
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <filesystem>
#include <string>

using namespace sealtrain;
using testing::secret;

namespace {

// A client certificate refused at the handshake reaches the user as "sign in again"
// (Unauthenticated), not as a control plane out of reach (issue #29): the client asks again
// without its certificate to tell the two apart.
void verifyRefusedAtHandshake(const Error& error)
{
    QCOMPARE(error.code(), ErrorCode::Unauthenticated);
    QVERIFY2(error.message().find("refused this client's certificate") != std::string::npos,
             error.message().c_str());
    QVERIFY2(error.message().find("sign in again") != std::string::npos, error.message().c_str());
}

}  // namespace

class TestApiTransport : public QObject {
    Q_OBJECT

    QTemporaryDir tmp_;
    testing::DaemonFixture daemon_;
    std::string expiredCertificate_;  // alice's, from the platform CA, expired two hours ago
    crypto::SecretBytes expiredKey_;
    std::string signedOutSerial_;  // dave's certificate after his sign-out

private slots:
    void initTestCase()
    {
        QVERIFY(tmp_.isValid());
        daemon_.create(tmp_.path().toStdString(), "alice",
                       {{"carol", "admin"}, {"dave", "engineer"}});
        {
            auto platform = core::DataDirectory::open(daemon_.dataDir(), testing::daemonUnlock());
            QVERIFY2(platform, platform ? "" : platform.error().message().c_str());
            auto keyAndCsr = crypto::makeKeyAndCsr("alice");
            QVERIFY(keyAndCsr);
            crypto::IssueRequest issue;
            issue.csrPem = keyAndCsr->csrPem;
            issue.commonName = "alice";
            issue.validFrom = crypto::CertificateClock::now() - std::chrono::hours(3);
            issue.validFor = std::chrono::hours(1);
            auto expired = (*platform)->certificateAuthority().issue(issue);
            QVERIFY(expired);
            expiredCertificate_ = *expired;
            expiredKey_ = std::move(keyAndCsr->privateKeyPem);
        }
        daemon_.start();
    }

    // The CA is pinned by fingerprint before anything is trusted.
    void clientPinsTheCaByFingerprint()
    {
        const std::string fingerprint = crypto::certificateFingerprint(daemon_.caPem()).value();
        auto fetched =
            api::fetchPinnedCaCertificate(daemon_.tcpAddress(), "localhost", fingerprint);
        QVERIFY2(fetched, fetched ? "" : fetched.error().message().c_str());
        QCOMPARE(*fetched, daemon_.caPem());
        auto other = crypto::CertificateAuthority::create("someone else", std::chrono::hours(1));
        auto wrong = api::fetchPinnedCaCertificate(
            daemon_.tcpAddress(), "localhost",
            crypto::certificateFingerprint(other->certificatePem()).value());
        QVERIFY(!wrong);
        QCOMPARE(wrong.error().code(), ErrorCode::Unauthenticated);
    }

    void wrongPasswordIsRefused()
    {
        auto refused = daemon_.anonymous()->sessions().signIn(
            "dave", secret("not the password at all!"), daemon_.code("dave"));
        QVERIFY(!refused);
        QCOMPARE(refused.error().code(), ErrorCode::Unauthenticated);
    }

    // Without a client certificate only sign-in and the CA work.
    void callWithoutCertificateIsRefused()
    {
        auto users = daemon_.anonymous()->users().listUsers();
        QVERIFY(!users);
        QCOMPARE(users.error().code(), ErrorCode::Unauthenticated);
    }

    void plaintextIsRefused()
    {
        auto channel =
            grpc::CreateChannel(daemon_.tcpAddress(), grpc::InsecureChannelCredentials());
        auto stub = sealtrain::v1::Platform::NewStub(channel);
        grpc::ClientContext context;
        context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
        sealtrain::v1::GetCaCertificateReply reply;
        const grpc::Status status = stub->GetCaCertificate(&context, {}, &reply);
        QVERIFY(!status.ok());
        QVERIFY(reply.certificate_pem().empty());
    }

    void certificateFromAnotherCaIsRefused()
    {
        auto other = crypto::CertificateAuthority::create("another CA", std::chrono::hours(1));
        auto keyAndCsr = crypto::makeKeyAndCsr("alice");
        crypto::IssueRequest issue;
        issue.csrPem = keyAndCsr->csrPem;
        issue.commonName = "alice";
        auto certificate = other->issue(issue);
        QVERIFY(certificate);
        const api::ClientIdentity forged{std::move(keyAndCsr->privateKeyPem), *certificate};
        auto users = daemon_.as(forged)->sessions().whoAmI();
        QVERIFY(!users);
        verifyRefusedAtHandshake(users.error());
    }

    void expiredCertificateIsRefused()
    {
        const api::ClientIdentity expired{expiredKey_.copy().value(), expiredCertificate_};
        auto who = daemon_.as(expired)->sessions().whoAmI();
        QVERIFY(!who);
        verifyRefusedAtHandshake(who.error());
    }

    // After sign-out the certificate is refused at the next handshake, even with its key.
    void signedOutCertificateIsRevoked()
    {
        const api::SignedIn dave = daemon_.signIn("dave");
        {
            auto client = daemon_.as(dave.identity);
            QVERIFY(client->sessions().whoAmI());
            QVERIFY(client->sessions().signOut());
        }
        auto again = daemon_.as(dave.identity)->sessions().whoAmI();
        QVERIFY(!again);
        // Refused at the handshake (the CRL check), not only by the ended session.
        verifyRefusedAtHandshake(again.error());
        auto serial =
            crypto::revocationFor(dave.identity.certificatePem, crypto::CertificateClock::now());
        QVERIFY(serial);
        signedOutSerial_ = serial->serialHex;  // cleanupTestCase finds its refusals audited
        QVERIFY(std::filesystem::exists(daemon_.dataDir() / "run" / "crl.pem"));
    }

    // A certificate without its private key (copied from a client, say) is worth nothing.
    void certificateWithoutItsKeyIsRefused()
    {
        const api::ClientIdentity& carol = daemon_.session("carol");
        auto otherKey = crypto::makeKeyAndCsr("mallory");
        const api::ClientIdentity stolen{std::move(otherKey->privateKeyPem), carol.certificatePem};
        auto who = daemon_.as(stolen)->sessions().whoAmI();
        QVERIFY(!who);
        // The real owner's connection still works.
        QVERIFY(daemon_.as(carol)->sessions().whoAmI());
    }

    void serverCertificateForAnotherNameIsRefused()
    {
        const api::Endpoint elsewhere{daemon_.tcpAddress(), "control.example", daemon_.caPem()};
        auto client = api::ControlClient::connect(elsewhere, nullptr);
        QVERIFY(client);
        auto signedIn = (*client)->sessions().signIn("alice", secret(testing::kDaemonPassword),
                                                     daemon_.code("alice"));
        QVERIFY(!signedIn);
        QCOMPARE(signedIn.error().code(), ErrorCode::Io);
    }

    // openssl s_client: a TLS 1.2-only client gets no session; TLS 1.3 does (so the check works).
    void onlyTls13IsSpoken_data()
    {
        QTest::addColumn<QString>("version");
        QTest::addColumn<bool>("accepted");
        QTest::newRow("TLS 1.2") << "-tls1_2" << false;
        QTest::newRow("TLS 1.3") << "-tls1_3" << true;
    }

    void onlyTls13IsSpoken() const
    {
        QFETCH(QString, version);
        QFETCH(bool, accepted);
        QProcess openssl;
        openssl.start("openssl",
                      {"s_client", "-connect", QString("127.0.0.1:%1").arg(daemon_.tcpPort()),
                       "-servername", "localhost", version, "-brief"});
        QVERIFY(openssl.waitForStarted());
        openssl.closeWriteChannel();
        QVERIFY(openssl.waitForFinished(20000));
        const QString output = openssl.readAllStandardOutput() + openssl.readAllStandardError();
        const bool connected = output.contains("Protocol version: TLSv1.3")
                               || output.contains("CONNECTION ESTABLISHED");
        QVERIFY2(connected == accepted, qPrintable(output));
    }

    // The refusals above are in the audit log: the anonymous call with nobody as its actor, the
    // wrong password with the account as its target and nobody as its actor.
    void cleanupTestCase()
    {
        QVERIFY(daemon_.stop());
        auto entries = daemon_.auditEntries();
        QVERIFY2(entries, entries ? "" : entries.error().message().c_str());
        bool anonymousDenied = false;
        bool wrongPassword = false;
        for (const audit::Entry& entry : *entries) {
            if (entry.action == "user.list" && entry.actor.id == "unknown"
                && entry.outcome != audit::Outcome::Ok)
                anonymousDenied = true;
            if (entry.action == "session.sign_in" && entry.target.id == "dave"
                && entry.actor.id == "unknown" && entry.outcome == audit::Outcome::Denied)
                wrongPassword = true;
        }
        QVERIFY(anonymousDenied);
        QVERIFY(wrongPassword);
        // Issue #54: the handshakes refused for dave's revoked certificate are audited, counted
        // per serial, with dave (whose session it was) as the actor.
        QVERIFY(!signedOutSerial_.empty());
        std::uint64_t refusedHandshakes = 0;
        for (const audit::Entry& entry : *entries) {
            if (entry.action != "certificate.refuse"
                || testing::detailOf(entry, "certificate_serial") != signedOutSerial_)
                continue;
            QCOMPARE(entry.outcome, audit::Outcome::Denied);
            QCOMPARE(entry.actor.id, std::string("dave"));
            refusedHandshakes += std::stoull(testing::detailOf(entry, "repeated"));
        }
        QVERIFY(refusedHandshakes >= 1);
    }
};

QTEST_GUILESS_MAIN(TestApiTransport)
#include "test_api_transport.moc"
