// Issue #54: every call of the contract, walked with each kind of wrong caller against a real
// sealtrain-control, leaves its refusal in the audit log, naming the caller or counted:
// - a signed-in user without a role (wrong role): each refused call exactly one entry, naming
//   the user; a call that succeeds none that says it was refused;
// - a user's session certificate on a worker's call, a worker's certificate on a user's call,
//   and no certificate at all: refused as calls without a valid session, the first of each kind
//   in its window written with the certificate presented, the rest counted, so that the counts
//   add up to the calls made;
// - a revoked session certificate: refused at the TLS handshake, counted per serial and written
//   as `certificate.refuse` with the user whose session it was.
// The calls are read from the generated descriptors, so a new call can not be left out.
#include "contract_calls.h"
#include "daemon_fixture.h"
#include "test_worker.h"

#include <QtTest/QtTest>

#include <algorithm>
#include <array>
#include <string>
#include <vector>

using namespace sealtrain;

namespace {

// Calls anyone may make (the CA certificate, the public keys to verify with).
constexpr std::array<std::string_view, 2> kPublic{"Platform.GetCaCertificate",
                                                  "Platform.GetSigningKeys"};
// Calls whose caller is the credential in the request (a password, a reset code, an enrolment
// token), made without a session: refused and audited as `unknown` against the user or worker
// the credential names, which the other tests check.
constexpr std::array<std::string_view, 3> kCredentialInRequest{
    "Sessions.SignIn", "Users.CompleteReset", "Workers.Enroll"};
// The calls that end the caller's own session when refused (a wrong current password costs a
// sign-in) or made (signing out): each is walked last, by a user of its own.
constexpr std::array<std::string_view, 3> kEndSession{
    "Sessions.ChangePassword", "Sessions.StartTotpChange", "Sessions.SignOut"};
// The calls only an enrolled worker makes (its TLS certificate is its identity).
constexpr std::array<std::string_view, 8> kWorkerCalls{
    "Workers.Heartbeat",        "Workers.TakeJob",        "Workers.FetchDataset",
    "Workers.FetchCheckpoint",  "Workers.FetchInitModel", "Workers.ReportMetrics",
    "Workers.UploadCheckpoint", "Workers.FinishJob"};

template <std::size_t N>
bool among(const std::array<std::string_view, N>& names, const std::string& name)
{
    return std::find(names.begin(), names.end(), name) != names.end();
}

using Method = testing::ContractMethod;

std::string detail(const api::AuditEntryView& entry, const std::string& name)
{
    for (const api::AuditDetailView& d : entry.details)
        if (d.name == name)
            return d.text;
    return {};
}

// How many calls an entry stands for: a counted entry its `repeated`, any other one.
std::uint64_t callsOf(const api::AuditEntryView& entry)
{
    const std::string repeated = detail(entry, "repeated");
    return repeated.empty() ? 1 : std::stoull(repeated);
}

}  // namespace

class TestApiRefusalWalk : public QObject {
    Q_OBJECT

    QTemporaryDir tmp_;
    testing::DaemonFixture daemon_;
    std::vector<Method> methods_;
    std::optional<api::ClientIdentity> worker_;
    std::uint64_t seen_ = 0;  // the log's size when it was last read

    // The entries written since the last call of this (the auditor's own reads left out).
    std::vector<api::AuditEntryView> newEntries()
    {
        std::vector<api::AuditEntryView> fresh;
        auto audrey = daemon_.as("audrey");
        api::AuditQueryOptions options;
        options.limit = 500;
        auto page = audrey->audit().queryAudit(options);
        if (!page)
            qFatal("audit query: %s", page.error().message().c_str());
        for (const api::AuditEntryView& entry : page->entries)
            if (entry.sequence >= seen_ && entry.actor != "audrey")
                fresh.push_back(entry);
        if (!page->entries.empty() && page->entries.back().sequence > seen_ && seen_ != 0)
            qFatal("more than one page of entries since the last read");
        seen_ = page->logSize;
        return fresh;
    }

    // Waits for the counted refusals' window to close and be written (--anonymous-refusal-window
    // 1; the daemon writes them every second).
    static void windowPasses() { QTest::qWait(3000); }

private slots:
    void initTestCase()
    {
        QVERIFY(tmp_.isValid());
        daemon_.create(tmp_.path().toStdString(), "alice",
                       {{"nora", ""},
                        {"rex", ""},
                        {"otto", "operator"},
                        {"audrey", "auditor"},
                        {"end0", ""},
                        {"end1", ""},
                        {"end2", ""}});
        daemon_.start({"--anonymous-refusal-window", "1"});
        methods_ = testing::contractMethods();
        QVERIFY2(methods_.size() >= 80, qPrintable(QString::number(methods_.size())));
        testing::TestWorker enrolled = testing::enrollTestWorker(daemon_, "otto", "n1", "cpu");
        worker_.emplace(std::move(*enrolled.identity));
        for (const std::string_view name : kWorkerCalls)
            QVERIFY2(std::any_of(methods_.begin(), methods_.end(),
                                 [&](const Method& m) { return m.name() == name; }),
                     std::string(name).c_str());
        (void)daemon_.session("nora");
        (void)daemon_.session("rex");
        for (const char* user : {"end0", "end1", "end2"})
            (void)daemon_.session(user);
        (void)newEntries();
    }

