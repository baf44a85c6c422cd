// What the access commands of sealtrainctl print and take: the options for a reset and its
// completion, and the lines (and JSON) for roles, sessions, resets and break-glass grants.
#pragma once

#include "sealtrain/api/client.h"
#include "sealtrain/base/result.h"
#include "sealtrain/crypto/secret_bytes.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <iosfwd>
#include <optional>
#include <string>

namespace sealtrain::ctl {

// `role list`: the header line, one line a role, and a role as JSON (--json).
[[nodiscard]] std::string roleHeader();
[[nodiscard]] std::string roleRow(const api::RoleSummary& role);
[[nodiscard]] nlohmann::json roleJson(const api::RoleSummary& role);

// What `grant add` did: made the grant, or recorded a request that waits for a second admin
// (who runs the same `grant add`).
[[nodiscard]] std::string grantSentence(const std::string& role, const std::string& user,
                                        const std::string& project, bool pending);

// `session list`: the header line and one line a session (times in UTC).
[[nodiscard]] std::string sessionHeader();
[[nodiscard]] std::string sessionRow(const api::SessionSummary& session);

// What a reset did, and the one-time code when it took effect: written to `codeFile`, a new
// file of mode 0600, when one is given, else printed.
[[nodiscard]] Result<void> showReset(std::ostream& out, const api::ResetResult& reset,
                                     const std::string& codeFile);

// A new user and their one-time enrolment code: written to `codeFile`, a new file of mode
// 0600, when one is given, else printed, with how the user redeems it.
[[nodiscard]] Result<void> showNewUser(std::ostream& out, const std::string& user,
                                       const api::NewUserResult& code, const std::string& codeFile);

// `user reset`'s options: NAME, --approve and --code-file, with a footer on approval.
void addResetOptions(CLI::App* command, std::string& name, bool& approve, std::string& codeFile);

// What completing a reset takes, on the sign-in command: --reset-code-file (which excludes
// `totpCode`, the ordinary sign-in's option) and --totp-uri-file.
void addResetCompletionOptions(CLI::App* command, CLI::Option* totpCode, std::string& resetCodeFile,
                               std::string& totpUriFile);

// The one-time code from `resetCodeFile` and the user's new password (from `passwordFile`, else
// asked twice on the terminal).
struct ResetCompletion {
    std::string code;
    crypto::SecretBytes password;
};
[[nodiscard]] Result<ResetCompletion> readResetCompletion(const std::string& user,
                                                          const std::string& resetCodeFile,
                                                          const std::string& passwordFile);

// What a completed reset prints: the new TOTP secret (showEnrollment) and what to do next.
[[nodiscard]] Result<void> showCompletedReset(std::ostream& out, const std::string& user,
                                              const std::string& otpauthUri,
                                              const std::string& totpUriFile);

// "90", "90s", "30m", "4h": a break-glass grant's --duration in seconds; nullopt for anything
// else.
[[nodiscard]] std::optional<std::chrono::seconds> parseDuration(const std::string& text);

// The usage error for a --duration that parseDuration refused.
[[nodiscard]] std::string badDurationSentence();

// The line printed once a break-glass grant is made.
[[nodiscard]] std::string breakGlassGranted(const std::string& role, const std::string& user,
                                            std::chrono::seconds duration);

}  // namespace sealtrain::ctl
