// A workstation driven through sealtrainctl in-process, as a person uses it: `init` makes the data
// directory and names it in a client profile of this test's own, `start` runs sealtrain-control on
// it (the real daemon, on a Unix socket in the profile's run folder), and every other command is a
// client of that control plane, as `--as USER` from the same profile. The daemon is stopped when
// the site goes.
#pragma once

#include "../support/totp_clock.h"
#include "../unit/core_fixture.h"
#include "ctl_runner.h"

#include "sealtrain/api/profile.h"
#include "sealtrain/audit/bundle.h"
#include "sealtrain/core/identity/totp.h"

#include <QTemporaryDir>
#include <QThread>
#include <QtTest/QtTest>

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

namespace sealtrain::testing {

inline constexpr const char* kSitePassphrase = "correct horse battery staple";
inline constexpr const char* kSitePassword = "a long enough password";

inline std::string readFile(const std::filesystem::path& path)
{
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline unsigned modeOf(const std::filesystem::path& path)
{
    struct stat info {};
    return ::stat(path.c_str(), &info) == 0 ? (info.st_mode & 0777U) : 0U;
}

// Exit 1 and one sentence on standard error that contains `contains`.
inline void verifyOneSentenceError(const CtlOutcome& outcome, const std::string& contains)
{
    QCOMPARE(outcome.code, ctl::kExitFailure);
    QVERIFY2(outcome.err.find(contains) != std::string::npos, outcome.err.c_str());
    const std::string prefix = "sealtrainctl: ";
    QVERIFY(outcome.err.starts_with(prefix));
    std::string sentence = outcome.err.substr(prefix.size());
    if (!sentence.empty() && sentence.back() == '\n')
        sentence.pop_back();
    QVERIFY2(isOneSentence(sentence), outcome.err.c_str());
}

struct Site {
    QTemporaryDir tmp;
    std::filesystem::path root = tmp.path().toStdString();
    std::string data = (root / "data").string();
    std::string client = (root / "client").string();
    std::string passphraseFile = secretFile("passphrase", kSitePassphrase);
    std::string passwordFile = secretFile("password", kSitePassword);
    std::map<std::string, std::string> uris;
    TotpCodes codes;
    std::vector<std::string> admins;  // added by addUser

    Site() { ::setenv("SEALTRAIN_CONTROL", SEALTRAIN_CONTROL_TEST_EXECUTABLE, 1); }
    Site(const Site&) = delete;
    Site& operator=(const Site&) = delete;
    ~Site() { (void)api::Profile(client).stopWorkstation(); }

    [[nodiscard]] std::string secretFile(const std::string& name, const std::string& text) const
    {
        const std::string path = (root / name).string();
        std::ofstream(path) << text << '\n';
        ::chmod(path.c_str(), 0600);
        return path;
    }

    [[nodiscard]] std::string uriFile(const std::string& user) const
    {
        return (root / (user + ".uri")).string();
    }

    // `sealtrainctl init` with alice (or `admin`) as the first admin; Argon2id at its floor.
    CtlOutcome init(const std::string& admin = "alice")
    {
        auto outcome =
            runCtl({"init", "--data-dir", data, "--passphrase-file", passphraseFile, "--admin",
                    admin, "--admin-password-file", passwordFile, "--totp-uri-file", uriFile(admin),
                    "--argon2-ops", "2", "--argon2-mem-mib", "64", "--client-dir", client});
        if (outcome.code == ctl::kExitOk)
            uris[admin] = readFile(uriFile(admin));
        return outcome;
    }

    CtlOutcome start() { return plain({"start", "--passphrase-file", passphraseFile}); }
    // With options for sealtrain-control, e.g. {"--audit-witness", "file:/…"}.
    CtlOutcome start(const std::vector<std::string>& daemonOptions)
    {
        std::vector<std::string> arguments{
            "start", "--passphrase-file", passphraseFile, "--client-dir", client, "--"};
        arguments.insert(arguments.end(), daemonOptions.begin(), daemonOptions.end());
        return runCtl(arguments);
    }
    // A witness outside the data directory, as a deployment that passes the log controls of the
    // compliance report keeps one (data-directory.md, "Witnesses").
    [[nodiscard]] std::vector<std::string> outsideWitness() const
    {
        return {"--audit-witness", "file:" + (root / "outside.witness").string()};
    }
    CtlOutcome stop() { return plain({"stop"}); }

    // init, start and alice signed in: where most tests begin.
    void open(const std::vector<std::string>& daemonOptions = {})
    {
        const auto made = init();
        QVERIFY2(made.code == ctl::kExitOk, made.err.c_str());
        const auto started = daemonOptions.empty() ? start() : start(daemonOptions);
        QVERIFY2(started.code == ctl::kExitOk, started.err.c_str());
        const auto in = signIn("alice");
        QVERIFY2(in.code == ctl::kExitOk, in.err.c_str());
    }

    // `args` with this site's profile.
    CtlOutcome plain(std::vector<std::string> args) const
    {
        args.insert(args.end(), {"--client-dir", client});
        return runCtl(args);
    }

    // `args` with this site's profile, as `as` (no --as when empty: the profile's default).
    CtlOutcome ctl(std::vector<std::string> args, const std::string& as = "alice") const
    {
        if (!as.empty())
            args.insert(args.end(), {"--as", as});
        return plain(std::move(args));
    }

    // The next code of `user`: a step no earlier sign-in of theirs spent, the test clock moved
    // forward when it must be (tests/support/totp_clock.h).
    std::string code(const std::string& user) { return codes.next(user, uris.at(user)); }

    CtlOutcome signIn(const std::string& user, const std::string& password = {})
    {
        return plain({"sign-in", "--user", user, "--password-file",
                      password.empty() ? passwordFile : password, "--totp-code", code(user)});
    }

    // alice creates `user` and gets an enrolment code; `user` sets their password with it and
    // gets their TOTP URI, written to `uri`.
    bool enrol(const std::string& user, const std::string& uri)
    {
        const std::string codeFile = (root / (user + ".enrol")).string();
        auto made = ctl({"user", "create", user, "--code-file", codeFile});
        if (made.code != ctl::kExitOk) {
            qWarning("%s", made.err.c_str());
            return false;
        }
        auto set = plain({"sign-in", "--user", user, "--reset-code-file", codeFile,
                          "--password-file", passwordFile, "--totp-uri-file", uri});
        if (set.code != ctl::kExitOk)
            qWarning("%s", set.err.c_str());
        return set.code == ctl::kExitOk;
    }

    // Creates `user` as alice, grants `role` (a second admin confirming a separated duty when
    // there is one) and signs them in.
    void addUser(const std::string& user, const std::string& role)
    {
        const auto uri = uriFile(user);
        QVERIFY2(enrol(user, uri), "enrolment failed");
        uris[user] = readFile(uri);
        if (!role.empty()) {
            auto granted = ctl({"grant", "add", user, role});
            QVERIFY2(granted.code == ctl::kExitOk, granted.err.c_str());
            if (granted.out.starts_with("Requested")) {
                QVERIFY(!admins.empty());
                auto second = ctl({"grant", "add", user, role}, admins.front());
                QVERIFY2(second.code == ctl::kExitOk, second.err.c_str());
                QVERIFY2(second.out.starts_with("Granted"), second.out.c_str());
            }
        }
        auto in = signIn(user);
        QVERIFY2(in.code == ctl::kExitOk, in.err.c_str());
        if (role == "admin")
            admins.push_back(user);
    }

    // The whole log as `auditor` exports it (an auditor's bundle, decoded and verified).
    [[nodiscard]] std::vector<audit::Entry> auditEntries(const std::string& auditor) const
    {
        const std::string bundle = (root / "entries.bundle").string();
        std::filesystem::remove(bundle);
        const auto exported = ctl({"audit", "export", "--out", bundle}, auditor);
        if (exported.code != ctl::kExitOk)
            qFatal("audit export: %s", exported.err.c_str());
        return audit::verifyBundle(readFile(bundle), {}).entries;
    }

    // The newest entry of `action` in `auditor`'s export.
    [[nodiscard]] audit::Entry lastEntry(const std::string& action,
                                         const std::string& auditor) const
    {
        const auto entries = auditEntries(auditor);
        for (auto it = entries.rbegin(); it != entries.rend(); ++it)
            if (it->action == action)
                return *it;
        qFatal("no %s entry", action.c_str());
    }
};

}  // namespace sealtrain::testing
