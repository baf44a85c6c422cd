// `sealtrainctl doctor`: options and output of the machine check (the checks are doctor.cpp).
#include "commands.h"
#include "ctl.h"
#include "doctor.h"
#include "local_platform.h"

#include "sealtrain/base/paths.h"

#include <memory>

namespace sealtrain::ctl {
namespace {

struct DoctorCommandOptions {
    std::string dataDir;
    std::string passphraseFile;
    std::string masterKeyFile;
    bool json = false;
};

int doctor(const CommandRegistry& registry, const DoctorCommandOptions& options)
{
    DoctorOptions doctorOptions;
    doctorOptions.dataDir =
        options.dataDir.empty() ? defaultDataDir() : std::filesystem::path(options.dataDir);
    if (!options.passphraseFile.empty() || !options.masterKeyFile.empty()) {
        UnlockOptions unlock;
        unlock.dataDir = doctorOptions.dataDir;
        if (!options.passphraseFile.empty())
            unlock.passphraseFile = options.passphraseFile;
        if (!options.masterKeyFile.empty())
            unlock.masterKeyFile = options.masterKeyFile;
        doctorOptions.unlock = unlock.keyringUnlock();
    }
    const auto report = runDoctor(doctorOptions);
    if (options.json)
        printReportJson(report, registry.out());
    else
        printReport(report, registry.out());
    return report.hasErrors() ? kExitFailure : kExitOk;
}

}  // namespace

void registerDoctorCommand(CLI::App& app, CommandRegistry& registry)
{
    auto options = std::make_shared<DoctorCommandOptions>();
    auto* command = app.add_subcommand(
        "doctor", "Check this machine: libraries, GPU, CPU AES support and free disk space");
    command->add_option(
        "--data-dir", options->dataDir,
        "Data directory to check for free space (default: " + defaultDataDir().string() + ")");
    command->add_option("--passphrase-file", options->passphraseFile,
                        "Also open the data directory (with its passphrase, from this file) and "
                        "check that it has two admins, so that four eyes holds");
    command->add_option("--master-key-file", options->masterKeyFile,
                        "As --passphrase-file, with the keyring's master key file");
    command->add_flag("--json", options->json, "Print the report as JSON for scripts");

    registry.onRun(command, [options, &registry] { return doctor(registry, *options); });
}

}  // namespace sealtrain::ctl
