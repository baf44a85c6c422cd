// Error codes' names and the one-sentence rule for user-facing messages.
#include "sealtrain/base/result.h"

#include <cctype>
#include <cstdio>

namespace sealtrain {

const char* errorCodeName(ErrorCode code) noexcept
{
    switch (code) {
    case ErrorCode::InvalidArgument: return "invalid-argument";
    case ErrorCode::NotFound: return "not-found";
    case ErrorCode::AlreadyExists: return "already-exists";
    case ErrorCode::PermissionDenied: return "permission-denied";
    case ErrorCode::FailedPrecondition: return "failed-precondition";
    case ErrorCode::Unauthenticated: return "unauthenticated";
    case ErrorCode::Integrity: return "integrity";
    case ErrorCode::Unsupported: return "unsupported";
    case ErrorCode::ResourceExhausted: return "resource-exhausted";
    case ErrorCode::Io: return "io";
    case ErrorCode::Internal: return "internal";
    }
    return "unknown";
}

Error::Error(ErrorCode code, std::string message)
    : code_(code)
    , message_(std::move(message))
{
#ifndef NDEBUG
    // Say which message broke the rule before the assertion stops a debug build: the abort of
    // a daemon in a test shows only this line (error messages hold no secret, by rule).
    if (!isOneSentence(message_))
        std::fprintf(stderr, "Not one sentence: \"%s\"\n", message_.c_str());
#endif
    assert(isOneSentence(message_) && "Error messages are one sentence ending in a full stop");
}

Error Error::withContext(const std::string& context) const
{
    std::string lowered = message_;
    // Lower the first letter unless the message starts with a quoted name or an acronym.
    if (lowered.size() > 1 && std::isupper(static_cast<unsigned char>(lowered[0])) != 0
        && std::isupper(static_cast<unsigned char>(lowered[1])) == 0) {
        lowered[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(lowered[0])));
    }
    Error contextual(code_, context + ": " + lowered);
    contextual.reason_ = reason_;
    return contextual;
}

bool isOneSentence(const std::string& text) noexcept
{
    if (text.size() < 2 || text.back() != '.')
        return false;
    const auto first = static_cast<unsigned char>(text.front());
    if (std::isupper(first) == 0 && first != '\'' && first != '"' && first != '`')
        return false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '\n' || c == '\r')
            return false;
        const bool sentenceEnd = c == '.' || c == '!' || c == '?';
        if (sentenceEnd && i + 2 < text.size() && text[i + 1] == ' '
            && std::isupper(static_cast<unsigned char>(text[i + 2])) != 0) {
            return false;
        }
    }
    return true;
}

std::string asClause(std::string_view foreignMessage)
{
    std::string clause;
    clause.reserve(foreignMessage.size());
    for (const char c : foreignMessage) {
        const bool space = c == ' ' || c == '\n' || c == '\r' || c == '\t';
        if (space && (clause.empty() || clause.back() == ' '))
            continue;
        clause.push_back(space ? ' ' : c);
    }
    for (auto at = clause.find(". "); at != std::string::npos; at = clause.find(". ", at))
        clause.replace(at, 2, "; ");
    while (!clause.empty() && (clause.back() == '.' || clause.back() == ' '))
        clause.pop_back();
    return clause;
}

}  // namespace sealtrain
