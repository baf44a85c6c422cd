// The helpers of the control plane's services (api/server_shared.h), issue #27. A request's
// secret fields are wiped once read (item 2): the password of a sign-in or a reset, a reset code,
// an enrolment token; gRPC frees the message after the call, and what it frees must no longer
// hold the secret, which lives on only in locked memory (crypto::SecretBytes). And a password
// check runs on a thread of its own at nice 10 (item 8), so that a flood of anonymous sign-ins
// yields the processor to signed-in users' calls.
#include "server_shared.h"

#include "sealtrain/v1/control.pb.h"

#include <QtTest/QtTest>

#include <sys/resource.h>
#include <unistd.h>

#include <string>

using namespace sealtrain;

class TestApiServerHelpers : public QObject {
    Q_OBJECT

private slots:
    void secretIsTakenAndTheFieldWiped();
    void passwordChecksRunAtLowPriority();
    void errorsMapToCodesAClientCanActOn();
    void refusedHandshakesAreCountedBounded();
};

// Issue #54: a handshake refused for its certificate is counted per serial and written once a
// window (docs/formats/audit.md, `certificate.refuse`): a serial's refusals within its window are
// one entry; at most 256 serials are counted at once and the rest together, as "other", which
// names no one; a certificate that could not be read counts as "unreadable".
void TestApiServerHelpers::refusedHandshakesAreCountedBounded()
{
    api::HandshakeRefusals refusals;
    refusals.count("aa", "dave", 100);
    refusals.count("aa", "dave", 104);
    refusals.count("", "", 105);
    QVERIFY(refusals.take(false, 10, 109).empty());  // the window is not over
    refusals.count("aa", "dave", 109);
    auto due = refusals.take(false, 10, 110);
    QCOMPARE(due.size(), std::size_t{1});
    QCOMPARE(due.at("aa").count, std::uint64_t{3});
    QCOMPARE(due.at("aa").first, std::int64_t{100});
    QCOMPARE(due.at("aa").last, std::int64_t{109});
    QCOMPARE(due.at("aa").owner, std::string("dave"));
    QVERIFY(refusals.take(false, 10, 110).empty());  // taken once
    auto rest = refusals.take(true, 10, 111);        // at shutdown: whatever is left
    QCOMPARE(rest.size(), std::size_t{1});
    QCOMPARE(rest.at("unreadable").count, std::uint64_t{1});

    // A flood of distinct certificates: 256 serials, then "other" for the rest, bounded.
    for (int i = 0; i < 300; ++i)
        refusals.count("serial-" + std::to_string(i), "user-" + std::to_string(i), 200);
    refusals.count("serial-7", "user-7", 201);  // a serial already counted still counts as itself
    auto flood = refusals.take(true, 10, 202);
    QCOMPARE(flood.size(), api::HandshakeRefusals::kMaxSerials + 1);
    QCOMPARE(flood.at("other").count, std::uint64_t{300 - api::HandshakeRefusals::kMaxSerials});
    QCOMPARE(flood.at("other").owner, std::string());
    QCOMPARE(flood.at("serial-7").count, std::uint64_t{2});
    QCOMPARE(flood.at("serial-7").owner, std::string("user-7"));
}

// Issue #29: a client acts on the code. A state the call needs is FAILED_PRECONDITION both ways;
// the server's own I/O failure is INTERNAL (the client would read UNAVAILABLE as the control
// plane out of reach), and keeps the server's sentence.
void TestApiServerHelpers::errorsMapToCodesAClientCanActOn()
{
    using api::Internal::fromStatus;
    using api::Internal::toStatus;
    const Error stale(ErrorCode::FailedPrecondition, "The spec changed; review it again.");
    const grpc::Status sent = toStatus(stale);
    QCOMPARE(sent.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
    const Error back = fromStatus(sent, "unix:/x");
    QCOMPARE(back.code(), ErrorCode::FailedPrecondition);
    QCOMPARE(back.message(), stale.message());

    const Error disk(ErrorCode::Io, "Cannot write the run folder; check the disk.");
    QCOMPARE(toStatus(disk).error_code(), grpc::StatusCode::INTERNAL);
    QCOMPARE(fromStatus(toStatus(disk), "unix:/x").message(), disk.message());
    QCOMPARE(toStatus(Error(ErrorCode::PermissionDenied, "No.")).error_code(),
             grpc::StatusCode::PERMISSION_DENIED);
    // What the transport itself says stays "cannot reach", with the address.
    const Error away = fromStatus({grpc::StatusCode::UNAVAILABLE, "Connection refused"}, "h:1");
    QCOMPARE(away.code(), ErrorCode::Io);
    QVERIFY(away.message().find("'h:1'") != std::string::npos);
}

void TestApiServerHelpers::secretIsTakenAndTheFieldWiped()
{
    v1::SignInRequest request;
    request.set_user("dana");
    request.set_password("correct horse battery staple");
    const v1::SignInRequest& asGiven = request;  // as a handler receives it
    auto secret = api::server_internal::takeSecret(asGiven.password());
    QVERIFY(secret);
    QCOMPARE(std::string(reinterpret_cast<const char*>(secret->bytes().data()), secret->size()),
             std::string("correct horse battery staple"));
    QCOMPARE(request.password(), std::string(28, '\0'));
    QCOMPARE(request.user(), std::string("dana"));

    v1::CompleteResetRequest reset;
    reset.set_reset_code("rc_0123456789");
    api::server_internal::wipeRequestField(
        static_cast<const v1::CompleteResetRequest&>(reset).reset_code());
    QCOMPARE(reset.reset_code(), std::string(13, '\0'));
}

void TestApiServerHelpers::passwordChecksRunAtLowPriority()
{
    const pid_t caller = ::gettid();
    const int before = ::getpriority(PRIO_PROCESS, static_cast<id_t>(caller));
    pid_t ranOn = 0;
    int niceThere = 0;
    api::server_internal::atLowPriority([&] {
        ranOn = ::gettid();
        niceThere = ::getpriority(PRIO_PROCESS, static_cast<id_t>(ranOn));
    });
    QVERIFY(ranOn != 0);
    QVERIFY(ranOn != caller);  // a thread of its own, so the caller's priority is untouched
    QVERIFY2(niceThere >= 10, qPrintable(QString("the work ran at nice %1").arg(niceThere)));
    QCOMPARE(::getpriority(PRIO_PROCESS, static_cast<id_t>(caller)), before);
}

QTEST_APPLESS_MAIN(TestApiServerHelpers)
#include "test_api_server_helpers.moc"
