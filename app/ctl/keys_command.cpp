// `sealtrainctl key id`, `signature verify` and `dsse verify`: what an auditor needs to check
// Sealtrain's Ed25519 signatures offline, with nothing but the public key (docs/formats/keys.md).
#include "commands.h"
#include "ctl.h"
#include "input_file.h"

#include "sealtrain/base/encoding.h"
#include "sealtrain/base/result.h"
#include "sealtrain/crypto/dsse.h"
#include "sealtrain/crypto/signing.h"

#include <algorithm>
#include <cctype>
#include <iterator>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

namespace sealtrain::ctl {
namespace {

// A signature file holds the 64 raw bytes, or their base64 (whitespace around it ignored).
Result<std::vector<std::uint8_t>> readSignature(const std::string& path)
{
    auto content = readInputFile(path, "signature");
    if (!content)
        return content.error();
    if (content->size() == crypto::kEd25519SignatureSize)
        return std::vector<std::uint8_t>(content->begin(), content->end());
    std::string text;
    std::copy_if(content->begin(), content->end(), std::back_inserter(text),
                 [](char c) { return std::isspace(static_cast<unsigned char>(c)) == 0; });
    auto decoded = fromBase64(text);
    if (!decoded || decoded->size() != crypto::kEd25519SignatureSize) {
        return Error(ErrorCode::InvalidArgument,
                     "The signature file '" + path
                         + "' holds neither 64 raw bytes nor their base64; give the Ed25519 "
                           "signature as it was written.");
    }
    return std::move(*decoded);
}

int printKeyId(const CommandRegistry& registry, const std::string& path)
{
    const auto key = crypto::PublicKey::fromPemFile(path);
    if (!key)
        return registry.fail(key.error());
    registry.out() << key->keyId() << '\n';
    return kExitOk;
}

struct SignatureVerifyOptions {
    std::string key;
    std::string signature;
    std::string file;
};

int verifySignature(const CommandRegistry& registry, const SignatureVerifyOptions& options)
{
    const auto key = crypto::PublicKey::fromPemFile(options.key);
    if (!key)
        return registry.fail(key.error());
    const auto signature = readSignature(options.signature);
    if (!signature)
        return registry.fail(signature.error());
    const auto message = readInputFile(options.file, "file");
    if (!message)
        return registry.fail(message.error());
    if (!key->verify(asBytes(*message), *signature)) {
        return registry.fail(Error(ErrorCode::Unauthenticated, "The signature does not verify for '"
                                                                   + options.file + "' under key "
                                                                   + key->keyId()
                                                                   + "; do not trust the file."));
    }
    registry.out() << "Signature OK: '" << options.file << "' is signed by " << key->keyId()
                   << ".\n";
    return kExitOk;
}

struct DsseVerifyOptions {
    std::string key;
    std::string envelope;
};

int verifyEnvelope(const CommandRegistry& registry, const DsseVerifyOptions& options)
{
    const auto key = crypto::PublicKey::fromPemFile(options.key);
    if (!key)
        return registry.fail(key.error());
    const auto json = readInputFile(options.envelope, "envelope");
    if (!json)
        return registry.fail(json.error());
    const auto envelope = crypto::DsseEnvelope::fromJson(*json);
    if (!envelope)
        return registry.fail(envelope.error());
    registry.out() << "payloadType: " << envelope->payloadType << '\n';
    const auto verdict = crypto::verifyDsse(*envelope, *key);
    if (!verdict) {
        registry.out() << "verdict: NOT VERIFIED\n";
        return registry.fail(verdict.error());
    }
    registry.out() << "verdict: verified by " << key->keyId() << '\n';
    return kExitOk;
}

void registerKeyId(CLI::App& app, CommandRegistry& registry)
{
    auto* group = app.add_subcommand("key", "Inspect public keys");
    group->require_subcommand(1);
    auto path = std::make_shared<std::string>();
    auto* command = group->add_subcommand(
        "id", "Print an Ed25519 public key's id (sha256: and the hex SHA-256 of its 32 bytes)");
    command->add_option("PUBKEY", *path, "Public key, PEM ('BEGIN PUBLIC KEY')")
        ->required()
        ->check(CLI::ExistingFile);
    registry.onRun(command, [path, &registry] { return printKeyId(registry, *path); });
}

void registerSignatureVerify(CLI::App& app, CommandRegistry& registry)
{
    auto options = std::make_shared<SignatureVerifyOptions>();
    auto* group = app.add_subcommand("signature", "Check Ed25519 signatures");
    group->require_subcommand(1);
    auto* command =
        group->add_subcommand("verify", "Verify FILE's Ed25519 signature under a public key");
    command->add_option("--key", options->key, "Public key, PEM ('BEGIN PUBLIC KEY')")
        ->required()
        ->check(CLI::ExistingFile);
    command
        ->add_option("--signature", options->signature, "Signature: 64 raw bytes or their base64")
        ->required()
        ->check(CLI::ExistingFile);
    command->add_option("FILE", options->file, "The signed file")
        ->required()
        ->check(CLI::ExistingFile);
    registry.onRun(command, [options, &registry] { return verifySignature(registry, *options); });
}

void registerDsseVerify(CLI::App& app, CommandRegistry& registry)
{
    auto options = std::make_shared<DsseVerifyOptions>();
    auto* group = app.add_subcommand("dsse", "Check DSSE envelopes (signed statements)");
    group->require_subcommand(1);
    auto* command = group->add_subcommand(
        "verify", "Verify a DSSE envelope's signature; prints its payload type and the verdict");
    command->add_option("--key", options->key, "Public key, PEM ('BEGIN PUBLIC KEY')")
        ->required()
        ->check(CLI::ExistingFile);
    command->add_option("ENVELOPE", options->envelope, "The envelope, JSON")
        ->required()
        ->check(CLI::ExistingFile);
    registry.onRun(command, [options, &registry] { return verifyEnvelope(registry, *options); });
}

}  // namespace

void registerKeysCommands(CLI::App& app, CommandRegistry& registry)
{
    registerKeyId(app, registry);
    registerSignatureVerify(app, registry);
    registerDsseVerify(app, registry);
}

}  // namespace sealtrain::ctl
