// `sealtrainctl change-totp`: the signed-in user moves their second factor to a new
// authenticator (Sessions.StartTotpChange, then ConfirmTotpChange). The password and a code
// from the current secret start it; the new secret is shown once; a code from it confirms it, at
// the terminal or later with --confirm CODE (within ten minutes).
#include "client_options.h"
#include "commands.h"
#include "ctl.h"
#include "passphrase.h"
#include "secret_output.h"

#include "sealtrain/crypto/secret_bytes.h"

#include <fmt/format.h>
#include <unistd.h>

#include <memory>
#include <ostream>
#include <string>

namespace sealtrain::ctl {
namespace {

struct TotpChangeOptions {
    ClientOptions client;
    std::string passwordFile;
    std::string totpCode;  // from the current secret
    std::string totpUriFile;
    std::string confirm;  // a code from the new secret: confirm a change started before
};

// A code typed at the terminal (not echoed: it is a one-time secret all the same).
Result<std::string> askCode(const std::string& prompt, std::string_view answeredBy)
{
    auto typed = promptPassphrase(prompt, false, answeredBy);
    if (!typed)
        return typed.error();
    return std::string(typed->bytes().begin(), typed->bytes().end());
}

int confirmChange(const CommandRegistry& registry, api::ControlClient& client,
                  const std::string& code)
{
    auto ended = client.sessions().confirmTotpChange(code);
    if (!ended)
        return registry.fail(ended.error());
    registry.out() << fmt::format("The new TOTP secret is yours now; sign in with its codes. {} "
                                  "other session{} of yours ended.\n",
                                  *ended, *ended == 1 ? "" : "s");
    return kExitOk;
}

int runChangeTotp(const CommandRegistry& registry, const TotpChangeOptions& options)
{
    auto client = signedInClient(options.client, registry.err());
    if (!client)
        return registry.fail(client.error());
    if (!options.confirm.empty())
        return confirmChange(registry, **client, options.confirm);

    auto password = obtainPassphrase(options.passwordFile, "Password", false, kPasswordFileOption);
    if (!password)
        return registry.fail(password.error());
    std::string current = options.totpCode;
    if (current.empty()) {
        auto typed = askCode("Code from your current authenticator", "--totp-code CODE");
        if (!typed)
            return registry.fail(typed.error());
        current = std::move(*typed);
    }
    auto pending = (*client)->sessions().startTotpChange(*password, current);
    if (!pending)
        return registry.fail(pending.error());
    if (auto shown = showSecret(
            registry.out(), pending->otpauthUri, options.totpUriFile, "TOTP URI",
            "Add this new secret to your authenticator app (shown once; do not share it):",
            fmt::format("Wrote the new otpauth:// URI to {} (mode 0600); import it into your "
                        "authenticator app, then delete the file.",
                        options.totpUriFile));
        !shown)
        return registry.fail(shown.error());
    const std::string deadline = utcText(pending->expiresUnix);
    if (::isatty(STDIN_FILENO) == 0) {
        registry.out() << fmt::format("Until {}, confirm it with a code from the new secret: "
                                      "sealtrainctl change-totp --confirm CODE\n",
                                      deadline);
        return kExitOk;
    }
    auto code = askCode("Code from the new secret", "--confirm CODE");
    if (!code)
        return registry.fail(code.error(), fmt::format("Confirm it before {} with "
                                                       "'sealtrainctl change-totp --confirm CODE'.",
                                                       deadline));
    return confirmChange(registry, **client, *code);
}

}  // namespace

void registerTotpCommands(CLI::App& app, CommandRegistry& registry)
{
    auto options = std::make_shared<TotpChangeOptions>();
    auto* command = app.add_subcommand(
        "change-totp", "Move your TOTP second factor to a new authenticator: your password and a "
                       "current code start it, a code from the new secret confirms it, and your "
                       "other sessions end");
    auto* password = command->add_option("--password-file", options->passwordFile,
                                         "Read your password from this file instead of asking");
    auto* current = command->add_option("--totp-code", options->totpCode,
                                        "A code from your current authenticator");
    auto* uriFile = command->add_option(
        "--totp-uri-file", options->totpUriFile,
        "Write the new otpauth:// URI to this new file (mode 0600) instead of printing it");
    command
        ->add_option("--confirm", options->confirm,
                     "Confirm the change started before with a code from the new secret")
        ->excludes(password)
        ->excludes(current)
        ->excludes(uriFile);
    command->footer("A wrong password or current code ends this session (sign in again to retry); "
                    "the new secret waits ten minutes and three wrong codes, then is discarded "
                    "and the old one still holds. Lost the old authenticator? Ask an admin for a "
                    "reset instead.");
    addClientOptions(command, options->client, true);
    registry.onRun(command, [&registry, options] { return runChangeTotp(registry, *options); });
}

}  // namespace sealtrain::ctl
