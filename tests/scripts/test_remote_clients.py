#!/usr/bin/python3
"""Two clients of sealtrain-control that share no code with it (issue #15).

1. An independent client: Python with Debian's python3-grpcio, stubs generated here from
   api/proto/sealtrain/v1/control.proto by protoc and grpc_python_plugin, a P-256 key and CSR made
   by `openssl req`, the CA pinned by its SHA-256 fingerprint. It signs in over TLS, lists
   datasets with the certificate it got, and is refused (PERMISSION_DENIED) what its role lacks.
2. sealtrainctl run as another Unix user (nobody, when this runs as root) who can not read the
   data directory: connect, sign-in, whoami and dataset list all work, so the client needs
   no key of the control plane's.

    test_remote_clients.py SEALTRAINCTL SEALTRAIN_CONTROL PROTO_ROOT

Exits 77 (skipped) only when grpc_python_plugin or python3-grpcio is missing.
"""
import hashlib
import json
import os
import pwd
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from sealtrain_support import run, totp

CTL, CONTROL, PROTO_ROOT = sys.argv[1], sys.argv[2], sys.argv[3]


def main():
    try:
        import grpc  # noqa: F401  (Debian's python3-grpcio)
    except ModuleNotFoundError as missing:
        if missing.name != "grpc":
            raise
        print("SKIP test_remote_clients: python3-grpcio is not installed (scripts/setup installs it).")
        return 77
    plugin = shutil.which("grpc_python_plugin")
    if plugin is None:
        print("SKIP test_remote_clients: grpc_python_plugin is not installed (protobuf-compiler-grpc).")
        return 77

    work = tempfile.mkdtemp(prefix="test_remote_clients.")
    os.chmod(work, 0o755)
    data = os.path.join(work, "data")
    secrets = os.path.join(work, "secrets")
    os.mkdir(secrets, 0o700)

    def secret_file(name, text):
        path = os.path.join(secrets, name)
        with open(path, "w") as handle:
            handle.write(text + "\n")
        os.chmod(path, 0o600)
        return path

    passphrase = secret_file("passphrase", "a long passphrase for this test's keyring")
    password = secret_file("password", "a long password that the three users share")
    # The operator's own profile: init names the data directory in it (not used here: the
    # daemon below is started by hand, as a service would be, and every client connects).
    admin_env = dict(os.environ, SEALTRAIN_CLIENT_DIR=os.path.join(work, "admin-client"))
    init = run(CTL, "init", "--data-dir", data, "--passphrase-file", passphrase, "--admin",
               "alice", "--admin-password-file", password,
               "--totp-uri-file", os.path.join(secrets, "alice.uri"),
               "--argon2-ops", "2", "--argon2-mem-mib", "64", env=admin_env)
    fingerprint = [line.split(": ")[1] for line in init.splitlines()
                   if line.startswith("Platform CA fingerprint: ")][0]

    ready = os.path.join(work, "ready.json")
    with open(passphrase) as handle:
        daemon = subprocess.Popen(
            [CONTROL, "--data-dir", data, "--listen", "127.0.0.1:0", "--ready-file", ready],
            stdin=handle)
    try:
        for _ in range(600):
            if os.path.exists(ready) or daemon.poll() is not None:
                break
            time.sleep(0.1)
        if not os.path.exists(ready):
            sys.exit("FAIL: sealtrain-control did not start")
        with open(ready) as handle:
            port = json.load(handle)["ports"][0]
        address = f"127.0.0.1:{port}"
        # The admin, a client like any other: two engineers, one of them a steward, and gwen who
        # approves frank's job (nobody approves their own). Each user sets their own password with
        # a one-time enrolment code and receives their own TOTP secret.
        run(CTL, "connect", address, "--ca-fingerprint", fingerprint, env=admin_env)
        run(CTL, "sign-in", "--user", "alice", "--password-file", password,
            "--totp-code", totp(os.path.join(secrets, "alice.uri"), "alice"), env=admin_env)
        for user, roles in (("erin", ("engineer",)), ("frank", ("engineer", "steward")),
                            ("gwen", ("approver",))):
            code = os.path.join(secrets, f"{user}.code")
            run(CTL, "user", "create", "--as", "alice", user, "--code-file", code, env=admin_env)
            run(CTL, "sign-in", "--user", user, "--reset-code-file", code, "--password-file",
                password, "--totp-uri-file", os.path.join(secrets, f"{user}.uri"), env=admin_env)
            for role in roles:
                run(CTL, "grant", "add", "--as", "alice", user, role, env=admin_env)
        independent_client(work, data, secrets, fingerprint, address, password)
        other_user_client(work, data, secrets, fingerprint, address, password)
    finally:
        daemon.send_signal(signal.SIGTERM)
        code = daemon.wait(timeout=60)
    if code != 0:
        sys.exit(f"FAIL: sealtrain-control exited {code} after SIGTERM")
    print("sealtrain-control stopped with exit 0 after SIGTERM")
    shutil.rmtree(work)
    return 0