    // nora is signed in and holds no role: every call she may not make is refused with one
    // entry naming her; a call she may make records no refusal.
    void wrongRoleLeavesOneEntryNamingTheCaller()
    {
        const auto channel = daemon_.rawChannel(&daemon_.session("nora"));
        std::vector<std::string> wrong;
        int refused = 0;
        for (const Method& method : methods_) {
            if (among(kPublic, method.name()) || among(kCredentialInRequest, method.name())
                || among(kWorkerCalls, method.name()) || among(kEndSession, method.name()))
                continue;
            const grpc::Status status = testing::callHostile(channel, method);
            const auto entries = newEntries();
            const auto refusals = std::count_if(entries.begin(), entries.end(), [](const auto& e) {
                return e.actor == "nora" && e.outcome != "ok";
            });
            const auto others = std::count_if(entries.begin(), entries.end(), [](const auto& e) {
                return e.actor != "nora" && e.outcome != "ok";
            });
            const std::string what = method.name() + " (" + std::to_string(status.error_code())
                                     + " " + status.error_message()
                                     + "): " + std::to_string(refusals) + " refusals naming nora, "
                                     + std::to_string(others) + " naming someone else";
            if (status.ok() ? (refusals != 0 || others != 0) : (refusals != 1 || others != 0)) {
                qWarning("%s", what.c_str());
                wrong.push_back(what);
            }
            refused += status.ok() ? 0 : 1;
        }
        QVERIFY2(wrong.empty(), qPrintable(QString("%1 calls (above) did not leave one refusal "
                                                   "naming nora")
                                               .arg(wrong.size())));
        QVERIFY2(refused >= 60, qPrintable(QString::number(refused)));
    }

    // A worker's certificate on each of a user's calls: refused, each with one entry naming the
    // worker (the control plane knows its certificate).
    void workerCertificateOnUserCallsNamesTheWorker()
    {
        const auto channel = daemon_.rawChannel(&*worker_);
        (void)newEntries();
        std::vector<std::string> wrong;
        int calls = 0;
        for (const Method& method : methods_) {
            if (among(kPublic, method.name()) || among(kCredentialInRequest, method.name())
                || among(kWorkerCalls, method.name()))
                continue;
            const grpc::Status status = testing::callHostile(channel, method);
            ++calls;
            const auto entries = newEntries();
            const auto naming = std::count_if(entries.begin(), entries.end(), [](const auto& e) {
                return e.actor == "n1" && e.outcome != "ok";
            });
            if (status.error_code() != grpc::StatusCode::UNAUTHENTICATED || naming != 1
                || entries.size() != 1) {
                const std::string what = method.name() + " (" + std::to_string(status.error_code())
                                         + "): " + std::to_string(naming) + " of "
                                         + std::to_string(entries.size())
                                         + " entries name the worker";
                qWarning("%s", what.c_str());
                wrong.push_back(what);
            }
        }
        QVERIFY2(wrong.empty(), qPrintable(QString("%1 calls (above) did not leave one refusal "
                                                   "naming the worker")
                                               .arg(wrong.size())));
        QVERIFY(calls >= 60);
    }

    // A user's session certificate on each of a worker's calls, and no certificate on any call:
    // refused as calls without a valid session; the entries written and counted add up to the
    // calls, and the ones written name the certificate presented, if any.
    void callsWithoutASessionAreCountedOrNamed_data()
    {
        QTest::addColumn<QString>("who");
        QTest::newRow("a user's certificate on a worker's calls") << "nora";
        QTest::newRow("no certificate") << "";
    }

