// `sealtrainctl sealed inspect|seal|unseal|rewrap`: sealed objects (docs/formats/sealed.md) for
// operators and auditors. inspect needs no key; the others take KEKs from key files
// (docs/formats/keyfile.md). Outputs are written atomically and never replace a file unless
// --force is given.
#include "commands.h"
#include "ctl.h"

#include "sealtrain/base/byte_io.h"
#include "sealtrain/base/encoding.h"
#include "sealtrain/crypto/key_file.h"
#include "sealtrain/crypto/sealed.h"
#include "sealtrain/crypto/secret_bytes.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <memory>
#include <ostream>
#include <string>
#include <vector>

namespace sealtrain::ctl {
namespace {

constexpr std::size_t kReadBlock = std::size_t{1} << 20;

AtomicFileSink::Overwrite overwriteMode(bool force)
{
    return force ? AtomicFileSink::Overwrite::Allow : AtomicFileSink::Overwrite::Refuse;
}

Result<void> sealFile(const std::string& in, const std::string& out, const crypto::Kek& kek,
                      const crypto::SealedMetadata& metadata, bool force)
{
    auto source = FileSource::open(in);
    if (!source)
        return source.error();
    auto writer = crypto::SealedWriter::create(out, kek, metadata, overwriteMode(force));
    if (!writer)
        return writer.error();
    std::vector<std::uint8_t> block(kReadBlock);
    auto result = [&]() -> Result<void> {
        for (std::uint64_t offset = 0; offset < (*source)->size(); offset += block.size()) {
            const auto take = static_cast<std::size_t>(
                std::min<std::uint64_t>(block.size(), (*source)->size() - offset));
            const std::span<std::uint8_t> part(block.data(), take);
            SEALTRAIN_TRY((*source)->readAt(offset, part));
            SEALTRAIN_TRY(writer->write(part));
        }
        return writer->finish();
    }();
    crypto::wipeMemory(block);
    return result;
}

Result<void> unsealFile(const std::string& in, const std::string& out, const crypto::Kek& kek,
                        bool force)
{
    auto reader =
        crypto::SealedReader::open(std::filesystem::path(in), crypto::keyFileResolver(kek));
    if (!reader)
        return reader.error();
    // Nothing appears at `out` unless every chunk verified.
    auto sink = AtomicFileSink::create(out, overwriteMode(force));
    if (!sink)
        return sink.error();
    SEALTRAIN_TRY(reader->readAll(**sink));
    return (*sink)->commit();
}

nlohmann::json infoJson(const crypto::SealedObjectInfo& info)
{
    return {
        {"formatVersion", info.formatVersion},
        {"suite", info.suite},
        {"suiteName", info.suite == crypto::kSealedSuiteCobblestone256
                          ? "C2SP chunked encryption, AES-256-GCM, HKDF-SHA-512"
                          : "unknown"},
        {"objectId", toHex(info.objectId)},
        {"chunkSize", info.chunkSize},
        {"contentType", info.metadata.contentType},
        {"metadata", info.metadata.metadata},
        {"kekId", info.kekId},
        {"kekVersion", info.kekVersion},
        {"headerSize", info.headerSize},
        {"keyBlockSize", info.keyBlockSize},
        {"payloadOffset", info.payloadOffset},
        {"payloadSize", info.payloadSize},
        {"chunkCount", info.chunkCount},
        {"plaintextSize", info.plaintextSize},
        {"plaintextSizeAuthenticated", false},
    };
}

void printInfo(const crypto::SealedObjectInfo& info, std::ostream& out)
{
    out << fmt::format("Sealed object {}\n", toHex(info.objectId));
    out << fmt::format("  format version   {}\n", info.formatVersion);
    out << fmt::format("  suite            {} (C2SP chunked encryption, AES-256-GCM, "
                       "HKDF-SHA-512)\n",
                       info.suite);
    out << fmt::format("  chunk size       {} bytes\n", info.chunkSize);
    out << fmt::format("  content type     {}\n",
                       info.metadata.contentType.empty() ? "(none)" : info.metadata.contentType);
    out << fmt::format("  metadata         {}\n",
                       info.metadata.metadata.empty() ? "(none)" : info.metadata.metadata);
    out << fmt::format("  KEK              {} version {}\n", info.kekId, info.kekVersion);
    out << fmt::format("  plaintext size   {} bytes in {} chunks (from the file length; "
                       "unsealing authenticates it)\n",
                       info.plaintextSize, info.chunkCount);
    out << fmt::format("  layout           header {} bytes, key block {} bytes, payload {} "
                       "bytes at offset {}\n",
                       info.headerSize, info.keyBlockSize, info.payloadSize, info.payloadOffset);
}

struct InspectOptions {
    std::string file;
    bool json = false;
};

int inspectSealed(const CommandRegistry& registry, const InspectOptions& options)
{
    auto info = crypto::inspectSealedObject(std::filesystem::path(options.file));
    if (!info)
        return registry.fail(info.error());
    if (options.json)
        registry.out() << infoJson(*info).dump(2) << '\n';
    else
        printInfo(*info, registry.out());
    return kExitOk;
}

struct SealOptions {
    std::string keyFile;
    std::string in;
    std::string out;
    std::string contentType = "application/octet-stream";
    std::string metadata;
    bool force = false;
};

int sealCommand(const CommandRegistry& registry, const SealOptions& options)
{
    auto kek = crypto::readKekFile(options.keyFile);
    if (!kek)
        return registry.fail(kek.error());
    auto sealed = sealFile(options.in, options.out, *kek, {options.contentType, options.metadata},
                           options.force);
    return sealed ? kExitOk : registry.fail(sealed.error());
}

struct UnsealOptions {
    std::string keyFile;
    std::string in;
    std::string out;
    bool force = false;
};

int unsealCommand(const CommandRegistry& registry, const UnsealOptions& options)
{
    auto kek = crypto::readKekFile(options.keyFile);
    if (!kek)
        return registry.fail(kek.error());
    auto unsealed = unsealFile(options.in, options.out, *kek, options.force);
    return unsealed ? kExitOk : registry.fail(unsealed.error());
}

struct RewrapOptions {
    std::string keyFile;
    std::string newKeyFile;
    std::string file;
};

int rewrapCommand(const CommandRegistry& registry, const RewrapOptions& options)
{
    auto kek = crypto::readKekFile(options.keyFile);
    if (!kek)
        return registry.fail(kek.error());
    auto newKek = crypto::readKekFile(options.newKeyFile);
    if (!newKek)
        return registry.fail(newKek.error());
    auto rewrapped = crypto::rewrapKeyBlock(options.file, crypto::keyFileResolver(*kek), *newKek);
    return rewrapped ? kExitOk : registry.fail(rewrapped.error());
}

void registerInspect(CLI::App* group, CommandRegistry& registry)
{
    auto options = std::make_shared<InspectOptions>();
    auto* command = group->add_subcommand(
        "inspect", "Print a sealed object's header and key block; needs no key");
    command->add_option("FILE", options->file, "The sealed object")->required();
    command->add_flag("--json", options->json, "Print JSON for scripts");
    registry.onRun(command, [options, &registry] { return inspectSealed(registry, *options); });
}

void registerSeal(CLI::App* group, CommandRegistry& registry)
{
    auto options = std::make_shared<SealOptions>();
    auto* command = group->add_subcommand("seal", "Seal a file under the KEK in a key file");
    command->add_option("--key-file", options->keyFile, "Key file holding the KEK")->required();
    command
        ->add_option("--content-type", options->contentType,
                     "Content type recorded in the clear header")
        ->capture_default_str();
    command->add_option("--metadata", options->metadata,
                        "Metadata (UTF-8, JSON by convention) recorded in the clear header");
    command->add_flag("--force", options->force, "Replace OUT if it exists");
    command->add_option("IN", options->in, "The plaintext file")->required();
    command->add_option("OUT", options->out, "The sealed object to write")->required();
    registry.onRun(command, [options, &registry] { return sealCommand(registry, *options); });
}

void registerUnseal(CLI::App* group, CommandRegistry& registry)
{
    auto options = std::make_shared<UnsealOptions>();
    auto* command = group->add_subcommand(
        "unseal", "Verify and decrypt a sealed object with the KEK in a key file");
    command->add_option("--key-file", options->keyFile, "Key file holding the KEK")->required();
    command->add_flag("--force", options->force, "Replace OUT if it exists");
    command->add_option("IN", options->in, "The sealed object")->required();
    command->add_option("OUT", options->out, "The plaintext file to write")->required();
    registry.onRun(command, [options, &registry] { return unsealCommand(registry, *options); });
}

void registerRewrap(CLI::App* group, CommandRegistry& registry)
{
    auto options = std::make_shared<RewrapOptions>();
    auto* command = group->add_subcommand(
        "rewrap", "Re-wrap a sealed object's data key under another KEK (rotation); the "
                  "payload is not re-encrypted");
    command->add_option("--key-file", options->keyFile, "Key file with the current KEK")
        ->required();
    command->add_option("--new-key-file", options->newKeyFile, "Key file with the new KEK")
        ->required();
    command->add_option("FILE", options->file, "The sealed object, replaced atomically")
        ->required();
    registry.onRun(command, [options, &registry] { return rewrapCommand(registry, *options); });
}

}  // namespace

void registerSealedCommands(CLI::App& app, CommandRegistry& registry)
{
    auto* group = app.add_subcommand(
        "sealed", "Inspect, seal and unseal sealed objects (docs/formats/sealed.md)");
    group->require_subcommand(1);
    registerInspect(group, registry);
    registerSeal(group, registry);
    registerUnseal(group, registry);
    registerRewrap(group, registry);
}

}  // namespace sealtrain::ctl
