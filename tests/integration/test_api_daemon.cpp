// sealtrain-control as a separate process, reached through the client library over a Unix socket
// and TCP loopback (issue #15): sign-in with a CSR, calls authenticated by the session's client
// certificate alone, RBAC decided by the daemon, datasets, audit exports, scoped training and
// jobs. SIGTERM stops it with exit 0, and the refusals are in its audit log afterwards. The
// transport attacks (plaintext, other CAs, expired or revoked certificates, TLS 1.2) are
// test_api_transport's.
#include "../support/totp_clock.h"
#include "../unit/core_fixture.h"
#include "sealtrain/api/client.h"
#include "sealtrain/audit/bundle.h"
#include "sealtrain/audit/entry.h"
#include "sealtrain/audit/store.h"
#include "sealtrain/core/control_plane.h"
#include "sealtrain/core/data_directory/data_directory.h"
#include "sealtrain/core/identity/totp.h"
#include "sealtrain/crypto/signing.h"
#include "sealtrain/dataset/import.h"
#include "sealtrain/dataset/manifest.h"
#include "sealtrain/formats/checkpoint.h"
#include "sealtrain/formats/trainer_keys.h"

#include <QThread>
#include <QtTest/QtTest>

#include <algorithm>
#include <csignal>
#include <fstream>
#include <iterator>
#include <map>
#include <sys/stat.h>

using namespace sealtrain;

namespace {

constexpr const char* kPassphrase = "a long test passphrase for the keyring";
constexpr const char* kPassword = "a long test password for both of the users";
constexpr std::uint64_t kMaxImportBytes = 1U << 20U;
// In every uploaded record: it must never appear in the data directory in the clear.
constexpr const char* kMarker = "PLAINTEXT-MARKER-8d1f";

void writeFile(const std::filesystem::path& path, const std::string& text)
{
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << text;
}

// Whether any file under `dir` holds `needle`.
bool anyFileHolds(const std::filesystem::path& dir, const std::string& needle)
{
    for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
        if (!entry.is_regular_file())
            continue;
        std::ifstream in(entry.path(), std::ios::binary);
        const std::string bytes((std::istreambuf_iterator<char>(in)),
                                std::istreambuf_iterator<char>());
        if (bytes.find(needle) != std::string::npos)
            return true;
    }
    return false;
}

std::size_t datasetFolders(const std::filesystem::path& dataDir)
{
    std::size_t count = 0;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(dataDir / "datasets", ec)) {
        if (entry.is_directory() && entry.path().filename().string().front() != '.')
            ++count;
    }
    return count;
}

crypto::SecretBytes secret(const std::string& text)
{
    return crypto::SecretBytes::fromBytes(
               {reinterpret_cast<const std::uint8_t*>(text.data()), text.size()})
        .value();
}

}  // namespace

class TestApiDaemon : public QObject {
    std::int64_t unapprovedJob_ = 0;
    Q_OBJECT

    QTemporaryDir tmp_;
    std::filesystem::path dataDir_;
    std::map<std::string, std::string> uris_;
    testing::TotpCodes codes_;
    std::string caPem_;
    QProcess daemon_;
    std::string unixAddress_;
    std::string tcpAddress_;
    int tcpPort_ = 0;
    std::string keysCapture_;

    // The next code of `user`: a step no earlier sign-in of theirs spent, the test clock moved
    // forward when it must be (tests/support/totp_clock.h).
    std::string code(const std::string& user) { return codes_.next(user, uris_.at(user)); }

    // One session per user and transport, signed in once (sign-ins are rationed by TOTP steps).
    std::map<std::string, api::SignedIn> sessions_;
    const api::ClientIdentity& session(const std::string& user, const std::string& address)
    {
        const std::string key = user + "@" + address;
        if (sessions_.count(key) == 0)
            sessions_.emplace(key, signIn(user, address));
        return sessions_.at(key).identity;
    }

    api::Endpoint endpoint(const std::string& address) const
    {
        return {address, "localhost", caPem_};
    }

    api::SignedIn signIn(const std::string& user, const std::string& address)
    {
        auto client = api::ControlClient::connect(endpoint(address), nullptr);
        if (!client)
            qFatal("connect: %s", client.error().message().c_str());
        auto signedIn = (*client)->sessions().signIn(user, secret(kPassword), code(user));
        if (!signedIn)
            qFatal("sign-in of %s: %s", user.c_str(), signedIn.error().message().c_str());
        return std::move(signedIn).value();
    }

