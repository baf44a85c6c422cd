// sealtrainctl's command tree over CLI11. Each command's logic lives in its own file; this one
// only declares options and dispatches.
#include "ctl.h"

#include "doctor.h"

#include "sealtrain/base/logging.h"
#include "sealtrain/base/paths.h"
#include "sealtrain/base/version.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <ostream>

namespace sealtrain::ctl {
namespace {

struct GlobalOptions {
    std::string logLevel = "warning";
    std::string logFormat = "text";
};

struct DoctorCommandOptions {
    std::string dataDir;
    bool json = false;
};

int runDoctorCommand(const DoctorCommandOptions& options, std::ostream& out)
{
    DoctorOptions doctorOptions;
    doctorOptions.dataDir =
        options.dataDir.empty() ? defaultDataDir() : std::filesystem::path(options.dataDir);
    const auto report = runDoctor(doctorOptions);
    if (options.json)
        printReportJson(report, out);
    else
        printReport(report, out);
    return report.hasErrors() ? kExitFailure : kExitOk;
}

}  // namespace

int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err)
{
    CLI::App app{"sealtrainctl: command line for the Sealtrain training platform.\n"
                 "Manages a local control plane's data directory and verifies audit bundles "
                 "and checkpoints offline.",
                 "sealtrainctl"};
    app.set_version_flag("--version", fmt::format("sealtrainctl {}", kVersion),
                         "Print the version and exit");
    app.require_subcommand(1);
    app.fallthrough();
    app.footer("Run 'sealtrainctl COMMAND --help' for a command's options.\n"
               "Documentation: README.md and docs/ in the source tree.");

    GlobalOptions global;
    app.add_option("--log-level", global.logLevel,
                   "Log verbosity: trace, debug, info, warning, error, critical or off")
        ->check(CLI::IsMember({"trace", "debug", "info", "warning", "error", "critical", "off"}))
        ->capture_default_str();
    app.add_option("--log-format", global.logFormat, "Log format on standard error: text or json")
        ->check(CLI::IsMember({"text", "json"}))
        ->capture_default_str();

    DoctorCommandOptions doctor;
    auto* doctorCommand = app.add_subcommand(
        "doctor", "Check this machine: libraries, GPU, CPU AES support and free disk space");
    doctorCommand->add_option(
        "--data-dir", doctor.dataDir,
        "Data directory to check for free space (default: " + defaultDataDir().string() + ")");
    doctorCommand->add_flag("--json", doctor.json, "Print the report as JSON for scripts");

    // CLI11 wants the arguments last-first.
    std::vector<std::string> reversed(args.rbegin(), args.rend());
    try {
        app.parse(reversed);
    } catch (const CLI::CallForHelp&) {
        out << app.help();
        return kExitOk;
    } catch (const CLI::CallForAllHelp&) {
        out << app.help("", CLI::AppFormatMode::All);
        return kExitOk;
    } catch (const CLI::CallForVersion& e) {
        out << e.what() << '\n';
        return kExitOk;
    } catch (const CLI::ParseError& e) {
        std::string what = e.what();
        if (!what.empty() && what.back() != '.')
            what += '.';
        err << "sealtrainctl: " << what << " Run 'sealtrainctl --help' to see the commands.\n";
        return kExitUsage;
    }

    log::Options logOptions;
    logOptions.level = log::parseLevel(global.logLevel).value_or(log::Level::Warning);
    logOptions.format = global.logFormat == "json" ? log::Format::Json : log::Format::Text;
    log::configure(logOptions);

    if (doctorCommand->parsed())
        return runDoctorCommand(doctor, out);
    return kExitUsage;
}

}  // namespace sealtrain::ctl