def independent_client(work, data, secrets, fingerprint, address, password):
    import grpc

    stubs = os.path.join(work, "stubs")
    os.mkdir(stubs)
    run("protoc", f"--proto_path={PROTO_ROOT}", f"--python_out={stubs}",
        f"--grpc_python_out={stubs}", f"--plugin=protoc-gen-grpc_python={shutil.which('grpc_python_plugin')}",
        os.path.join(PROTO_ROOT, "sealtrain", "v1", "control.proto"))
    sys.path.insert(0, stubs)
    from sealtrain.v1 import control_pb2, control_pb2_grpc

    # The CA, pinned by the fingerprint init printed (as an administrator would hand it over).
    ca_pem = open(os.path.join(data, "ca.crt"), "rb").read()
    der = subprocess.run(["openssl", "x509", "-outform", "DER"], input=ca_pem,
                         capture_output=True, check=True).stdout
    assert "sha256:" + hashlib.sha256(der).hexdigest() == fingerprint, "CA fingerprint mismatch"

    key = os.path.join(secrets, "python.key")
    csr = run("openssl", "req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
              "-nodes", "-keyout", key, "-subj", "/CN=erin")
    options = (("grpc.ssl_target_name_override", "localhost"),)
    anonymous = grpc.secure_channel(address, grpc.ssl_channel_credentials(root_certificates=ca_pem),
                                    options)
    reply = control_pb2_grpc.SessionsStub(anonymous).SignIn(control_pb2.SignInRequest(
        user="erin", password=open(password).read().strip(),
        totp_code=totp(os.path.join(secrets, "erin.uri"), "erin"), csr_pem=csr))
    assert "BEGIN CERTIFICATE" in reply.certificate_pem and reply.session_id.startswith("s"), reply
    print(f"python client: signed in as erin, session {reply.session_id}")

    credentials = grpc.ssl_channel_credentials(
        root_certificates=ca_pem, private_key=open(key, "rb").read(),
        certificate_chain=reply.certificate_pem.encode())
    channel = grpc.secure_channel(address, credentials, options)
    who = control_pb2_grpc.SessionsStub(channel).WhoAmI(control_pb2.WhoAmIRequest())
    assert who.user == "erin" and who.session_id == reply.session_id, who
    datasets = control_pb2_grpc.DatasetsStub(channel).ListDatasets(control_pb2.ListDatasetsRequest())
    assert list(datasets.datasets) == [], datasets
    print("python client: listed datasets (none yet)")
    try:
        control_pb2_grpc.UsersStub(channel).ListUsers(control_pb2.ListUsersRequest())
        sys.exit("FAIL: an engineer listed users")
    except grpc.RpcError as refused:
        assert refused.code() == grpc.StatusCode.PERMISSION_DENIED, refused
        assert "user.manage" in refused.details(), refused.details()
        print(f"python client: ListUsers refused: {refused.details()}")
    # Without the certificate the same call is refused as unauthenticated.
    try:
        control_pb2_grpc.DatasetsStub(anonymous).ListDatasets(control_pb2.ListDatasetsRequest())
        sys.exit("FAIL: a call without a client certificate was answered")
    except grpc.RpcError as refused:
        assert refused.code() == grpc.StatusCode.UNAUTHENTICATED, refused


