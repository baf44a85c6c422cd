// A client's profile folder (profile.h; docs/formats/client-profile.md).
#include "sealtrain/api/profile.h"

#include "sealtrain/base/byte_io.h"
#include "sealtrain/crypto/certificate_authority.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <span>
#include <system_error>
#include <utility>

namespace sealtrain::api {
namespace {

constexpr const char* kEndpointFile = "endpoint.json";
constexpr const char* kCaFile = "ca.crt";
constexpr const char* kWorkstationFile = "workstation.json";
constexpr const char* kKeySuffix = ".key";
constexpr const char* kCertificateSuffix = ".crt";
// The data directory keeps the platform CA's certificate in the clear (data-directory.md).
constexpr const char* kDataDirCaCertificate = "ca.crt";
// The artefact root (issue #48): what this client checks exported models against; the data
// directory keeps it under the same name.
constexpr const char* kArtefactRootFile = "artefact-ca.crt";
constexpr std::uint64_t kMaxProfileFile = std::uint64_t{1} << 20;

std::span<const std::uint8_t> bytesOf(const std::string& text)
{
    return {reinterpret_cast<const std::uint8_t*>(text.data()), text.size()};
}

Result<void> writePublic(const std::filesystem::path& path, const std::string& text)
{
    return writeFileAtomically(path, bytesOf(text), AtomicFileSink::Overwrite::Allow, 0644U);
}

// Users are stored as USER.key and USER.crt: only the names the control plane accepts
// (a-z 0-9 _ -, 1 to 64), so that no name reaches outside the folder.
Result<void> requireUserName(const std::string& user)
{
    const bool valid =
        !user.empty() && user.size() <= 64 && std::all_of(user.begin(), user.end(), [](char c) {
            return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
        });
    if (valid)
        return success();
    return Error(ErrorCode::InvalidArgument,
                 "A user name is 1 to 64 of a-z, 0-9, '_' and '-'; check the name you gave.");
}

// The folder, made with mode 0700 when missing; refused when it is not this user's alone (a
// profile holds private keys).
Result<void> privateProfileFolder(const std::filesystem::path& folder)
{
    std::error_code ec;
    if (std::filesystem::create_directories(folder, ec))
        std::filesystem::permissions(folder, std::filesystem::perms::owner_all,
                                     std::filesystem::perm_options::replace, ec);
    struct stat info {};
    if (ec || ::stat(folder.c_str(), &info) != 0 || !S_ISDIR(info.st_mode))
        return Error(ErrorCode::Io, fmt::format("Cannot make the client profile folder '{}'; "
                                                "check its parent and its permissions.",
                                                folder.string()));
    if (info.st_uid != ::geteuid() || (info.st_mode & (S_IRWXG | S_IRWXO)) != 0)
        return Error(ErrorCode::PermissionDenied,
                     fmt::format("The client profile folder '{}' is not yours alone; run `chmod "
                                 "700 {}` or choose another folder.",
                                 folder.string(), folder.string()));
    return success();
}

std::filesystem::path absolutePath(const std::filesystem::path& path)
{
    std::error_code ec;
    auto made = std::filesystem::absolute(path, ec);
    return ec ? path : made.lexically_normal();
}

}  // namespace

std::filesystem::path Profile::defaultFolder()
{
    if (const char* dir = std::getenv(kProfileEnvironment); dir != nullptr && *dir != '\0')
        return dir;
    if (const char* config = std::getenv("XDG_CONFIG_HOME"); config != nullptr && *config != '\0')
        return std::filesystem::path(config) / "sealtrain" / "client";
    const char* home = std::getenv("HOME");
    return std::filesystem::path(home != nullptr ? home : ".") / ".config" / "sealtrain" / "client";
}

Profile::Profile(std::filesystem::path folder)
    : folder_(std::move(folder))
{
}

Result<void> Profile::storeEndpoint(const Endpoint& endpoint) const
{
    SEALTRAIN_TRY(privateProfileFolder(folder_));
    SEALTRAIN_TRY(forgetSessions());
    SEALTRAIN_TRY(writePublic(folder_ / kCaFile, endpoint.caCertificatePem));
    const nlohmann::json json{{"address", endpoint.address}, {"server_name", endpoint.serverName}};
    return writePublic(folder_ / kEndpointFile, json.dump(2) + "\n");
}

Result<void> Profile::connect(const std::string& address, const std::string& serverName,
                              const std::string& fingerprint) const
{
    auto ca = fetchPinnedCaCertificate(address, serverName, fingerprint);
    if (!ca)
        return ca.error();
    const Endpoint endpoint{address, serverName, *ca};
    SEALTRAIN_TRY(storeEndpoint(endpoint));
    std::error_code ignored;
    std::filesystem::remove(folder_ / kWorkstationFile, ignored);  // no longer this one's
    // The artefact root, fetched over the channel the pinned identity CA now authenticates: both
    // roots are pinned (issue #48).
    auto client = ControlClient::connect(endpoint, nullptr);
    if (!client)
        return client.error();
    auto keys = (*client)->platform().signingKeys();
    if (!keys)
        return keys.error();
    return writePublic(folder_ / kArtefactRootFile, keys->artefactRootPem);
}

Result<Endpoint> Profile::endpoint() const
{
    const auto file = folder_ / kEndpointFile;
    auto text = readWholeFile(file, kMaxProfileFile);
    if (!text)
        return Error(ErrorCode::NotFound,
                     fmt::format("This client names no control plane (no '{}'); run `sealtrainctl "
                                 "init` for one of your own, or `sealtrainctl connect ADDRESS "
                                 "--ca-fingerprint FINGERPRINT` for a shared one.",
                                 file.string()));
    auto ca = readWholeFile(folder_ / kCaFile, kMaxProfileFile);
    const auto json = nlohmann::json::parse(*text, nullptr, false);
    if (!ca || json.is_discarded() || !json.is_object() || !json.contains("address")
        || !json["address"].is_string() || !json.contains("server_name")
        || !json["server_name"].is_string())
        return Error(ErrorCode::Integrity,
                     fmt::format("The client profile in '{}' is damaged; run `sealtrainctl "
                                 "connect` (or `sealtrainctl init`) again.",
                                 folder_.string()));
    return Endpoint{json["address"].get<std::string>(), json["server_name"].get<std::string>(),
                    *ca};
}

Result<void> Profile::useWorkstation(const Workstation& workstation) const
{
    const Workstation resolved{absolutePath(workstation.dataDir),
                               absolutePath(workstation.runFolder)};
    auto ca = readWholeFile(resolved.dataDir / kDataDirCaCertificate, kMaxProfileFile);
    if (!ca)
        return Error(ErrorCode::NotFound,
                     fmt::format("'{}' is not a data directory (it has no platform CA); run "
                                 "`sealtrainctl init` to make one.",
                                 resolved.dataDir.string()));
    const std::string socket = "unix:" + (resolved.runFolder / "control.sock").string();
    SEALTRAIN_TRY(storeEndpoint(Endpoint{socket, "localhost", *ca}));
    if (auto root = readWholeFile(resolved.dataDir / kArtefactRootFile, kMaxProfileFile))
        SEALTRAIN_TRY(writePublic(folder_ / kArtefactRootFile, *root));
    const nlohmann::json json{{"data_dir", resolved.dataDir.string()},
                              {"run_folder", resolved.runFolder.string()}};
    return writePublic(folder_ / kWorkstationFile, json.dump(2) + "\n");
}

Result<std::optional<Workstation>> Profile::workstation() const
{
    const auto file = folder_ / kWorkstationFile;
    std::error_code ec;
    if (!std::filesystem::exists(file, ec))
        return std::optional<Workstation>();
    auto text = readWholeFile(file, kMaxProfileFile);
    if (!text)
        return text.error();
    const auto json = nlohmann::json::parse(*text, nullptr, false);
    if (json.is_discarded() || !json.is_object() || !json.contains("data_dir")
        || !json["data_dir"].is_string() || !json.contains("run_folder")
        || !json["run_folder"].is_string())
        return Error(ErrorCode::Integrity,
                     fmt::format("'{}' is damaged; run `sealtrainctl init --existing --data-dir "
                                 "DIR` to name the data directory again.",
                                 file.string()));
    return std::optional<Workstation>(
        Workstation{json["data_dir"].get<std::string>(), json["run_folder"].get<std::string>()});
}

std::optional<pid_t> Profile::workstationPid() const
{
    auto named = workstation();
    if (!named || !*named)
        return std::nullopt;
    return LocalControlPlane::runningIn((*named)->runFolder);
}

Result<pid_t> Profile::startWorkstation(const std::filesystem::path& executable,
                                        crypto::SecretBytes passphrase,
                                        const std::vector<std::string>& extraArguments) const
{
    auto named = workstation();
    if (!named)
        return named.error();
    if (!*named)
        return Error(ErrorCode::NotFound,
                     "This client names no data directory of its own; run `sealtrainctl init` "
                     "first.");
    if (auto running = LocalControlPlane::runningIn((*named)->runFolder))
        return Error(ErrorCode::AlreadyExists,
                     fmt::format("The control plane of '{}' is already running (process {}).",
                                 (*named)->dataDir.string(), *running));
    LocalControlOptions options;
    options.executable = executable;
    options.dataDir = (*named)->dataDir;
    options.runFolder = (*named)->runFolder;
    options.logFile = (*named)->runFolder / "control.log";
    options.ownSession = true;
    options.extraArguments = extraArguments;
    auto plane = LocalControlPlane::start(options, std::move(passphrase));
    if (!plane)
        return plane.error();
    return plane->release();
}

Result<bool> Profile::stopWorkstation(std::chrono::milliseconds grace) const
{
    auto named = workstation();
    if (!named)
        return named.error();
    if (!*named)
        return Error(ErrorCode::NotFound,
                     "This client names no data directory of its own, so there is no control "
                     "plane of its own to stop.");
    return LocalControlPlane::stopRunning((*named)->runFolder, grace);
}

Result<std::unique_ptr<ControlClient>> Profile::anonymousClient() const
{
    auto endpoint = this->endpoint();
    if (!endpoint)
        return endpoint.error();
    return ControlClient::connect(*endpoint, nullptr);
}

Result<StoredSession> Profile::signIn(const std::string& user, const crypto::SecretBytes& password,
                                      const std::string& totpCode) const
{
    SEALTRAIN_TRY(requireUserName(user));
    auto client = anonymousClient();
    if (!client)
        return client.error();
    auto signedIn = (*client)->sessions().signIn(user, password, totpCode);
    if (!signedIn)
        return signedIn.error();
    SEALTRAIN_TRY(privateProfileFolder(folder_));
    // The certificate last: a key without one is not a session, and is replaced next time.
    SEALTRAIN_TRY(writeFileAtomically(folder_ / (user + kKeySuffix),
                                      signedIn->identity.privateKeyPem.bytes(),
                                      AtomicFileSink::Overwrite::Allow));
    SEALTRAIN_TRY(
        writePublic(folder_ / (user + kCertificateSuffix), signedIn->identity.certificatePem));
    return StoredSession{user, signedIn->expiresUnix};
}

Result<std::string> Profile::completeReset(const std::string& user, const std::string& code,
                                           const crypto::SecretBytes& password) const
{
    SEALTRAIN_TRY(requireUserName(user));
    auto client = anonymousClient();
    if (!client)
        return client.error();
    return (*client)->users().completeReset(user, code, password);
}

std::vector<StoredSession> Profile::sessions() const
{
    std::vector<StoredSession> found;
    std::error_code ec;
    auto ca = readWholeFile(folder_ / kCaFile, kMaxProfileFile);
    for (const auto& entry : std::filesystem::directory_iterator(folder_, ec)) {
        const auto& path = entry.path();
        if (path.extension() != kCertificateSuffix || path.filename() == kCaFile)
            continue;
        const std::string user = path.stem().string();
        if (!requireUserName(user) || !std::filesystem::exists(folder_ / (user + kKeySuffix), ec))
            continue;
        StoredSession session{user, 0};
        auto certificate = readWholeFile(path, kMaxProfileFile);
        if (ca && certificate) {
            crypto::VerifyOptions options;
            options.requireCrl = false;
            if (auto info = crypto::verifyCertificate(*certificate, *ca, options))
                session.expiresUnix = std::chrono::duration_cast<std::chrono::seconds>(
                                          info->notAfter.time_since_epoch())
                                          .count();
        }
        found.push_back(std::move(session));
    }
    std::sort(found.begin(), found.end(),
              [](const StoredSession& a, const StoredSession& b) { return a.user < b.user; });
    return found;
}

Result<std::string> Profile::chooseUser(const std::string& named) const
{
    if (!named.empty())
        return named;
    if (const char* user = std::getenv(kUserEnvironment); user != nullptr && *user != '\0')
        return std::string(user);
    const auto stored = sessions();
    if (stored.size() == 1)
        return stored.front().user;
    return Error(ErrorCode::InvalidArgument,
                 stored.empty() ? "Nobody has signed in from this client; run `sealtrainctl "
                                  "sign-in --user USER`."
                                : "Several users have signed in from this client; say whose "
                                  "session to use with --as USER or SEALTRAIN_USER.");
}

Result<std::unique_ptr<ControlClient>> Profile::client(const std::string& user) const
{
    SEALTRAIN_TRY(requireUserName(user));
    auto endpoint = this->endpoint();
    if (!endpoint)
        return endpoint.error();
    auto keyText = readWholeFile(folder_ / (user + kKeySuffix), kMaxProfileFile);
    auto certificate = readWholeFile(folder_ / (user + kCertificateSuffix), kMaxProfileFile);
    if (!keyText || !certificate)
        return Error(ErrorCode::NotFound,
                     fmt::format("'{}' has not signed in from this client; run `sealtrainctl "
                                 "sign-in --user {}`.",
                                 user, user));
    auto key = crypto::SecretBytes::fromBytes(bytesOf(*keyText));
    std::fill(keyText->begin(), keyText->end(), '\0');
    if (!key)
        return key.error();
    // An expired certificate would be refused in the handshake, which a client can not tell
    // from a network failure: say so here instead.
    crypto::VerifyOptions options;
    options.requireCrl = false;
    if (!crypto::verifyCertificate(*certificate, endpoint->caCertificatePem, options))
        return Error(ErrorCode::Unauthenticated,
                     fmt::format("The session of '{}' on this client has ended; run `sealtrainctl "
                                 "sign-in --user {}` again.",
                                 user, user));
    const ClientIdentity identity{std::move(key).value(), std::move(certificate).value()};
    return ControlClient::connect(*endpoint, &identity);
}

Result<void> Profile::signOut(const std::string& user) const
{
    SEALTRAIN_TRY(requireUserName(user));
    auto client = this->client(user);
    Result<void> ended = client ? (*client)->sessions().signOut() : Result<void>(client.error());
    std::error_code ignored;
    std::filesystem::remove(folder_ / (user + kKeySuffix), ignored);
    std::filesystem::remove(folder_ / (user + kCertificateSuffix), ignored);
    if (!ended && ended.error().code() != ErrorCode::NotFound)
        return ended.error().withContext(
            fmt::format("The session of '{}' is forgotten on this client, but the control plane "
                        "did not end it (an admin can: `sealtrainctl session revoke {}`)",
                        user, user));
    return ended;
}

Result<void> Profile::forgetSessions() const
{
    for (const StoredSession& session : sessions()) {
        std::error_code ec;
        std::filesystem::remove(folder_ / (session.user + kKeySuffix), ec);
        if (!ec)
            std::filesystem::remove(folder_ / (session.user + kCertificateSuffix), ec);
        if (ec)
            return Error(ErrorCode::Io, fmt::format("Cannot forget the session of '{}' in '{}': "
                                                    "{}; check the folder's permissions.",
                                                    session.user, folder_.string(), ec.message()));
    }
    return success();
}

}  // namespace sealtrain::api
