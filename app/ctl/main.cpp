// sealtrainctl: entry point.
#include "ctl.h"

#include "sealtrain/api/client.h"
#include "sealtrain/base/process.h"

#include <cstdlib>
#include <iostream>

int main(int argc, char** argv)
{
    sealtrain::disableCoreDumps();
    // gRPC's own log lines would come before our one sentence; its errors reach the user as
    // that sentence (GRPC_VERBOSITY=ERROR brings them back).
    ::setenv("GRPC_VERBOSITY", "NONE", 0);
    const sealtrain::api::GrpcRuntime grpc;  // outlives every channel the command opens
    std::vector<std::string> args(argv + 1, argv + argc);
    return sealtrain::ctl::run(args, std::cout, std::cerr);
}
