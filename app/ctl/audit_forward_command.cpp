// `sealtrainctl audit verify-forwarded`: checks the JSON lines a control plane forwarded to a
// SIEM (--audit-forward, docs/formats/audit-forward.md) against a bundle of the signed log.
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
    auto bundle = readInputFile(options.bundle, "bundle");
    if (!bundle)
        return registry.fail(bundle.error());
    auto key = readTrustedKey(options.key);
    if (!key)
        return registry.fail(key.error());
    audit::VerifyOptions verify;
    verify.trustedKey = *key;
    const auto check = audit::checkForwarded(*forwarded, *bundle, verify);
    auto& out = registry.out();
    out << "Forwarded copy:  " << options.forwarded << "\n";
    out << "Lines:           " << check.lines << "\n";
    if (check.firstSequence)
        out << "Sequences:       " << *check.firstSequence << " to " << *check.lastSequence << "\n";
    out << "Matched:         " << check.entriesMatched
        << " entries equal to the signed log's, byte for byte\n";
    if (check.entriesBeyondBundle > 0)
        out << "Unconfirmed:     " << check.entriesBeyondBundle
            << " entries the bundle does not hold under a signed head (export a newer bundle)\n";
    for (const auto& [first, last] : check.gaps)
        out << "gap: entries " << first << " to " << last << " are not in the forwarded copy\n";
    for (const auto& error : check.errors)
        out << "error: " << error << "\n";
    if (!check.errors.empty()) {
        out << "Result:          FAILED\n";
        return kExitFailure;
    }
    if (!check.gaps.empty() || check.entriesBeyondBundle > 0 || verify.trustedKey.empty()) {
        if (verify.trustedKey.empty())
            out << "warning: no --key: the bundle was checked against its own key only\n";
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
        "verify-forwarded", "Check the audit entries a control plane forwarded (--audit-forward) "
                            "against a bundle of its signed log");
    command->add_option("FORWARDED", options->forwarded, "The forwarded JSON lines (a file)")
        ->required();
    command
        ->add_option("--bundle", options->bundle,
                     "A bundle of the signed log (sealtrainctl audit export), exported after "
                     "the lines were written")
        ->required();
    command->add_option("--key", options->key,
                        "The log key you trust: a PEM public key file, a verifier key, or its "
                        "fingerprint (sha256:...)");
    command->footer(
        "Exit status: 0 VERIFIED (every line is the signed log's entry, none missing); 1 FAILED "
        "(a line was altered, removed without a gap line, or the bundle does not verify); 2 bad "
        "usage; 3 UNCONFIRMED (nothing altered, but entries are missing behind a gap line, lie "
        "beyond the bundle, or no --key was given).");
    registry.onRun(command, [options, &registry] { return verifyForwarded(registry, *options); });
}

}  // namespace sealtrain::ctl
