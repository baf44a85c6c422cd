// A data directory for sealtrainctl tests, driven in-process: a master key file (or a keyring
// passphrase), alice as the admin, and users whom alice creates and grants a role, each signed
// in with a session file.
#pragma once

#include "core_fixture.h"
#include "ctl_runner.h"

#include "sealtrain/core/totp.h"

#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <sys/stat.h>
#include <vector>

namespace sealtrain::testing {

inline void writeFile(const std::filesystem::path& path, const std::string& text)
{
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << text;
}

inline std::string readText(const std::filesystem::path& path)
{
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class CtlDataDir {
public:
    QTemporaryDir dir;
    std::filesystem::path root;
    std::string data;
    std::string masterKey;
    std::string passwordFile;
    std::vector<std::string> unlock;  // how every command unlocks the keyring

    // Generates the master key, runs `init` with alice as the admin and signs her in.
    void init()
    {
        QVERIFY(dir.isValid());
        root = dir.path().toStdString();
        masterKey = (root / "master.key").string();
        QCOMPARE(runCtl({"keyfile", "generate", "--id", "master", "--out", masterKey}).code, 0);
        initWith({"--master-key-file", masterKey}, {});
    }

    // The same with the keyring under the passphrase in `passphraseFile` (Argon2id at its
    // floor, for speed).
    void initWithPassphrase(const std::string& passphraseFile)
    {
        QVERIFY(dir.isValid());
        root = dir.path().toStdString();
        initWith({"--passphrase-file", passphraseFile},
                 {"--argon2-ops", "2", "--argon2-mem-mib", "64"});
    }

    // `args` run as `user`: the unlock and session options go after the command's `words`
    // ("train" is one word, "user create" two).
    [[nodiscard]] std::vector<std::string>
    as(const std::string& user, std::vector<std::string> args, std::ptrdiff_t words = 2) const
    {
        std::vector<std::string> options{"--data-dir", data};
        options.insert(options.end(), unlock.begin(), unlock.end());
        options.insert(options.end(), {"--session-file", sessionFile(user)});
        args.insert(args.begin() + words, options.begin(), options.end());
        return args;
    }

    // Creates `user` as alice, grants `role` and signs them in.
    void addUser(const std::string& user, const std::string& role)
    {
        const auto uri = root / (user + ".uri");
        const auto codeFile = root / (user + ".code");
        const auto made =
            runCtl(as("alice", {"user", "create", "--code-file", codeFile.string(), user}));
        QVERIFY2(made.code == 0, made.err.c_str());
        // The user sets their own password with the enrolment code and gets their TOTP URI.
        std::vector<std::string> enrol{"session", "sign-in", "--data-dir", data};
        enrol.insert(enrol.end(), unlock.begin(), unlock.end());
        enrol.insert(enrol.end(),
                     {"--user", user, "--reset-code-file", codeFile.string(), "--password-file",
                      passwordFile, "--totp-uri-file", uri.string()});
        const auto set = runCtl(enrol);
        QVERIFY2(set.code == 0, set.err.c_str());
        const auto granted = runCtl(as("alice", {"grant", "add", user, role}));
        QVERIFY2(granted.code == 0, granted.err.c_str());
        signIn(user, uri);
    }

private:
    void initWith(std::vector<std::string> unlockOptions, const std::vector<std::string>& extra)
    {
        unlock = std::move(unlockOptions);
        data = (root / "data").string();
        passwordFile = (root / "password").string();
        writeFile(passwordFile, "a long enough passphrase\n");
        ::chmod(passwordFile.c_str(), 0600);
        const auto uri = root / "alice.uri";
        std::vector<std::string> command{"init", "--data-dir", data};
        command.insert(command.end(), unlock.begin(), unlock.end());
        command.insert(command.end(), {"--admin", "alice", "--admin-password-file", passwordFile,
                                       "--totp-uri-file", uri.string()});
        command.insert(command.end(), extra.begin(), extra.end());
        const auto done = runCtl(command);
        QVERIFY2(done.code == 0, done.err.c_str());
        signIn("alice", uri);
    }

    [[nodiscard]] std::string sessionFile(const std::string& user) const
    {
        return (root / (user + ".session")).string();
    }

    void signIn(const std::string& user, const std::filesystem::path& uriFile)
    {
        const auto code = core::totpCode(totpSecretFromUri(readText(uriFile)),
                                         core::totpStep(std::chrono::system_clock::now()));
        std::vector<std::string> command{"session", "sign-in", "--data-dir", data};
        command.insert(command.end(), unlock.begin(), unlock.end());
        command.insert(command.end(), {"--session-file", sessionFile(user), "--user", user,
                                       "--password-file", passwordFile, "--totp-code", code});
        const auto done = runCtl(command);
        QVERIFY2(done.code == 0, done.err.c_str());
    }
};

}  // namespace sealtrain::testing
