// A worker's enrolled identity (identity.h) and its enrolment (worker.h).
#include "sealtrain/worker/identity.h"
#include "sealtrain/worker/worker.h"

#include "sealtrain/base/byte_io.h"
#include "sealtrain/crypto/certificate_authority.h"
#include "sealtrain/crypto/signing.h"
#include "sealtrain/node/gpu_probe.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <thread>

namespace sealtrain::worker {
namespace {

using Json = nlohmann::json;

constexpr std::string_view kConfig = "worker.json";
constexpr std::string_view kCa = "ca.pem";
constexpr std::string_view kCertificate = "tls.crt";
constexpr std::string_view kTlsKey = "tls.key";
constexpr std::string_view kSigningKey = "signing.key";
constexpr std::string_view kBoxKey = "box.key";

std::span<const std::uint8_t> bytesOf(std::string_view text)
{
    return {reinterpret_cast<const std::uint8_t*>(text.data()), text.size()};
}

Result<void> writePrivate(const std::filesystem::path& path, std::span<const std::uint8_t> bytes)
{
    return writeFileAtomically(path, bytes, AtomicFileSink::Overwrite::Refuse,
                               AtomicFileSink::kPrivateMode);
}

Result<crypto::SecretBytes> readSecret(const std::filesystem::path& path)
{
    struct stat info {};
    if (::stat(path.c_str(), &info) != 0)
        return Error(ErrorCode::NotFound,
                     fmt::format("The worker key '{}' is missing; enroll this worker first "
                                 "('sealtrain-worker enroll').",
                                 path.string()));
    if ((info.st_mode & 077U) != 0)
        return Error(ErrorCode::PermissionDenied,
                     fmt::format("The worker key '{}' can be read by other users (mode {:o}); "
                                 "make it private with chmod 600.",
                                 path.string(), info.st_mode & 0777U));
    auto text = readWholeFile(path, 1U << 16U);
    if (!text)
        return text.error();
    auto secret = crypto::SecretBytes::fromBytes(bytesOf(*text));
    crypto::wipeMemory({reinterpret_cast<std::uint8_t*>(text->data()), text->size()});
    return secret;
}

}  // namespace

void say(const std::string& line)
{
    std::fprintf(stderr, "sealtrain-worker: %s\n", line.c_str());
    std::fflush(stderr);
}

Result<void> writePublic(const std::filesystem::path& path, std::string_view text)
{
    return writeFileAtomically(path, bytesOf(text), AtomicFileSink::Overwrite::Allow, 0644U);
}

node::WorkerInventory probeInventory(bool interconnectEncrypted)
{
    node::WorkerInventory inventory;
    const node::GpuProbe probe = node::probeGpu();
    for (const node::GpuDevice& device : probe.devices)
        inventory.gpus.push_back({device.name, device.totalMemoryBytes});
    inventory.cpuCores = std::max(1U, std::thread::hardware_concurrency());
    inventory.interconnectEncrypted = interconnectEncrypted;
    inventory.backend = inventory.gpus.empty() ? "cpu" : "cuda";
    return inventory;
}

Result<Identity> loadIdentity(const std::filesystem::path& dir)
{
    auto config = readWholeFile(dir / kConfig, 1U << 16U);
    if (!config)
        return Error(ErrorCode::NotFound,
                     fmt::format("'{}' holds no enrolled worker; enroll it first "
                                 "('sealtrain-worker enroll --dir {}').",
                                 dir.string(), dir.string()));
    const Json json = Json::parse(*config, nullptr, false);
    if (!json.is_object() || !json.contains("control") || !json.contains("worker"))
        return Error(ErrorCode::Integrity,
                     fmt::format("'{}' is not a worker's configuration; enroll the worker "
                                 "again into an empty folder.",
                                 (dir / kConfig).string()));
    Identity identity;
    identity.endpoint.address = json.value("control", "");
    identity.endpoint.serverName = json.value("server_name", "localhost");
    identity.worker = json.value("worker", "");
    identity.pool = json.value("pool", "");
    auto ca = readWholeFile(dir / kCa, 1U << 20U);
    if (!ca)
        return ca.error();
    identity.endpoint.caCertificatePem = *ca;
    identity.endpoint.keepalive = true;  // a long-lived connection (docs/api.md, "Transport")
    auto certificate = readWholeFile(dir / kCertificate, 1U << 20U);
    if (!certificate)
        return certificate.error();
    identity.tls.certificatePem = *certificate;
    auto tlsKey = readSecret(dir / kTlsKey);
    if (!tlsKey)
        return tlsKey.error();
    identity.tls.privateKeyPem = std::move(tlsKey).value();
    auto signing = readSecret(dir / kSigningKey);
    if (!signing)
        return signing.error();
    identity.signingKeyPem = std::move(signing).value();
    auto boxSecret = readSecret(dir / kBoxKey);
    if (!boxSecret)
        return boxSecret.error();
    auto box = crypto::BoxKeyPair::fromSecretKey(*boxSecret);
    if (!box)
        return box.error();
    identity.box.emplace(std::move(box).value());
    return identity;
}

Result<std::string> enroll(const EnrollOptions& options)
{
    std::error_code ec;
    if (std::filesystem::exists(options.dir / kConfig, ec))
        return Error(ErrorCode::AlreadyExists,
                     fmt::format("'{}' already holds an enrolled worker; enroll into an empty "
                                 "folder, or revoke that worker and remove the folder first.",
                                 options.dir.string()));
    std::filesystem::create_directories(options.dir, ec);
    if (ec)
        return Error(ErrorCode::Io, fmt::format("Cannot create the worker folder '{}': {}.",
                                                options.dir.string(), ec.message()));
    std::filesystem::permissions(options.dir, std::filesystem::perms::owner_all, ec);
    auto ca =
        api::fetchPinnedCaCertificate(options.address, options.serverName, options.fingerprint);
    if (!ca)
        return ca.error();
    auto tls = crypto::makeKeyAndCsr("sealtrain-worker");
    if (!tls)
        return tls.error();
    auto signing = crypto::SigningKey::generate();
    if (!signing)
        return signing.error();
    auto signingPem = signing->toPrivatePem();
    if (!signingPem)
        return signingPem.error();
    auto box = crypto::BoxKeyPair::generate();
    if (!box)
        return box.error();

    api::Endpoint endpoint{options.address, options.serverName, *ca};
    auto client = api::ControlClient::connect(endpoint, nullptr);
    if (!client)
        return client.error();
    api::WorkerEnrollment request;
    request.token = options.token;
    request.csrPem = tls->csrPem;
    request.signingPublicKeyPem = signing->publicKey().toPem();
    request.boxPublicKey.assign(box->publicKey().begin(), box->publicKey().end());
    request.inventoryJson =
        node::workerInventoryJson(probeInventory(options.interconnectEncrypted));
    auto enrolled = (*client)->worker().enrollWorker(request);
    crypto::wipeMemory({reinterpret_cast<std::uint8_t*>(signingPem->data()), signingPem->size()});
    if (!enrolled)
        return enrolled.error();
    auto signingAgain = signing->toPrivatePem();
    if (!signingAgain)
        return signingAgain.error();
    SEALTRAIN_TRY(writePrivate(options.dir / kTlsKey, tls->privateKeyPem.bytes()));
    SEALTRAIN_TRY(writePrivate(options.dir / kSigningKey, bytesOf(*signingAgain)));
    crypto::wipeMemory(
        {reinterpret_cast<std::uint8_t*>(signingAgain->data()), signingAgain->size()});
    SEALTRAIN_TRY(writePrivate(options.dir / kBoxKey, box->secretKey().bytes()));
    SEALTRAIN_TRY(writePublic(options.dir / kCa, *ca));
    SEALTRAIN_TRY(writePublic(options.dir / kCertificate, enrolled->certificatePem));
    const Json config = {{"control", options.address},
                         {"server_name", options.serverName},
                         {"worker", enrolled->worker},
                         {"pool", enrolled->pool}};
    SEALTRAIN_TRY(writePublic(options.dir / kConfig, config.dump(2) + "\n"));
    return fmt::format("enrolled worker {} in pool {}", enrolled->worker, enrolled->pool);
}

}  // namespace sealtrain::worker
