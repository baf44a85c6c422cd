// One PEM block at a time, and no password prompts (pem_input.h).
#include "pem_input.h"

#include <openssl/pem.h>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace sealtrain::crypto::pem {
namespace {

constexpr std::string_view kEndMarker = "-----END ";
constexpr std::string_view kDashes = "-----";

bool onlyWhitespace(std::string_view text)
{
    return std::all_of(text.begin(), text.end(),
                       [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; });
}

}  // namespace

int refusePassword(char* /*buffer*/, int /*size*/, int /*encrypting*/, void* asked)
{
    if (asked != nullptr)
        *static_cast<bool*>(asked) = true;
    return -1;
}

Result<openssl::BioPtr> singleBlock(std::string_view text, std::string_view what)
{
    // Without an END line OpenSSL refuses the text itself; with one, only whitespace may follow.
    const auto end = text.find(kEndMarker);
    if (end != std::string_view::npos) {
        const auto close = text.find(kDashes, end + kEndMarker.size());
        if (close != std::string_view::npos && !onlyWhitespace(text.substr(close + kDashes.size())))
            return Error(ErrorCode::InvalidArgument,
                         fmt::format("The {} has data after its first PEM block; give a file that "
                                     "holds that one block only.",
                                     what));
    }
    openssl::BioPtr bio = openssl::readBio(text);
    if (!bio)
        return Error(ErrorCode::ResourceExhausted,
                     fmt::format("OpenSSL ran out of memory reading the {}.", what));
    return bio;
}

Result<openssl::PkeyPtr> readPrivateKey(std::string_view text, std::string_view what,
                                        std::string_view notAKey)
{
    auto bio = singleBlock(text, what);
    if (!bio)
        return bio.error();
    bool asked = false;
    openssl::PkeyPtr key(PEM_read_bio_PrivateKey(bio->get(), nullptr, refusePassword, &asked));
    if (asked)
        return Error(ErrorCode::InvalidArgument,
                     fmt::format("The {} is encrypted and Sealtrain never asks for a PEM password; "
                                 "give the key unencrypted (Sealtrain keeps it sealed itself).",
                                 what));
    if (!key)
        return Error(ErrorCode::InvalidArgument, std::string(notAKey));
    return key;
}

}  // namespace sealtrain::crypto::pem
