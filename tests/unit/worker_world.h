// Shared set-up for the worker and scheduler tests (issue #16): a control plane with a user in
// each role (and vic, who may only list workers), two datasets eve may read (internal notes, phi
// records), a platform CA that signs enrolled workers' certificates, and helpers that enroll a
// worker and put an approved job in the queue.
#pragma once

#include "core_fixture.h"
#include "sealtrain/core/control_plane.h"
#include "sealtrain/core/jobs/scheduling/scheduler.h"
#include "sealtrain/core/workers/workers.h"
#include "sealtrain/crypto/certificate_authority.h"
#include "sealtrain/crypto/signing.h"

#include <QtTest/QtTest>

#include <map>
#include <string>

namespace sealtrain::testing {

inline constexpr const char* kWorldPassword = "a long enough passphrase";

// A spec of eve's for `dataset` on `pool` in project demo, with `extra` fields spliced in at the
// top level.
inline std::string jobSpec(const std::string& name, const std::string& dataset,
                           const std::string& pool, const std::string& extra = "")
{
    return R"({"spec_version": 1, "name": ")" + name + R"(", "project": "demo", "dataset": ")"
           + dataset + R"(", "model": {"layers": 2, "heads": 2, "width": 32, "context": 16},
        "schedule": {"steps": 10, "batch": 2}, "resources": {"pool": ")"
           + pool + R"("})" + extra + "}";
}

struct WorkerWorld {
    ControlPlaneFixture t;
    std::map<std::string, std::string> uris;
    std::map<std::string, std::string> sessions;
    crypto::CertificateAuthority ca =
        crypto::CertificateAuthority::create("Sealtrain test CA", std::chrono::hours(24)).value();
    crypto::Kek kek{"datasets", 1, crypto::SecretBytes::random(32).value()};

    WorkerWorld()
    {
        uris["alice"] = t.plane->identity().init("alice", secret(kWorldPassword))->otpauthUri;
        const std::string admin = session("alice");
        if (!t.plane->access().createRole(admin, "worker-viewer", {"worker.read"}).ok())
            qFatal("cannot create the role worker-viewer");
        for (const auto& [user, role] :
             std::map<std::string, std::string>{{"sam", "steward"},
                                                {"eve", "engineer"},
                                                {"ann", "approver"},
                                                {"rita", "auditor"},
                                                {"olivia", "operator"},
                                                {"vic", "worker-viewer"}}) {
            uris[user] =
                testing::enrolUser(t.plane->identity(), admin, user, secret(kWorldPassword))
                    ->otpauthUri;
            if (!t.plane->access().grantRole(admin, user, role, "").ok())
                qFatal("cannot grant %s", role.c_str());
        }
        importTextDataset(t, session("sam"), "notes", "internal", "first note\n\nsecond note\n",
                          kek);
        importTextDataset(t, session("sam"), "records", "phi", "patient one\n\npatient two\n", kek);
        for (const std::string name : {"notes", "records"}) {
            if (!t.plane->datasets().grantRead(session("sam"), name, "eve").ok())
                qFatal("cannot grant %s", name.c_str());
        }
    }

    const std::string& session(const std::string& user)
    {
        if (sessions.count(user) == 0)
            sessions[user] = t.signIn(user, kWorldPassword, uris[user]);
        return sessions[user];
    }

    [[nodiscard]] core::Workers& workers() const { return t.plane->workers(); }
    [[nodiscard]] core::Scheduler& scheduler() const { return t.plane->scheduler(); }
    [[nodiscard]] core::Jobs& jobs() const { return t.plane->jobs(); }
    [[nodiscard]] audit::Entry last() const { return t.lastEntry(); }
    [[nodiscard]] std::uint64_t auditSize() const { return t.plane->auditLog().size(); }

    // An enrolment token the operator makes.
    std::string token(const std::string& name, const std::string& pool,
                      std::int64_t validSeconds = 3600)
    {
        auto made = workers().createEnrollToken(session("olivia"), name, pool, validSeconds);
        if (!made)
            qFatal("cannot make a token: %s", made.error().message().c_str());
        return made->token;
    }

    // Enrolls with `token`, a fresh signing key and a certificate from the test CA.
    Result<core::WorkerInfo> enroll(const std::string& token)
    {
        core::EnrollRequest request;
        request.token = token;
        request.signingKeyPem = crypto::SigningKey::generate().value().publicKey().toPem();
        request.boxKey.fill(7);
        request.inventory.cpuCores = 4;
        return workers().enroll(request, [&](const std::string& commonName) {
            auto keyAndCsr = crypto::makeKeyAndCsr(commonName);
            if (!keyAndCsr)
                return Result<std::string>(keyAndCsr.error());
            crypto::IssueRequest issue;
            issue.csrPem = keyAndCsr->csrPem;
            issue.commonName = commonName;
            return ca.issue(issue);
        });
    }

    core::WorkerInfo enrolled(const std::string& name, const std::string& pool)
    {
        auto worker = enroll(token(name, pool));
        if (!worker)
            qFatal("cannot enroll %s: %s", name.c_str(), worker.error().message().c_str());
        return *worker;
    }

    // A job of eve's, approved by ann and queued.
    std::int64_t queuedJob(const std::string& name, const std::string& dataset,
                           const std::string& pool, const std::string& extra = "")
    {
        auto job = jobs().submit(session("eve"), jobSpec(name, dataset, pool, extra));
        if (!job || job->state != core::JobState::Vetted)
            qFatal("cannot submit %s", name.c_str());
        if (!jobs().approve(session("ann"), job->id, job->specSha256))
            qFatal("cannot approve %s", name.c_str());
        if (!scheduler().enqueue(job->id))
            qFatal("cannot queue %s", name.c_str());
        return job->id;
    }

    [[nodiscard]] core::JobInfo job(std::int64_t id)
    {
        return jobs().show(session("eve"), id).value();
    }
};

}  // namespace sealtrain::testing
