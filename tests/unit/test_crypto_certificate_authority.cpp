// The platform CA: issue from a CSR with SANs and purposes, verify with time, purpose and CRL,
// agree with `openssl verify`, and refuse another CA's certificate, expired and not-yet-valid
// ones, revoked ones, a tampered CSR, a wrong purpose and a CRL from elsewhere. An expired CA
// issues nothing, a leaf never outlives its CA, and PEM input is one unencrypted block.
#include "sealtrain/base/encoding.h"
#include "sealtrain/crypto/certificate_authority.h"

#include <QtTest/QtTest>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

using namespace sealtrain;
using namespace sealtrain::crypto;
using namespace std::chrono_literals;

namespace {

CertificateAuthority makeCa(const char* name = "Sealtrain test CA")
{
    auto ca = CertificateAuthority::create(name, std::chrono::hours(24 * 365));
    if (!ca)
        qFatal("%s", ca.error().message().c_str());
    return std::move(*ca);
}

KeyAndCsr makeCsr(const char* name = "worker-1")
{
    auto request = makeKeyAndCsr(name);
    if (!request)
        qFatal("%s", request.error().message().c_str());
    return std::move(*request);
}

IssueRequest workerRequest(const std::string& csrPem)
{
    IssueRequest request;
    request.csrPem = csrPem;
    request.commonName = "worker-1";
    request.subjectAltNames.dns = {"worker-1.cluster.example"};
    request.subjectAltNames.ip = {"10.0.0.3", "fd00::3"};
    request.subjectAltNames.uri = {"spiffe://sealtrain/worker/1"};
    request.purpose = CertificatePurpose::Client;
    request.validFor = std::chrono::hours(24);
    return request;
}

std::string issueOrDie(const CertificateAuthority& ca, const IssueRequest& request)
{
    auto certificate = ca.issue(request);
    if (!certificate)
        qFatal("%s", certificate.error().message().c_str());
    return *certificate;
}

std::string emptyCrl(const CertificateAuthority& ca)
{
    auto crl = ca.issueCrl({}, 1, std::chrono::hours(24));
    if (!crl)
        qFatal("%s", crl.error().message().c_str());
    return *crl;
}

VerifyOptions clientOptions(const std::string& crl)
{
    VerifyOptions options;
    options.purpose = CertificatePurpose::Client;
    options.crlPem = crl;
    return options;
}

// Re-encodes a PEM block after `edit` changed its DER bytes.
std::string editPem(const std::string& pem,
                    const std::function<void(std::vector<std::uint8_t>&)>& edit)
{
    const auto begin = pem.find('\n') + 1;
    const auto end = pem.find("-----END");
    std::string body;
    for (const char c : pem.substr(begin, end - begin)) {
        if (c != '\n')
            body += c;
    }
    auto der = fromBase64(body);
    if (!der)
        qFatal("test PEM is not base64");
    edit(*der);
    return pem.substr(0, begin) + toBase64(*der) + "\n" + pem.substr(end);
}

void writeText(const std::filesystem::path& path, std::string_view text)
{
    std::ofstream(path, std::ios::binary) << text;
}

std::pair<int, QByteArray> runTool(const QString& program, const QStringList& arguments)
{
    QProcess process;
    process.setProcessChannelMode(QProcess::MergedChannels);
    process.start(program, arguments);
    if (!process.waitForFinished(30000) || process.exitStatus() != QProcess::NormalExit)
        return {-1, {}};
    return {process.exitCode(), process.readAll()};
}

void expectRefused(const Result<CertificateInfo>& result, const char* reasonWord)
{
    QVERIFY(!result.ok());
    QCOMPARE(result.error().code(), ErrorCode::Unauthenticated);
    QVERIFY2(result.error().message().find(reasonWord) != std::string::npos,
             result.error().message().c_str());
    QVERIFY(isOneSentence(result.error().message()));
}

}  // namespace

