// TOTP codes for the integration and desktop tests without waiting for the real clock (issue
// #51). A code is accepted once and the control plane takes at most the next 30 s step as drift,
// so the fourth sign-in of one user within a step used to wait for the next one. The test build
// of the daemon (sealtrain-control-test, app/control/totp_test_clock.h) checks codes at the
// system time plus the offset in the file SEALTRAIN_TEST_TOTP_CLOCK names; this process-wide
// clock owns that file, sets the variable for every daemon the test starts, and moves the
// offset forward when a user needs a step further ahead. In-process control planes get the same
// clock (ControlPlaneOptions::totpClock), so both sides see one time.
#pragma once

#include "../unit/core_fixture.h"
#include "sealtrain/audit/audit_log.h"
#include "sealtrain/core/data_directory/data_directory.h"
#include "sealtrain/core/identity/totp.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <string>

namespace sealtrain::testing {

class TestTotpClock final : public audit::Clock {
public:
    // The one clock of this test process; the first call sets SEALTRAIN_TEST_TOTP_CLOCK.
    static TestTotpClock& instance()
    {
        static TestTotpClock clock;
        return clock;
    }

    TestTotpClock(const TestTotpClock&) = delete;
    TestTotpClock& operator=(const TestTotpClock&) = delete;
    ~TestTotpClock() override
    {
        std::error_code ignored;
        std::filesystem::remove(file_, ignored);
    }

    [[nodiscard]] std::chrono::system_clock::time_point now() const override
    {
        const std::lock_guard lock(mutex_);
        return std::chrono::system_clock::now() + offset_;
    }

    [[nodiscard]] std::uint64_t step() const { return core::totpStep(now()); }

    // Moves the clock forward, if needed, so that `step` is at most the step after the current
    // one: the drift the control plane accepts.
    void reach(std::uint64_t wanted)
    {
        const std::lock_guard lock(mutex_);
        const std::uint64_t current = core::totpStep(std::chrono::system_clock::now() + offset_);
        if (wanted <= current + 1)
            return;
        offset_ += core::kTotpStep * static_cast<std::int64_t>(wanted - current - 1);
        const std::filesystem::path written = file_.string() + ".new";
        {
            std::ofstream out(written, std::ios::trunc);
            out << offset_.count() << '\n';
        }
        std::filesystem::rename(written, file_);  // the daemon never reads half a number
    }

private:
    TestTotpClock()
        : file_(std::filesystem::temp_directory_path()
                / ("sealtrain-totp-clock-" + std::to_string(::getpid())))
    {
        std::ofstream(file_, std::ios::trunc) << "0\n";
        ::setenv("SEALTRAIN_TEST_TOTP_CLOCK", file_.c_str(), 1);
    }

    std::filesystem::path file_;
    mutable std::mutex mutex_;
    std::chrono::seconds offset_{0};
};

// The next code of each user of one data directory: every sign-in a step no earlier sign-in
// of that user spent.
class TotpCodes {
public:
    // Made with its fixture, before any daemon starts: the variable is set by then.
    TotpCodes() { (void)TestTotpClock::instance(); }

    std::string next(const std::string& user, const std::string& otpauthUri)
    {
        TestTotpClock& clock = TestTotpClock::instance();
        const std::lock_guard lock(mutex_);
        const std::uint64_t step = std::max(clock.step(), lastStep_[user] + 1);
        clock.reach(step);
        lastStep_[user] = step;
        return core::totpCode(totpSecretFromUri(otpauthUri), step);
    }

private:
    std::mutex mutex_;
    std::map<std::string, std::uint64_t> lastStep_;
};

// Options for a data directory the test opens in its own process: its codes checked at the
// same clock as the daemon's.
inline core::DataDirectoryOptions testClockOptions()
{
    core::DataDirectoryOptions options;
    options.controlPlane.totpClock = &TestTotpClock::instance();
    return options;
}

}  // namespace sealtrain::testing
