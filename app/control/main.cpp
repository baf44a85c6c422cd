// sealtrain-control: the control plane as a daemon, the one trust boundary (docs/architecture.md,
// docs/api.md, docs/operations/control-daemon.md). It alone unlocks the keyring, opens the
// database and appends to the audit log; clients reach it over gRPC with TLS 1.3 and the
// platform CA's certificates. SIGTERM or SIGINT: it stops taking calls, lets the calls in flight
// finish, signs a head over what they appended, and exits 0.
#include "data_directory_tools.h"
#include "secret_line.h"
#include "totp_test_clock.h"

#include "sealtrain/api/server.h"
#include "sealtrain/api/tls_policy.h"
#include "sealtrain/base/byte_io.h"
#include "sealtrain/base/encoding.h"
#include "sealtrain/base/paths.h"
#include "sealtrain/base/process.h"
#include "sealtrain/base/service_notify.h"
#include "sealtrain/base/version.h"
#include "sealtrain/core/data_directory/data_directory.h"
#include "sealtrain/crypto/hash.h"
#include "sealtrain/crypto/secret_bytes.h"
#include "sealtrain/formats/job_spec.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

using namespace sealtrain;

namespace {

struct Options {
    std::filesystem::path dataDir;
    std::vector<std::string> listen;
    std::filesystem::path runDir;
    std::filesystem::path masterKeyFile;
    std::vector<std::string> dnsNames = {"localhost"};
    std::filesystem::path readyFile;
    int graceSeconds = 10;
    std::uint64_t maxImportBytes = std::uint64_t{4} << 30U;
    unsigned maxPasswordChecks = 4;
    unsigned maxUploads = 4;
    unsigned maxDownloads = 4;
    unsigned maxWatches = 32;
    unsigned maxWatchesPerUser = 8;
    int uploadIdleSeconds = 60;
    int anonymousRefusalWindow = 10;
    int passwordCheckWaitMs = 10000;
    std::int64_t maxLockoutPeers = 256;
    std::int64_t enrolmentCodeLifetime = std::int64_t{7} * 24 * 3600;
    formats::JobSpecLimits jobSpecLimits;
    int heartbeatMs = 5000;
    int workerTimeoutSeconds = 30;
    std::filesystem::path trainer;
    bool noTrainer = false;
    std::string auditForward;
    std::filesystem::path auditForwardCa;
    std::filesystem::path auditForwardCertificate;
    std::filesystem::path auditForwardKey;
    std::vector<std::string> auditWitnesses;
    bool acceptWitnessLoss = false;
    std::vector<std::string> detachWitnesses;
    std::filesystem::path tpmOwnerAuthFile;
};

int fail(const Error& error)
{
    std::fprintf(stderr, "sealtrain-control: %s\n", error.message().c_str());
    return 1;
}

// The data directory must be readable by its owner alone: it holds the sealed keyring and the
// database, and whoever can copy them can try passphrases offline.
Result<void> checkPrivate(const std::filesystem::path& dir)
{
    struct stat info {};
    if (::stat(dir.c_str(), &info) != 0)
        return Error(ErrorCode::NotFound,
                     fmt::format("There is no data directory at '{}'; create one with "
                                 "`sealtrainctl init` or give the right --data-dir.",
                                 dir.string()));
    if ((info.st_mode & 077U) != 0)
        return Error(ErrorCode::PermissionDenied,
                     fmt::format("The data directory '{}' can be read by other users (mode {:o}); "
                                 "run `chmod 700 {}` first.",
                                 dir.string(), info.st_mode & 0777U, dir.string()));
    return success();
}

// The passphrase as the first line of standard input (a pipe or a systemd credential);
// afterwards standard input is /dev/null, for this process and every child it starts.
Result<crypto::SecretBytes> passphraseFromStdin()
{
    auto passphrase = control::readSecretLine("passphrase", "give --master-key-file");
    detachStandardInput();
    return passphrase;
}

// Over 100 lines: the daemon's life in its order (data directory, keys, TLS, services,
// signals, drain), each step a few lines that share the open objects.
int run(const Options& options, const std::string& effectiveOptions)
{
    if (options.dataDir.empty() || options.listen.empty())
        return fail(Error(ErrorCode::InvalidArgument,
                          "Serving needs --data-dir DIR and --listen ADDRESS (or a --config file "
                          "that gives them); run `sealtrain-control --help` for the tools that "
                          "need neither."));
    // The release build refuses the test clock before it looks at anything (totp_test_clock.h).
    auto totpClock = control::testTotpClockFromEnvironment();
    if (!totpClock)
        return fail(totpClock.error());
    if (auto isPrivate = checkPrivate(options.dataDir); !isPrivate)
        return fail(isPrivate.error());
    const std::filesystem::path runDir =
        options.runDir.empty() ? options.dataDir / "run" : options.runDir;
    std::error_code ec;
    std::filesystem::create_directories(runDir, ec);
    std::filesystem::permissions(runDir, std::filesystem::perms::owner_all,
                                 std::filesystem::perm_options::replace, ec);
    if (ec)
        return fail(Error(ErrorCode::Io, fmt::format("Cannot make the run folder '{}': {}; check "
                                                     "its parent's permissions.",
                                                     runDir.string(), ec.message())));
    // Before anything else touches OpenSSL.
    if (auto policy = api::requireTls13(runDir / "openssl.cnf"); !policy)
        return fail(policy.error());

    core::KeyringUnlock unlock;
    if (!options.masterKeyFile.empty())
        unlock.masterKeyFile = options.masterKeyFile;
    else
        unlock.passphrase = passphraseFromStdin;
    core::DataDirectoryOptions directoryOptions;
    directoryOptions.controlPlane.totpClock = totpClock->get();
    directoryOptions.controlPlane.anonymousRefusalWindow =
        std::chrono::seconds(options.anonymousRefusalWindow);
    directoryOptions.controlPlane.maxLockoutPeers = options.maxLockoutPeers;
    directoryOptions.controlPlane.enrolmentCodeLifetime =
        std::chrono::seconds(options.enrolmentCodeLifetime);
    directoryOptions.auditForward = options.auditForward;
    directoryOptions.auditForwardCa = options.auditForwardCa;
    directoryOptions.auditForwardCertificate = options.auditForwardCertificate;
    directoryOptions.auditForwardKey = options.auditForwardKey;
    directoryOptions.auditWitnesses = options.auditWitnesses;
    directoryOptions.acceptWitnessLoss = options.acceptWitnessLoss;
    directoryOptions.detachWitnesses = options.detachWitnesses;
    directoryOptions.tpmOwnerAuthFile = options.tpmOwnerAuthFile;
    auto platform = core::DataDirectory::open(options.dataDir, unlock, directoryOptions);
    detachStandardInput();  // also with a key file: children never read what started the daemon
    if (!platform)
        return fail(platform.error());

    // SIGTERM and SIGINT are taken by this thread alone (sigwait below), so every thread gRPC
    // starts inherits the blocked mask.
    sigset_t stopSignals;
    sigemptyset(&stopSignals);
    sigaddset(&stopSignals, SIGTERM);
    sigaddset(&stopSignals, SIGINT);
    pthread_sigmask(SIG_BLOCK, &stopSignals, nullptr);

    api::ServerOptions serverOptions;
    serverOptions.listen = options.listen;
    serverOptions.runDir = runDir;
    serverOptions.dnsNames = options.dnsNames;
    serverOptions.maxImportBytes = options.maxImportBytes;
    serverOptions.maxPasswordChecks = options.maxPasswordChecks;
    serverOptions.maxUploads = options.maxUploads;
    serverOptions.maxDownloads = options.maxDownloads;
    serverOptions.maxWatches = options.maxWatches;
    serverOptions.maxWatchesPerUser = options.maxWatchesPerUser;
    serverOptions.jobSpecLimits = options.jobSpecLimits;
    serverOptions.uploadIdleTimeout = std::chrono::seconds(options.uploadIdleSeconds);
    serverOptions.passwordCheckWait = std::chrono::milliseconds(options.passwordCheckWaitMs);
    serverOptions.heartbeatInterval = std::chrono::milliseconds(options.heartbeatMs);
    serverOptions.workerTimeout = std::chrono::seconds(options.workerTimeoutSeconds);
    if (!options.noTrainer) {
        if (!options.trainer.empty())
            serverOptions.trainer = options.trainer;
        else if (auto found = siblingExecutable("sealtrain-train", "train"))
            serverOptions.trainer = *found;
    }
    // Change management (issue #49): this start, its release and its configuration, audited
    // before the first call is served.
    const std::string configSha256 = toHex(crypto::sha256(
        {reinterpret_cast<const std::uint8_t*>(effectiveOptions.data()), effectiveOptions.size()}));
    if (auto recorded = (*platform)->recordStart({kVersion, configSha256}); !recorded)
        return fail(recorded.error());
    auto server = api::ControlServer::start(**platform, serverOptions);
    if (!server)
        return fail(server.error());
    nlohmann::json ready{
        {"pid", ::getpid()}, {"listen", options.listen}, {"ports", (*server)->ports()}};
    std::fprintf(stderr, "sealtrain-control: serving %s on %s\n", options.dataDir.c_str(),
                 ready.dump().c_str());
    if (!options.readyFile.empty()) {
        const std::string text = ready.dump() + "\n";
        if (auto written = writeFileAtomically(
                options.readyFile,
                {reinterpret_cast<const std::uint8_t*>(text.data()), text.size()},
                AtomicFileSink::Overwrite::Allow);
            !written)
            return fail(written.error());
    }

    // Under systemd (Type=notify, WatchdogSec=; docs/operations/control-daemon.md): ready only
    // now, and alive while an empty call still commits.
    service::notifyReady(fmt::format("serving {} on {}", options.dataDir.string(),
                                     nlohmann::json((*server)->ports()).dump()));
    std::optional<service::Watchdog> watchdog;
    if (const auto interval = service::watchdogInterval())
        watchdog.emplace(*interval,
                         [&control = **server] { return static_cast<bool>(control.probe()); });

    int signal = 0;
    sigwait(&stopSignals, &signal);
    std::fprintf(stderr, "sealtrain-control: %s, finishing the calls in flight\n",
                 signal == SIGTERM ? "SIGTERM" : "SIGINT");
    service::notifyStopping("finishing the calls in flight");
    watchdog.reset();
    (*server)->shutdown(std::chrono::seconds(options.graceSeconds));
    (*server)->wait();
    if (auto signedHead = (*platform)->signPendingEntries(); !signedHead)
        return fail(signedHead.error());
    if (!(*platform)->finishForwarding(std::chrono::seconds(10))) {
        const auto health = (*platform)->forwardHealth();
        std::fprintf(stderr,
                     "sealtrain-control: the audit forward target has %llu of %llu entries; the "
                     "rest follows at the next start\n",
                     static_cast<unsigned long long>(health ? health->delivered : 0),
                     static_cast<unsigned long long>(health ? health->logSize : 0));
    }
    std::fprintf(stderr, "sealtrain-control: stopped\n");
    return 0;
}

}  // namespace

