// The control plane's policy knobs: password hashing, lockout, session lifetimes, break-glass.
// One struct for all of its services, so that a deployment (or a test) sets them in one place.
#pragma once

#include "sealtrain/crypto/keyring.h"

#include <chrono>
#include <string>

namespace sealtrain::audit {
class Clock;
}

namespace sealtrain::core {

struct ControlPlaneOptions {
    // libsodium's interactive level; never below crypto::kArgon2Floor.
    crypto::Argon2Params passwordHashing = crypto::kArgon2Floor;
    int maxFailedSignIns = 5;               // lockout starts at this many failures in a row
    std::chrono::seconds lockout{30};       // doubled for every failure past the limit
    std::chrono::seconds maxLockout{3600};  // the back-off's ceiling
    // Failures count per account and peer; an account keeps at most this many network peers'
    // counts, and failures from any further peer share one ("other"). The local peer always
    // has its own.
    std::int64_t maxLockoutPeers = 256;
    // Anonymous refusals of one action from one peer: one entry, then a count per window.
    std::chrono::seconds anonymousRefusalWindow{10};
    std::chrono::seconds sessionIdle{900};   // a session unused this long expires
    std::chrono::seconds sessionMax{43200};  // and every session expires this long after sign-in
    // A session's last use is written at most this often (at most half of sessionIdle), so that
    // most calls check their session with reads alone; an idle session then expires between
    // sessionIdle minus this and sessionIdle after its last use, never later.
    std::chrono::seconds sessionUseInterval{60};
    std::chrono::seconds maxBreakGlass{14400};
    // An enrolment or reset code works this long after it was made (issue #48); then an admin
    // makes a new one.
    std::chrono::seconds enrolmentCodeLifetime{7 * 24 * 3600};
    std::string totpIssuer = "Sealtrain";
    // Where TOTP codes take their time from; null: the control plane's clock. Only the test
    // build of the daemon (sealtrain-control-test, SEALTRAIN_TEST_TOTP_CLOCK) and in-process tests
    // set it, so that a test makes a fresh code without waiting 30 s (docs/development.md).
    const audit::Clock* totpClock = nullptr;
};

}  // namespace sealtrain::core
