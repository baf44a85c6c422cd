// sealtrain-control's data directory tools (docs/formats/control-tools.md, issue #50 item 3): the
// daemon's binary creates, describes and checks data directories for clients that link no core/.
// Tried as a client and an attacker would: secrets only on standard input (never in argv), a
// refusal's one sentence and code, nothing left behind by a refused init, an existing directory
// untouched, and the client library's reading of a tool that answers nothing or lies.
#include "sealtrain/api/data_directory_tools.h"

#include <QProcess>
#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <nlohmann/json.hpp>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

using namespace sealtrain;

namespace {

struct ToolRun {
    int code = -1;
    std::vector<nlohmann::json> lines;  // standard output, one JSON object a line
    std::string err;
};

ToolRun runTool(const QStringList& arguments, const QByteArray& input,
                const QProcessEnvironment& environment = QProcessEnvironment::systemEnvironment())
{
    QProcess tool;
    tool.setProcessEnvironment(environment);
    tool.start(QStringLiteral(SEALTRAIN_CONTROL_EXECUTABLE), arguments);
    tool.write(input);
    tool.closeWriteChannel();
    if (!tool.waitForFinished(120000))
        return {};
    ToolRun run{tool.exitCode(), {}, tool.readAllStandardError().toStdString()};
    for (const QByteArray& line : tool.readAllStandardOutput().split('\n'))
        if (!line.isEmpty())
            run.lines.push_back(nlohmann::json::parse(line.toStdString()));
    return run;
}

std::string readText(const std::filesystem::path& path)
{
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
}

crypto::SecretBytes secret(std::string_view text)
{
    return crypto::SecretBytes::fromBytes(
               {reinterpret_cast<const std::uint8_t*>(text.data()), text.size()})
        .value();
}

// The fastest Argon2id the tool accepts (its floor), so that each init takes a moment.
QStringList fastArgon2()
{
    return {"--argon2-ops", "2", "--argon2-mem-mib", "64"};
}

}  // namespace

class TestControlTools : public QObject {
    Q_OBJECT

private slots:
    void initCreatesDescribesAndRefusesToOverwrite()
    {
        QTemporaryDir dir;
        const std::filesystem::path data = dir.filePath("data").toStdString();
        auto run = runTool(QStringList{"init", "--data-dir", QString::fromStdString(data.string()),
                                       "--admin", "alice"}
                               + fastArgon2(),
                           "keyring passphrase one\nwinter orchid 42\n");
        QCOMPARE(run.code, 0);
        QCOMPARE(run.lines.size(), std::size_t{1});
        const auto& result = run.lines.back().at("result");
        QCOMPARE(result.at("admin").get<std::string>(), std::string("alice"));
        QVERIFY(result.at("otpauth_uri").get<std::string>().starts_with("otpauth://totp/"));
        const auto fingerprint = result.at("ca_fingerprint").get<std::string>();
        struct stat info {};
        QCOMPARE(::stat(data.c_str(), &info), 0);
        QCOMPARE(info.st_mode & 0777U, 0700U);

        // describe reads the same CA; a folder that is no data directory is NotFound.
        run = runTool({"describe", "--data-dir", QString::fromStdString(data.string())}, {});
        QCOMPARE(run.code, 0);
        QCOMPARE(run.lines.back().at("result").at("ca_fingerprint").get<std::string>(),
                 fingerprint);
        run = runTool({"describe", "--data-dir", dir.path()}, {});
        QCOMPARE(run.code, 1);
        QCOMPARE(run.lines.back().at("code").get<std::string>(), std::string("not-found"));

        // A second init over it is refused, and the first directory is as it was.
        const std::string caBefore = readText(data / "ca.crt");
        run = runTool(QStringList{"init", "--data-dir", QString::fromStdString(data.string()),
                                  "--admin", "mallory"}
                          + fastArgon2(),
                      "another passphrase\nsummer fjord 77\n");
        QCOMPARE(run.code, 1);
        QCOMPARE(run.lines.back().at("code").get<std::string>(), std::string("already-exists"));
        QCOMPARE(readText(data / "ca.crt"), caBefore);
    }

