// sealtrain-worker's two jobs (docs/operations/workers.md): enrolling once with a one-time token,
// and running: one mutual-TLS channel to the control plane, a heartbeat with the node's
// inventory, jobs taken one at a time, their keys opened in memory and handed to sealtrain-train
// on a pipe, metrics relayed, every checkpoint uploaded, and the attempt finished. When the
// control plane can not be reached the worker keeps training, keeps what it could not send in
// memory, and retries with back-off; nothing is dropped.
//
// Its folder (mode 0700, owned by the worker's own user):
//   worker.json         where the control plane is, this worker's name and pool (public)
//   ca.pem, tls.crt     the platform CA and the worker's certificate (public)
//   tls.key             the worker's TLS key (P-256, PKCS#8), mode 0600
//   signing.key         the Ed25519 key that signs its checkpoints, mode 0600
//   box.key             the X25519 key job keys are sealed to, mode 0600
//   datasets/<id>/      sealed dataset files as the control plane keeps them
//   jobs/<id>/          the current attempt's sealed checkpoints
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/worker/launch.h"

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>

namespace sealtrain::worker {

struct EnrollOptions {
    std::string address;  // the control plane: "host:port" or "unix:/path"
    std::string serverName = "localhost";
    std::string fingerprint;  // of the platform CA, "sha256:…" (as `sealtrainctl connect`)
    std::string token;
    std::filesystem::path dir;
    bool interconnectEncrypted = false;
};

// Makes the worker's three keys, enrolls with the token and writes the folder. Refuses a folder
// that already holds an enrolled worker.
[[nodiscard]] Result<std::string> enroll(const EnrollOptions& options);

struct RunOptions {
    std::filesystem::path dir;
    std::filesystem::path trainer;  // sealtrain-train
    // How the trainer's ranks start: here (one rank, or mpirun for several GPUs) or through
    // Slurm (sbatch and srun) when this worker fronts a cluster (launch.h).
    LaunchSettings launch;
    // Run once this long idle (no job), e.g. "systemctl poweroff" on a rented node; empty: none.
    std::string idleCommand;
    std::chrono::milliseconds idleAfter{std::chrono::minutes(30)};
    bool once = false;  // exit after one job (tests, scripts)
    std::chrono::seconds maxBackoff{30};
    bool interconnectEncrypted = false;
    // Told once the worker serves (its identity read, its control plane named), with a status
    // line; and at every turn of the heartbeat loop, which turns while the worker is alive, the
    // control plane reachable or not (the systemd watchdog, app/worker/main.cpp).
    std::function<void(std::string_view status)> onReady;
    std::function<void()> onAlive;
};

// The exit status of a worker the control plane refuses: revoked, or its certificate expired.
// It must be enrolled again; restarting it does not help (the systemd unit does not).
inline constexpr int kExitRefused = 3;

// Runs until SIGTERM or SIGINT (or after one job with `once`). Returns the exit status: 0 when
// stopped, kExitRefused when refused, 1 on any other error.
[[nodiscard]] int run(const RunOptions& options);

}  // namespace sealtrain::worker
