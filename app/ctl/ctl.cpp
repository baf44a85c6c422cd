// sealtrainctl's command tree over CLI11: global options, then each command group's register
// function (commands.h). This file only wires; commands live in their own files.
#include "ctl.h"

#include "commands.h"

#include "sealtrain/base/logging.h"
#include "sealtrain/base/version.h"

#include <fmt/format.h>

#include <ostream>

namespace sealtrain::ctl {

int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err)
{
    CLI::App app{"sealtrainctl: command line for the Sealtrain training platform.\n"
                 "A client of the control plane (sealtrain-control) that its profile names: your "
                 "own, on this machine (init, start, stop), or a shared one (connect). It holds "
                 "no platform key; the offline checks (audit verify, checkpoint verify, dsse "
                 "verify, sealed inspect, job validate) need none.",
                 "sealtrainctl"};
    app.set_version_flag("--version", fmt::format("sealtrainctl {}", kVersion),
                         "Print the version and exit");
    app.require_subcommand(1);
    app.fallthrough();
    app.footer("Run 'sealtrainctl COMMAND --help' for a command's options.\n"
               "Documentation: README.md and docs/ in the source tree.");

    std::string logLevel = "warning";
    std::string logFormat = "text";
    app.add_option("--log-level", logLevel,
                   "Log verbosity: trace, debug, info, warning, error, critical or off")
        ->check(CLI::IsMember({"trace", "debug", "info", "warning", "error", "critical", "off"}))
        ->capture_default_str();
    app.add_option("--log-format", logFormat, "Log format on standard error: text or json")
        ->check(CLI::IsMember({"text", "json"}))
        ->capture_default_str();

    CommandRegistry registry(out, err);
    registerWorkstationCommands(app, registry);
    registerClientCommands(app, registry);
    registerTotpCommands(app, registry);
    registerDataCommands(app, registry);
    registerJobCommands(app, registry);
    registerRunCommands(app, registry);
    registerModelCommands(app, registry);
    registerPolicyCommands(app, registry);
    registerWorkerCommands(app, registry);
    registerKeyringCommands(app, registry);
    registerBackupCommands(app, registry);
    registerAuditCommands(app, registry);
    registerComplianceCommands(app, registry);
    registerDatasetCommands(app, registry);
    registerCheckpointCommands(app, registry);
    registerKeysCommands(app, registry);
    registerSealedCommands(app, registry);
    registerDoctorCommand(app, registry);

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
        return registry.failUsage(what + " Run 'sealtrainctl --help' to see the commands.");
    }

    log::Options logOptions;
    logOptions.level = log::parseLevel(logLevel).value_or(log::Level::Warning);
    logOptions.format = logFormat == "json" ? log::Format::Json : log::Format::Text;
    log::configure(logOptions);

    const int code = registry.runChosen();
    if (code < 0) {
        return registry.failUsage("that command needs a subcommand. Run 'sealtrainctl --help' to "
                                  "see the commands.");
    }
    return code;
}

}  // namespace sealtrain::ctl