    std::unique_ptr<api::ControlClient> as(const api::ClientIdentity& identity,
                                           const std::string& address)
    {
        return std::move(api::ControlClient::connect(endpoint(address), &identity)).value();
    }

private slots:
    void initTestCase()
    {
        QVERIFY(tmp_.isValid());
        dataDir_ = std::filesystem::path(tmp_.path().toStdString()) / "data";
        core::NewDataDirectory request;
        request.path = dataDir_;
        request.passphrase = secret(kPassphrase);
        request.argon2 = crypto::kArgon2Floor;
        request.adminName = "alice";
        request.adminPassword = secret(kPassword);
        auto created = core::DataDirectory::create(request);
        QVERIFY2(created, created ? "" : created.error().message().c_str());
        uris_["alice"] = created->otpauthUri;
        {
            // Before the daemon owns it: bob, an engineer, and an expired certificate from the
            // platform CA.
            core::KeyringUnlock unlock;
            unlock.passphrase = [] {
                return crypto::SecretBytes::fromBytes(secret(kPassphrase).bytes());
            };
            auto platform =
                core::DataDirectory::open(dataDir_, unlock, testing::testClockOptions());
            QVERIFY2(platform, platform ? "" : platform.error().message().c_str());
            auto& identity = (*platform)->controlPlane().identity();
            auto token = identity.signIn("alice", secret(kPassword), code("alice"));
            QVERIFY(token);
            auto bob = testing::enrolUser(identity, *token, "bob", secret(kPassword));
            QVERIFY(bob);
            uris_["bob"] = bob->otpauthUri;
            QVERIFY((*platform)->controlPlane().access().grantRole(*token, "bob", "engineer", ""));
            // carol, a second admin, and dave, another engineer: more users, fewer waits for a
            // TOTP step; sam, a data steward, and rita, an auditor.
            // The second admin last: with two, a separated duty waits for both (issue #27).
            for (const auto& [user, role] :
                 {std::pair<std::string, std::string>{"dave", "engineer"},
                  {"sam", "steward"},
                  {"rita", "auditor"},
                  {"ann", "approver"},
                  {"carol", "admin"}}) {
                auto enrolled = testing::enrolUser(identity, *token, user, secret(kPassword));
                QVERIFY(enrolled);
                uris_[user] = enrolled->otpauthUri;
                QVERIFY((*platform)->controlPlane().access().grantRole(*token, user, role, ""));
            }
            caPem_ = (*platform)->certificateAuthority().certificatePem();
            QVERIFY((*platform)->signPendingEntries());
        }
        QCOMPARE(::chmod(dataDir_.c_str(), 0700), 0);

        const QString socket = tmp_.filePath("control.sock");
        const QString ready = tmp_.filePath("ready.json");
        unixAddress_ = "unix:" + socket.toStdString();
        daemon_.setProgram(QStringLiteral(SEALTRAIN_CONTROL_TEST_EXECUTABLE));
        daemon_.setArguments({"--data-dir", QString::fromStdString(dataDir_.string()), "--listen",
                              QString::fromStdString(unixAddress_), "--listen", "127.0.0.1:0",
                              "--ready-file", ready, "--max-import-bytes",
                              QString::number(kMaxImportBytes)});
        daemon_.setProcessChannelMode(QProcess::ForwardedErrorChannel);
        // The trainer the operator configured: the real one behind a wrapper that keeps a copy
        // of the keys it is handed, so that the scoped release can be checked.
        keysCapture_ = tmp_.filePath("released.keys").toStdString();
        QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
        environment.insert("SEALTRAIN_TEST_KEYS_CAPTURE", QString::fromStdString(keysCapture_));
        environment.insert("SEALTRAIN_TEST_REAL_TRAINER", SEALTRAIN_TRAIN_EXECUTABLE);
        daemon_.setProcessEnvironment(environment);
        daemon_.setArguments(daemon_.arguments() << "--trainer" << SEALTRAIN_CAPTURE_TRAINER);
        daemon_.start();
        QVERIFY(daemon_.waitForStarted());
        daemon_.write(QByteArray(kPassphrase) + "\n");
        daemon_.closeWriteChannel();
        QTRY_VERIFY_WITH_TIMEOUT(QFile::exists(ready), 60000);
        QFile file(ready);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QJsonObject info = QJsonDocument::fromJson(file.readAll()).object();
        tcpPort_ = info["ports"].toArray().at(1).toInt();
        QVERIFY(tcpPort_ > 0);
        tcpAddress_ = "127.0.0.1:" + std::to_string(tcpPort_);
    }

    void signInThenCallWithTheCertificate_data()
    {
        QTest::addColumn<bool>("overUnixSocket");
        QTest::newRow("unix socket") << true;
        QTest::newRow("tcp loopback") << false;
    }

