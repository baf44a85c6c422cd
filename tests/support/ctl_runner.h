// Runs sealtrainctl in-process for command-line tests and keeps what it printed.
#pragma once

#include "ctl.h"

#include <sstream>
#include <string>
#include <vector>

namespace sealtrain::testing {

struct CtlOutcome {
    int code = 0;
    std::string out;
    std::string err;
};

inline CtlOutcome runCtl(const std::vector<std::string>& args)
{
    std::ostringstream out;
    std::ostringstream err;
    const int code = ctl::run(args, out, err);
    return {code, out.str(), err.str()};
}

}  // namespace sealtrain::testing