    // No secret on standard input: refused in one sentence that says what to give, and nothing
    // is made. A passphrase without the admin's password is refused the same way.
    void missingSecretsAreRefusedAndLeaveNothing()
    {
        QTemporaryDir dir;
        const QString data = dir.filePath("data");
        auto run =
            runTool(QStringList{"init", "--data-dir", data, "--admin", "alice"} + fastArgon2(), {});
        QCOMPARE(run.code, 1);
        const auto& error = run.lines.back();
        QCOMPARE(error.at("code").get<std::string>(), std::string("invalid-argument"));
        QVERIFY2(error.at("error").get<std::string>().find("--master-key-file")
                     != std::string::npos,
                 error.dump().c_str());
        QVERIFY(!std::filesystem::exists(data.toStdString()));

        run = runTool(QStringList{"init", "--data-dir", data, "--admin", "alice"} + fastArgon2(),
                      "only the passphrase\n");
        QCOMPARE(run.code, 1);
        QVERIFY(run.lines.back().at("error").get<std::string>().find("first admin's password")
                != std::string::npos);
        QVERIFY(!std::filesystem::exists(data.toStdString()));
    }

    // The test clock (issue #51): the release build refuses to serve while
    // SEALTRAIN_TEST_TOTP_CLOCK is set, before it reads the passphrase or opens the directory, and
    // writes no ready file; the test build serves the same directory with the same environment
    // and says on standard error that it is one.
    void releaseBuildRefusesTheTestClock()
    {
        QTemporaryDir dir;
        const QString data = dir.filePath("data");
        QCOMPARE(runTool(QStringList{"init", "--data-dir", data, "--admin", "alice"} + fastArgon2(),
                         "keyring passphrase one\nwinter orchid 42\n")
                     .code,
                 0);
        const QString clock = dir.filePath("totp-clock");
        std::ofstream(clock.toStdString()) << "3600\n";
        const QString ready = dir.filePath("ready.json");
        const QStringList serve{"--data-dir",   data, "--listen", "unix:" + dir.filePath("c.sock"),
                                "--ready-file", ready};
        QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
        environment.insert("SEALTRAIN_TEST_TOTP_CLOCK", clock);

        const auto refused = runTool(serve, "keyring passphrase one\n", environment);
        QCOMPARE(refused.code, 1);
        QVERIFY2(refused.err.find("SEALTRAIN_TEST_TOTP_CLOCK is set, but this sealtrain-control "
                                  "is a release build")
                     != std::string::npos,
                 refused.err.c_str());
        QVERIFY(!QFile::exists(ready));

        QProcess testBuild;
        testBuild.setProcessEnvironment(environment);
        testBuild.start(QStringLiteral(SEALTRAIN_CONTROL_TEST_EXECUTABLE), serve);
        testBuild.write("keyring passphrase one\n");
        testBuild.closeWriteChannel();
        QTRY_VERIFY_WITH_TIMEOUT(QFile::exists(ready) || testBuild.state() == QProcess::NotRunning,
                                 60000);
        testBuild.terminate();  // SIGTERM
        QVERIFY(testBuild.waitForFinished(30000));
        const QByteArray said = testBuild.readAllStandardError();
        QVERIFY2(QFile::exists(ready), said.constData());
        QCOMPARE(testBuild.exitCode(), 0);
        QVERIFY2(said.contains("TEST BUILD"), said.constData());
    }