    void signInThenCallWithTheCertificate()
    {
        QFETCH(bool, overUnixSocket);
        const std::string address = overUnixSocket ? unixAddress_ : tcpAddress_;
        const std::string admin = overUnixSocket ? "alice" : "carol";
        session(admin, address);
        const api::SignedIn& signedIn = sessions_.at(admin + "@" + address);
        QVERIFY(signedIn.sessionId.rfind('s', 0) == 0);
        QVERIFY(signedIn.identity.certificatePem.find("BEGIN CERTIFICATE") != std::string::npos);
        auto client = as(signedIn.identity, address);
        auto who = client->sessions().whoAmI();
        QVERIFY2(who, who ? "" : who.error().message().c_str());
        QCOMPARE(who->user, admin);
        QCOMPARE(who->sessionId, signedIn.sessionId);
        auto users = client->users().listUsers();
        QVERIFY2(users, users ? "" : users.error().message().c_str());
        QCOMPARE(users->size(), std::size_t{7});
        const auto bob = std::find_if(users->begin(), users->end(),
                                      [](const api::UserSummary& u) { return u.name == "bob"; });
        QVERIFY(bob != users->end());
        QCOMPARE(bob->grants, std::vector<std::string>{"engineer"});
    }

    // RBAC is decided by the daemon on the certificate's session: bob, an engineer, may list
    // datasets but not users; alice, the admin, the reverse (separation of duties).
    void rolesAreDecidedByTheDaemon()
    {
        auto asBob = as(session("bob", tcpAddress_), tcpAddress_);
        auto datasets = asBob->datasets().listDatasets();
        QVERIFY2(datasets, datasets ? "" : datasets.error().message().c_str());
        QVERIFY(datasets->empty());
        auto users = asBob->users().listUsers();
        QVERIFY(!users);
        QCOMPARE(users.error().code(), ErrorCode::PermissionDenied);
        QVERIFY(users.error().message().find("user.manage") != std::string::npos);

        auto adminDatasets =
            as(session("carol", tcpAddress_), tcpAddress_)->datasets().listDatasets();
        QVERIFY(!adminDatasets);
        QCOMPARE(adminDatasets.error().code(), ErrorCode::PermissionDenied);
    }

    // Administration through the daemon: the admin creates a user and grants a role, the new
    // user signs in with the URI they were given; an engineer may not create users; the
    // separation of duties holds on every grant (an admin may not also hold data permissions).
    void administrationGoesThroughTheDaemon()
    {
        auto asCarol = as(session("carol", tcpAddress_), tcpAddress_);
        // Carol gets a one-time enrolment code, never a credential: gina sets her own password
        // with it, anonymously, and receives her own TOTP secret.
        auto code = asCarol->users().createUser("gina");
        QVERIFY2(code, code ? "" : code.error().message().c_str());
        QVERIFY(code->enrolmentCode.rfind("rc_", 0) == 0);
        QVERIFY(code->codeExpires > 0);
        auto noCode = api::ControlClient::connect(endpoint(tcpAddress_), nullptr)
                          .value()
                          ->sessions()
                          .signIn("gina", secret(kPassword), "000000");
        QVERIFY(!noCode);  // no password works before she set hers
        auto uri = api::ControlClient::connect(endpoint(tcpAddress_), nullptr)
                       .value()
                       ->users()
                       .completeReset("gina", code->enrolmentCode, secret(kPassword));
        QVERIFY2(uri, uri ? "" : uri.error().message().c_str());
        QVERIFY(uri->rfind("otpauth://totp/", 0) == 0);
        uris_["gina"] = *uri;
        // Two admins: carol asks, alice makes the grant (issue #48).
        QVERIFY(asCarol->access().grantRole("gina", "engineer", "")->pending);
        QVERIFY(!as(session("alice", tcpAddress_), tcpAddress_)
                     ->access()
                     .grantRole("gina", "engineer", "")
                     ->pending);
        auto asGina = as(signIn("gina", tcpAddress_).identity, tcpAddress_);
        QVERIFY(asGina->datasets().listDatasets());

        auto byEngineer = as(session("bob", tcpAddress_), tcpAddress_)->users().createUser("hank");
        QVERIFY(!byEngineer);
        QCOMPARE(byEngineer.error().code(), ErrorCode::PermissionDenied);

        auto selfGrant = asCarol->access().grantRole("carol", "engineer", "");
        QVERIFY(!selfGrant);
        QCOMPARE(selfGrant.error().code(), ErrorCode::PermissionDenied);
        QVERIFY2(selfGrant.error().message().find("separate account") != std::string::npos,
                 selfGrant.error().message().c_str());

        // Disabling gina ends her session: her certificate authenticates no call any more.
        QVERIFY(asCarol->users().disableUser("gina"));
        auto afterDisable = asGina->datasets().listDatasets();
        QVERIFY(!afterDisable);
        QCOMPARE(afterDisable.error().code(), ErrorCode::Unauthenticated);
        QVERIFY(asCarol->users().enableUser("gina"));
        QVERIFY(asCarol->access().revokeRole("gina", "engineer", ""));
    }

