// sealtrain-worker: the headless agent of a GPU node (docs/architecture.md, worker.h,
// docs/operations/workers.md). `enroll` once with a one-time token, then `run` (as a systemd
// service): it takes vetted, approved jobs from the control plane and runs sealtrain-train.
#include "sealtrain/worker/node_commands.h"
#include "sealtrain/worker/worker.h"

#include "sealtrain/api/client.h"
#include "sealtrain/base/byte_io.h"
#include "sealtrain/base/process.h"
#include "sealtrain/base/service_notify.h"

#include <CLI/CLI.hpp>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace {

// The enrolment token from --token-file or SEALTRAIN_ENROLL_TOKEN (one of the two).
sealtrain::Result<std::string> enrolmentToken(const std::filesystem::path& file)
{
    const char* fromEnvironment = std::getenv("SEALTRAIN_ENROLL_TOKEN");
    std::string token;
    if (!file.empty()) {
        auto text = sealtrain::readWholeFile(file, 4096);
        if (!text)
            return text.error();
        token = text->substr(0, text->find('\n'));
    } else if (fromEnvironment != nullptr) {
        token = fromEnvironment;
    }
    if (!token.empty() && token.back() == '\r')
        token.pop_back();
    if (token.empty())
        return sealtrain::Error(sealtrain::ErrorCode::InvalidArgument,
                                "No enrolment token: put it in a file for --token-file or in "
                                "SEALTRAIN_ENROLL_TOKEN (never on the command line).");
    return token;
}

// Microseconds on the steady clock, for the watchdog's check.
std::int64_t steadyNow()
{
    return std::chrono::duration_cast<std::chrono::microseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

}  // namespace

