#!/usr/bin/python3
"""A worker that fronts a real Slurm cluster trains a 2-rank job (issue #16).

The test starts munged, slurmctld and slurmd from Debian's slurm-wlm and munge with a generated
configuration (one node, this machine, in a temporary folder), then the platform as the
quickstart does: sealtrain-control, users, a small dataset, a job with two ranks on one node
(`resources: {nodes: 1, cpu_ranks_per_node: 2, device: cpu}`, the CPU backend), its
approval, and `sealtrain-worker run --launcher slurm`. The worker writes an sbatch script whose
`srun --mpi=pmix --input=all` starts the two trainer ranks (MPI bootstrapped through PMIx), and
hands them, through a FIFO and srun's standard input, the keys sealed to the node's own key
(`sealtrain-worker node-key`) and signed by the worker; on the node `sealtrain-worker open-keys`
opens them for each rank (issue #27, item 19). The job must succeed with world_size 2 over MPI,
and its checkpoint must be recorded. In both modes the operator declares the worker's
interconnect encrypted, and `worker list --json` shows it.

    test_worker_slurm.py SEALTRAINCTL SEALTRAIN_CONTROL SEALTRAIN_WORKER SEALTRAIN_TRAIN [local]

With `local` the same job runs without Slurm: the worker starts the two ranks on its own node with
mpirun, each reading the keys from a FIFO of its own; before the job is approved, the worker's
idle rule (a command after 3 s without a job) must run.

Exits 77 (skipped), saying why, when Slurm or munge is not installed or the test is not root
(slurmd runs jobs as their submitter and needs root).
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

from sealtrain_support import run, totp

CTL, CONTROL, WORKER, TRAINER = sys.argv[1:5]
LAUNCHER = sys.argv[5] if len(sys.argv) > 5 else "slurm"


def trainer_for_ranks(work):
    """The trainer the worker starts on every rank. Under the sanitizers, CMake sets
    SEALTRAIN_RANK_ASAN_OPTIONS (leak checks off): Open MPI leaves its plug-ins' allocations
    behind at MPI_Finalize, so the ranks alone run without them, through a wrapper; the control
    plane, the worker and sealtrainctl keep the preset's leak checks."""
    options = os.environ.get("SEALTRAIN_RANK_ASAN_OPTIONS")
    if not options:
        return TRAINER
    wrapper = os.path.join(work, "sealtrain-train-rank")
    with open(wrapper, "w") as handle:
        handle.write(f"#!/bin/sh\nASAN_OPTIONS='{options}' exec '{TRAINER}' \"$@\"\n")
    os.chmod(wrapper, 0o755)
    return wrapper


def skip(reason):
    print(f"SKIP: {reason}")
    sys.exit(77)


def wait_for(what, predicate, seconds, fail=True):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if predicate():
            return True
        time.sleep(0.25)
    if fail:
        sys.exit(f"FAIL: {what} within {seconds} s")
    return False


class Slurm:
    """munged, slurmctld and slurmd on this machine, configured in `folder`."""

    def __init__(self, folder):
        self.folder = folder
        self.processes = []
        host = socket.gethostname().split(".")[0]
        self.host = host
        for name in ("state", "spool", "log", "munge"):
            os.makedirs(os.path.join(folder, name), mode=0o700)
        key = os.path.join(folder, "munge", "munge.key")
        with open(key, "wb") as handle:
            handle.write(os.urandom(1024))
        os.chmod(key, 0o400)
        self.socket = os.path.join(folder, "munge", "munge.socket")
        self.conf = os.path.join(folder, "slurm.conf")
        with open(self.conf, "w") as handle:
            handle.write(f"""ClusterName=sealtrain-test
SlurmctldHost={host}
SlurmUser=root
SlurmctldPort=26817
SlurmdPort=26818
AuthType=auth/munge
AuthInfo=socket={self.socket}
CredType=cred/munge
StateSaveLocation={folder}/state
SlurmdSpoolDir={folder}/spool
SlurmctldPidFile={folder}/slurmctld.pid
SlurmdPidFile={folder}/slurmd.pid
SlurmctldLogFile={folder}/log/slurmctld.log
SlurmdLogFile={folder}/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
NodeName={host} CPUs={max(2, os.cpu_count() or 2)} State=UNKNOWN
PartitionName=main Nodes={host} Default=YES MaxTime=INFINITE State=UP
""")
        os.environ["SLURM_CONF"] = self.conf

    def start(self):
        munge = os.path.join(self.folder, "munge")
        run("munged", f"--key-file={munge}/munge.key", f"--socket={self.socket}",
            f"--pid-file={munge}/munged.pid", f"--log-file={munge}/munged.log",
            f"--seed-file={munge}/seed", "-f")
        for daemon in ("slurmctld", "slurmd"):
            log = open(os.path.join(self.folder, "log", f"{daemon}.out"), "w")
            self.processes.append(subprocess.Popen([daemon, "-D", "-f", self.conf],
                                                   stdout=log, stderr=subprocess.STDOUT))
            time.sleep(1)
        wait_for("the Slurm node is idle",
                 lambda: "idle" in subprocess.run(["sinfo", "-h", "-o", "%t"], capture_output=True,
                                                  text=True).stdout, 60)

    def stop(self):
        for process in reversed(self.processes):
            process.terminate()
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
        pid_file = os.path.join(self.folder, "munge", "munged.pid")
        if os.path.exists(pid_file):
            with open(pid_file) as handle:
                try:
                    os.kill(int(handle.read().strip()), signal.SIGTERM)
                except (ValueError, ProcessLookupError):
                    pass


