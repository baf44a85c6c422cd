// How a worker starts a job's trainer ranks (docs/operations/workers.md, "Launchers"):
//   local, one rank   sealtrain-train as a child, keys on a pipe (node/trainer_launcher.h)
//   local, R ranks    mpirun -np R on this node; each rank reads the keys from its own FIFO
//   slurm             an sbatch script whose `srun --mpi=pmix --input=all` starts N x R ranks;
//                     what reaches every rank through srun's standard input (read from a FIFO
//                     in the job's private folder) is the keys sealed to each node's own key and
//                     signed by the worker (node/node_keys.h), since Slurm forwards it between
//                     nodes in clear; `sealtrain-worker open-keys` opens them on each node
// The metrics are rank 0's JSON lines (its standard output under mpirun or in the Slurm job's
// output file). A stop (cancellation) signals mpirun or the trainer, or runs scancel.
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/crypto/secret_bytes.h"
#include "sealtrain/crypto/signing.h"
#include "sealtrain/node/node_keys.h"

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace sealtrain::worker {

enum class Launcher { Local, Slurm };

struct LaunchSettings {
    Launcher launcher = Launcher::Local;
    std::string mpirun = "mpirun";
    std::string sbatch = "sbatch";
    std::string scancel = "scancel";
    std::string partition;  // slurm: empty for the cluster's default
    // slurm: every node's X25519 public key (--node-keys), the path of each node's own key
    // (the same on every node), and the sealtrain-worker the nodes run to open the keys.
    std::vector<node::NodeKey> nodeKeys;
    std::filesystem::path nodeKeyFile = "/etc/sealtrain/node.key";
    std::filesystem::path self;
};

struct TrainerRun {
    std::filesystem::path trainer;
    std::vector<std::string> arguments;  // `train`'s, without --keys-fd and --metrics-fd
    std::int64_t nodes = 1;
    std::int64_t ranksPerNode = 1;
    std::filesystem::path folder;  // the job's private folder (FIFOs, the batch script)
    // slurm: the worker's enrolled signing key, which signs the node keys bundle.
    const crypto::SigningKey* signer = nullptr;
};

// Stops a running launch from another thread (safe to call at any time, more than once).
class LaunchControl {
public:
    void stop();
    // Whether ranks (or the launcher that waits for them) are running now.
    [[nodiscard]] bool running() const { return pid_.load() > 0; }
    void setPid(int pid);
    void setSlurmJob(std::string id, std::string scancel);

private:
    std::atomic<int> pid_{0};
    std::atomic<bool> stopped_{false};
    std::mutex lock_;  // the Slurm job's id and scancel
    std::string slurmJob_;
    std::string scancel_;
};

// Runs the job's ranks to their end, passing rank 0's output lines to `onLine`. Returns the exit
// status (the trainer's, mpirun's or the Slurm job's).
[[nodiscard]] Result<int> launchTrainer(const LaunchSettings& settings, const TrainerRun& run,
                                        crypto::SecretBytes keys, LaunchControl& control,
                                        const std::function<void(std::string_view)>& onLine);

}  // namespace sealtrain::worker