// Over 100 lines: the worker's subcommands and options, one CLI11 declaration each, read
// top to bottom as `--help` prints them.
int main(int argc, char** argv)
{
    // The worker holds its private keys and, during a job, the job's data keys: a crash or a
    // debugger must not copy them (issue #27).
    sealtrain::disableCoreDumps();
    const sealtrain::api::GrpcRuntime grpc;  // outlives every channel to the control plane
    CLI::App app{"sealtrain-worker: runs approved training jobs on this node for a Sealtrain "
                 "control plane"};
    app.require_subcommand(1);

    sealtrain::worker::EnrollOptions enroll;
    auto* enrollCommand =
        app.add_subcommand("enroll", "Enroll this node once with a token from 'sealtrainctl worker "
                                     "enroll-token'");
    enrollCommand
        ->add_option("--control", enroll.address, "The control plane: host:port or unix:/path")
        ->required();
    enrollCommand
        ->add_option("--ca-fingerprint", enroll.fingerprint,
                     "The platform CA's fingerprint (sha256:…), from its administrator")
        ->required();
    // The token is taken from the environment or a file, never from argv, which `ps` shows to
    // every user of the node (issue #27).
    std::filesystem::path tokenFile;
    enrollCommand->add_option("--token-file", tokenFile,
                              "A file whose first line is the one-time enrolment token (or set "
                              "SEALTRAIN_ENROLL_TOKEN)");
    enrollCommand->add_option("--dir", enroll.dir, "The worker's folder (made 0700)")->required();
    enrollCommand
        ->add_option("--server-name", enroll.serverName,
                     "A name in the control plane's certificate")
        ->capture_default_str();
    enrollCommand->add_flag("--interconnect-encrypted", enroll.interconnectEncrypted,
                            "Declare that this node's links to other nodes are encrypted");

    sealtrain::worker::RunOptions run;
    double idleMinutes = 30;
    auto* runCommand = app.add_subcommand(
        "run", "Take and run jobs until stopped (SIGTERM). Exit status: 0 stopped, 3 refused by "
               "the control plane (revoked or expired: enroll again), 1 any other error");
    runCommand->add_option("--dir", run.dir, "The enrolled worker's folder")->required();
    runCommand->add_option("--trainer", run.trainer, "The sealtrain-train to run")->required();
    runCommand->add_option("--mpirun", run.launch.mpirun, "mpirun, for jobs of several GPUs")
        ->capture_default_str();
    std::string launcher = "local";
    runCommand
        ->add_option("--launcher", launcher,
                     "local: ranks on this node; slurm: sbatch and srun on the cluster this node "
                     "submits to")
        ->capture_default_str()
        ->check(CLI::IsMember({"local", "slurm"}));
    runCommand->add_option("--partition", run.launch.partition,
                           "The Slurm partition (default: the cluster's)");
    runCommand->add_option("--idle-command", run.idleCommand,
                           "A command to run after --idle-minutes without a job (e.g. a "
                           "rented node's shutdown)");
    runCommand
        ->add_option("--idle-minutes", idleMinutes,
                     "Minutes without a job before it (fractions too: 0.5 is 30 s)")
        ->capture_default_str()
        ->check(CLI::Range(0.01, 100000.0));
    std::filesystem::path nodeKeysFolder;
    runCommand->add_option("--node-keys", nodeKeysFolder,
                           "slurm: the folder of the nodes' public keys, one NODE.pub each "
                           "(from 'sealtrain-worker node-key' on that node)");
    runCommand
        ->add_option("--node-key-file", run.launch.nodeKeyFile,
                     "slurm: where each node keeps its own key (the same path on every node)")
        ->capture_default_str();
    runCommand->add_flag("--once", run.once, "Exit after one job");
    runCommand->add_flag("--interconnect-encrypted", run.interconnectEncrypted,
                         "Declare that this node's links to other nodes are encrypted");

    std::filesystem::path nodeKeyOut = "/etc/sealtrain/node.key";
    auto* nodeKeyCommand = app.add_subcommand(
        "node-key", "Make this Slurm node's key once; prints the public half for the worker's "
                    "--node-keys folder");
    nodeKeyCommand
        ->add_option("--out", nodeKeyOut,
                     "Where to write it (mode 0600, never over "
                     "an existing key)")
        ->capture_default_str();
    std::filesystem::path openKeyFile = "/etc/sealtrain/node.key";
    std::string signerHex;
    std::string nodeName;
    auto* openKeysCommand = app.add_subcommand(
        "open-keys", "On a Slurm node, under srun: open this node's keys of a job (standard "
                     "input) for its trainer (standard output); the worker's batch script runs it");
    openKeysCommand->add_option("--node-key-file", openKeyFile, "This node's key")
        ->capture_default_str();
    openKeysCommand->add_option("--signer", signerHex, "The worker's Ed25519 public key, hex")
        ->required();
    openKeysCommand->add_option("--node", nodeName, "This node's name (default: $SLURMD_NODENAME)");

    CLI11_PARSE(app, argc, argv);
    if (*nodeKeyCommand)
        return sealtrain::worker::makeNodeKey(nodeKeyOut);
    if (*openKeysCommand)
        return sealtrain::worker::openKeys(openKeyFile, signerHex, nodeName);
    if (*enrollCommand) {
        auto token = enrolmentToken(tokenFile);
        if (!token) {
            std::fprintf(stderr, "sealtrain-worker: %s\n", token.error().message().c_str());
            return 2;
        }
        enroll.token = std::move(token).value();
        auto done = sealtrain::worker::enroll(enroll);
        if (!done) {
            std::fprintf(stderr, "sealtrain-worker: %s\n", done.error().message().c_str());
            return 1;
        }
        std::printf("%s\n", done->c_str());
        return 0;
    }
    run.idleAfter = std::chrono::milliseconds(std::llround(idleMinutes * 60'000.0));
    run.launch.launcher = launcher == "slurm" ? sealtrain::worker::Launcher::Slurm
                                              : sealtrain::worker::Launcher::Local;
    if (run.launch.launcher == sealtrain::worker::Launcher::Slurm) {
        // The keys reach the nodes sealed to each node's key (issue #27, item 19).
        auto nodeKeys = nodeKeysFolder.empty()
                            ? sealtrain::Result<std::vector<sealtrain::node::NodeKey>>(
                                sealtrain::Error(sealtrain::ErrorCode::InvalidArgument,
                                                 "--launcher slurm needs --node-keys DIR: a "
                                                 "NODE.pub from 'sealtrain-worker node-key' "
                                                 "on each node of the cluster."))
                            : sealtrain::node::readNodeKeys(nodeKeysFolder);
        if (!nodeKeys) {
            std::fprintf(stderr, "sealtrain-worker: %s\n", nodeKeys.error().message().c_str());
            return 2;
        }
        run.launch.nodeKeys = std::move(nodeKeys).value();
        std::error_code ec;
        run.launch.self = std::filesystem::canonical("/proc/self/exe", ec);
        if (ec) {
            std::fprintf(stderr, "sealtrain-worker: Cannot find its own executable.\n");
            return 1;
        }
    }
    // Under systemd (Type=notify, WatchdogSec=): ready once it serves; alive while its heartbeat
    // loop turns (docs/operations/workers.md, "The systemd unit").
    run.onReady = [](std::string_view status) { sealtrain::service::notifyReady(status); };
    std::optional<sealtrain::service::Watchdog> watchdog;
    if (const auto interval = sealtrain::service::watchdogInterval()) {
        auto lastTurn = std::make_shared<std::atomic<std::int64_t>>(steadyNow());
        run.onAlive = [lastTurn] { lastTurn->store(steadyNow()); };
        watchdog.emplace(*interval, [lastTurn, limit = interval->count()] {
            return steadyNow() - lastTurn->load() < limit;
        });
    }
    const int status = sealtrain::worker::run(run);
    sealtrain::service::notifyStopping("stopped");
    return status;
}
