// sealtrain-control's data directory tools, run for a client (data_directory_tools.h).
#include "sealtrain/api/data_directory_tools.h"

#include "secret_pipe.h"

#include "sealtrain/base/child_process.h"

#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <array>
#include <utility>

namespace sealtrain::api {
namespace {

using Json = nlohmann::json;
using SecretLines = std::vector<std::reference_wrapper<const crypto::SecretBytes>>;

constexpr std::array kErrorCodes{ErrorCode::InvalidArgument,
                                 ErrorCode::NotFound,
                                 ErrorCode::AlreadyExists,
                                 ErrorCode::PermissionDenied,
                                 ErrorCode::FailedPrecondition,
                                 ErrorCode::Unauthenticated,
                                 ErrorCode::Integrity,
                                 ErrorCode::Unsupported,
                                 ErrorCode::ResourceExhausted,
                                 ErrorCode::Io,
                                 ErrorCode::Internal};

ErrorCode codeNamed(const std::string& name)
{
    for (const ErrorCode code : kErrorCodes)
        if (name == errorCodeName(code))
            return code;
    return ErrorCode::Internal;
}

// What one JSON line of the tool said.
struct ToolOutput {
    std::optional<Json> result;
    std::optional<Error> error;
};

void readLine(std::string_view text, ToolOutput& output,
              const std::function<void(const std::string&)>& progress)
{
    const Json line = Json::parse(text, nullptr, false);
    if (line.is_discarded() || !line.is_object())
        return;
    if (const auto found = line.find("progress"); found != line.end() && found->is_string()) {
        if (progress)
            progress(found->get<std::string>());
    } else if (const auto result = line.find("result"); result != line.end()) {
        output.result = *result;
    } else if (const auto error = line.find("error"); error != line.end() && error->is_string()) {
        const auto code = line.find("code");
        output.error =
            Error(codeNamed(code != line.end() && code->is_string() ? code->get<std::string>()
                                                                    : std::string()),
                  error->get<std::string>());
    }
}

// Starts `executable TOOL ARGUMENTS…` (sealtrain-control, or sealtrain-train for `versions`), hands
// it `secrets` one a line, and returns what its
// {"result": …} line held, or the error its {"error": …} line or its exit said.
Result<Json> runTool(const std::filesystem::path& executable, const std::string& tool,
                     const std::vector<std::string>& arguments, const SecretLines& secrets,
                     const std::function<void(const std::string&)>& progress = {})
{
    std::array<int, 2> input{-1, -1};
    std::array<int, 2> output{-1, -1};
    if (::pipe2(input.data(), O_CLOEXEC) != 0 || ::pipe2(output.data(), O_CLOEXEC) != 0) {
        for (const int fd : {input[0], input[1]})
            if (fd >= 0)
                ::close(fd);
        return Error(ErrorCode::Io, "Cannot make a pipe for sealtrain-control; check the process "
                                    "limits.");
    }
    ChildLaunch launch;
    launch.argv = {executable.string(), tool};
    launch.argv.insert(launch.argv.end(), arguments.begin(), arguments.end());
    launch.standardInput = input[0];
    launch.descriptors.emplace_back(output[1], STDOUT_FILENO);
    auto started = spawnChild(launch);
    ::close(input[0]);
    ::close(output[1]);
    if (!started) {
        ::close(input[1]);
        ::close(output[0]);
        return started.error();
    }
    // A tool that ended before reading its secrets says why on its own lines.
    (void)handSecretLines(input[1], secrets);
    ToolOutput said;
    relayLines(output[0], [&](std::string_view line) { readLine(line, said, progress); });
    ::close(output[0]);
    auto status = waitChild(*started, fmt::format("{} {}", executable.filename().string(), tool),
                            "Check the machine's logs (dmesg) and run it again.");
    if (!status)
        return status.error();
    if (said.error)
        return *said.error;
    if (*status != 0 || !said.result)
        return Error(ErrorCode::Internal,
                     fmt::format("`{} {}` ended (exit status {}) without a result; its messages "
                                 "are above; install the same Sealtrain release for it and this "
                                 "client.",
                                 executable.filename().string(), tool, *status));
    return std::move(*said.result);
}

// What `read` makes of the tool's result; Internal when the result lacks a field this client
// knows (another release's sealtrain-control).
template <typename Read>
auto readResult(const std::string& tool, Read read) -> Result<decltype(read())>
{
    try {
        return read();
    } catch (const Json::exception&) {
        return Error(ErrorCode::Internal,
                     fmt::format("The {} tool answered in a form this client does not know; "
                                 "install the same Sealtrain release for both.",
                                 tool));
    }
}

}  // namespace

DataDirectoryTools::DataDirectoryTools(std::filesystem::path executable)
    : executable_(std::move(executable))
{
}

Result<NewDataDirectory> DataDirectoryTools::init(const NewDataDirectoryRequest& request) const
{
    std::vector<std::string> arguments{"--data-dir", request.dataDir.string(), "--admin",
                                       request.admin};
    if (request.argon2Ops != 0)
        arguments.insert(arguments.end(), {"--argon2-ops", std::to_string(request.argon2Ops)});
    if (request.argon2MemMiB != 0)
        arguments.insert(arguments.end(),
                         {"--argon2-mem-mib", std::to_string(request.argon2MemMiB)});
    SecretLines secrets;
    if (request.passphrase)
        secrets.emplace_back(*request.passphrase);
    else
        arguments.insert(arguments.end(), {"--master-key-file", request.masterKeyFile.string()});
    secrets.emplace_back(request.adminPassword);
    Json result;
    SEALTRAIN_ASSIGN(result, runTool(executable_, "init", arguments, secrets));
    return readResult("init", [&] {
        return NewDataDirectory{result.at("admin").get<std::string>(),
                                result.at("otpauth_uri").get<std::string>(),
                                result.at("ca_fingerprint").get<std::string>()};
    });
}

Result<RestoredDirectory>
DataDirectoryTools::restore(const RestoreSettings& settings,
                            const std::function<void(const std::string&)>& progress) const
{
    std::vector<std::string> arguments{settings.archive.string(), "--data-dir",
                                       settings.dataDir.string()};
    if (!settings.witness.empty())
        arguments.insert(arguments.end(), {"--witness", settings.witness.string()});
    if (settings.withoutWitness)
        arguments.emplace_back("--without-witness");
    if (settings.acceptLoss)
        arguments.emplace_back("--accept-loss");
    if (!settings.objectsFrom.empty())
        arguments.insert(arguments.end(), {"--objects-from", settings.objectsFrom.string()});
    if (!settings.key.empty())
        arguments.insert(arguments.end(), {"--key", settings.key.string()});
    SecretLines secrets;
    if (settings.passphrase)
        secrets.emplace_back(*settings.passphrase);
    else
        arguments.insert(arguments.end(), {"--master-key-file", settings.masterKeyFile.string()});
    Json result;
    SEALTRAIN_ASSIGN(result, runTool(executable_, "restore", arguments, secrets, progress));
    return readResult("restore", [&] {
        return RestoredDirectory{result.at("created").get<std::string>(),
                                 result.at("version").get<std::string>(),
                                 result.at("head").get<std::uint64_t>(),
                                 result.at("restore_entry").get<std::uint64_t>(),
                                 result.at("lost_entries").get<std::uint64_t>(),
                                 result.at("detached_witnesses").get<std::vector<std::string>>(),
                                 result.at("files").get<std::uint64_t>(),
                                 result.at("referenced").get<std::uint64_t>()};
    });
}

Result<BackupFacts> DataDirectoryTools::verifyBackup(const std::filesystem::path& archive,
                                                     const std::filesystem::path& key) const
{
    Json result;
    SEALTRAIN_ASSIGN(result, runTool(executable_, "verify-backup",
                                     {archive.string(), "--key", key.string()}, {}));
    return readResult("verify-backup", [&] {
        return BackupFacts{result.at("created").get<std::string>(),
                           result.at("version").get<std::string>(),
                           result.at("head").get<std::uint64_t>(),
                           result.at("files").get<std::uint64_t>(),
                           result.at("referenced").get<std::uint64_t>(),
                           result.at("referenced_bytes").get<std::uint64_t>()};
    });
}

Result<std::string> DataDirectoryTools::caFingerprint(const std::filesystem::path& dataDir) const
{
    Json result;
    SEALTRAIN_ASSIGN(result,
                     runTool(executable_, "describe", {"--data-dir", dataDir.string()}, {}));
    return readResult("describe", [&] { return result.at("ca_fingerprint").get<std::string>(); });
}

Result<std::map<std::string, std::string>> programVersions(const std::filesystem::path& executable)
{
    Json result;
    SEALTRAIN_ASSIGN(result, runTool(executable, "versions", {}, {}));
    return readResult("versions", [&] { return result.get<std::map<std::string, std::string>>(); });
}

}  // namespace sealtrain::api