def other_user_client(work, data, secrets, fingerprint, address, password):
    if os.geteuid() != 0:
        print("other-user client: not root, so sealtrainctl runs as this user (who could read the "
              "data directory); the check that it needs no access is made only as root")
        prefix = []
        home = os.path.join(work, "client-home")
    else:
        nobody = pwd.getpwnam("nobody")
        prefix = ["setpriv", f"--reuid={nobody.pw_uid}", f"--regid={nobody.pw_gid}", "--clear-groups"]
        home = os.path.join(work, "nobody-home")
    os.mkdir(home, 0o700)
    shared = os.path.join(work, "handover")
    os.mkdir(shared, 0o755)
    for name in ("password", "frank.uri"):
        shutil.copy(os.path.join(secrets, name), shared)
    with open(os.path.join(shared, "corpus.txt"), "w") as handle:
        for i in range(400):
            handle.write(f"Record {i} of the corpus that frank uploads.\n\n")
    if prefix:
        os.chown(home, nobody.pw_uid, nobody.pw_gid)
        for name in os.listdir(shared):
            os.chown(os.path.join(shared, name), nobody.pw_uid, nobody.pw_gid)
        denied = subprocess.run(prefix + ["ls", data], capture_output=True)
        assert denied.returncode != 0, "nobody can read the data directory"
    environment = {"PATH": os.environ["PATH"], "HOME": home,
                   "SEALTRAIN_CLIENT_DIR": os.path.join(home, "client"), "SEALTRAIN_USER": "frank"}

    def ctl(*args):
        return run(*prefix, CTL, *args, env=environment)

    ctl("connect", address, "--ca-fingerprint", fingerprint)
    ctl("sign-in", "--user", "frank", "--password-file", os.path.join(shared, "password"),
        "--totp-code", totp(os.path.join(shared, "frank.uri"), "frank"))
    assert ctl("whoami").startswith("frank (session s"), "whoami"
    ctl("dataset", "list")
    # Upload, train through the daemon and sample, holding no key: the daemon seals the upload
    # and hands the trainer the run's keys.
    imported = ctl("dataset", "import", "--name", "corpus", "--format", "text-records",
                   "--progress", "none", os.path.join(shared, "corpus.txt"))
    assert "Imported 'corpus' version 1" in imported, imported
    # Training runs only as an approved job: the direct call is gone; frank submits a spec,
    # gwen (as this user, in her own client folder) approves it, and frank runs it.
    spec = os.path.join(shared, "corpus-job.yaml")
    with open(spec, "w") as handle:
        handle.write("spec_version: 1\nname: corpus-tiny\nproject: demo\ndataset: corpus\n"
                     "model: {layers: 1, heads: 2, width: 16, context: 16}\n"
                     "schedule: {steps: 3, batch: 2}\n"
                     "resources: {pool: cpu, device: cpu, threads: 1}\n")
    if prefix:
        os.chown(spec, nobody.pw_uid, nobody.pw_gid)
    submitted = ctl("job", "submit", spec, "--json")
    job = json.loads(submitted)
    assert job["state"] == "vetted", submitted
    gwen = {"PATH": os.environ["PATH"], "HOME": os.path.join(work, "gwen-home"),
            "SEALTRAIN_CLIENT_DIR": os.path.join(work, "gwen-client"), "SEALTRAIN_USER": "gwen"}
    run(CTL, "connect", address, "--ca-fingerprint", fingerprint, env=gwen)
    run(CTL, "sign-in", "--user", "gwen", "--password-file", password,
        "--totp-code", totp(os.path.join(secrets, "gwen.uri"), "gwen"), env=gwen)
    run(CTL, "job", "approve", str(job["id"]), "--sha256", job["spec_sha256"], env=gwen)
    metrics = ctl("job", "run", str(job["id"]))
    assert '"kind":"checkpoint"' in metrics, metrics
    runs = os.listdir(os.path.join(data, "runs"))
    assert len(runs) == 1, runs
    assert ctl("sample", "--run", runs[0], "--length", "8", "--prompt", "Record"), "sample"
    refused = subprocess.run(prefix + [CTL, "user", "list"], capture_output=True,
                             text=True, env=environment)
    assert refused.returncode != 0 and "user.manage" in refused.stderr, refused.stderr
    ctl("sign-out")
    print(f"sealtrainctl as {'nobody' if prefix else 'this user'}: connect, sign-in, whoami, "
          "dataset list, an upload, training and a sample through the daemon, a refusal and "
          "sign-out over TLS")


if __name__ == "__main__":
    sys.exit(main())
