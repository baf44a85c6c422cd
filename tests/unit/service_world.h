// A control plane for the service tests: alice the admin, and one user each for the engineer,
// approver and auditor roles (more with addUser), all with the same password; sessions signed in on
// an injected clock, and the newest audit entry, to check what was recorded.
#pragma once

#include "core_fixture.h"

#include <QtTest/QtTest>

#include <map>
#include <string>
#include <vector>

namespace sealtrain::testing {

inline constexpr const char* kPassword = "a long enough passphrase";

struct ServiceWorld {
    ControlPlaneFixture t;
    std::string admin;
    std::map<std::string, std::string> uris;

    explicit ServiceWorld(core::ControlPlaneOptions options = {})
        : t(std::move(options))
    {
        auto enrollment = t.plane->identity().init("alice", secret(kPassword));
        uris["alice"] = enrollment->otpauthUri;
        admin = t.signIn("alice", kPassword, uris["alice"]);
        for (const std::string role : {"engineer", "approver", "auditor"})
            addUser(role + "-user", role);
    }

    // Creates `user` as alice and grants them `role` globally; a grant that waits for a second
    // admin (issue #27) is made by the first admin added after alice.
    void addUser(const std::string& user, const std::string& role)
    {
        uris[user] =
            testing::enrolUser(t.plane->identity(), admin, user, secret(kPassword))->otpauthUri;
        auto granted = t.plane->access().grantRole(admin, user, role, "");
        QVERIFY(granted.ok());
        if (granted->pending) {
            QVERIFY(!admins.empty());
            auto second = t.plane->access().grantRole(session(admins.front()), user, role, "");
            QVERIFY(second.ok() && !second->pending);
        }
        if (role == "admin")
            admins.push_back(user);
    }

    std::vector<std::string> admins;  // added by addUser, alice not included

    std::string session(const std::string& user) { return t.signIn(user, kPassword, uris[user]); }

    // `user`'s TOTP code at the clock's time.
    std::string totpCode(const std::string& user)
    {
        return core::totpCode(totpSecretFromUri(uris[user]), core::totpStep(t.clock.now()));
    }

    // The newest committed entry.
    [[nodiscard]] audit::Entry last() const { return t.lastEntry(); }
};

// `result` is a refusal in one sentence, and the newest entry records it: `action`, denied, with
// the same sentence as its reason.
template <typename T>
void verifyDenied(ServiceWorld& w, const Result<T>& result, const std::string& action)
{
    QVERIFY(!result.ok());
    QVERIFY(isOneSentence(result.error().message()));
    const auto entry = w.last();
    QCOMPARE(QString::fromStdString(entry.action), QString::fromStdString(action));
    QCOMPARE(entry.outcome, audit::Outcome::Denied);
    QCOMPARE(entry.reason, result.error().message());
}

}  // namespace sealtrain::testing
