// Compiled twice (app/control/CMakeLists.txt): without SEALTRAIN_CONTROL_TEST_BUILD into
// sealtrain-control, which refuses the test clock, and with it into sealtrain-control-test.
#include "totp_test_clock.h"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>

namespace sealtrain::control {
namespace {

#ifdef SEALTRAIN_CONTROL_TEST_BUILD
// The system time plus the seconds in `file`, read at every call (a missing, unreadable or
// negative offset counts as 0): the test writes the file atomically and only moves forward.
class FileOffsetClock final : public audit::Clock {
public:
    explicit FileOffsetClock(std::filesystem::path file)
        : file_(std::move(file))
    {
    }

    [[nodiscard]] std::chrono::system_clock::time_point now() const override
    {
        std::int64_t seconds = 0;
        std::ifstream in(file_);
        if (!(in >> seconds) || seconds < 0)
            seconds = 0;
        return std::chrono::system_clock::now() + std::chrono::seconds(seconds);
    }

private:
    std::filesystem::path file_;
};
#endif

}  // namespace

Result<std::unique_ptr<audit::Clock>> testTotpClockFromEnvironment()
{
    const char* variable = std::getenv(kTestTotpClockVariable);
    if (variable == nullptr)
        return std::unique_ptr<audit::Clock>{};
#ifdef SEALTRAIN_CONTROL_TEST_BUILD
    const std::filesystem::path file(variable);
    if (!file.is_absolute())
        return Error(ErrorCode::InvalidArgument,
                     std::string(kTestTotpClockVariable)
                         + " must name an absolute file holding the TOTP clock's offset in "
                           "seconds; set it to one.");
    std::fprintf(stderr,
                 "sealtrain-control-test: TEST BUILD: TOTP codes are checked at the system time "
                 "plus the seconds in %s; never serve real users with this build\n",
                 file.c_str());
    return std::unique_ptr<audit::Clock>(std::make_unique<FileOffsetClock>(file));
#else
    return Error(ErrorCode::FailedPrecondition,
                 std::string(kTestTotpClockVariable)
                     + " is set, but this sealtrain-control is a release build and checks TOTP "
                       "codes at the system time alone; unset the variable (only the test "
                       "build, sealtrain-control-test, reads it).");
#endif
}

}  // namespace sealtrain::control
