#!/usr/bin/env python3
"""Upgrades (issue #31): a data directory made by an earlier release opens with this one.

    upgrade_fixture.py make OUT.tar.gz CTL DAEMON WORKER TRAINER
        Runs a small platform with these programs (a release's): the first admin, a steward and
        engineer (dana), an approver (ann), an operator (otto) and an auditor (rita); dana imports
        a small dataset and trains a tiny GPT on a worker after ann's approval, registers its
        checkpoint as a model version, has it promoted (one promotion approved, one rejected, one
        left pending) and exported; then a long log: LOG_JOBS more jobs, submitted, vetted again,
        cancelled or rejected, several signed heads. Keeps the data directory, the users' secrets
        (test secrets, not real ones), the job spec and what made it, as
        tests/fixtures/upgrade/sealtrain-VERSION.tar.gz is made (docs/operations/upgrade.md).

    upgrade_fixture.py check FIXTURE.tar.gz CTL DAEMON WORKER TRAINER
        Opens a copy of that data directory with these programs (this build's): the control plane
        starts on it (migrating its database), everyone signs in, the earlier job and dataset are
        there (the long log's jobs in the states they were left in), a new job on the old dataset
        is approved and runs on a worker enrolled now, the model version, its promotions and its
        export are as they were and still work (the pending promotion is approved now, the
        lineage verifies, the approved export downloads again), and an auditor's bundle of the
        whole log, entries of both releases, verifies offline, holds the earlier release's last
        signed head and one platform.migrate entry for the database's migration.

Exit status 0 when every step passed; the first failure says which step and why.
"""
import base64
import hashlib
import hmac
import json
import os
import pathlib
import re
import shutil
import struct
import subprocess
import sys
import tarfile
import tempfile
import time

USERS = {  # name: global roles
    "dana": ["steward", "engineer"],
    "ann": ["approver"],
    "otto": ["operator"],
    "rita": ["auditor"],
}
# A tiny model and a few steps: the fixture stays small (its checkpoint a few hundred KiB).
JOB_SPEC = """spec_version: 1
name: upgrade-fixture
project: demo
dataset: notes
model: {layers: 1, heads: 2, width: 32, context: 32}
optimizer: {lr: 0.002, min_lr: 0.0002, warmup: 2}
schedule: {steps: 20, batch: 4}
checkpoints: {every: 20, keep: 1}
validation: {every: 10, batches: 2}
resources: {pool: cpu, device: cpu, threads: 1}
"""
MODEL = "fixture-gpt"
# The long log (issue #49): enough jobs for several signed heads (one each 1,000 entries), each
# ending in one of the states a job waiting for people can be left in.
LOG_JOBS = 1200


class Failed(Exception):
    pass


