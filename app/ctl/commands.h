// How sealtrainctl's commands plug into the command tree. Each command group lives in its own
// file and exposes one register function, called from ctl.cpp; it declares its subcommands and
// options on `app` and hands the registry what to run when one of them is chosen.
#pragma once

#include "ctl.h"

#include "sealtrain/base/result.h"

#include <CLI/CLI.hpp>

#include <functional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace sealtrain::ctl {

class CommandRegistry {
public:
    CommandRegistry(std::ostream& out, std::ostream& err)
        : out_(out)
        , err_(err)
    {
    }

    // `run` is called, after logging is configured, when `command` (a leaf subcommand) was
    // given; its return value is the exit code (kExitOk, kExitFailure or kExitUsage).
    void onRun(CLI::App* command, std::function<int()> run)
    {
        commands_.emplace_back(command, std::move(run));
    }

    [[nodiscard]] std::ostream& out() const { return out_; }
    [[nodiscard]] std::ostream& err() const { return err_; }

    // A command that ran and failed: its one sentence on standard error, and kExitFailure.
    [[nodiscard]] int fail(const Error& error) const
    {
        err_ << "sealtrainctl: " << error.message() << '\n';
        return kExitFailure;
    }

    // The same with a sentence of advice after the error's (what to do instead).
    [[nodiscard]] int fail(const Error& error, const std::string& advice) const
    {
        err_ << "sealtrainctl: " << error.message() << ' ' << advice << '\n';
        return kExitFailure;
    }

    // One of several items a command works through failed (a file of a list): "ITEM: sentence".
    // The command may go on with the next item; kExitFailure is its exit code at the end.
    [[nodiscard]] int failItem(const std::string& item, const Error& error) const
    {
        err_ << "sealtrainctl: " << item << ": " << error.message() << '\n';
        return kExitFailure;
    }

    // A command given arguments that its options could not refuse (CLI11 refuses the others):
    // the sentence on standard error, and kExitUsage.
    [[nodiscard]] int failUsage(const std::string& sentence) const
    {
        err_ << "sealtrainctl: " << sentence << '\n';
        return kExitUsage;
    }

    // Runs the chosen command; nullopt-like -1 when none of the registered ones was chosen.
    [[nodiscard]] int runChosen() const
    {
        for (const auto& [command, run] : commands_) {
            if (command->parsed())
                return run();
        }
        return -1;
    }

private:
    std::ostream& out_;
    std::ostream& err_;
    std::vector<std::pair<CLI::App*, std::function<int()>>> commands_;
};

// The group `name` of `app` (a command that takes a subcommand), made with `help` when no
// register function has made it yet: groups such as `dataset` and `audit` hold commands of the
// control plane and offline ones, registered from different files.
[[nodiscard]] inline CLI::App* commandGroup(CLI::App& app, const std::string& name,
                                            const std::string& help)
{
    const auto found = app.get_subcommands(
        [&name](const CLI::App* command) { return command->get_name() == name; });
    if (!found.empty())
        return found.front();
    auto* group = app.add_subcommand(name, help);
    group->require_subcommand(1);
    return group;
}

// One register function per command group (each in its own .cpp). The workstation's and the
// offline commands first, then those that the control plane serves.
void registerWorkstationCommands(CLI::App& app,
                                 CommandRegistry& registry);  // init start stop status
void registerClientCommands(
    CLI::App& app, CommandRegistry& registry);  // connect sign-in … user grant role session
void registerDataCommands(CLI::App& app, CommandRegistry& registry);  // dataset sample signing-keys
void registerJobCommands(CLI::App& app, CommandRegistry& registry);   // job
void registerRunCommands(CLI::App& app, CommandRegistry& registry);   // run
void registerModelCommands(CLI::App& app, CommandRegistry& registry);    // model
void registerPolicyCommands(CLI::App& app, CommandRegistry& registry);   // policy
void registerTotpCommands(CLI::App& app, CommandRegistry& registry);     // change-totp
void registerWorkerCommands(CLI::App& app, CommandRegistry& registry);   // worker
void registerKeyringCommands(CLI::App& app, CommandRegistry& registry);  // keyring, keyfile
void registerBackupCommands(CLI::App& app, CommandRegistry& registry);   // backup, restore
void registerAuditCommands(CLI::App& app, CommandRegistry& registry);  // audit verify/export/report
void registerComplianceCommands(CLI::App& app, CommandRegistry& registry);  // compliance report
void registerVerifyForwarded(CLI::App* group, CommandRegistry& registry);  // audit verify-forwarded
void registerDatasetCommands(CLI::App& app, CommandRegistry& registry);  // dataset verify (offline)
void registerCheckpointCommands(CLI::App& app, CommandRegistry& registry);  // checkpoint verify
void registerKeysCommands(CLI::App& app, CommandRegistry& registry);        // key, signature, dsse
void registerSealedCommands(CLI::App& app, CommandRegistry& registry);      // sealed
void registerDoctorCommand(CLI::App& app, CommandRegistry& registry);       // doctor

}  // namespace sealtrain::ctl
