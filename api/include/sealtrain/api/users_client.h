// The client library's handle on the Users service, ControlClient::users() (docs/api.md). User
// accounts: creation with a one-time enrolment code, disabling, and resets (user.manage). Every
// call returns a Result whose error is the server's one sentence, or the client's own for a
// transport failure; no gRPC type crosses this header.
#pragma once

#include "sealtrain/api/client_call.h"
#include "sealtrain/api/client_views.h"
#include "sealtrain/base/result.h"
#include "sealtrain/crypto/secret_bytes.h"

#include <cstdint>
#include <string>
#include <vector>

namespace sealtrain::api {

struct UserSummary {
    std::string name;
    bool disabled = false;
    std::vector<std::string> grants;
};

// What a reset did: took effect (`resetCode`, the one-time code to hand over out of band), or
// waits for a second admin's approval (`pending`, no code).
struct ResetResult {
    std::string user;
    bool pending = false;
    std::string resetCode;
    std::int64_t codeExpires = 0;  // Unix seconds: the code stops working then
};

// A new account's one-time enrolment code ("rc_…") and when it stops working.
struct NewUserResult {
    std::string enrolmentCode;
    std::int64_t codeExpires = 0;
};

class UsersClient final : public client_internal::Handle {
public:
    using Handle::Handle;

    // Every user by name, page by page (each page one audited call; docs/api.md, "Small lists").
    [[nodiscard]] Result<std::vector<UserSummary>> listUsers();
    // The new user's one-time enrolment code ("rc_…"), to hand over once: with it they set their
    // own password and receive their TOTP secret (completeReset).
    [[nodiscard]] Result<NewUserResult> createUser(const std::string& name);
    // `pending`: the user is one of two admins, and the other admin must make the same call.
    [[nodiscard]] Result<ChangeResult> disableUser(const std::string& name);
    [[nodiscard]] Result<void> enableUser(const std::string& name);
    // Takes away the user's password and TOTP secret; the result holds the one-time reset code,
    // or says that the reset waits for a second admin (approveReset).
    [[nodiscard]] Result<ResetResult> resetUser(const std::string& name);
    [[nodiscard]] Result<ResetResult> approveReset(const std::string& name);
    // Needs no session: the reset user sets their new password with the one-time code and gets
    // their new TOTP secret as an otpauth:// URI.
    [[nodiscard]] Result<std::string> completeReset(const std::string& user,
                                                    const std::string& resetCode,
                                                    const crypto::SecretBytes& password);
    // The resets waiting for a second admin, oldest first (user.manage).
    [[nodiscard]] Result<std::vector<PendingResetView>> listPendingResets();

private:
    [[nodiscard]] Result<ResetResult> changeReset(const std::string& name, bool approve);
};

}  // namespace sealtrain::api
