// `sealtrainctl audit verify-forwarded`: checks the JSON lines a control plane forwarded to a
// SIEM (--audit-forward, docs/formats/audit-forward.md): through the signed heads it carries, and
// against a bundle of the signed log when one is given.
#include "commands.h"
#include "ctl.h"
#include "input_file.h"

#include "sealtrain/audit/forward.h"

#include <fmt/format.h>

#include <memory>
#include <ostream>

namespace sealtrain::ctl {
namespace {

struct VerifyForwardedOptions {
    std::string forwarded;
    std::string bundle;
    std::string key;
};

int verifyForwarded(const CommandRegistry& registry, const VerifyForwardedOptions& options)
{
    auto forwarded = readInputFile(options.forwarded, "forwarded audit copy");
    if (!forwarded)
        return registry.fail(forwarded.error());
    std::string bundle;
    if (!options.bundle.empty()) {
        auto read = readInputFile(options.bundle, "bundle");
        if (!read)
            return registry.fail(read.error());
        bundle = std::move(*read);
    }
    auto key = readTrustedKey(options.key);
    if (!key)
        return registry.fail(key.error());
    audit::VerifyOptions verify;
    verify.trustedKey = *key;
    const auto check = audit::checkForwarded(*forwarded, bundle, verify);
    auto& out = registry.out();
    out << "Forwarded copy:  " << options.forwarded << "\n";
    out << "Lines:           " << check.lines << "\n";
    if (check.firstSequence)
        out << "Sequences:       " << *check.firstSequence << " to " << *check.lastSequence << "\n";
    out << "Signed heads:    " << check.headsVerified << " of the copy's own verified, covering "
        << check.entriesUnderHeads << " entries\n";
    if (!options.bundle.empty())
        out << "Matched:         " << check.entriesMatched
            << " entries equal to the bundle's, byte for byte\n";
    if (check.entriesUnsigned > 0)
        out << "Unconfirmed:     " << check.entriesUnsigned
            << " entries under no signed head yet (the next head covers them; or export a "
               "newer bundle)\n";
    for (const auto& [first, last] : check.gaps)
        out << "gap: entries " << first << " to " << last << " are not in the forwarded copy\n";
    for (const auto& warning : check.warnings)
        out << "warning: " << warning << "\n";
    for (const auto& error : check.errors)
        out << "error: " << error << "\n";
    if (!check.errors.empty()) {
        out << "Result:          FAILED\n";
        return kExitFailure;
    }
    if (!check.gaps.empty() || check.entriesUnsigned > 0 || !check.warnings.empty()) {
        out << "Result:          UNCONFIRMED\n";
        return kExitUnconfirmed;
    }
    out << "Result:          VERIFIED\n";
    return kExitOk;
}

}  // namespace

void registerVerifyForwarded(CLI::App* group, CommandRegistry& registry)
{
    auto options = std::make_shared<VerifyForwardedOptions>();
    auto* command = group->add_subcommand(
        "verify-forwarded",
        "Check the audit entries and signed heads a control plane forwarded "
        "(--audit-forward), on their own or against a bundle of its signed log");
    command->add_option("FORWARDED", options->forwarded, "The forwarded JSON lines (a file)")
        ->required();
    command->add_option("--bundle", options->bundle,
                        "Also compare with a bundle of the signed log (sealtrainctl audit export), "
                        "exported after the lines were written");
    command->add_option("--key", options->key,
                        "The log key you trust: a PEM public key file or a verifier key (a "
                        "fingerprint, sha256:..., only with --bundle)");
    command->footer(
        "The copy must begin at entry 0 and hold each sequence once (a repeat must be the same "
        "entry); each signed head in it must verify under --key over the copy's own first "
        "entries. Exit status: 0 VERIFIED (every entry is under a verified head or the bundle's, "
        "none missing); 1 FAILED (a line altered, removed or cut from the beginning, a head that "
        "does not verify, or a bundle that does not verify); 2 bad usage; 3 UNCONFIRMED (nothing "
        "altered, but entries are behind a gap line or under no signed head yet, or no --key was "
        "given).");
    registry.onRun(command, [options, &registry] { return verifyForwarded(registry, *options); });
}

}  // namespace sealtrain::ctl
