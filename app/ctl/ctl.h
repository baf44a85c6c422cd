// sealtrainctl's command tree, callable from main() and from tests.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace sealtrain::ctl {

// Exit codes: 0 success, 1 the command ran and failed (or found errors: `compliance report` with
// a failed control), 2 bad usage, 3 nothing failed but something is unproven (`audit
// verify|report`: no trusted key, entries beyond the newest signed head, a filtered selection
// nobody signed; `compliance report`: a control without evidence).
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitUnconfirmed = 3;

// Runs sealtrainctl with `args` (without the program name), writing to `out` and `err`.
[[nodiscard]] int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace sealtrain::ctl
