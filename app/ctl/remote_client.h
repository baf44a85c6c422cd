// What every `sealtrainctl remote …` command shares: the client folder's options and the
// client signed in as the chosen user (remote_command.cpp), and the runner of a command that
// changes one thing on the control plane.
#pragma once

#include "commands.h"

#include "sealtrain/api/client.h"
#include "sealtrain/base/result.h"

#include <CLI/CLI.hpp>

#include <filesystem>
#include <functional>
#include <memory>
#include <string>

namespace sealtrain::ctl {

struct ClientOptions {
    std::filesystem::path clientDir;
    std::string user;  // --as, else SEALTRAIN_USER

    // --client-dir, else $SEALTRAIN_CLIENT_DIR, else the XDG default.
    [[nodiscard]] std::filesystem::path dir() const;
};

// Adds --client-dir and, when `withUser`, --as to `command`; `options` must outlive the parse.
void addClientOptions(CLI::App* command, ClientOptions& options, bool withUser);

// `text` written whole to `path` with `mode` (replacing what was there).
[[nodiscard]] Result<void> writeText(const std::filesystem::path& path, const std::string& text,
                                     unsigned mode);
// `dir` and its parents, `dir` itself mode 0700.
[[nodiscard]] Result<void> makePrivateDir(const std::filesystem::path& dir);

// A client for `options`' user, authenticated by their session certificate.
[[nodiscard]] Result<std::unique_ptr<api::ControlClient>>
signedInClient(const ClientOptions& options);

// `change` with the signed-in client, then `done` (a line, its newline included) on standard
// output; the first error as one line and kExitFailure otherwise.
[[nodiscard]] int runRemoteChange(const CommandRegistry& registry, const ClientOptions& options,
                                  const std::function<Result<void>(api::ControlClient&)>& change,
                                  const std::string& done);

// `remote role …`, `remote session …` under `remote`, `reset` under its `user` group and
// `break-glass` under its `grant` group (remote_access_command.cpp).
void registerRemoteAccessCommands(CLI::App* remote, CLI::App* user, CLI::App* grant,
                                  CommandRegistry& registry);

// "2026-12-01T03:58:47Z" (remote_job_command.cpp).
[[nodiscard]] std::string utcText(std::int64_t unixSeconds);

// `remote job …` (remote_job_command.cpp).
void registerRemoteJobCommands(CLI::App* remote, CommandRegistry& registry);

// `remote dataset …`, `remote audit export`, `remote sample`, `remote signing-keys`
// (remote_data_command.cpp).
void registerRemoteDataCommands(CLI::App* remote, CommandRegistry& registry);

// `remote worker …` (remote_worker_command.cpp).
void registerRemoteWorkerCommands(CLI::App* remote, CommandRegistry& registry);

}  // namespace sealtrain::ctl