    // A steward uploads files; the daemon screens, tokenizes, seals and signs them with the
    // manifests key. The upload's text never reaches the data directory in the clear.
    void datasetImportStreamsToTheDaemon()
    {
        const std::filesystem::path inputs = tmp_.path().toStdString() + "/inputs";
        writeFile(inputs / "first.txt", std::string("The first record ") + kMarker + "\n");
        writeFile(inputs / "notes" / "a.txt", std::string("A note ") + kMarker + " one\n");
        writeFile(inputs / "notes" / "b.txt", std::string("Another note ") + kMarker + "\n");
        std::vector<api::UploadFile> files;
        auto listed = dataset::listInputFiles({inputs / "first.txt", inputs / "notes"},
                                              dataset::InputFormat::TextFiles);
        QVERIFY(listed);
        for (const auto& file : *listed)
            files.push_back({file.path, file.displayName, file.size});
        QCOMPARE(files.at(1).name, std::string("notes/a.txt"));

        auto asSam = as(session("sam", tcpAddress_), tcpAddress_);
        api::ImportSettings settings;
        settings.name = "notes";
        settings.validationBasisPoints = 0;
        std::uint64_t lastSent = 0;
        auto imported = asSam->datasets().importDataset(
            settings, files, [&](std::uint64_t sent, std::uint64_t) { lastSent = sent; });
        QVERIFY2(imported, imported ? "" : imported.error().message().c_str());
        QCOMPARE(imported->dataset.version, std::int64_t{1});
        QCOMPARE(imported->dataset.records, std::uint64_t{3});
        QCOMPARE(lastSent, files[0].size + files[1].size + files[2].size);
        const QJsonObject report =
            QJsonDocument::fromJson(QByteArray::fromStdString(imported->reportJson)).object();
        QCOMPARE(report["records_kept"].toInt(), 3);
        QCOMPARE(report["files_read"].toInt(), 3);
        auto datasets = asSam->datasets().listDatasets();
        QVERIFY(datasets);
        QCOMPARE(datasets->size(), std::size_t{1});
        QCOMPARE(datasets->front().id, imported->dataset.id);

        // The manifest names the files as a local import would, and is signed by the
        // manifests key alone.
        const auto folder = core::datasetFolder(dataDir_ / "datasets", imported->dataset.id);
        std::ifstream manifestFile(folder / "manifest.json", std::ios::binary);
        const std::string manifest((std::istreambuf_iterator<char>(manifestFile)),
                                   std::istreambuf_iterator<char>());
        QVERIFY(manifest.find("notes/b.txt") != std::string::npos);
        auto keys = asSam->platform().signingKeys();
        QVERIFY(keys);
        QVERIFY(keys->manifestsPem != keys->auditPem && keys->checkpointsPem != keys->auditPem
                && keys->checkpointsPem != keys->manifestsPem);
        std::ifstream signatureFile(folder / "manifest.sig", std::ios::binary);
        const std::string signature =
            QByteArray::fromBase64(QByteArray::fromStdString(
                                       std::string((std::istreambuf_iterator<char>(signatureFile)),
                                                   std::istreambuf_iterator<char>())))
                .toStdString();
        auto manifestsKey = crypto::PublicKey::fromPem(keys->manifestsPem);
        auto auditKey = crypto::PublicKey::fromPem(keys->auditPem);
        QVERIFY(manifestsKey && auditKey);
        const auto bytes = [](const std::string& text) {
            return std::span(reinterpret_cast<const std::uint8_t*>(text.data()), text.size());
        };
        QVERIFY(manifestsKey->verify(bytes(manifest), bytes(signature)));
        QVERIFY(!auditKey->verify(bytes(manifest), bytes(signature)));

        QVERIFY(!anyFileHolds(dataDir_, kMarker));
    }

    // Who may not import is refused before anything is written, and so is an upload over the
    // daemon's limit or one without a session.
    void datasetImportRefusals()
    {
        const std::filesystem::path file = tmp_.path().toStdString() + "/refused.txt";
        writeFile(file, std::string("A refused record ") + kMarker + "\n");
        const std::vector<api::UploadFile> files{
            {file, "refused.txt", std::filesystem::file_size(file)}};
        api::ImportSettings settings;
        settings.name = "refused";
        const std::size_t before = datasetFolders(dataDir_);

        auto byEngineer = as(session("bob", tcpAddress_), tcpAddress_)
                              ->datasets()
                              .importDataset(settings, files, {});
        QVERIFY(!byEngineer);
        QCOMPARE(byEngineer.error().code(), ErrorCode::PermissionDenied);

        auto anonymous = api::ControlClient::connect(endpoint(tcpAddress_), nullptr);
        auto withoutSession = (*anonymous)->datasets().importDataset(settings, files, {});
        QVERIFY(!withoutSession);
        QCOMPARE(withoutSession.error().code(), ErrorCode::Unauthenticated);

        const std::filesystem::path big = tmp_.path().toStdString() + "/big.txt";
        writeFile(big, std::string(kMaxImportBytes + 1, 'x'));
        const std::vector<api::UploadFile> tooMuch{
            {big, "big.txt", std::filesystem::file_size(big)}};
        auto overLimit = as(session("sam", tcpAddress_), tcpAddress_)
                             ->datasets()
                             .importDataset(settings, tooMuch, {});
        QVERIFY(!overLimit);
        QCOMPARE(overLimit.error().code(), ErrorCode::ResourceExhausted);
        QVERIFY2(overLimit.error().message().find("--max-import-bytes") != std::string::npos,
                 overLimit.error().message().c_str());

        QCOMPARE(datasetFolders(dataDir_), before);
        QVERIFY(!anyFileHolds(dataDir_, kMarker));
    }