class TestCertificateAuthority : public QObject {
    Q_OBJECT

private slots:
    void issueAndVerify()
    {
        const auto ca = makeCa();
        const auto worker = makeCsr();
        QVERIFY(!worker.privateKeyPem.empty());
        const auto certificate = issueOrDie(ca, workerRequest(worker.csrPem));
        const auto info =
            verifyCertificate(certificate, ca.certificatePem(), clientOptions(emptyCrl(ca)));
        QVERIFY2(info.ok(), info.ok() ? "" : info.error().message().c_str());
        QCOMPARE(info->commonName, std::string("worker-1"));
        QCOMPARE(info->subjectAltNames.dns, std::vector<std::string>{"worker-1.cluster.example"});
        QCOMPARE(info->subjectAltNames.ip, (std::vector<std::string>{"10.0.0.3", "fd00::3"}));
        QCOMPARE(info->subjectAltNames.uri,
                 std::vector<std::string>{"spiffe://sealtrain/worker/1"});
        QCOMPARE(info->serialHex.size(), std::size_t{32});
        const auto remaining = info->notAfter - CertificateClock::now();
        QVERIFY(remaining > 23h && remaining < 25h);
        // Two certificates never share a serial.
        const auto again = verifyCertificate(issueOrDie(ca, workerRequest(worker.csrPem)),
                                             ca.certificatePem(), clientOptions(emptyCrl(ca)));
        QVERIFY(again.ok());
        QVERIFY(again->serialHex != info->serialHex);
    }

    void opensslAgrees()
    {
        QTemporaryDir dir;
        const std::filesystem::path root = dir.path().toStdString();
        const auto ca = makeCa();
        const auto certificate = issueOrDie(ca, workerRequest(makeCsr().csrPem));
        const auto revokedCertificate = issueOrDie(ca, workerRequest(makeCsr().csrPem));
        const auto revoked = revocationFor(revokedCertificate, CertificateClock::now() - 1min);
        QVERIFY(revoked.ok());
        const auto crl = ca.issueCrl(std::span(&*revoked, 1), 2, 24h);
        QVERIFY(crl.ok());
        writeText(root / "ca.pem", ca.certificatePem());
        writeText(root / "leaf.pem", certificate);
        writeText(root / "revoked.pem", revokedCertificate);
        writeText(root / "crl.pem", *crl);
        const auto q = [&](const char* name) {
            return QString::fromStdString((root / name).string());
        };
        const QStringList common{"verify",   "-CAfile",    q("ca.pem"),   "-crl_check",
                                 "-CRLfile", q("crl.pem"), "-x509_strict"};
        auto good =
            runTool("openssl", common + QStringList{"-purpose", "sslclient", q("leaf.pem")});
        QVERIFY2(good.first == 0, good.second.constData());
        auto wrongPurpose =
            runTool("openssl", common + QStringList{"-purpose", "sslserver", q("leaf.pem")});
        QVERIFY(wrongPurpose.first != 0);
        auto revokedRun =
            runTool("openssl", common + QStringList{"-purpose", "sslclient", q("revoked.pem")});
        QVERIFY(revokedRun.first != 0);
        QVERIFY(revokedRun.second.contains("revoked"));
        // The CRL is signed by the CA and carries its number.
        auto crlText = runTool(
            "openssl", {"crl", "-in", q("crl.pem"), "-CAfile", q("ca.pem"), "-noout", "-text"});
        QVERIFY2(crlText.first == 0, crlText.second.constData());
        QVERIFY(crlText.second.contains("verify OK"));
        QVERIFY(crlText.second.contains("X509v3 CRL Number"));
        // The extensions gRPC's TLS stack looks at.
        auto text = runTool("openssl", {"x509", "-in", q("leaf.pem"), "-noout", "-text"});
        QVERIFY(text.second.contains("TLS Web Client Authentication"));
        QVERIFY(text.second.contains("Digital Signature"));
        QVERIFY(text.second.contains("DNS:worker-1.cluster.example"));
        QVERIFY(text.second.contains("IP Address:10.0.0.3"));
        QVERIFY(text.second.contains("URI:spiffe://sealtrain/worker/1"));
        QVERIFY(text.second.contains("prime256v1"));
    }

