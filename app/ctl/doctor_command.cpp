// `sealtrainctl doctor`: options and output of the machine check (the checks are doctor.cpp).
#include "commands.h"
#include "ctl.h"
#include "doctor.h"

#include "sealtrain/base/paths.h"

#include <memory>

namespace sealtrain::ctl {
namespace {

struct DoctorCommandOptions {
    std::string dataDir;
    bool json = false;
};

int doctor(const CommandRegistry& registry, const DoctorCommandOptions& options)
{
    DoctorOptions doctorOptions;
    doctorOptions.dataDir =
        options.dataDir.empty() ? defaultDataDir() : std::filesystem::path(options.dataDir);
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
    command->add_flag("--json", options->json, "Print the report as JSON for scripts");

    registry.onRun(command, [options, &registry] { return doctor(registry, *options); });
}

}  // namespace sealtrain::ctl
