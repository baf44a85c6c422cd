// `sealtrainctl doctor`: options and output of the machine check (the checks are doctor.cpp).
#include "client_options.h"
#include "commands.h"
#include "ctl.h"
#include "doctor.h"

#include "sealtrain/base/paths.h"
#include "sealtrain/crypto/certificate_authority.h"

#include <chrono>
#include <memory>

namespace sealtrain::ctl {
namespace {

struct DoctorCommandOptions {
    std::string dataDir;
    ClientOptions client;
    bool json = false;
};

// What the control plane warns every user of, asked as the signed-in user (not started for it).
Result<std::vector<std::string>> controlPlaneWarnings(const api::Profile& profile,
                                                      const std::string& user)
{
    auto client = profile.client(user);
    if (!client)
        return client.error();
    auto who = (*client)->sessions().whoAmI();
    if (!who)
        return who.error();
    return who->warnings;
}

// The Unix seconds of `pem`'s notAfter; 0 when it does not parse.
std::int64_t expiryOf(const std::string& pem)
{
    const auto expires = crypto::certificateExpiry(pem);
    return expires ? std::chrono::duration_cast<std::chrono::seconds>(expires->time_since_epoch())
                         .count()
                   : 0;
}

// The certificates this profile pins and the control plane publishes (neither call appends an
// audit entry), and the active workers' when WhoAmI says the caller may list them (worker.read):
// nobody else is made to leave a refusal in the log by running doctor.
CertificateDates certificateDates(const api::Profile& profile, api::ControlClient& client)
{
    CertificateDates dates;
    if (auto endpoint = profile.endpoint())
        dates.caExpiresUnix = expiryOf(endpoint->caCertificatePem);
    if (auto keys = client.platform().signingKeys())
        dates.artefactRootExpiresUnix = expiryOf(keys->artefactRootPem);
    const auto who = client.sessions().whoAmI();
    if (!who || !who->holds("worker.read"))
        return dates;
    if (auto workers = client.workers().listWorkers())
        for (const api::WorkerSummary& worker : *workers)
            if (worker.state == "active")
                dates.workers.emplace_back(worker.name, worker.certificateExpiresUnix);
    return dates;
}

int doctor(const CommandRegistry& registry, const DoctorCommandOptions& options)
{
    const api::Profile profile = options.client.profile();
    DoctorOptions doctorOptions;
    doctorOptions.dataDir = defaultDataDir();
    if (!options.dataDir.empty())
        doctorOptions.dataDir = options.dataDir;
    else if (auto workstation = profile.workstation(); workstation && *workstation)
        doctorOptions.dataDir = (*workstation)->dataDir;
    // Only with a session to ask with: --as, SEALTRAIN_USER, or the one user signed in here.
    if (auto user = profile.chooseUser(options.client.user); user && profile.endpoint()) {
        doctorOptions.controlPlaneWarnings = controlPlaneWarnings(profile, *user);
        if (auto client = profile.client(*user))
            if (auto info = (*client)->platform().serverInfo()) {
                doctorOptions.enrolmentCodeLifetimeSeconds = info->enrolmentCodeLifetimeSeconds;
                doctorOptions.auditWitnessesOutside = info->auditWitnessesOutside;
                doctorOptions.auditForwarding = info->auditForwarding;
                doctorOptions.nowUnix = std::chrono::duration_cast<std::chrono::seconds>(
                                            std::chrono::system_clock::now().time_since_epoch())
                                            .count();
                doctorOptions.certificates = certificateDates(profile, **client);
            }
    }
    if (auto control = controlExecutable())
        doctorOptions.controlExecutable = *control;
    if (auto trainer = trainerExecutable())
        doctorOptions.trainerExecutable = *trainer;
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
        "doctor", "Check this machine (libraries, GPU, CPU AES support, free disk space) and, "
                  "when you are signed in, whether the control plane guarantees four eyes");
    command->add_option("--data-dir", options->dataDir,
                        "Where to check for free space (default: this client's own data "
                        "directory, else "
                            + defaultDataDir().string() + ")");
    addClientOptions(command, options->client, true);
    command->add_flag("--json", options->json, "Print the report as JSON for scripts");

    registry.onRun(command, [options, &registry] { return doctor(registry, *options); });
}

}  // namespace sealtrain::ctl
