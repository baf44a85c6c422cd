// Lines, JSON and options of the access commands (access_output.h).
#include "access_output.h"

#include "client_options.h"
#include "passphrase.h"
#include "secret_output.h"

#include "sealtrain/audit/tree_head.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <charconv>
#include <limits>
#include <ostream>

namespace sealtrain::ctl {
namespace {

constexpr std::string_view kRoleColumns = "{:<16} {:<8} {}\n";
constexpr std::string_view kSessionColumns = "{:<8} {:<24} {:<21} {:<21} {}\n";

}  // namespace

std::string roleHeader()
{
    return fmt::format(kRoleColumns, "ROLE", "KIND", "PERMISSIONS");
}

std::string roleRow(const api::RoleSummary& role)
{
    return fmt::format(kRoleColumns, role.name, role.builtin ? "default" : "custom",
                       fmt::join(role.permissions, " "));
}

nlohmann::json roleJson(const api::RoleSummary& role)
{
    return nlohmann::json{
        {"name", role.name}, {"builtin", role.builtin}, {"permissions", role.permissions}};
}

std::string sessionHeader()
{
    return fmt::format(kSessionColumns, "SESSION", "USER", "SIGNED IN", "LAST USED", "STATE");
}

std::string sessionRow(const api::SessionSummary& session)
{
    return fmt::format(kSessionColumns, session.id, session.user,
                       audit::formatUtcSeconds(session.createdUnix),
                       audit::formatUtcSeconds(session.lastUsedUnix),
                       session.revoked   ? "revoked"
                       : session.expired ? "expired"
                                         : "active");
}

Result<void> showReset(std::ostream& out, const api::ResetResult& reset,
                       const std::string& codeFile)
{
    if (reset.pending) {
        out << fmt::format("Requested a reset of '{}'; another admin must approve it with "
                           "'sealtrainctl user reset {} --approve' (whoever holds the code could "
                           "become them).\n",
                           reset.user, reset.user);
        return success();
    }
    out << fmt::format("Reset '{}': their sessions are revoked and no password or TOTP code "
                       "works until they set new ones with the one-time reset code, which works "
                       "until {}.\n",
                       reset.user, utcText(reset.codeExpires));
    return showSecret(out, reset.resetCode, codeFile, "reset code",
                      fmt::format("Give {} this reset code out of band (they run 'sealtrainctl "
                                  "sign-in --user {} --reset-code-file FILE'):",
                                  reset.user, reset.user),
                      fmt::format("Wrote the reset code to {} (mode 0600); give it to {} out of "
                                  "band, then delete the file.",
                                  codeFile, reset.user));
}

Result<void> showNewUser(std::ostream& out, const std::string& user, const api::NewUserResult& code,
                         const std::string& codeFile)
{
    out << fmt::format("Created '{}', who has no password or TOTP secret yet: they set their own "
                       "with the one-time enrolment code, which works until {}.\n",
                       user, utcText(code.codeExpires));
    return showSecret(out, code.enrolmentCode, codeFile, "enrolment code",
                      fmt::format("Give {} this enrolment code out of band (they run "
                                  "'sealtrainctl sign-in --user {} --reset-code-file FILE'):",
                                  user, user),
                      fmt::format("Wrote the enrolment code to {} (mode 0600); give it to {} out "
                                  "of band, then delete the file.",
                                  codeFile, user));
}

void addResetOptions(CLI::App* command, std::string& name, bool& approve, std::string& codeFile)
{
    command->add_option("NAME", name, "The user name")->required();
    command->add_flag("--approve", approve,
                      "Approve the reset of an admin that another admin requested");
    command->add_option("--code-file", codeFile,
                        "Write the one-time reset code to this new file (mode 0600) instead of "
                        "printing it");
    command->footer("While there are two or more admins, and always for someone who administers "
                    "identities, a reset only requests it: it takes effect when a second admin "
                    "runs 'sealtrainctl user reset NAME --approve'.");
}

void addResetCompletionOptions(CLI::App* command, CLI::Option* totpCode, std::string& resetCodeFile,
                               std::string& totpUriFile)
{
    auto* reset = command->add_option(
        "--reset-code-file", resetCodeFile,
        "For a new account or after a reset: read the one-time enrolment or reset code from "
        "this file (mode 0600), set your password and get your TOTP secret instead of signing "
        "in");
    command
        ->add_option("--totp-uri-file", totpUriFile,
                     "With --reset-code-file: write the new otpauth:// URI to this new file (mode "
                     "0600) instead of printing it")
        ->needs(reset);
    reset->excludes(totpCode);
}

Result<ResetCompletion> readResetCompletion(const std::string& user,
                                            const std::string& resetCodeFile,
                                            const std::string& passwordFile)
{
    auto resetCode = readPassphraseFile(resetCodeFile);
    if (!resetCode)
        return resetCode.error();
    auto password = obtainPassphrase(passwordFile, fmt::format("New password for {}", user), true,
                                     kPasswordFileOption);
    if (!password)
        return password.error();
    return ResetCompletion{std::string(resetCode->bytes().begin(), resetCode->bytes().end()),
                           std::move(password).value()};
}

Result<void> showCompletedReset(std::ostream& out, const std::string& user,
                                const std::string& otpauthUri, const std::string& totpUriFile)
{
    out << fmt::format("Set the new password of '{}'.\n", user);
    SEALTRAIN_TRY(showEnrollment(out, user, otpauthUri, totpUriFile));
    out << "Now sign in with the new password and a code from the new TOTP secret.\n";
    return success();
}

std::optional<std::chrono::seconds> parseDuration(const std::string& text)
{
    std::int64_t value = 0;
    const char* end = text.data() + text.size();
    auto [rest, ec] = std::from_chars(text.data(), end, value);
    if (ec != std::errc() || rest == text.data() || value <= 0)
        return std::nullopt;
    const std::string_view unit(rest, static_cast<std::size_t>(end - rest));
    std::int64_t factor = 0;
    if (unit.empty() || unit == "s")
        factor = 1;
    else if (unit == "m")
        factor = 60;
    else if (unit == "h")
        factor = 3600;
    if (factor == 0 || value > std::numeric_limits<std::int64_t>::max() / factor)
        return std::nullopt;
    return std::chrono::seconds{value * factor};
}

std::string badDurationSentence()
{
    return "--duration takes a positive number of seconds, optionally ending in s, m or h (e.g. "
           "2h). Run 'sealtrainctl grant break-glass --help' for the options.";
}

std::string breakGlassGranted(const std::string& role, const std::string& user,
                              std::chrono::seconds duration)
{
    return fmt::format("Granted '{}' to '{}' for {} seconds as break-glass; every action under it "
                       "is flagged in the audit log.\n",
                       role, user, duration.count());
}

std::string grantSentence(const std::string& role, const std::string& user,
                          const std::string& project, bool pending)
{
    const std::string where = project.empty() ? "" : " in project '" + project + "'";
    if (pending)
        return fmt::format("Requested '{}' for '{}'{}: it takes effect when the same 'grant add' "
                           "runs again, by another admin while there are two, and only once '{}' "
                           "has set their own credentials.\n",
                           role, user, where, user);
    return fmt::format("Granted '{}' to '{}'{}.\n", role, user, where);
}

}  // namespace sealtrain::ctl
