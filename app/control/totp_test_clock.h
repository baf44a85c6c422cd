// The test build's TOTP clock (issue #51). A sign-in code is accepted once and the control plane
// takes at most the next 30 s step as drift, so a test that signs one user in many times would
// wait for the real clock. sealtrain-control-test, a build of this daemon that the test suite
// makes and no package installs, checks TOTP codes at the system time plus the whole seconds
// written in the file SEALTRAIN_TEST_TOTP_CLOCK names; the test moves that offset forward instead
// of waiting. sealtrain-control, the release build, refuses to serve while the variable is set.
// Everything else (sessions, audit times, certificates) keeps the system clock in both builds.
#pragma once

#include "sealtrain/audit/audit_log.h"
#include "sealtrain/base/result.h"

#include <memory>

namespace sealtrain::control {

inline constexpr const char* kTestTotpClockVariable = "SEALTRAIN_TEST_TOTP_CLOCK";

// The TOTP clock the environment asks for: null when SEALTRAIN_TEST_TOTP_CLOCK is unset; an
// error in the release build, or when the variable does not name an absolute path.
[[nodiscard]] Result<std::unique_ptr<audit::Clock>> testTotpClockFromEnvironment();

}  // namespace sealtrain::control
