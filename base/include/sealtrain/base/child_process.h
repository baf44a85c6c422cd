// Starting a child process and reading what it writes, for every executable that starts one (the
// control plane's trainer launcher, the worker's mpirun and sbatch): one function each, so that
// the rules below hold for every child.
//
// A child gets exactly the descriptors it is given: its standard input (a pipe, or /dev/null,
// never the parent's, which may have been a passphrase file), the pairs of `descriptors` moved to
// the numbers it expects, and standard error; every other descriptor above the highest it is
// given is closed, close-on-exec or not. It starts with an empty signal mask and the default
// action for SIGPIPE, SIGTERM, SIGINT, SIGHUP and SIGCHLD, whatever the parent blocked or
// ignored (a daemon blocks SIGTERM for its sigwait, gRPC ignores SIGPIPE), so that it stops when
// it is told to.
#pragma once

#include "sealtrain/base/result.h"

#include <sys/types.h>

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sealtrain {

struct ChildLaunch {
    // argv[0] is the executable's path; with `searchPath`, a name looked up on PATH.
    std::vector<std::string> argv;
    bool searchPath = false;
    // A descriptor of ours the child reads as its standard input; -1: /dev/null.
    int standardInput = -1;
    // (our descriptor, the child's number), each the child's number 1 or from 3 up.
    std::vector<std::pair<int, int>> descriptors;
    // A descriptor of ours the child writes as its standard error; -1: ours.
    int standardError = -1;
    // The child leads a new session (setsid): it has no controlling terminal, so closing the
    // terminal or pressing Ctrl-C there does not reach it (a daemon left running).
    bool newSession = false;
};

// Starts the child and returns its process id; Io, naming the program and saying what to check,
// when it can not be started. The parent's descriptors are left as they were.
[[nodiscard]] Result<pid_t> spawnChild(const ChildLaunch& launch);

// Reads `fd` to its end, passing each complete line (with its newline) to `onLine`, then what is
// left without one.
void relayLines(int fd, const std::function<void(std::string_view)>& onLine);

// Waits for `child` and returns its exit status; Internal, naming `what` and the signal and then
// `advice`, when a signal ended it.
[[nodiscard]] Result<int> waitChild(pid_t child, std::string_view what, std::string_view advice);

}  // namespace sealtrain