    // An auditor exports a bundle over the API; it verifies under the audit key (and no other),
    // and holds the import above. An engineer may not export.
    void auditExportStreamsABundle()
    {
        auto asRita = as(session("rita", tcpAddress_), tcpAddress_);
        auto bundle = asRita->audit().exportAuditBundle({});
        QVERIFY2(bundle, bundle ? "" : bundle.error().message().c_str());
        // Two admins (alice and carol): the export carries no four-eyes warning (issue #27).
        auto exported = asRita->audit().exportAudit({});
        QVERIFY2(exported, exported ? "" : exported.error().message().c_str());
        QVERIFY2(!exported->warning, exported->warning.value_or("").c_str());
        auto keys = asRita->platform().signingKeys();
        QVERIFY(keys);
        audit::VerifyOptions options;
        options.trustedKey = keys->auditPem;
        const audit::VerifyReport report = audit::verifyBundle(*bundle, options);
        QVERIFY2(report.verdict() == audit::Verdict::Verified,
                 report.errors.empty() ? "" : report.errors.front().c_str());
        QVERIFY(std::any_of(report.entries.begin(), report.entries.end(),
                            [](const audit::Entry& entry) {
                                return entry.action == "dataset.import" && entry.actor.id == "sam"
                                       && entry.outcome == audit::Outcome::Ok;
                            }));
        options.trustedKey = keys->manifestsPem;
        QVERIFY(audit::verifyBundle(*bundle, options).verdict() == audit::Verdict::Failed);

        api::AuditSelection imports;
        imports.action = "dataset.import";
        auto filtered = asRita->audit().exportAuditBundle(imports);
        QVERIFY(filtered);
        QVERIFY(filtered->size() < bundle->size());

        auto byEngineer =
            as(session("bob", tcpAddress_), tcpAddress_)->audit().exportAuditBundle({});
        QVERIFY(!byEngineer);
        QCOMPARE(byEngineer.error().code(), ErrorCode::PermissionDenied);
    }

