// The node keys bundle (node_keys.h; docs/formats/node-keys.md).
#include "sealtrain/node/node_keys.h"

#include "sealtrain/base/encoding.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <set>

namespace sealtrain::node {
namespace {

constexpr std::string_view kHeader = "sealtrain-node-keys v1\n";
constexpr std::string_view kNodePrefix = "node ";
constexpr std::string_view kSignaturePrefix = "signature ";

std::span<const std::uint8_t> bytesOf(std::string_view text)
{
    return {reinterpret_cast<const std::uint8_t*>(text.data()), text.size()};
}

Error notSigned()
{
    return Error(ErrorCode::Integrity,
                 "The job's node keys are not signed by this worker's key (altered, truncated or "
                 "sent by someone else); nothing was opened, so ask the worker's operator to run "
                 "the job again.");
}

}  // namespace

bool isValidNodeName(std::string_view name)
{
    return !name.empty() && name.size() <= 64 && name.front() != '.' && name.front() != '-'
           && std::all_of(name.begin(), name.end(), [](char c) {
                  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                         || c == '.' || c == '_' || c == '-';
              });
}

Result<std::vector<NodeKey>> readNodeKeys(const std::filesystem::path& folder)
{
    std::error_code ec;
    std::vector<NodeKey> keys;
    for (std::filesystem::directory_iterator it(folder, ec), end; !ec && it != end;
         it.increment(ec)) {
        const std::filesystem::path& path = it->path();
        if (path.extension() != ".pub")
            continue;
        const std::string node = path.stem().string();
        std::ifstream in(path);
        std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
            text.pop_back();
        const auto raw = fromHex(text);
        NodeKey key;
        if (!isValidNodeName(node) || !raw || raw->size() != key.publicKey.size())
            return Error(ErrorCode::InvalidArgument,
                         fmt::format("'{}' is not a node key: name it NODE.pub after the Slurm "
                                     "node and put in it the 64 hex digits 'sealtrain-worker "
                                     "node-key' printed on that node.",
                                     path.string()));
        key.node = node;
        std::copy(raw->begin(), raw->end(), key.publicKey.begin());
        keys.push_back(std::move(key));
    }
    if (ec)
        return Error(ErrorCode::NotFound, fmt::format("Cannot read the node keys folder '{}': {}; "
                                                      "check --node-keys.",
                                                      folder.string(), ec.message()));
    if (keys.empty())
        return Error(ErrorCode::NotFound,
                     fmt::format("The node keys folder '{}' holds no NODE.pub; run "
                                 "'sealtrain-worker node-key' on each node and copy what it "
                                 "prints there.",
                                 folder.string()));
    std::sort(keys.begin(), keys.end(),
              [](const NodeKey& a, const NodeKey& b) { return a.node < b.node; });
    return keys;
}

Result<std::string> sealNodeKeys(std::span<const NodeKey> nodes, const crypto::SecretBytes& keys,
                                 const crypto::SigningKey& signer)
{
    std::string bundle(kHeader);
    std::set<std::string, std::less<>> seen;
    for (const NodeKey& node : nodes) {
        if (!isValidNodeName(node.node) || !seen.insert(node.node).second)
            return Error(ErrorCode::InvalidArgument,
                         fmt::format("The node name '{}' is not valid or given twice; node keys "
                                     "are named after their Slurm nodes.",
                                     node.node.substr(0, 64)));
        auto box = crypto::sealToPublicKey(node.publicKey, keys.bytes());
        if (!box)
            return box.error();
        bundle += fmt::format("{}{} {}\n", kNodePrefix, node.node, toBase64(*box));
    }
    const auto signature = signer.sign(bytesOf(bundle));
    bundle += fmt::format("{}{}\n", kSignaturePrefix, toBase64(signature));
    return bundle;
}

Result<crypto::SecretBytes> openNodeKeys(std::string_view bundle, std::string_view node,
                                         const crypto::BoxKeyPair& nodeKey,
                                         const crypto::PublicKey& signer)
{
    // The signature is the last line and covers every byte before it.
    if (bundle.size() > kMaxNodeKeysBundle || bundle.empty() || bundle.back() != '\n')
        return notSigned();
    const auto last = bundle.rfind('\n', bundle.size() - 2);
    if (last == std::string_view::npos)
        return notSigned();
    const std::string_view signedPart = bundle.substr(0, last + 1);
    std::string_view signatureLine = bundle.substr(last + 1);
    signatureLine.remove_suffix(1);
    if (!signatureLine.starts_with(kSignaturePrefix))
        return notSigned();
    const auto signature = fromBase64(signatureLine.substr(kSignaturePrefix.size()));
    if (!signature || !signer.verify(bytesOf(signedPart), *signature))
        return notSigned();
    if (!signedPart.starts_with(kHeader))
        return Error(ErrorCode::Unsupported, "The job's node keys are in a format this "
                                             "sealtrain-worker does not read; install the same "
                                             "release on every node.");
    std::string_view rest = signedPart.substr(kHeader.size());
    while (!rest.empty()) {
        const auto end = rest.find('\n');
        const std::string_view line = rest.substr(0, end);
        rest.remove_prefix(end + 1);
        if (!line.starts_with(kNodePrefix))
            continue;
        const std::string_view fields = line.substr(kNodePrefix.size());
        const auto space = fields.find(' ');
        if (space == std::string_view::npos || fields.substr(0, space) != node)
            continue;
        const auto box = fromBase64(fields.substr(space + 1));
        if (!box)
            return notSigned();
        auto opened = crypto::openSealedBox(nodeKey, *box);
        if (!opened)
            return Error(ErrorCode::Unauthenticated,
                         fmt::format("The job's keys for node {} do not open with this node's "
                                     "key; check that --node-key-file is the key whose public "
                                     "half the worker has as {}.pub.",
                                     node, node));
        return opened;
    }
    return Error(ErrorCode::NotFound,
                 fmt::format("The job's node keys hold none for node {}; add its {}.pub to the "
                             "worker's --node-keys folder, or keep the job off that node.",
                             std::string(node).substr(0, 64), std::string(node).substr(0, 64)));
}

}  // namespace sealtrain::node
