// The client library's handle on the Sessions service, ControlClient::sessions() (docs/api.md).
// Signing in and out, the caller's own password and TOTP secret, and the sessions (session.manage).
// Every call returns a Result whose error is the server's one sentence, or the client's own for a
// transport failure; no gRPC type crosses this header.
#pragma once

#include "sealtrain/api/client_call.h"
#include "sealtrain/api/client_views.h"
#include "sealtrain/base/result.h"
#include "sealtrain/crypto/secret_bytes.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace sealtrain::api {

struct SignedIn {
    ClientIdentity identity;
    std::string sessionId;
    std::int64_t expiresUnix = 0;
};

struct WhoAmI {
    std::string user;
    std::string sessionId;
    std::int64_t expiresUnix = 0;
    // One sentence each, for every user to see (four eyes not guaranteed).
    std::vector<std::string> warnings;
    std::int64_t idleExpiresUnix = 0;  // if unused from now on (may be up to a minute early)
    std::int64_t absoluteExpiresUnix = 0;
    std::int64_t idleTimeoutSeconds = 0;
    // Effective permissions by project ("" for global grants, which hold everywhere).
    std::map<std::string, std::vector<std::string>> permissions;
    bool breakGlass = false;

    // Whether a grant gives `permission` globally, or in `project` when one is named; empty
    // `project`: in any project. For showing screens; the server still decides every call.
    [[nodiscard]] bool holds(const std::string& permission, const std::string& project = {}) const;
};

struct SessionSummary {
    std::string id;  // "s<n>"
    std::string user;
    std::int64_t createdUnix = 0;
    std::int64_t lastUsedUnix = 0;
    bool revoked = false;
    bool expired = false;  // idle or past its absolute limit
};

class SessionsClient final : public client_internal::Handle {
public:
    using Handle::Handle;

    // Makes a new P-256 key, sends its CSR with the credentials, and returns the key with the
    // certificate the control plane issued for the new session.
    [[nodiscard]] Result<SignedIn> signIn(const std::string& user,
                                          const crypto::SecretBytes& password,
                                          const std::string& totpCode);
    [[nodiscard]] Result<WhoAmI> whoAmI();
    // Ends the session; its certificate is refused from then on.
    [[nodiscard]] Result<void> signOut();
    // One page of the sessions, newest first (session.manage): `before` 0 for the newest, then
    // the previous page's nextBefore; `limit` 1 to 1000 (0: 200).
    [[nodiscard]] Result<Page<SessionSummary>> listSessionsPage(std::int64_t before,
                                                                std::uint32_t limit);
    // Every session, newest first, page by page (each page one audited call).
    [[nodiscard]] Result<std::vector<SessionSummary>> listSessions();
    // Ends every session of `user`; their client certificates are refused from then on.
    // Returns how many certificates that revoked.
    [[nodiscard]] Result<std::uint32_t> revokeSessions(const std::string& user);
    // The caller's own new password; returns how many of their other sessions ended. A wrong
    // current password ends this session too (Unauthenticated): sign in again to retry.
    [[nodiscard]] Result<std::uint32_t> changePassword(const crypto::SecretBytes& current,
                                                       const crypto::SecretBytes& next);
    // The caller's own new TOTP secret, in two calls: the password and a code from the current
    // secret start it (a wrong one ends this session, Unauthenticated), then a code from the
    // new secret confirms it and ends the user's other sessions, returning how many.
    [[nodiscard]] Result<PendingTotpView> startTotpChange(const crypto::SecretBytes& password,
                                                          const std::string& currentCode);
    [[nodiscard]] Result<std::uint32_t> confirmTotpChange(const std::string& newCode);
};

}  // namespace sealtrain::api
