// `sealtrain-worker node-key` and `open-keys` (node_commands.h).
#include "sealtrain/worker/node_commands.h"

#include "sealtrain/base/byte_io.h"
#include "sealtrain/base/encoding.h"
#include "sealtrain/crypto/sealed_box.h"
#include "sealtrain/crypto/secret_bytes.h"
#include "sealtrain/crypto/signing.h"
#include "sealtrain/node/node_keys.h"

#include <fmt/format.h>

#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace sealtrain::worker {
namespace {

int fail(const Error& error)
{
    std::fprintf(stderr, "sealtrain-worker: %s\n", error.message().c_str());
    return 1;
}

// The whole of standard input, at most node::kMaxNodeKeysBundle bytes.
Result<std::string> readInput()
{
    std::string text;
    std::array<char, 65536> buffer{};
    for (;;) {
        const ssize_t got = ::read(STDIN_FILENO, buffer.data(), buffer.size());
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return Error(ErrorCode::Io, "Cannot read the job's node keys on standard input.");
        if (got == 0)
            return text;
        text.append(buffer.data(), static_cast<std::size_t>(got));
        if (text.size() > node::kMaxNodeKeysBundle)
            return Error(ErrorCode::ResourceExhausted,
                         "The job's node keys are larger than any bundle a worker writes; "
                         "nothing was opened.");
    }
}

Result<crypto::BoxKeyPair> readNodeKey(const std::filesystem::path& path)
{
    struct stat info {};
    if (::stat(path.c_str(), &info) != 0)
        return Error(ErrorCode::NotFound,
                     fmt::format("This node has no key at '{}'; make it once with "
                                 "'sealtrain-worker node-key --out {}'.",
                                 path.string(), path.string()));
    if ((info.st_mode & 077U) != 0)
        return Error(ErrorCode::PermissionDenied,
                     fmt::format("The node key '{}' can be read by other users (mode {:o}); make "
                                 "it private with chmod 600.",
                                 path.string(), info.st_mode & 0777U));
    auto bytes = readWholeFile(path, 64);
    if (!bytes)
        return bytes.error();
    auto secret = crypto::SecretBytes::fromBytes(
        {reinterpret_cast<const std::uint8_t*>(bytes->data()), bytes->size()});
    wipeMemory({reinterpret_cast<std::uint8_t*>(bytes->data()), bytes->size()});
    if (!secret)
        return secret.error();
    return crypto::BoxKeyPair::fromSecretKey(*secret);
}

}  // namespace

int makeNodeKey(const std::filesystem::path& out)
{
    auto key = crypto::BoxKeyPair::generate();
    if (!key)
        return fail(key.error());
    if (auto written =
            writeFileAtomically(out, key->secretKey().bytes(), AtomicFileSink::Overwrite::Refuse,
                                AtomicFileSink::kPrivateMode);
        !written)
        return fail(written.error());
    std::printf("%s\n", toHex(key->publicKey()).c_str());
    std::fprintf(stderr,
                 "The node key is in %s (mode 0600). Put the line above in NODE.pub, named after "
                 "this Slurm node, in the folder the worker gets as --node-keys.\n",
                 out.c_str());
    return 0;
}

int openKeys(const std::filesystem::path& nodeKeyFile, const std::string& signerHex,
             std::string node)
{
    if (node.empty()) {
        const char* slurmNode = std::getenv("SLURMD_NODENAME");
        node = slurmNode == nullptr ? "" : slurmNode;
    }
    if (!node::isValidNodeName(node))
        return fail(Error(ErrorCode::InvalidArgument,
                          "No valid node name: run open-keys under srun (it sets "
                          "SLURMD_NODENAME) or give --node."));
    const auto raw = fromHex(signerHex);
    if (!raw)
        return fail(Error(ErrorCode::InvalidArgument,
                          "--signer must be the worker's Ed25519 public key in hex."));
    auto signer = crypto::PublicKey::fromRaw(*raw);
    if (!signer)
        return fail(signer.error());
    auto nodeKey = readNodeKey(nodeKeyFile);
    if (!nodeKey)
        return fail(nodeKey.error());
    auto bundle = readInput();
    if (!bundle)
        return fail(bundle.error());
    auto keys = node::openNodeKeys(*bundle, node, *nodeKey, *signer);
    if (!keys)
        return fail(keys.error());
    const auto bytes = keys->bytes();
    std::size_t done = 0;
    while (done < bytes.size()) {
        const ssize_t wrote = ::write(STDOUT_FILENO, bytes.data() + done, bytes.size() - done);
        if (wrote < 0 && errno == EINTR)
            continue;
        if (wrote <= 0)
            return fail(Error(ErrorCode::Io, "The trainer stopped before it read its keys."));
        done += static_cast<std::size_t>(wrote);
    }
    return 0;
}

}  // namespace sealtrain::worker
