// A request's secret fields are wiped once read (api/server_shared.h, issue #27 item 2): the
// password of a sign-in or a reset, a reset code, an enrolment token. gRPC frees the message
// after the call; what it frees must no longer hold the secret, which lives on only in locked
// memory (crypto::SecretBytes).
#include "server_shared.h"

#include "sealtrain/v1/control.pb.h"

#include <QtTest/QtTest>

#include <string>

using namespace sealtrain;

class TestApiRequestSecrets : public QObject {
    Q_OBJECT

private slots:
    void secretIsTakenAndTheFieldWiped();
};

void TestApiRequestSecrets::secretIsTakenAndTheFieldWiped()
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

QTEST_APPLESS_MAIN(TestApiRequestSecrets)
#include "test_api_request_secrets.moc"