    // Training runs only as an approved job: the direct call is refused and audited. A job run on
    // the daemon's machine gets exactly the data keys of its dataset's shards (never the datasets
    // KEK) and the checkpoints key (never the audit log's or the manifests'). The checkpoints
    // verify under the checkpoints key, and sampling works.
    void trainingReleasesOnlyTheRunsKeys()
    {
        const std::filesystem::path corpus = tmp_.path().toStdString() + "/corpus.txt";
        std::string text;
        for (int i = 0; text.size() < 30000; ++i)
            text += "Record " + std::to_string(i) + " of a small corpus for the daemon.\n\n";
        writeFile(corpus, text);
        auto asSam = as(session("sam", tcpAddress_), tcpAddress_);
        api::ImportSettings settings;
        settings.name = "corpus";
        settings.format = "text-records";
        settings.tokensPerShard = 4096;  // several shards, each with its own key
        auto imported = asSam->datasets().importDataset(
            settings, {{corpus, "corpus.txt", std::filesystem::file_size(corpus)}}, {});
        QVERIFY2(imported, imported ? "" : imported.error().message().c_str());

        // No training without an approved job, whoever asks: refused, audited, nothing handed.
        const std::vector<std::string> hyper{
            "--layers", "1", "--heads", "2", "--width",     "16",          "--context", "16",
            "--batch",  "2", "--steps", "3", "--threads=1", "--val-every", "0"};
        auto direct = asSam->training().train("corpus", hyper, {});
        QVERIFY(!direct);
        QCOMPARE(direct.error().code(), ErrorCode::PermissionDenied);
        QVERIFY2(direct.error().message().find("approved job") != std::string::npos,
                 direct.error().message().c_str());
        QVERIFY(!std::filesystem::exists(keysCapture_));
        api::AuditSelection refusals;
        refusals.action = "train.direct";
        auto asRita = as(session("rita", tcpAddress_), tcpAddress_);
        auto refusalBundle = asRita->audit().exportAuditBundle(refusals);
        QVERIFY(refusalBundle);
        auto auditKeys = asRita->platform().signingKeys();
        QVERIFY(auditKeys);
        audit::VerifyOptions verifyOptions;
        verifyOptions.trustedKey = auditKeys->auditPem;
        const audit::VerifyReport refusalReport =
            audit::verifyBundle(*refusalBundle, verifyOptions);
        QVERIFY(refusalReport.verdict() == audit::Verdict::Verified);
        QVERIFY2(std::any_of(refusalReport.entries.begin(), refusalReport.entries.end(),
                             [](const audit::Entry& entry) {
                                 return entry.action == "train.direct" && entry.actor.id == "sam"
                                        && entry.outcome == audit::Outcome::Denied;
                             }),
                 "the refused direct training is in the audit log, denied");

        // bob may not read the corpus yet: his job is rejected by the vetting.
        auto asBob = as(session("bob", tcpAddress_), tcpAddress_);
        const std::string spec = "spec_version: 1\nname: corpus-small\nproject: demo\n"
                                 "dataset: corpus\nmodel: {layers: 1, heads: 2, width: 16, "
                                 "context: 16}\nschedule: {steps: 3, batch: 2}\n"
                                 "resources: {pool: cpu, device: cpu, threads: 1}\n";
        auto unreadable = asBob->jobs().submitJob(spec);
        QVERIFY(unreadable);
        QCOMPARE(unreadable->state, std::string("rejected"));
        QVERIFY(!std::filesystem::exists(keysCapture_));
        QVERIFY(asSam->datasets().grantRead("corpus", "bob"));
        auto job = asBob->jobs().submitJob(spec);
        QVERIFY2(job, job ? "" : job.error().message().c_str());
        QCOMPARE(job->state, std::string("vetted"));
        auto approved = as(session("ann", tcpAddress_), tcpAddress_)
                            ->jobs()
                            .approveJob(job->id, job->specSha256);
        QVERIFY2(approved, approved ? "" : approved.error().message().c_str());

        std::vector<std::string> metrics;
        auto trained = asBob->training().runJob(
            job->id, [&](const std::string& line) { metrics.push_back(line); });
        QVERIFY2(trained, trained ? "" : trained.error().message().c_str());
        QCOMPARE(trained->exitCode, 0);
        QVERIFY(trained->checkpoints >= 1);
        QVERIFY(std::any_of(metrics.begin(), metrics.end(), [](const std::string& line) {
            return line.find("\"kind\":\"checkpoint\"") != std::string::npos;
        }));

        // What the trainer was handed.
        std::ifstream captured(keysCapture_, std::ios::binary);
        const std::string released((std::istreambuf_iterator<char>(captured)),
                                   std::istreambuf_iterator<char>());
        auto keys = trainer::parseTrainerKeys(
            std::span(reinterpret_cast<const std::uint8_t*>(released.data()), released.size()));
        QVERIFY2(keys, keys ? "" : keys.error().message().c_str());
        for (const crypto::Kek& kek : keys->keks)
            QCOMPARE(kek.id, std::string("checkpoints"));
        auto manifest = dataset::loadManifest(
            core::datasetFolder(dataDir_ / "datasets", imported->dataset.id), imported->dataset.id);
        QVERIFY(manifest);
        const std::size_t shards = manifest->split(dataset::Split::Train).shards.size()
                                   + manifest->split(dataset::Split::Validation).shards.size();
        QVERIFY(shards >= 3);
        QCOMPARE(keys->dataKeys.size(), shards);
        auto published = asSam->platform().signingKeys();
        QVERIFY(published);
        QVERIFY(keys->signingKey.has_value());
        QCOMPARE(keys->signingKey->publicKey().toPem(), published->checkpointsPem);

        // The run's checkpoints are signed with the checkpoints key, and sampling works.
        auto checkpoints = trainer::listCheckpoints(dataDir_ / "runs" / trained->runId);
        QVERIFY(checkpoints && !checkpoints->empty());
        auto checkpointsKey = crypto::PublicKey::fromPem(published->checkpointsPem);
        QVERIFY(trainer::verifyCheckpointSignature(checkpoints->back(),
                                                   std::span(&*checkpointsKey, 1)));
        auto sampled =
            asSam->training().sample(trained->runId, 0, {"--length", "8", "--prompt", "Record"});
        QVERIFY2(sampled, sampled ? "" : sampled.error().message().c_str());
        QVERIFY(!sampled->text.empty());
        QCOMPARE(sampled->step, checkpoints->back().step);
        // The prompt reached the sampler on its standard input (the text continues it), never
        // on its command line, which every user of the host reads (issue #27, item 4).
        QVERIFY2(sampled->text.starts_with("Record"), sampled->text.c_str());
        std::ifstream argvFile(keysCapture_ + ".argv");
        const std::string samplerArgv((std::istreambuf_iterator<char>(argvFile)),
                                      std::istreambuf_iterator<char>());
        QVERIFY2(samplerArgv.find("\n--prompt-stdin\n") != std::string::npos, samplerArgv.c_str());
        QVERIFY2(samplerArgv.find("Record") == std::string::npos, samplerArgv.c_str());
        // dave may not read the corpus, so he may not sample its model either.
        auto sampledByDave =
            as(session("dave", tcpAddress_), tcpAddress_)->training().sample(trained->runId, 0, {});
        QVERIFY(!sampledByDave);
        QCOMPARE(sampledByDave.error().code(), ErrorCode::PermissionDenied);
        // A caller passes the sampler its options only, never a path.
        auto withPath =
            asSam->training().sample(trained->runId, 0, {"--checkpoint", "/tmp/elsewhere"});
        QVERIFY(!withPath);
        QCOMPARE(withPath.error().code(), ErrorCode::InvalidArgument);
    }