    // Issue #27: every certificate the platform CA issues is a leaf, so that no worker or session
    // can issue certificates the platform would trust: basicConstraints critical with CA false,
    // key usage critical and exactly digitalSignature, and OpenSSL agrees it is no CA.
    void issuedCertificatesAreLeaves_data()
    {
        QTest::addColumn<int>("purpose");
        QTest::newRow("client") << static_cast<int>(CertificatePurpose::Client);
        QTest::newRow("server") << static_cast<int>(CertificatePurpose::Server);
        QTest::newRow("server and client") << static_cast<int>(CertificatePurpose::ServerAndClient);
    }

    void issuedCertificatesAreLeaves()
    {
        QFETCH(int, purpose);
        const auto ca = makeCa();
        IssueRequest request = workerRequest(makeCsr().csrPem);
        request.purpose = static_cast<CertificatePurpose>(purpose);
        const std::string pem = issueOrDie(ca, request);
        const std::unique_ptr<BIO, decltype(&BIO_free)> bio(
            BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), &BIO_free);
        const std::unique_ptr<X509, decltype(&X509_free)> cert(
            PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr), &X509_free);
        QVERIFY(cert);
        QCOMPARE(X509_check_ca(cert.get()), 0);

        int critical = -1;
        const std::unique_ptr<BASIC_CONSTRAINTS, decltype(&BASIC_CONSTRAINTS_free)> constraints(
            static_cast<BASIC_CONSTRAINTS*>(
                X509_get_ext_d2i(cert.get(), NID_basic_constraints, &critical, nullptr)),
            &BASIC_CONSTRAINTS_free);
        QVERIFY(constraints);
        QCOMPARE(critical, 1);
        QCOMPARE(constraints->ca, 0);

        const std::unique_ptr<ASN1_BIT_STRING, decltype(&ASN1_BIT_STRING_free)> usage(
            static_cast<ASN1_BIT_STRING*>(
                X509_get_ext_d2i(cert.get(), NID_key_usage, &critical, nullptr)),
            &ASN1_BIT_STRING_free);
        QVERIFY(usage);
        QCOMPARE(critical, 1);
        QCOMPARE(X509_get_key_usage(cert.get()), static_cast<std::uint32_t>(KU_DIGITAL_SIGNATURE));
    }

    void anotherCaIsRefused()
    {
        const auto ca = makeCa();
        const auto other = makeCa("Another CA");
        const auto certificate = issueOrDie(other, workerRequest(makeCsr().csrPem));
        expectRefused(
            verifyCertificate(certificate, ca.certificatePem(), clientOptions(emptyCrl(ca))),
            "not issued by the platform CA");
        // The same name and key usage but another key: still another CA.
        const auto sameName = makeCa("Sealtrain test CA");
        const auto impostor = issueOrDie(sameName, workerRequest(makeCsr().csrPem));
        QVERIFY(
            !verifyCertificate(impostor, ca.certificatePem(), clientOptions(emptyCrl(ca))).ok());
    }

    void validityWindowIsChecked()
    {
        const auto ca = makeCa();
        auto request = workerRequest(makeCsr().csrPem);
        request.validFrom = CertificateClock::now() - std::chrono::hours(24 * 10);
        request.validFor = std::chrono::hours(24);
        const auto expired = issueOrDie(ca, request);
        expectRefused(verifyCertificate(expired, ca.certificatePem(), clientOptions(emptyCrl(ca))),
                      "expired");
        request.validFrom = CertificateClock::now() + std::chrono::hours(24);
        const auto future = issueOrDie(ca, request);
        expectRefused(verifyCertificate(future, ca.certificatePem(), clientOptions(emptyCrl(ca))),
                      "not valid yet");
        // Checked at a moment inside its window (and the CA's), it verifies. No CRL: the one
        // published now is out of date by then.
        auto later = clientOptions("");
        later.requireCrl = false;
        later.at = CertificateClock::now() + 36h;
        QVERIFY(verifyCertificate(future, ca.certificatePem(), later).ok());
        later.at = CertificateClock::now() + std::chrono::hours(24 * 3);
        expectRefused(verifyCertificate(future, ca.certificatePem(), later), "expired");
    }

    void revokedIsRefused()
    {
        const auto ca = makeCa();
        const auto kept = issueOrDie(ca, workerRequest(makeCsr().csrPem));
        const auto dropped = issueOrDie(ca, workerRequest(makeCsr().csrPem));
        const auto entry = revocationFor(dropped, CertificateClock::now() - 1min);
        QVERIFY(entry.ok());
        const auto crl = ca.issueCrl(std::span(&*entry, 1), 7, 24h);
        QVERIFY(crl.ok());
        expectRefused(verifyCertificate(dropped, ca.certificatePem(), clientOptions(*crl)),
                      "revoked");
        QVERIFY(verifyCertificate(kept, ca.certificatePem(), clientOptions(*crl)).ok());
        // Before the revocation was published, the old CRL still accepted it.
        QVERIFY(verifyCertificate(dropped, ca.certificatePem(), clientOptions(emptyCrl(ca))).ok());
    }

    void crlProblemsAreRefused()
    {
        const auto ca = makeCa();
        const auto other = makeCa("Another CA");
        const auto certificate = issueOrDie(ca, workerRequest(makeCsr().csrPem));
        // No CRL at all, when one is required.
        const auto none = verifyCertificate(certificate, ca.certificatePem(), clientOptions(""));
        QVERIFY(!none.ok());
        QCOMPARE(none.error().code(), ErrorCode::InvalidArgument);
        // A CRL signed by another CA does not stand in for ours.
        expectRefused(
            verifyCertificate(certificate, ca.certificatePem(), clientOptions(emptyCrl(other))),
            "CRL");
        // An out-of-date CRL.
        auto stale = clientOptions(emptyCrl(ca));
        stale.at = CertificateClock::now() + 2h;
        auto longCertificate = workerRequest(makeCsr().csrPem);
        longCertificate.validFor = std::chrono::hours(24 * 3);
        stale.crlPem = *ca.issueCrl({}, 3, 1h);
        expectRefused(
            verifyCertificate(issueOrDie(ca, longCertificate), ca.certificatePem(), stale),
            "out of date");
        // A CRL whose signature was altered.
        const auto tampered = editPem(
            emptyCrl(ca), [](std::vector<std::uint8_t>& der) { der[der.size() - 5] ^= 0x01; });
        QVERIFY(!verifyCertificate(certificate, ca.certificatePem(), clientOptions(tampered)).ok());
    }

    void wrongPurposeIsRefused_data()
    {
        QTest::addColumn<int>("issued");
        QTest::addColumn<int>("wanted");
        QTest::addColumn<bool>("accepted");
        const auto server = static_cast<int>(CertificatePurpose::Server);
        const auto client = static_cast<int>(CertificatePurpose::Client);
        const auto both = static_cast<int>(CertificatePurpose::ServerAndClient);
        QTest::newRow("client as client") << client << client << true;
        QTest::newRow("client as server") << client << server << false;
        QTest::newRow("server as server") << server << server << true;
        QTest::newRow("server as client") << server << client << false;
        QTest::newRow("both as server") << both << server << true;
        QTest::newRow("both as client") << both << client << true;
        QTest::newRow("client as both") << client << both << false;
        QTest::newRow("server as both") << server << both << false;
    }

    void wrongPurposeIsRefused()
    {
        QFETCH(int, issued);
        QFETCH(int, wanted);
        QFETCH(bool, accepted);
        const auto ca = makeCa();
        auto request = workerRequest(makeCsr().csrPem);
        request.purpose = static_cast<CertificatePurpose>(issued);
        const auto certificate = issueOrDie(ca, request);
        auto options = clientOptions(emptyCrl(ca));
        options.purpose = static_cast<CertificatePurpose>(wanted);
        const auto result = verifyCertificate(certificate, ca.certificatePem(), options);
        if (accepted)
            QVERIFY(result.ok());
        else
            expectRefused(result, "not issued for this use");
    }

    void tamperedCsrIsRefused()
    {
        const auto ca = makeCa();
        const auto worker = makeCsr("worker-1");
        // Change the requested name inside the signed part; the signature no longer matches.
        const auto tampered = editPem(worker.csrPem, [](std::vector<std::uint8_t>& der) {
            const std::string name = "worker-1";
            const auto at = std::search(der.begin(), der.end(), name.begin(), name.end());
            if (at == der.end())
                qFatal("name not found in the CSR");
            *(at + 7) = '2';
        });
        QVERIFY(tampered != worker.csrPem);
        const auto certificate = ca.issue(workerRequest(tampered));
        QVERIFY(!certificate.ok());
        QCOMPARE(certificate.error().code(), ErrorCode::InvalidArgument);
        QVERIFY(certificate.error().message().find("signature") != std::string::npos);
        QVERIFY(!ca.issue(workerRequest("not a csr")).ok());
    }

    void nonP256CsrIsRefused()
    {
        QTemporaryDir dir;
        const auto csrPath = dir.path() + "/req.pem";
        const auto made =
            runTool("openssl", {"req", "-new", "-newkey", "ed25519", "-nodes", "-subj",
                                "/CN=worker", "-keyout", dir.path() + "/key.pem", "-out", csrPath});
        QVERIFY2(made.first == 0, made.second.constData());
        QFile file(csrPath);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const auto result = makeCa().issue(workerRequest(file.readAll().toStdString()));
        QVERIFY(!result.ok());
        QCOMPARE(result.error().code(), ErrorCode::Unsupported);
    }

    void badNamesAreRefused_data()
    {
        QTest::addColumn<QString>("dns");
        QTest::addColumn<QString>("ip");
        QTest::addColumn<QString>("uri");
        QTest::newRow("comma injection") << "a.example,DNS:evil.example"
                                         << ""
                                         << "";
        QTest::newRow("space in name") << "a example"
                                       << ""
                                       << "";
        QTest::newRow("bad ip") << ""
                                << "10.0.0.300"
                                << "";
        QTest::newRow("uri without scheme") << ""
                                            << ""
                                            << "worker";
        QTest::newRow("uri with space") << ""
                                        << ""
                                        << "spiffe://a b";
    }

    void badNamesAreRefused()
    {
        QFETCH(QString, dns);
        QFETCH(QString, ip);
        QFETCH(QString, uri);
        auto request = workerRequest(makeCsr().csrPem);
        request.subjectAltNames = {};
        if (!dns.isEmpty())
            request.subjectAltNames.dns = {dns.toStdString()};
        if (!ip.isEmpty())
            request.subjectAltNames.ip = {ip.toStdString()};
        if (!uri.isEmpty())
            request.subjectAltNames.uri = {uri.toStdString()};
        const auto result = makeCa().issue(request);
        QVERIFY(!result.ok());
        QCOMPARE(result.error().code(), ErrorCode::InvalidArgument);
        QVERIFY(isOneSentence(result.error().message()));
    }

    void expiredCaRefusesToIssue()
    {
        // Valid from five minutes ago until one minute ago.
        const auto expired = CertificateAuthority::create("Expired CA", -60s);
        QVERIFY(expired.ok());
        const auto issued = expired->issue(workerRequest(makeCsr().csrPem));
        QVERIFY(!issued.ok());
        QCOMPARE(issued.error().code(), ErrorCode::InvalidArgument);
        QVERIFY2(issued.error().message().find("has expired") != std::string::npos,
                 issued.error().message().c_str());
        QVERIFY(isOneSentence(issued.error().message()));
    }

    void leafExpiryIsCappedAtTheCas()
    {
        const auto before = CertificateClock::now();
        const auto shortLived = CertificateAuthority::create("Short-lived CA", 1h);
        QVERIFY(shortLived.ok());
        auto request = workerRequest(makeCsr().csrPem);
        request.validFor = std::chrono::hours(24 * 30);
        const auto certificate = issueOrDie(*shortLived, request);
        const auto info = verifyCertificate(certificate, shortLived->certificatePem(),
                                            clientOptions(emptyCrl(*shortLived)));
        QVERIFY2(info.ok(), info.ok() ? "" : info.error().message().c_str());
        QVERIFY(info->notAfter <= CertificateClock::now() + 1h);
        QVERIFY(info->notAfter >= before + 1h - 1s);
    }

    void pemWithDataAfterTheBlockIsRefused()
    {
        const auto ca = makeCa();
        const auto other = makeCa("Another CA");
        const auto keyText = [](const CertificateAuthority& authority) {
            const auto bytes = authority.privateKeyPem().bytes();
            return std::string(bytes.begin(), bytes.end());
        };
        const auto expectTrailingRefused = [](const auto& result) {
            QVERIFY(!result.ok());
            QCOMPARE(result.error().code(), ErrorCode::InvalidArgument);
            QVERIFY2(result.error().message().find("after its first PEM block")
                         != std::string::npos,
                     result.error().message().c_str());
            QVERIFY(isOneSentence(result.error().message()));
        };
        // Another CA's certificate behind ours, another key behind ours, a CSR with a tail.
        expectTrailingRefused(CertificateAuthority::load(
            ca.certificatePem() + other.certificatePem(), ca.privateKeyPem()));
        const auto twoKeys = SecretBytes::fromBytes(asBytes(keyText(ca) + keyText(other)));
        expectTrailingRefused(CertificateAuthority::load(ca.certificatePem(), *twoKeys));
        auto request = workerRequest(makeCsr().csrPem + "and then some\n");
        expectTrailingRefused(ca.issue(request));
        // Whitespace after the block is not data.
        const auto spaced = SecretBytes::fromBytes(asBytes(keyText(ca) + "\n \n"));
        QVERIFY(CertificateAuthority::load(ca.certificatePem() + "\n\n", *spaced).ok());
    }

    void encryptedCaKeyIsRefusedWithoutPrompt()
    {
        // A P-256 key encrypted with 'openssl pkcs8 -topk8 -v2 aes-256-cbc'.
        const std::string encrypted =
            "-----BEGIN ENCRYPTED PRIVATE KEY-----\n"
            "MIHsMFcGCSqGSIb3DQEFDTBKMCkGCSqGSIb3DQEFDDAcBAjYaC9FoD5CswICCAAw\n"
            "DAYIKoZIhvcNAgkFADAdBglghkgBZQMEASoEEJZC0Yn6lm6RNgIjNHS/BhAEgZBx\n"
            "30LHYTh0x813S1ph4RKiL8W0nyf0Ctcv4GIt2QYwg2zCIPlGlc8UBd0in/Fw4VuF\n"
            "WS6aVqzVF5DHhKNNSg0RRrxKJa1eAatUUPzKSjZtd6ZfSyQi4PrrCw4jLTxD1PYI\n"
            "RZwjdJGbHq2wqQy+mkkz0ZnOIos9GmqNWbideGmBqxc38SwckAbxiqLyc/hWUUw=\n"
            "-----END ENCRYPTED PRIVATE KEY-----\n";
        const auto ca = makeCa();
        const auto loaded = CertificateAuthority::load(ca.certificatePem(),
                                                       *SecretBytes::fromBytes(asBytes(encrypted)));
        QVERIFY(!loaded.ok());
        QVERIFY2(loaded.error().message().find("is encrypted") != std::string::npos,
                 loaded.error().message().c_str());
        QVERIFY(isOneSentence(loaded.error().message()));
    }

    void loadRestoresTheCa()
    {
        const auto ca = makeCa();
        const auto other = makeCa("Another CA");
        const auto loaded = CertificateAuthority::load(ca.certificatePem(), ca.privateKeyPem());
        QVERIFY(loaded.ok());
        const auto certificate = issueOrDie(*loaded, workerRequest(makeCsr().csrPem));
        QVERIFY(
            verifyCertificate(certificate, ca.certificatePem(), clientOptions(emptyCrl(ca))).ok());
        const auto mismatched =
            CertificateAuthority::load(ca.certificatePem(), other.privateKeyPem());
        QVERIFY(!mismatched.ok());
        // A leaf certificate is not a CA.
        QVERIFY(!CertificateAuthority::load(certificate, ca.privateKeyPem()).ok());
    }
};

QTEST_APPLESS_MAIN(TestCertificateAuthority)
#include "test_crypto_certificate_authority.moc"
