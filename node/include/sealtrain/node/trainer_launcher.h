// Starting sealtrain-train as a child process with its keys on a pipe: the trainer reads them
// from the descriptor named by --keys-fd (docs/formats/trainer-keys.md), never from argv, the
// environment or a file, and the launcher wipes its copy once written. The trainer's output
// (its JSON-lines metrics on --metrics-fd for `train`, its standard output for `sample`) comes
// back line by line; a sampler's prompt goes on its standard input. What goes into the keys and the
// arguments is the caller's (the control plane's release check comes first); this is only the
// process and the pipes.
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/crypto/secret_bytes.h"

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sealtrain::node {

struct TrainerLaunch {
    std::string executable;              // the sealtrain-train to run
    std::string subcommand;              // "train" (metrics on a pipe) or "sample"
    std::vector<std::string> arguments;  // after the launcher's own --keys-fd, --metrics-fd
    // Given the trainer's process id once it started (a worker stops it on a cancellation);
    // the process may be signalled until runTrainer returns, never after.
    std::function<void(int pid)> onStarted;
    // Asked about every 100 ms while the trainer runs; once it returns a reason, the trainer
    // is killed (SIGKILL) and runTrainer fails with ResourceExhausted and that reason (a
    // sampling call whose caller went away, or that ran past the policy's time). Empty: never.
    std::function<std::optional<std::string>()> stopReason;
    // The trainer's standard input: these bytes on a pipe, closed after them (a sampler's
    // prompt, which argv would show to every user of the host); none: /dev/null.
    std::optional<std::string> input;
};

// Runs the trainer to its end, handing it `keys` (wiped once written) and passing its output to
// `onOutput`, a line at a time with its newline (the last piece may lack one). Returns the
// trainer's exit status; an error when it could not start, was killed by a signal (or by
// `stopReason`), or exited successfully without reading its keys.
[[nodiscard]] Result<int> runTrainer(const TrainerLaunch& launch, crypto::SecretBytes keys,
                                     const std::function<void(std::string_view)>& onOutput);

}  // namespace sealtrain::node