    // The daemon is the single writer: while it serves the data directory nobody else opens it
    // (a local command would be a second writer of the database and the audit log).
    void dataDirectoryHasOneWriter()
    {
        core::KeyringUnlock unlock;
        unlock.passphrase = [] {
            return crypto::SecretBytes::fromBytes(secret(kPassphrase).bytes());
        };
        auto second = core::DataDirectory::open(dataDir_, unlock);
        QVERIFY(!second);
        QCOMPARE(second.error().code(), ErrorCode::Io);
        QVERIFY2(second.error().message().find("sealtrainctl stop") != std::string::npos,
                 second.error().message().c_str());
    }

    // Jobs through the daemon: dave submits a YAML spec, vetted at once; he may not approve;
    // ann approves only the spec hash she reviewed; dave lists and cancels.
    void jobsThroughTheDaemon()
    {
        auto asSam = as(session("sam", tcpAddress_), tcpAddress_);
        QVERIFY(asSam->datasets().grantRead("notes", "dave"));
        auto asDave = as(session("dave", tcpAddress_), tcpAddress_);
        const std::string spec = "spec_version: 1\nname: notes-small\nproject: demo\n"
                                 "dataset: notes\nmodel: {layers: 1, heads: 2, width: 16, "
                                 "context: 8}\nschedule: {steps: 3, batch: 2}\n"
                                 "resources: {pool: cpu, device: cpu, threads: 1}\n";
        auto job = asDave->jobs().submitJob(spec);
        QVERIFY2(job, job ? "" : job.error().message().c_str());
        QCOMPARE(job->state, std::string("vetted"));
        QCOMPARE(job->submitter, std::string("dave"));
        // spec, dataset, classification, caps, cost (issue #54), budget.
        QCOMPARE(job->vetting.size(), std::size_t{6});
        QCOMPARE(job->vetting.at(4).check, std::string("cost"));
        QVERIFY2(job->vetting.at(4).ok, job->vetting.at(4).detail.c_str());
        auto broken = asDave->jobs().submitJob("spec_version: 1\nname: x\n");
        QVERIFY(!broken);
        QCOMPARE(broken.error().code(), ErrorCode::InvalidArgument);
        QVERIFY2(broken.error().message().find("'project'") != std::string::npos,
                 broken.error().message().c_str());

        auto byDave = asDave->jobs().approveJob(job->id, job->specSha256);
        QVERIFY(!byDave);
        QCOMPARE(byDave.error().code(), ErrorCode::PermissionDenied);
        auto asAnn = as(session("ann", tcpAddress_), tcpAddress_);
        auto shown = asAnn->jobs().showJob(job->id);
        QVERIFY(shown);
        QCOMPARE(shown->specSha256, job->specSha256);
        auto otherSpec = asAnn->jobs().approveJob(job->id, std::string(64, 'a'));
        QVERIFY(!otherSpec);
        QCOMPARE(otherSpec.error().code(), ErrorCode::FailedPrecondition);  // the spec's state
        auto approved = asAnn->jobs().approveJob(job->id, shown->specSha256);
        QVERIFY2(approved, approved ? "" : approved.error().message().c_str());
        QCOMPARE(approved->state, std::string("queued"));  // approval queues it for the workers
        QCOMPARE(approved->approver, std::string("ann"));
        auto listed = asDave->jobs().listJobs();
        QVERIFY(listed);
        // The project's jobs: bob's two from the training test, and dave's one so far.
        QCOMPARE(std::count_if(listed->begin(), listed->end(),
                               [](const api::JobSummary& listedJob) {
                                   return listedJob.submitter == "dave";
                               }),
                 std::ptrdiff_t{1});

        // Only the submitter runs it, and only once approved as it is: ann may read the dataset
        // too (an engineer's role and a read grant), and is still refused.
        QVERIFY(as(session("carol", tcpAddress_), tcpAddress_)
                    ->access()
                    .grantRole("ann", "engineer", ""));
        QVERIFY(asSam->datasets().grantRead("notes", "ann"));
        auto byAnn = asAnn->training().runJob(job->id, {});
        QVERIFY(!byAnn);
        QCOMPARE(byAnn.error().code(), ErrorCode::PermissionDenied);
        QVERIFY2(byAnn.error().message().find("submitter") != std::string::npos,
                 byAnn.error().message().c_str());
        auto unapproved = asDave->jobs().submitJob(spec);
        QVERIFY(unapproved);
        auto notApproved = asDave->training().runJob(unapproved->id, {});
        QVERIFY(!notApproved);
        QCOMPARE(notApproved.error().code(), ErrorCode::PermissionDenied);
        unapprovedJob_ = unapproved->id;  // cleanupTestCase: one refusal, no key release
        // Issue #54: sampling decides access before it says anything about the job. bob may not
        // read its dataset: refused, not told that it has no checkpoint yet; dave may: told so.
        auto asBob = as(session("bob", tcpAddress_), tcpAddress_);
        auto unreadable = asBob->training().sampleJob(unapproved->id, 0, {});
        QVERIFY(!unreadable);
        QCOMPARE(unreadable.error().code(), ErrorCode::PermissionDenied);
        QVERIFY2(unreadable.error().message().find("checkpoint") == std::string::npos,
                 unreadable.error().message().c_str());
        auto noCheckpoint = asDave->training().sampleJob(unapproved->id, 0, {});
        QVERIFY(!noCheckpoint);
        QCOMPARE(noCheckpoint.error().code(), ErrorCode::NotFound);
        // Options out of range are refused by core, audited with the caller (cleanupTestCase).
        auto tooHot = asDave->training().sampleJob(unapproved->id, 0, {"--temperature", "-1"});
        QVERIFY(!tooHot);
        QCOMPARE(tooHot.error().code(), ErrorCode::InvalidArgument);
        std::vector<std::string> metrics;
        auto ran = asDave->training().runJob(
            job->id, [&](const std::string& line) { metrics.push_back(line); });
        QVERIFY2(ran, ran ? "" : ran.error().message().c_str());
        QCOMPARE(ran->exitCode, 0);
        QVERIFY(ran->checkpoints >= 1);
        QVERIFY(!metrics.empty());
        auto done = asDave->jobs().showJob(job->id);
        QVERIFY(done);
        QCOMPARE(done->state, std::string("succeeded"));
        auto again = asDave->training().runJob(job->id, {});
        QVERIFY(!again);
        auto cancelled = asDave->jobs().cancelJob(unapproved->id, "not needed after all");
        QVERIFY(cancelled);
        QCOMPARE(cancelled->state, std::string("cancelled"));
    }

