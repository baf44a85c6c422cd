// Internal to the audit library: a bundle's text scanned line by line without decoding its
// entries, so that verification decodes each entry once and reads a complete bundle's
// redundant inclusion proofs for their form only.
#pragma once

#include "sealtrain/audit/bundle.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sealtrain::audit::internal {

inline std::string seqText(std::uint64_t sequence)
{
    return "Entry " + std::to_string(sequence);
}

// The smallest head size that covers `sequence`, or nullopt.
inline std::optional<std::uint64_t> coveringHead(const std::vector<std::uint64_t>& sizes,
                                                 std::uint64_t sequence)
{
    const auto it = std::upper_bound(sizes.begin(), sizes.end(), sequence);
    if (it == sizes.end())
        return std::nullopt;
    return *it;
}

// An entry line, its fields still text inside the bundle.
struct EntryLine {
    std::uint64_t sequence = 0;
    std::optional<std::uint64_t> headSize;
    std::string_view bytes;  // base64
    std::string_view proof;  // base64 hashes separated by single spaces; empty for none
    std::size_t proofLength = 0;
    std::size_t line = 0;
};

struct BundleText {
    Bundle header;  // everything but the entries
    std::vector<EntryLine> entries;
};

// Checks every line's form (entry lines: numbers, and proof hashes of 44 characters); the
// entries' base64 is checked when they are decoded.
[[nodiscard]] Result<BundleText> scanBundle(std::string_view text);
// Decodes one entry line (its bytes and proof); Integrity naming the line when malformed.
[[nodiscard]] Result<BundleEntry> decodeEntryLine(const EntryLine& line);
// True when every proof hash is canonical base64 of 32 bytes (the alphabet, '=' last).
[[nodiscard]] bool isProofText(std::string_view proof) noexcept;

}  // namespace sealtrain::audit::internal
