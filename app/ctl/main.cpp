// sealtrainctl: entry point.
#include "ctl.h"

#include "sealtrain/base/process.h"

#include <iostream>

int main(int argc, char** argv)
{
    sealtrain::disableCoreDumps();
    std::vector<std::string> args(argv + 1, argv + argc);
    return sealtrain::ctl::run(args, std::cout, std::cerr);
}