def totp(uri_file, at=None):
    """RFC 6238 (SHA-1, 30 s, 6 digits) for the secret in an otpauth:// URI file."""
    secret = re.search(r"[?&]secret=([A-Z2-7]+)", pathlib.Path(uri_file).read_text()).group(1)
    key = base64.b32decode(secret + "=" * (-len(secret) % 8))
    counter = int((at if at is not None else time.time()) // 30)
    digest = hmac.new(key, struct.pack(">Q", counter), hashlib.sha1).digest()
    offset = digest[-1] & 0x0F
    value = struct.unpack(">I", digest[offset:offset + 4])[0] & 0x7FFFFFFF
    return f"{value % 1000000:06d}"


class Platform:
    def __init__(self, root, ctl, daemon, worker, trainer):
        self.root = pathlib.Path(root)
        self.ctl, self.daemon, self.worker, self.trainer = ctl, daemon, worker, trainer
        self.secrets = self.root / "secrets"
        self.env = dict(os.environ, SEALTRAIN_CLIENT_DIR=str(self.root / "client"),
                        SEALTRAIN_CONTROL=daemon)
        self.started = False
        self.worker_process = None

    def run(self, *args, step, stdin=None):
        done = subprocess.run([self.ctl, *args], env=self.env, capture_output=True, text=True,
                              input=stdin, timeout=300)
        if done.returncode != 0:
            raise Failed(f"{step}: sealtrainctl {' '.join(args[:2])} exited "
                         f"{done.returncode}: {done.stderr.strip() or done.stdout.strip()}")
        return done.stdout

    def run_json(self, *args, step):
        return json.loads(self.run(*args, "--json", step=step))

    def start(self):
        self.run("start", "--passphrase-file", str(self.secrets / "passphrase"), "--",
                 "--heartbeat-ms", "1000", step="start the control plane")
        self.started = True

    def stop(self):
        if self.worker_process is not None:
            self.worker_process.terminate()
            self.worker_process.wait(timeout=60)
            self.worker_process = None
        if self.started:
            self.started = False
            self.run("stop", step="stop the control plane")

    def sign_in(self, user):
        self.run("sign-in", "--user", user, "--password-file", str(self.secrets / f"{user}.password"),
                 "--totp-code", totp(self.secrets / f"{user}.totp-uri"), step=f"sign-in of {user}")

    def enrol(self, user):
        code = self.secrets / f"{user}.code"
        self.run("user", "create", "--as", "admin", user, "--code-file", str(code),
                 step=f"create {user}")
        tag = hashlib.sha256(user.encode()).hexdigest()[:8]
        (self.secrets / f"{user}.password").write_text(f"correct horse battery staple {tag}\n")
        self.run("sign-in", "--user", user, "--reset-code-file", str(code), "--password-file",
                 str(self.secrets / f"{user}.password"), "--totp-uri-file",
                 str(self.secrets / f"{user}.totp-uri"), step=f"enrolment of {user}")
        code.unlink()

    def run_job_on_a_new_worker(self, name):
        """Submits the fixture's spec as dana, ann approves it, a worker enrolled now runs it."""
        spec = self.root / "job.yaml"
        submitted = self.run("job", "submit", "--as", "dana", str(spec), step="job submit")
        match = re.search(r"^job (\d+) .*: vetted$", submitted, re.M)
        if not match:
            raise Failed(f"job submit: the job was not vetted: {submitted.strip()}")
        job = match.group(1)
        shown = self.run("job", "show", "--as", "ann", job, step="job show")
        sha = re.search(r"^  spec sha256 (\S+)$", shown, re.M).group(1)
        self.run("job", "approve", "--as", "ann", job, "--sha256", sha, step="job approve")
        token = self.run("worker", "enroll-token", "--as", "otto", name, "--pool", "cpu",
                         step="worker enroll-token").strip()
        fingerprint = re.search(r"sha256:[0-9a-f]+", (self.root / "init.txt").read_text()).group(0)
        socket = f"unix:{self.root / 'client' / 'run' / 'control.sock'}"
        worker_dir = self.root / name
        enrolled = subprocess.run(
            [self.worker, "enroll", "--control", socket, "--ca-fingerprint", fingerprint, "--dir",
             str(worker_dir)], env=dict(self.env, SEALTRAIN_ENROLL_TOKEN=token),
            capture_output=True, text=True, timeout=120)
        if enrolled.returncode != 0:
            raise Failed(f"worker enroll: {enrolled.stderr.strip()}")
        log = open(self.root / f"{name}.log", "w")
        self.worker_process = subprocess.Popen(
            [self.worker, "run", "--dir", str(worker_dir), "--trainer", self.trainer],
            env=self.env, stdout=log, stderr=log)
        followed = subprocess.run([self.ctl, "job", "metrics", "--as", "dana", job, "--follow"],
                                  env=self.env, capture_output=True, text=True, timeout=600)
        if followed.returncode != 0:
            raise Failed(f"job {job} did not succeed: {followed.stderr.strip()} (worker log: "
                         f"{(self.root / f'{name}.log').read_text()[-2000:]})")
        self.worker_process.terminate()
        self.worker_process.wait(timeout=60)
        self.worker_process = None
        return job


def make_model_history(platform, job):
    """dana registers the job's checkpoint as MODEL@1; promotions to production (approved by
    ann), to dev (rejected) and to staging (left pending); an export ann approves, downloaded
    once. Returns what check() compares with."""
    version = platform.run_json("model", "register", "--as", "dana", MODEL, "--job", job,
                                "--description", "the upgrade fixture's model",
                                step="model register")
    digest = version["digest"]
    promotions = {}
    for alias in ("production", "dev", "staging"):
        promotion = platform.run_json("model", "promote", "--as", "dana", f"{MODEL}@1", "--to",
                                      alias, "--reason", f"the fixture's {alias} promotion",
                                      step=f"model promote to {alias}")
        promotions[alias] = promotion["id"]
    platform.run("model", "approve", "--as", "ann", str(promotions["production"]), "--digest",
                 digest, step="model approve")
    platform.run("model", "reject", "--as", "ann", str(promotions["dev"]), "--reason",
                 "not for dev", step="model reject")
    exported = platform.run_json("model", "export-request", "--as", "dana", f"{MODEL}@1",
                                 "--reason", "the fixture's export", step="model export-request")
    platform.run("model", "export-approve", "--as", "ann", str(exported["id"]), "--digest", digest,
                 step="model export-approve")
    platform.run("model", "export", "--as", "dana", str(exported["id"]), "--out",
                 str(platform.root / "export-made"), step="model export")
    return {"name": MODEL, "digest": digest, "promotions": promotions, "export": exported["id"]}


def make_long_log(platform, count):
    """count jobs: each submitted and vetted again by dana, then a third cancelled by dana, a
    third rejected by ann, a third left vetted. Returns {state: [job ids]}."""
    states = {"cancelled": [], "rejected": [], "vetted": []}
    spec = platform.root / "queued.yaml"
    for i in range(count):
        spec.write_text(JOB_SPEC.replace("name: upgrade-fixture", f"name: queued-{i}"))
        submitted = platform.run("job", "submit", "--as", "dana", str(spec), step="job submit")
        job = re.search(r"^job (\d+) ", submitted, re.M).group(1)
        platform.run("job", "vet", "--as", "dana", job, step="job vet")
        if i % 3 == 0:
            platform.run("job", "cancel", "--as", "dana", job, "--reason", "not needed",
                         step="job cancel")
            states["cancelled"].append(int(job))
        elif i % 3 == 1:
            platform.run("job", "reject", "--as", "ann", job, "--reason", "not this one",
                         step="job reject")
            states["rejected"].append(int(job))
        else:
            states["vetted"].append(int(job))
        if (i + 1) % 100 == 0:
            print(f"upgrade fixture: {i + 1} of {count} jobs for the long log", flush=True)
    return states


def audit_entries(bundle):
    """(action, {text detail: value}) of each entry of a bundle, decoded as
    docs/formats/audit.md specifies (version 1 entries)."""
    entries = []
    for line in pathlib.Path(bundle).read_text().splitlines():
        if not line.startswith("entry "):
            continue
        data = base64.b64decode(line.split(" ")[3])
        at = 1 + 8 + 8 + 32 + 1

        def text():
            nonlocal at
            length = struct.unpack(">I", data[at:at + 4])[0]
            at += 4 + length
            return data[at - length:at].decode()
        for _ in range(3):  # actor id, session, auth method
            text()
        action = text()
        text(), text()  # target kind and id
        at += 1  # outcome
        text(), text()  # reason, request id
        approvals = struct.unpack(">H", data[at:at + 2])[0]
        at += 2
        for _ in range(approvals):
            text()
        text()  # keyed-hash key id
        details = {}
        count = struct.unpack(">H", data[at:at + 2])[0]
        at += 2
        for _ in range(count):
            name = text()
            kind = data[at]
            at += 1
            length = struct.unpack(">I", data[at:at + 4])[0]
            value = data[at + 4:at + 4 + length]
            at += 4 + length
            if kind == 0:
                details[name] = value.decode()
        entries.append((action, details))
    return entries


def make(out, programs):
    work = pathlib.Path(tempfile.mkdtemp(prefix="sealtrain-fixture-"))
    platform = Platform(work, *programs)
    try:
        os.umask(0o077)
        platform.secrets.mkdir(parents=True)
        (platform.secrets / "passphrase").write_text("the upgrade fixture's test passphrase\n")
        (platform.secrets / "admin.password").write_text("correct horse battery staple 0\n")
        (work / "job.yaml").write_text(JOB_SPEC)
        notes = work / "notes.txt"
        notes.write_text("".join(f"note {i}: the quick brown fox jumps over the lazy dog {i * 7}.\n\n"
                                 for i in range(300)))
        init = platform.run("init", "--data-dir", str(work / "data"), "--passphrase-file",
                            str(platform.secrets / "passphrase"), "--admin", "admin",
                            "--admin-password-file", str(platform.secrets / "admin.password"),
                            "--totp-uri-file", str(platform.secrets / "admin.totp-uri"),
                            "--argon2-ops", "2", "--argon2-mem-mib", "64", step="init")
        (work / "init.txt").write_text(init)
        platform.start()
        platform.sign_in("admin")
        for user, roles in USERS.items():
            platform.enrol(user)
            for role in roles:
                platform.run("grant", "add", "--as", "admin", user, role, step=f"grant {role}")
            platform.sign_in(user)
        platform.run("dataset", "import", "--as", "dana", "--name", "notes", "--format",
                     "text-records", "--classification", "public", str(notes), step="import")
        job = platform.run_job_on_a_new_worker("worker-made")
        model = make_model_history(platform, job)
        jobs = make_long_log(platform, LOG_JOBS)
        bundle = work / "made.bundle"
        platform.run("audit", "export", "--as", "rita", "--out", str(bundle), step="audit export")
        platform.stop()
        version = subprocess.run([programs[0], "--version"], capture_output=True, text=True).stdout
        (work / "fixture.json").write_text(json.dumps({
            "made_by": version.strip(), "job": int(job), "users": ["admin", *USERS],
            "model": model, "jobs": jobs, "log_entries": len(audit_entries(bundle)),
            "last_head": (work / "data" / "audit.witness").read_text().split()[-1],
            "made": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}, indent=2) + "\n")
        with tarfile.open(out, "w:gz") as archive:
            for name in ["data", "secrets", "job.yaml", "init.txt", "fixture.json"]:
                archive.add(work / name, arcname=name)
        print(f"upgrade fixture: wrote {out} ({os.path.getsize(out)} bytes), made by "
              f"{version.strip()}")
    finally:
        platform.stop()
        shutil.rmtree(work, ignore_errors=True)


def check_jobs(platform, made):
    """The earlier release's trained job succeeded, and each job of its long log is in the state
    it was left in."""
    expected = {made["job"]: "succeeded"}
    for state, ids in made.get("jobs", {}).items():
        expected.update({job: state for job in ids})
    for job, state in expected.items():
        shown = platform.run_json("job", "show", "--as", "dana", str(job), step=f"job show {job}")
        if shown.get("state") != state:
            raise Failed(f"the earlier release's job {job} is {shown.get('state')!r}, not "
                         f"{state!r}, after the upgrade")
    print(f"upgrade: the earlier release's {len(expected)} jobs are in the states they were left in")


def check_model_history(platform, model):
    """The version, its promotions and its export read as the earlier release left them; the
    pending promotion is approved now, the lineage verifies and the export downloads again."""
    shown = platform.run_json("model", "show", "--as", "dana", model["name"], step="model show")
    versions = shown["versions"]
    if len(versions) != 1 or versions[0]["digest"] != model["digest"]:
        raise Failed(f"the earlier release's model version is not {model['digest']}: {versions}")
    states = {promotion["id"]: promotion["state"] for promotion in shown["promotions"]}
    wanted = {model["promotions"]["production"]: "approved",
              model["promotions"]["dev"]: "rejected", model["promotions"]["staging"]: "pending"}
    if states != wanted:
        raise Failed(f"the earlier release's promotions are {states}, not {wanted}")
    exports = {exported["id"]: exported for exported in shown["exports"]}
    if exports.get(model["export"], {}).get("state") != "approved" or \
            exports[model["export"]].get("downloads") != 1:
        raise Failed(f"the earlier release's export {model['export']} is not approved and "
                     f"downloaded once: {shown['exports']}")
    platform.run("model", "approve", "--as", "ann", str(model["promotions"]["staging"]),
                 "--digest", model["digest"], step="model approve of the earlier promotion")
    lineage = platform.root / "lineage.json"
    platform.run("model", "lineage", "--as", "dana", f"{model['name']}@staging", "--out",
                 str(lineage), step="model lineage")
    keys = platform.root / "lineage-keys"
    platform.run("signing-keys", "--as", "rita", "--out-dir", str(keys), step="signing-keys")
    verified = subprocess.run([platform.ctl, "model", "verify-lineage", str(lineage), "--key",
                               str(keys / "registry.pub.pem")],
                              capture_output=True, text=True, timeout=120)
    if verified.returncode != 0 or f"VERIFIED {model['name']}@1" not in verified.stdout:
        raise Failed(f"the earlier release's version's lineage does not verify:\n"
                     f"{verified.stdout}{verified.stderr}")
    folder = platform.root / "export-now"
    platform.run("model", "export", "--as", "dana", str(model["export"]), "--out", str(folder),
                 step="model export of the earlier approval")
    if not (folder / "model.safetensors").is_file() or not (folder / "model.sig").is_file():
        raise Failed(f"the export of the earlier approval is not a signed folder: "
                     f"{sorted(path.name for path in folder.iterdir())}")
    print(f"upgrade: {model['name']}@1, its promotions and its export work as before; the "
          f"lineage verifies")


def check_log(work, bundle, made):
    """The upgraded log holds every entry of the earlier one (its last signed head, from the
    witness file, is among the bundle's heads, which the verifier checked consistent) and one
    platform.migrate entry for this start's migration."""
    entries = audit_entries(bundle)
    if "log_entries" in made and len(entries) < made["log_entries"]:
        raise Failed(f"the upgraded log has {len(entries)} entries, fewer than the "
                     f"{made['log_entries']} the earlier release wrote")
    witness = (work / "data" / "audit.witness").read_text().split()
    heads = [line.split(" ", 1)[1] for line in pathlib.Path(bundle).read_text().splitlines()
             if line.startswith("head ")]
    if made.get("last_head") and made["last_head"] not in heads:
        raise Failed("the earlier release's last signed head is not among the upgraded log's")
    migrations = [details for action, details in entries if action == "platform.migrate"]
    if len(migrations) != 1 or not int(migrations[0].get("from_version", "0")) < int(
            migrations[0].get("to_version", "0")):
        raise Failed(f"the upgrade's migration is not one platform.migrate entry from the "
                     f"earlier schema version to a newer one: {migrations}")
    print(f"upgrade: the log's {len(entries)} entries ({len(witness)} heads witnessed) hold the "
          f"earlier release's last head and the migration from schema version "
          f"{migrations[0]['from_version']} to {migrations[0]['to_version']}")


def check(fixture, programs):
    work = pathlib.Path(tempfile.mkdtemp(prefix="sealtrain-upgrade-"))
    platform = Platform(work, *programs)
    try:
        with tarfile.open(fixture) as archive:
            archive.extractall(work)
        made = json.loads((work / "fixture.json").read_text())
        print(f"upgrade: a data directory made by {made['made_by']} on {made['made']}")
        os.chmod(work / "data", 0o700)
        platform.run("init", "--existing", "--data-dir", str(work / "data"),
                     step="name the old data directory in a new client profile")
        platform.start()
        for user in made["users"]:
            platform.sign_in(user)
        check_jobs(platform, made)
        datasets = platform.run("dataset", "list", "--as", "dana", step="dataset list")
        if "notes" not in datasets:
            raise Failed(f"the earlier release's dataset is missing:\n{datasets}")
        job = platform.run_job_on_a_new_worker("worker-now")
        print(f"upgrade: job {job} ran on the earlier release's dataset and succeeded")
        if "model" in made:
            check_model_history(platform, made["model"])
        bundle = work / "audit.bundle"
        platform.run("audit", "export", "--as", "rita", "--out", str(bundle), step="audit export")
        platform.run("signing-keys", "--as", "rita", "--out-dir", str(work / "keys"),
                     step="signing-keys")
        platform.stop()
        verified = subprocess.run([platform.ctl, "audit", "verify", str(bundle), "--key",
                                   str(work / "keys" / "signing.pub.pem")],
                                  capture_output=True, text=True, timeout=120)
        if verified.returncode != 0 or "VERIFIED" not in verified.stdout:
            raise Failed(f"the audit log of both releases does not verify:\n{verified.stdout}")
        print("upgrade: the audit log, entries of both releases, verifies offline")
        check_log(work, bundle, made)
        # Issue #48: the earlier release had one CA for everything; the first start made the
        # artefact root, apart from it, and issued the model-signing certificate anew under it.
        root = work / "keys" / "artefact-ca.pem"
        if not root.exists() or root.read_text() != (work / "data" / "artefact-ca.crt").read_text():
            raise Failed("the upgraded data directory has no artefact root, or signing-keys does "
                         "not hand it out")
        if root.read_text() == (work / "data" / "ca.crt").read_text():
            raise Failed("the artefact root is the identity CA")
        signing = subprocess.run(["openssl", "verify", "-CAfile", str(root), "-purpose", "any",
                                  str(work / "data" / "model-signing.crt")],
                                 capture_output=True, text=True, timeout=60)
        if signing.returncode != 0:
            raise Failed(f"the model-signing certificate does not chain to the artefact root:\n"
                         f"{signing.stdout}{signing.stderr}")
        print("upgrade: the artefact root was made and the model-signing certificate issued by it")
    finally:
        platform.stop()
        shutil.rmtree(work, ignore_errors=True)


def main():
    if len(sys.argv) != 7 or sys.argv[1] not in ("make", "check"):
        print(__doc__, file=sys.stderr)
        return 2
    mode, archive, *programs = sys.argv[1:]
    try:
        (make if mode == "make" else check)(archive, programs)
    except (Failed, subprocess.TimeoutExpired) as error:
        print(f"upgrade_fixture.py {mode}: {error}", file=sys.stderr)
        return 1
    print(f"upgrade_fixture.py {mode}: passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
