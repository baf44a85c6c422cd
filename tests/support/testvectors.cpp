// Locating ../shared/testvectors for conformance tests.
#include "testvectors.h"

#include <cstdlib>

namespace sealtrain::testing {

std::optional<std::filesystem::path> findTestVectors()
{
    if (const char* dir = std::getenv("SEALTRAIN_TEST_VECTORS"); dir != nullptr && *dir != '\0') {
        if (std::filesystem::is_directory(dir))
            return std::filesystem::path(dir);
        return std::nullopt;  // an explicit setting that is wrong must not fall back silently
    }
    const auto beside =
        std::filesystem::path(SEALTRAIN_SOURCE_DIR).parent_path() / "shared" / "testvectors";
    if (std::filesystem::is_directory(beside))
        return beside;
    return std::nullopt;
}

bool testVectorsRequired()
{
    const char* value = std::getenv("SEALTRAIN_REQUIRE_TEST_VECTORS");
    return value != nullptr && std::string(value) == "1";
}

std::string missingTestVectorsMessage(const std::string& subfolder)
{
    return "Conformance vectors '" + subfolder
           + "' not found: set SEALTRAIN_TEST_VECTORS to the testvectors folder or place "
             "shared/testvectors beside the source tree.";
}

}  // namespace sealtrain::testing