def main():
    if LAUNCHER == "slurm":
        for program in ("munged", "slurmctld", "slurmd", "sbatch", "srun", "sinfo"):
            if shutil.which(program) is None:
                skip(f"{program} is not installed (apt install slurm-wlm munge)")
        if os.geteuid() != 0:
            skip("slurmd must run as root to start jobs; run the test as root")

    os.umask(0o077)  # secrets, keys and data are private
    work = tempfile.mkdtemp(prefix="sealtrain-slurm-")
    slurm = Slurm(os.path.join(work, "slurm"))
    daemon = None
    worker = None
    try:
        if LAUNCHER == "slurm":
            slurm.start()
            print("slurm: munged, slurmctld and slurmd are up, the node is idle")

        data = os.path.join(work, "data")
        secrets = os.path.join(work, "secrets")
        os.mkdir(secrets, 0o700)
        passphrase = os.path.join(secrets, "passphrase")
        password = os.path.join(secrets, "password")
        with open(passphrase, "w") as handle:
            handle.write("a long passphrase for the slurm test only\n")
        with open(password, "w") as handle:
            handle.write("correct horse battery staple 42\n")
        os.environ["SEALTRAIN_CLIENT_DIR"] = os.path.join(work, "client")
        init = run(CTL, "init", "--data-dir", data, "--passphrase-file", passphrase,
                   "--admin", "alice", "--admin-password-file", password,
                   "--totp-uri-file", os.path.join(secrets, "alice.uri"),
                   "--argon2-ops", "2", "--argon2-mem-mib", "64")
        fingerprint = [line.split(": ")[1] for line in init.splitlines()
                       if line.startswith("Platform CA fingerprint: ")][0]
        ready = os.path.join(work, "ready.json")
        socket_address = f"unix:{work}/control.sock"
        with open(passphrase) as handle:
            daemon = subprocess.Popen([CONTROL, "--data-dir", data, "--listen", socket_address,
                                       "--ready-file", ready, "--trainer", TRAINER,
                                       "--heartbeat-ms", "500"], stdin=handle)
        wait_for("sealtrain-control is ready", lambda: os.path.exists(ready), 60)

        os.environ["SEALTRAIN_CLIENT_DIR"] = os.path.join(work, "client")
        run(CTL, "connect", socket_address, "--ca-fingerprint", fingerprint)
        run(CTL, "sign-in", "--user", "alice", "--password-file", password,
            "--totp-code", totp(os.path.join(secrets, "alice.uri"), "alice"))
        for user, roles in (("dana", ("steward", "engineer")), ("ann", ("approver",)),
                            ("otto", ("operator",))):
            code = os.path.join(secrets, f"{user}.code")
            run(CTL, "user", "create", "--as", "alice", user, "--code-file", code)
            run(CTL, "sign-in", "--user", user, "--reset-code-file", code,
                "--password-file", password, "--totp-uri-file",
                os.path.join(secrets, f"{user}.uri"))
            for role in roles:
                run(CTL, "grant", "add", "--as", "alice", user, role)
            run(CTL, "sign-in", "--user", user, "--password-file", password,
                "--totp-code", totp(os.path.join(secrets, f"{user}.uri"), user))

        corpus = os.path.join(work, "corpus.txt")
        with open(corpus, "w") as handle:
            for i in range(600):
                handle.write(f"Record {i} of the corpus two Slurm ranks train on.\n\n")
        run(CTL, "dataset", "import", "--as", "dana", "--name", "corpus", "--format",
            "text-records", "--progress", "none", corpus)
        spec = os.path.join(work, "job.yaml")
        with open(spec, "w") as handle:
            handle.write("spec_version: 1\nname: two-ranks\nproject: demo\ndataset: corpus\n"
                         "model: {layers: 1, heads: 2, width: 16, context: 16}\n"
                         "schedule: {steps: 6, batch: 2}\ncheckpoints: {every: 3}\n"
                         "resources: {pool: cpu, device: cpu, nodes: 1, cpu_ranks_per_node: 2, "
                         "threads: 1}\n")
        job = json.loads(run(CTL, "job", "submit", "--as", "dana", spec, "--json"))
        assert job["state"] == "vetted", job

        token = run(CTL, "worker", "enroll-token", "--as", "otto", "cluster-1",
                    "--pool", "cpu").strip()
        worker_dir = os.path.join(work, "worker")
        run(WORKER, "enroll", "--control", socket_address, "--ca-fingerprint", fingerprint,
            "--dir", worker_dir, env=dict(os.environ, SEALTRAIN_ENROLL_TOKEN=token))
        run(CTL, "worker", "interconnect", "--as", "otto", "cluster-1", "--encrypted")
        listed = json.loads(run(CTL, "worker", "list", "--as", "otto", "--json"))
        assert [w["interconnect_declared"] for w in listed] == [True], listed
        worker_log = open(os.path.join(work, "worker.log"), "w")
        command = [WORKER, "run", "--dir", worker_dir, "--trainer", trainer_for_ranks(work),
                   "--launcher", LAUNCHER, "--once"]
        if LAUNCHER == "slurm":
            # The node's key, made on the node; its public half goes to the worker's folder.
            node_key = os.path.join(work, "node.key")
            public = run(WORKER, "node-key", "--out", node_key).strip()
            assert len(public) == 64, public
            node_keys = os.path.join(work, "node-keys")
            os.mkdir(node_keys, 0o700)
            with open(os.path.join(node_keys, f"{slurm.host}.pub"), "w") as handle:
                handle.write(public + "\n")
            command += ["--node-keys", node_keys, "--node-key-file", node_key]
        idle_marker = os.path.join(work, "idle-ran")
        if LAUNCHER == "local":
            # The idle rule: with no job for 3 s the worker runs its command (a rented node would
            # shut down), then goes on polling.
            command += ["--idle-command", f"touch {idle_marker}", "--idle-minutes", "0.05"]
        worker = subprocess.Popen(command, stdout=worker_log, stderr=subprocess.STDOUT)
        if LAUNCHER == "local":
            wait_for("the idle command runs", lambda: os.path.exists(idle_marker), 60)
            print("local: the idle command ran after 3 s without a job")
        run(CTL, "job", "approve", "--as", "ann", str(job["id"]), "--sha256",
            job["spec_sha256"])

        def state():
            shown = json.loads(run(CTL, "job", "show", "--as", "dana", str(job["id"]),
                                   "--json"))
            return shown["state"]
        def ended():
            return state() in ("succeeded", "failed", "cancelled")
        if not wait_for("the job ends", ended, 240, fail=False) or state() != "succeeded":
            with open(os.path.join(work, "worker.log")) as handle:
                sys.exit(f"FAIL: the job is {state()} after up to 240 s; the worker said:\n"
                         f"{handle.read()}")
        metrics = [json.loads(line) for line in
                   run(CTL, "job", "metrics", "--as", "dana", str(job["id"])).splitlines()]
        start = [m for m in metrics if m.get("kind") == "start"]
        assert start and start[-1]["world_size"] == 2, start
        assert start[-1]["collective"] == "mpi", start
        steps = sorted(m["step"] for m in metrics if m.get("kind") == "step")
        assert steps == list(range(1, 7)), steps
        checkpoints = sorted(m["step"] for m in metrics if m.get("kind") == "checkpoint")
        assert checkpoints == [3, 6], checkpoints
        recorded = os.listdir(os.path.join(data, "jobs", str(job["id"]), "checkpoints"))
        assert "checkpoint-00000006.sealed" in recorded, recorded
        # --once: the worker exits 0 after its job; under the sanitizers a leak or an error it
        # reports at exit makes that status non-zero.
        status = worker.wait(timeout=60)
        if status != 0:
            with open(os.path.join(work, "worker.log")) as handle:
                sys.exit(f"FAIL: the worker exited with status {status} after its job; it said:\n"
                         f"{handle.read()[-4000:]}")
        how = "srun --mpi=pmix" if LAUNCHER == "slurm" else "mpirun on the worker's node"
        print(f"{LAUNCHER}: job {job['id']} trained by 2 ranks (MPI through {how}), "
              f"steps {steps[0]}..{steps[-1]}, checkpoints {checkpoints} recorded")
    finally:
        if worker is not None and worker.poll() is None:
            worker.terminate()
            worker.wait(timeout=60)
        if daemon is not None:
            daemon.send_signal(signal.SIGTERM)
            daemon.wait(timeout=60)
        slurm.stop()
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