// Over 100 lines: the daemon's options and subcommands, one CLI11 declaration each, read
// top to bottom as `--help` prints them.
int main(int argc, char** argv)
{
    // The daemon holds every key: a crash or a debugger must not copy them (issue #27).
    disableCoreDumps();
    CLI::App app{"sealtrain-control: the control plane daemon. It unlocks the data directory and "
                 "serves the gRPC API (docs/api.md) over TLS 1.3 with mutual authentication; stop "
                 "it with SIGTERM."};
    Options options;
    // The package's unit reads its options from /etc/sealtrain/control.conf (TOML: `name =
    // value` with the long option names); a command-line option wins over the file.
    app.set_config("--config", "",
                   "Read options from this TOML file (long names without the "
                   "dashes, e.g. listen = [\"0.0.0.0:7443\"])");
    // A misspelt name in the file is an error, not an option silently left at its default.
    app.allow_config_extras(CLI::config_extras_mode::error);
    app.add_option("--data-dir", options.dataDir,
                   "The data directory (mode 0700); required to serve");
    app.add_option("--listen", options.listen,
                   "Where to listen: unix:/absolute/path or host:port (port 0 picks one); "
                   "repeatable; required to serve");
    app.add_option("--master-key-file", options.masterKeyFile,
                   "Unlock with this key file (a systemd credential in production); without it "
                   "the passphrase is read from standard input");
    app.add_option("--run-dir", options.runDir,
                   "The daemon's own folder (its OpenSSL policy, the published CRL); default "
                   "DATA-DIR/run");
    app.add_option("--server-name", options.dnsNames,
                   "A DNS name for the server's certificate (default localhost); repeatable");
    app.add_option("--ready-file", options.readyFile,
                   "Write {pid, listen, ports} as JSON here once serving");
    app.add_option("--grace", options.graceSeconds,
                   "Seconds the calls in flight get to finish at shutdown")
        ->default_val(10);
    app.add_option("--heartbeat-ms", options.heartbeatMs,
                   "How often workers beat, in milliseconds (they are told)")
        ->capture_default_str()
        ->check(CLI::Range(100, 600000));
    app.add_option("--worker-timeout", options.workerTimeoutSeconds,
                   "Seconds without a beat after which a worker's job is queued again")
        ->capture_default_str()
        ->check(CLI::Range(1, 86400));
    app.add_option("--max-password-checks", options.maxPasswordChecks,
                   "Sign-ins that may check a password at once (64 MiB or more each); the rest "
                   "wait, then are told the control plane is busy")
        ->capture_default_str()
        ->check(CLI::Range(1, 256));
    app.add_option("--max-uploads", options.maxUploads,
                   "Dataset uploads received at once (each held in memory until sealed); more "
                   "are told to try again")
        ->capture_default_str()
        ->check(CLI::Range(1, 256));
    app.add_option("--max-downloads", options.maxDownloads,
                   "Model export downloads sent at once (each staged sealed on disk, the size of "
                   "the model); more are told to try again")
        ->capture_default_str()
        ->check(CLI::Range(1, 256));
    app.add_option("--max-watches", options.maxWatches,
                   "Job watches (live metrics streams) open at once, each holding a thread; "
                   "more are told to try again")
        ->capture_default_str()
        ->check(CLI::Range(1, 1024));
    app.add_option("--max-watches-per-user", options.maxWatchesPerUser,
                   "Of those, the most one user may hold, so that one user can not take them "
                   "all; more are told to end one first")
        ->capture_default_str()
        ->check(CLI::Range(1, 1024));
    app.add_option("--upload-idle-timeout", options.uploadIdleSeconds,
                   "Seconds an upload may send nothing before it is cancelled")
        ->capture_default_str()
        ->check(CLI::Range(1, 86400));
    app.add_option("--password-check-wait-ms", options.passwordCheckWaitMs,
                   "Milliseconds a sign-in waits for a password-check slot before it is told "
                   "the control plane is busy (audited)")
        ->capture_default_str()
        ->check(CLI::Range(1, 600000));
    app.add_option("--anonymous-refusal-window", options.anonymousRefusalWindow,
                   "Seconds in which the refusals of one call without a valid session from one "
                   "peer are counted into one audit entry after the first")
        ->capture_default_str()
        ->check(CLI::Range(1, 3600));
    app.add_option("--max-lockout-peers", options.maxLockoutPeers,
                   "Network peers whose failed sign-ins count apart, per account; the rest "
                   "share one count (the Unix socket always has its own)")
        ->capture_default_str()
        ->check(CLI::Range(1, 65536));
    app.add_option("--enrolment-code-lifetime", options.enrolmentCodeLifetime,
                   "Seconds a new user's enrolment code or a reset code works (default 7 days); "
                   "then an admin makes a new one with `sealtrainctl user reset`")
        ->capture_default_str()
        ->check(CLI::Range(std::int64_t{300}, std::int64_t{30} * 24 * 3600));
    app.add_option("--max-spec-bytes", options.jobSpecLimits.maxBytes,
                   "The largest job spec a caller may send")
        ->capture_default_str()
        ->check(CLI::Range(formats::kJobSpecFloor.maxBytes, formats::kJobSpecCeiling.maxBytes));
    app.add_option("--max-spec-depth", options.jobSpecLimits.maxDepth,
                   "The deepest nesting of a caller's job spec")
        ->capture_default_str()
        ->check(CLI::Range(formats::kJobSpecFloor.maxDepth, formats::kJobSpecCeiling.maxDepth));
    app.add_option("--max-spec-values", options.jobSpecLimits.maxNodes,
                   "The most values (keys, items, scalars) in a caller's job spec")
        ->capture_default_str()
        ->check(CLI::Range(formats::kJobSpecFloor.maxNodes, formats::kJobSpecCeiling.maxNodes));
    app.add_option("--max-import-bytes", options.maxImportBytes,
                   "The largest dataset upload, held in memory until sealed")
        ->capture_default_str();
    app.add_option("--trainer", options.trainer,
                   "The sealtrain-train to run for training calls (clients can not choose it); "
                   "default: the one beside sealtrain-control");
    app.add_flag("--no-trainer", options.noTrainer, "Refuse training calls");
    app.add_option("--audit-forward", options.auditForward,
                   "Also deliver each committed audit entry and signed head, at least once and "
                   "in order, as a JSON line to `journal` (the systemd journal), "
                   "`file:/ABSOLUTE/PATH` or a SIEM's syslog receiver `syslog-tls://HOST:PORT` "
                   "(RFC 5425; docs/formats/audit-forward.md); the cursor is the data "
                   "directory's audit-forward.cursor; check the copy with "
                   "`sealtrainctl audit verify-forwarded`");
    app.add_option("--audit-forward-ca", options.auditForwardCa,
                   "The CA certificates (PEM) the syslog receiver's certificate must chain to; "
                   "default: the system's")
        ->check(CLI::ExistingFile);
    app.add_option("--audit-forward-cert", options.auditForwardCertificate,
                   "A client certificate (PEM) for a syslog receiver that asks for one; with "
                   "--audit-forward-key")
        ->check(CLI::ExistingFile);
    app.add_option("--audit-forward-key", options.auditForwardKey,
                   "The client certificate's private key (PEM, readable by this daemon alone)")
        ->check(CLI::ExistingFile);
    app.add_option("--audit-witness", options.auditWitnesses,
                   "Also keep every signed audit head outside the data directory, where a "
                   "rollback of the directory cannot reach: `file:/ABSOLUTE/PATH` on another "
                   "file system or host, or a TPM counter `tpm:0xINDEX[@TCTI]` (repeatable; "
                   "docs/operations/data-directory.md, \"Witnesses\"); once attached the data "
                   "directory requires it at every start");
    app.add_flag("--accept-witness-loss", options.acceptWitnessLoss,
                 "Start although a witness is missing, empty or newer than the database: each "
                 "starts again from the newest head, and the loss is audited "
                 "(audit.witness_reset); use it only once the loss is understood");
    app.add_option("--detach-audit-witness", options.detachWitnesses,
                   "Stop keeping heads with this recorded witness (the --audit-witness form; "
                   "repeatable): it is checked first like every recorded one, then forgotten, "
                   "audited as audit.witness_detach; leave it out of --audit-witness");
    app.add_option("--audit-witness-tpm-owner-file", options.tpmOwnerAuthFile,
                   "A file holding the TPM owner hierarchy's password (mode 0600, one line), "
                   "for tpm: witnesses on a TPM whose administrator set one; by default the "
                   "owner's authorisation is empty, as a distribution leaves it");
    // Without a subcommand it serves; with one, it runs that tool and exits.
    app.require_subcommand(0, 1);
    std::optional<int> toolExit;
    control::addDataDirectoryTools(app, toolExit);
    CLI11_PARSE(app, argc, argv);
    if (toolExit)
        return *toolExit;
    // The effective options (the file's, the command line's and the defaults) as TOML: their
    // SHA-256 goes into the start's audit entry, so a changed configuration is a recorded change.
    // Hashed in run(), once the TLS policy is set: nothing may touch OpenSSL before it.
    return run(options, app.config_to_str(true, false));
}