    void verifyBackupRefusesWhatIsNoBackup()
    {
        QTemporaryDir dir;
        const std::filesystem::path archive = dir.filePath("fake.tar").toStdString();
        std::ofstream(archive) << "not a tar archive";
        const std::filesystem::path key = dir.filePath("key.pem").toStdString();
        std::ofstream(key) << "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEA"
                              "GZ1b5LjvEKUh3P4pk1oCBGkI4AfSaP9UmK8pDsXyTYk=\n"
                              "-----END PUBLIC KEY-----\n";
        const auto run = runTool({"verify-backup", QString::fromStdString(archive.string()),
                                  "--key", QString::fromStdString(key.string())},
                                 {});
        QCOMPARE(run.code, 1);
        QVERIFY(run.lines.back().contains("error"));
        QVERIFY(!run.lines.back().contains("result"));
    }

    void versionsNameTheControlPlanesLibraries()
    {
        const auto versions = api::programVersions(SEALTRAIN_CONTROL_EXECUTABLE);
        QVERIFY2(versions, versions ? "" : versions.error().message().c_str());
        QVERIFY(versions->at("sqlcipher").starts_with("4.")
                || versions->at("sqlcipher").starts_with("3."));
        QVERIFY(!versions->at("grpc").empty());
    }

    // The client library hands secrets on standard input only: a stand-in tool records its
    // arguments and what it read; the passphrase and the password are in the second, never in
    // the first, and the tool's error line comes back with its code.
    void clientHandsSecretsOnStandardInputOnly()
    {
        QTemporaryDir dir;
        const std::filesystem::path folder = dir.path().toStdString();
        const auto tool = folder / "fake-control";
        std::ofstream(tool)
            << "#!/bin/sh\n"
               "printf '%s\\n' \"$@\" > '"
            << (folder / "argv").string()
            << "'\n"
               "cat > '"
            << (folder / "stdin").string()
            << "'\n"
               "echo '{\"progress\": \"ignored without a callback\"}'\n"
               "echo 'not json'\n"
               "echo '{\"error\": \"Refused here.\", \"code\": \"permission-denied\"}'\n"
               "exit 1\n";
        std::filesystem::permissions(tool, std::filesystem::perms::owner_all);
        api::NewDataDirectoryRequest request;
        request.dataDir = folder / "data";
        request.admin = "alice";
        request.passphrase = secret("correct horse battery");
        request.adminPassword = secret("alice's own password");
        const auto created = api::DataDirectoryTools(tool).init(request);
        QVERIFY(!created);
        QCOMPARE(created.error().code(), ErrorCode::PermissionDenied);
        QCOMPARE(created.error().message(), std::string("Refused here."));
        const std::string argv = readText(folder / "argv");
        QVERIFY(argv.starts_with("init\n"));
        QVERIFY(argv.find("alice\n") != std::string::npos);
        QVERIFY(argv.find("correct horse") == std::string::npos);
        QVERIFY(argv.find("own password") == std::string::npos);
        QCOMPARE(readText(folder / "stdin"),
                 std::string("correct horse battery\nalice's own password\n"));
    }

    // A tool that ends without a result line, or answers without the fields this client reads,
    // is an error that says so; never an empty success.
    void aToolThatAnswersNothingOrTooLittleIsAnError()
    {
        QTemporaryDir dir;
        const std::filesystem::path folder = dir.path().toStdString();
        const auto quiet = api::DataDirectoryTools("/bin/true").caFingerprint(folder);
        QVERIFY(!quiet);
        QVERIFY2(quiet.error().message().find("without a result") != std::string::npos,
                 quiet.error().message().c_str());

        const auto tool = folder / "short-answer";
        std::ofstream(tool) << "#!/bin/sh\necho '{\"result\": {\"data_dir\": \"/x\"}}'\n";
        std::filesystem::permissions(tool, std::filesystem::perms::owner_all);
        const auto partial = api::DataDirectoryTools(tool).caFingerprint(folder);
        QVERIFY(!partial);
        QCOMPARE(partial.error().code(), ErrorCode::Internal);
        QVERIFY(partial.error().message().find("does not know") != std::string::npos);
    }
};

QTEST_GUILESS_MAIN(TestControlTools)
#include "test_control_tools.moc"