    void callsWithoutASessionAreCountedOrNamed()
    {
        QFETCH(QString, who);
        windowPasses();
        (void)newEntries();
        const std::shared_ptr<grpc::Channel> channel =
            who == "nora" ? daemon_.rawChannel(&daemon_.session("nora")) : daemon_.rawChannel();
        std::vector<std::string> wrong;
        std::uint64_t calls = 0;
        std::uint64_t written = 0;
        std::uint64_t counted = 0;
        for (const Method& method : methods_) {
            if (among(kPublic, method.name()) || among(kCredentialInRequest, method.name())
                || (who == "nora" && !among(kWorkerCalls, method.name())))
                continue;
            const grpc::Status status = testing::callHostile(channel, method);
            ++calls;
            if (status.error_code() != grpc::StatusCode::UNAUTHENTICATED)
                wrong.push_back(method.name() + " answered " + std::to_string(status.error_code())
                                + " " + status.error_message());
            for (const auto& entry : newEntries()) {
                if (entry.actor != "unknown" || entry.outcome == "ok") {
                    wrong.push_back(method.name() + " left an entry of " + entry.actor + " ("
                                    + entry.action + ", " + entry.outcome + ")");
                    continue;
                }
                if (!detail(entry, "repeated").empty()) {
                    counted += callsOf(entry);
                    continue;
                }
                ++written;
                if (!who.isEmpty() && detail(entry, "certificate_serial").empty())
                    wrong.push_back(method.name() + ": its entry " + entry.action
                                    + " names no certificate");
            }
        }
        windowPasses();
        QVERIFY(
            daemon_.as("audrey")->sessions().whoAmI());  // a call, so that the window is written
        for (const auto& entry : newEntries())
            if (entry.actor == "unknown" && !detail(entry, "repeated").empty())
                counted += callsOf(entry);
        for (const std::string& line : wrong)
            qWarning("%s", line.c_str());
        QVERIFY2(wrong.empty(), qPrintable(QString("%1 wrong (above)").arg(wrong.size())));
        QVERIFY(calls >= 8);
        QVERIFY2(written + counted == calls,
                 qPrintable(QString("%1 calls, %2 entries written, %3 counted")
                                .arg(calls)
                                .arg(written)
                                .arg(counted)));
    }

    // rex's session is revoked: every call with its certificate is refused at the handshake,
    // counted for its serial and written as certificate.refuse with rex as the actor.
    void revokedCertificateIsCountedForItsUser()
    {
        const auto& rex = daemon_.session("rex");
        QVERIFY(daemon_.as("alice")->sessions().revokeSessions("rex"));
        const auto channel = daemon_.rawChannel(&rex);
        (void)newEntries();
        int calls = 0;
        for (const Method& method : methods_) {
            if (among(kPublic, method.name()))
                continue;
            const grpc::Status status = testing::callHostile(channel, method);
            QVERIFY2(!status.ok(), method.name().c_str());
            ++calls;
        }
        QVERIFY(calls >= 80);
        windowPasses();
        QVERIFY(daemon_.as("audrey")->sessions().whoAmI());
        std::uint64_t counted = 0;
        for (const auto& entry : newEntries()) {
            if (entry.action != "certificate.refuse")
                continue;
            QCOMPARE(entry.actor, std::string("rex"));
            QCOMPARE(entry.outcome, std::string("denied"));
            counted += callsOf(entry);
        }
        // gRPC may try a handshake for several calls at once, or wait between tries: at least one
        // for the walk, and never more than its calls.
        QVERIFY2(counted >= 1 && counted <= static_cast<std::uint64_t>(calls),
                 qPrintable(QString::number(counted)));
    }

    // The calls that end the caller's own session, each by a user of its own with no role: one
    // entry naming that user.
    void ownSessionCallsLeaveOneEntry()
    {
        for (std::size_t i = 0; i < kEndSession.size(); ++i) {
            const std::string user = "end" + std::to_string(i);
            const std::string name(kEndSession.at(i));
            const auto found = std::find_if(methods_.begin(), methods_.end(),
                                            [&](const Method& m) { return m.name() == name; });
            QVERIFY2(found != methods_.end(), name.c_str());
            const auto channel = daemon_.rawChannel(&daemon_.session(user));
            (void)newEntries();
            const grpc::Status status = testing::callHostile(channel, *found);
            // The revoked walk's last handshakes may be written meanwhile: they are not this
            // call's.
            auto entries = newEntries();
            std::erase_if(entries, [](const auto& e) { return e.action == "certificate.refuse"; });
            const auto naming = std::count_if(entries.begin(), entries.end(),
                                              [&](const auto& e) { return e.actor == user; });
            if (naming != 1 || entries.size() != 1)
                for (const auto& e : entries)
                    qWarning("%s: %s %s %s: %s", name.c_str(), e.actor.c_str(), e.action.c_str(),
                             e.outcome.c_str(), e.reason.c_str());
            QVERIFY2(naming == 1 && entries.size() == 1,
                     qPrintable(QString("%1 (%2): %3 of %4 entries name %5")
                                    .arg(QString::fromStdString(name))
                                    .arg(status.error_code())
                                    .arg(naming)
                                    .arg(entries.size())
                                    .arg(QString::fromStdString(user))));
        }
    }

    void cleanupTestCase() { QVERIFY(daemon_.stop()); }
};

QTEST_GUILESS_MAIN(TestApiRefusalWalk)
#include "test_api_refusal_walk.moc"