    // SIGTERM: the daemon finishes, signs a head and exits 0; its audit log holds the refusals.
    void cleanupTestCase()
    {
        if (daemon_.processId() <= 0)
            QFAIL("The daemon never started.");
        ::kill(static_cast<pid_t>(daemon_.processId()), SIGTERM);
        QVERIFY(daemon_.waitForFinished(30000));
        QCOMPARE(daemon_.exitStatus(), QProcess::NormalExit);
        QCOMPARE(daemon_.exitCode(), 0);

        core::KeyringUnlock unlock;
        unlock.passphrase = [] {
            return crypto::SecretBytes::fromBytes(secret(kPassphrase).bytes());
        };
        auto platform = core::DataDirectory::open(dataDir_, unlock);
        QVERIFY2(platform, platform ? "" : platform.error().message().c_str());
        const auto& audit = (*platform)->controlPlane().auditLog();
        auto stored = audit.store().readEntries(0, audit.size());
        QVERIFY(stored);
        const auto denied = [&](const std::string& action, const std::string& actor) {
            return std::any_of(stored->begin(), stored->end(), [&](const auto& bytes) {
                auto entry = audit::decodeEntry(bytes.bytes);
                return entry && entry->action == action && entry->actor.id == actor
                       && entry->outcome == audit::Outcome::Denied;
            });
        };
        QVERIFY(denied("user.list", "bob"));
        // Issue #27, item 7: a non-submitter's RunJob is refused and audited.
        QVERIFY(denied("job.run", "ann"));
        // Issue #54: the unapproved job's RunJob is one refusal naming dave, decided before any
        // key release was recorded; the control plane never tried to start it.
        QVERIFY(unapprovedJob_ != 0);
        const std::string unapproved = std::to_string(unapprovedJob_);
        int runRefusals = 0;
        int sampleFailures = 0;
        for (const auto& bytes : *stored) {
            auto entry = audit::decodeEntry(bytes.bytes);
            QVERIFY(entry);
            if (entry->action == "job.run" && entry->target.id == unapproved) {
                QCOMPARE(entry->actor.id, std::string("dave"));
                QCOMPARE(entry->outcome, audit::Outcome::Denied);
                ++runRefusals;
            }
            QVERIFY2(!(entry->action == "job.start" && entry->target.id == unapproved),
                     "the unapproved job was tried");
            QVERIFY2(!(entry->action == "dataset.read_key_release"
                       && testing::detailOf(*entry, "purpose") == "job " + unapproved),
                     "a key release was recorded for the unapproved job");
            if (entry->action == "model.sample" && entry->actor.id == "dave"
                && entry->target.id == unapproved && entry->outcome == audit::Outcome::Failed)
                ++sampleFailures;
        }
        QCOMPARE(runRefusals, 1);
        QVERIFY(denied("model.sample", "bob"));
        QCOMPARE(sampleFailures, 2);  // no checkpoint yet; a temperature below 0
    }
};

QTEST_GUILESS_MAIN(TestApiDaemon)
#include "test_api_daemon.moc"
