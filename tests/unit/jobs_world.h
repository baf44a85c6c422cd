// A control plane with the people of a job's life (alice the admin, sam the steward, eve and ivy
// engineers, ann an approver, rita an auditor; ivy also approves) and two datasets eve and ivy may
// read (notes, internal; records, phi), for the tests of jobs and their states.
#pragma once

#include "core_fixture.h"
#include "sealtrain/core/control_plane.h"
#include "sealtrain/core/jobs/jobs.h"

#include <map>
#include <string>

namespace sealtrain::testing {

inline constexpr const char* kPassword = "a long enough passphrase";

// A spec for dataset `dataset` on pool `pool`, with `extra` fields spliced in at the top level.
inline std::string spec(const std::string& name, const std::string& dataset,
                        const std::string& pool, const std::string& extra = "")
{
    return R"({"spec_version": 1, "name": ")" + name + R"(", "project": "demo", "dataset": ")"
           + dataset + R"(", "model": {"layers": 2, "heads": 2, "width": 32, "context": 16},
        "schedule": {"steps": 10, "batch": 2}, "resources": {"pool": ")"
           + pool + R"("})" + extra + "}";
}

struct JobsWorld {
    testing::ControlPlaneFixture t;
    std::map<std::string, std::string> uris;
    std::map<std::string, std::string> sessions;
    crypto::Kek kek{"datasets", 1, crypto::SecretBytes::random(32).value()};

    JobsWorld()
    {
        uris["alice"] = t.plane->identity().init("alice", secret(kPassword))->otpauthUri;
        const std::string admin = session("alice");
        for (const auto& [user, role] : std::map<std::string, std::string>{{"sam", "steward"},
                                                                           {"eve", "engineer"},
                                                                           {"ann", "approver"},
                                                                           {"rita", "auditor"},
                                                                           {"ivy", "engineer"}}) {
            uris[user] =
                testing::enrolUser(t.plane->identity(), admin, user, secret(kPassword))->otpauthUri;
            if (!t.plane->access().grantRole(admin, user, role, "").ok())
                qFatal("cannot grant %s", role.c_str());
        }
        // ivy both submits and approves: the four-eyes rule, not her roles, stops her approving
        // her own job.
        if (!t.plane->access().grantRole(admin, "ivy", "approver", "").ok())
            qFatal("cannot grant approver to ivy");
        // Two datasets eve may read: internal notes and phi records.
        testing::importTextDataset(t, session("sam"), "notes", "internal",
                                   "first note\n\nsecond note\n", kek);
        testing::importTextDataset(t, session("sam"), "records", "phi",
                                   "patient one\n\npatient two\n", kek);
        for (const std::string name : {"notes", "records"}) {
            for (const char* reader : {"eve", "ivy"}) {
                if (!t.plane->datasets().grantRead(session("sam"), name, reader).ok())
                    qFatal("cannot grant %s", name.c_str());
            }
        }
    }

    const std::string& session(const std::string& user)
    {
        if (sessions.count(user) == 0)
            sessions[user] = t.signIn(user, kPassword, uris[user]);
        return sessions[user];
    }

    [[nodiscard]] core::Jobs& jobs() const { return t.plane->jobs(); }

    // bea, a second admin (granted while alice is the only one, so at once): from here on
    // changes that give a separated duty take two admins.
    void addSecondAdmin()
    {
        uris["bea"] =
            testing::enrolUser(t.plane->identity(), session("alice"), "bea", secret(kPassword))
                ->otpauthUri;
        if (!t.plane->access().grantRole(session("alice"), "bea", "admin", "").ok())
            qFatal("cannot grant admin to bea");
    }

    // A second version of `name` with other records, readable by eve.
    bool importNewVersion(const std::string& name)
    {
        testing::importTextDataset(t, session("sam"), name, "internal",
                                   "a third note\n\na fourth note\n", kek);
        return t.plane->datasets().grantRead(session("sam"), name, "eve").ok();
    }

    [[nodiscard]] audit::Entry last() const { return t.lastEntry(); }
};

}  // namespace sealtrain::testing
