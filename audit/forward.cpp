// Audit forwarding: entries as JSON lines, their targets (a file, the systemd journal) and the
// check of a forwarded copy against a bundle (docs/formats/audit-forward.md).
#include "sealtrain/audit/forward.h"

#include "sealtrain/audit/merkle_hash.h"
#include "sealtrain/audit/merkle_tree.h"
#include "sealtrain/audit/tree_head.h"
#include "sealtrain/base/encoding.h"
#include "sealtrain/base/logging.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <utility>

namespace sealtrain::audit {
namespace {

std::string dumpLine(const nlohmann::json& json)
{
    return json.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// One line's fields, read strictly: nullopt with `why` when a field is missing or mistyped.
struct ForwardedLine {
    std::string type;
    std::uint64_t sequence = 0;
    std::uint64_t first = 0;
    std::uint64_t last = 0;
    std::string leafHashHex;
    std::vector<std::uint8_t> bytes;
    std::string note;  // a head's signed note
    nlohmann::json summary;
};

std::optional<ForwardedLine> readLine(std::string_view text, std::string& why)
{
    const auto json = nlohmann::json::parse(text, nullptr, false);
    if (json.is_discarded() || !json.is_object()) {
        why = "it is not a JSON object";
        return std::nullopt;
    }
    const auto text_of = [&](const char* name) -> std::optional<std::string> {
        if (!json.contains(name) || !json[name].is_string())
            return std::nullopt;
        return json[name].get<std::string>();
    };
    const auto number_of = [&](const char* name) -> std::optional<std::uint64_t> {
        if (!json.contains(name) || !json[name].is_number_unsigned())
            return std::nullopt;
        return json[name].get<std::uint64_t>();
    };
    if (text_of("format") != std::string(kForwardFormat)) {
        why = fmt::format("its format is not {}", kForwardFormat);
        return std::nullopt;
    }
    ForwardedLine line;
    line.type = text_of("type").value_or("");
    if (line.type == "gap") {
        auto first = number_of("first");
        auto last = number_of("last");
        if (!first || !last || *first > *last) {
            why = "its gap has no valid first and last sequence numbers";
            return std::nullopt;
        }
        line.first = *first;
        line.last = *last;
        line.summary = {{"origin", text_of("origin").value_or("")}};
        return line;
    }
    if (line.type == "head") {
        auto size = number_of("tree_size");
        auto note = text_of("note");
        if (!size || !note) {
            why = "its head lacks its tree_size or note";
            return std::nullopt;
        }
        line.sequence = *size;
        line.note = std::move(*note);
        line.summary = json;
        return line;
    }
    if (line.type != "entry") {
        why = "its type is not entry, head or gap";
        return std::nullopt;
    }
    auto sequence = number_of("sequence");
    auto leaf = text_of("leaf_hash");
    auto bytes = text_of("entry");
    if (!sequence || !leaf || !bytes) {
        why = "it lacks its sequence, leaf_hash or entry";
        return std::nullopt;
    }
    auto decoded = fromBase64(*bytes);
    if (!decoded) {
        why = "its entry is not base64";
        return std::nullopt;
    }
    line.sequence = *sequence;
    line.leafHashHex = *leaf;
    line.bytes = std::move(*decoded);
    line.summary = json;
    return line;
}

nlohmann::json summaryOf(const Entry& entry)
{
    return {{"time", toRfc3339(static_cast<std::int64_t>(entry.timeNs / 1000000000U))},
            {"time_ns", entry.timeNs},
            {"actor",
             {{"kind", actorKindName(entry.actor.kind)},
              {"id", entry.actor.id},
              {"session", entry.actor.session},
              {"auth", entry.actor.authMethod}}},
            {"action", entry.action},
            {"target", {{"kind", entry.target.kind}, {"id", entry.target.id}}},
            {"outcome", outcomeName(entry.outcome)},
            {"reason", entry.reason}};
}

nlohmann::json headSummary(const TreeHead& head)
{
    return {{"tree_size", head.size},
            {"root", toHex(head.root)},
            {"time", formatUtcSeconds(head.timeSeconds)}};
}

}  // namespace

Result<std::string> forwardedEntryLine(std::string_view origin, const StoredEntry& entry)
{
    auto decoded = decodeEntry(entry.bytes);
    if (!decoded)
        return decoded.error();
    nlohmann::json json{{"format", kForwardFormat},
                        {"type", "entry"},
                        {"origin", origin},
                        {"sequence", entry.sequence},
                        {"leaf_hash", toHex(entry.leafHash)}};
    json.update(summaryOf(*decoded));
    json["entry"] = toBase64(entry.bytes);
    return dumpLine(json);
}

Result<std::string> forwardedHeadLine(std::string_view origin, std::string_view signedNote)
{
    auto note = parseSignedNote(signedNote);
    if (!note)
        return note.error();
    auto head = parseTreeHeadText(note->text);
    if (!head)
        return head.error();
    nlohmann::json json{{"format", kForwardFormat}, {"type", "head"}, {"origin", origin}};
    json.update(headSummary(*head));
    json["note"] = std::string(signedNote);
    return dumpLine(json);
}

std::string forwardedGapLine(std::string_view origin, std::uint64_t first, std::uint64_t last)
{
    return dumpLine({{"format", kForwardFormat},
                     {"type", "gap"},
                     {"origin", origin},
                     {"first", first},
                     {"last", last},
                     {"reason", "the forward target refused writes for longer than the backlog "
                                "holds; these entries are in the signed log only"}});
}

namespace {

// The key the copy's heads (and the bundle) must verify under, or a warning that none was given.
std::optional<NoteVerifier> copyVerifier(const VerifyOptions& options, const Bundle* bundle,
                                         std::string_view origin, ForwardCheck& check)
{
    const std::string& trusted = options.trustedKey;
    if (trusted.empty()) {
        check.warnings.push_back("No trusted key was given, so the copy's signed heads were not "
                                 "checked; pass --key with the log's public key.");
        return std::nullopt;
    }
    if (trusted.find("-----BEGIN") != std::string::npos) {
        auto key = crypto::PublicKey::fromPem(trusted);
        if (!key) {
            check.errors.push_back("The trusted key is not an Ed25519 public key in PEM form.");
            return std::nullopt;
        }
        return NoteVerifier{std::string(origin), *key};
    }
    if (trusted.find('+') != std::string::npos) {
        auto verifier = NoteVerifier::fromVkey(trusted);
        if (!verifier) {
            check.errors.push_back(verifier.error().message());
            return std::nullopt;
        }
        return *verifier;
    }
    if (bundle != nullptr)
        for (const auto& key : bundle->keys)
            if (key.key.keyId() == trusted)
                return key;
    check.errors.push_back(
        bundle != nullptr ? "None of the bundle's keys has the fingerprint " + trusted + "."
                          : "A fingerprint names a key but does not hold it; without --bundle, "
                            "pass the log's public key (PEM) or its verifier key.");
    return std::nullopt;
}

struct CopyHead {
    std::size_t lineNumber = 0;
    TreeHead head;
};

}  // namespace

// One pass over the lines, then the checks that need all of them (heads, gaps, the prefix).
// Longer than 100 lines: each rule of the format's "Checking a copy" is a few lines here, in
// its order, and splitting them would hand the shared maps between a dozen functions.
ForwardCheck checkForwarded(std::string_view forwarded, std::string_view bundleText,
                            const VerifyOptions& options)
{
    ForwardCheck check;
    std::optional<Bundle> bundle;
    if (!bundleText.empty()) {
        VerifyOptions verifyOptions = options;
        verifyOptions.keepEntries = false;
        const auto report = verifyBundle(bundleText, verifyOptions);
        if (!report.ok()) {
            check.errors.push_back("The bundle does not verify: " + report.errors.front());
            return check;
        }
        auto parsed = parseBundle(bundleText);
        if (!parsed) {
            check.errors.push_back("The bundle does not parse: " + parsed.error().message());
            return check;
        }
        bundle = std::move(*parsed);
    }
    std::map<std::uint64_t, Hash> signedLeaves;
    if (bundle)
        for (const auto& entry : bundle->entries)
            if (entry.headSize)
                signedLeaves.emplace(entry.sequence, leafHash(entry.bytes));

    std::optional<std::string> origin;
    if (bundle)
        origin = bundle->origin;
    std::map<std::uint64_t, Hash> seen;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> declared;
    std::vector<CopyHead> heads;
    std::vector<std::pair<std::size_t, std::string>> notes;
    const auto fail = [&](std::size_t number, const std::string& what) {
        check.errors.push_back(fmt::format("Line {} of the forwarded copy {}.", number, what));
    };
    std::size_t number = 0;
    std::size_t start = 0;
    while (start < forwarded.size()) {
        auto end = forwarded.find('\n', start);
        if (end == std::string_view::npos)
            end = forwarded.size();
        const auto text = forwarded.substr(start, end - start);
        start = end + 1;
        ++number;
        if (text.empty())
            continue;
        if (text.size() > kMaxForwardedLine) {
            fail(number, "is longer than any entry's line");
            continue;
        }
        std::string why;
        auto line = readLine(text, why);
        if (!line) {
            fail(number, "is not a forwarded entry: " + why);
            continue;
        }
        ++check.lines;
        // A line of another log, a gap or head line too, stands for nothing of this one.
        const auto lineOrigin = line->summary.value("origin", std::string());
        if (!origin)
            origin = lineOrigin;
        if (lineOrigin != *origin) {
            fail(number, bundle ? "comes from another log than the bundle's"
                                : "comes from another log than the copy's first line");
            continue;
        }
        if (line->type == "gap") {
            declared.emplace_back(line->first, line->last);
            continue;
        }
        if (line->type == "head") {
            notes.emplace_back(number, line->note);
            auto note = parseSignedNote(line->note);
            auto head = note ? parseTreeHeadText(note->text) : Result<TreeHead>(note.error());
            if (!head || head->origin != *origin) {
                fail(number, "holds a note that is not a tree head of this log");
                continue;
            }
            const auto summary = headSummary(*head);
            for (const auto& [name, value] : summary.items())
                if (!line->summary.contains(name) || line->summary[name] != value) {
                    fail(number, fmt::format("says {} differently from its signed note", name));
                    break;
                }
            heads.push_back({number, *head});
            continue;
        }
        const Hash leaf = leafHash(line->bytes);
        if (toHex(leaf) != line->leafHashHex) {
            fail(number, "has a leaf hash that is not its entry's");
            continue;
        }
        auto entry = decodeEntry(line->bytes);
        if (!entry) {
            fail(number, "holds an entry that does not decode: " + entry.error().message());
            continue;
        }
        if (entry->sequence != line->sequence) {
            fail(number, "names another sequence number than its entry's");
            continue;
        }
        const auto summary = summaryOf(*entry);
        for (const auto& [name, value] : summary.items())
            if (!line->summary.contains(name) || line->summary[name] != value) {
                fail(number, fmt::format("says {} differently from its entry's bytes", name));
                break;
            }
        if (auto earlier = seen.find(entry->sequence); earlier != seen.end()) {
            if (earlier->second != leaf)
                fail(number,
                     fmt::format("holds another entry {} than an earlier line", entry->sequence));
            continue;
        }
        if (entry->sequence > 0)
            if (auto before = seen.find(entry->sequence - 1);
                before != seen.end() && before->second != entry->previousLeafHash)
                fail(number, "does not chain to the entry before it");
        seen.emplace(entry->sequence, leaf);
        if (auto inBundle = signedLeaves.find(entry->sequence); inBundle != signedLeaves.end()) {
            if (inBundle->second != leaf)
                fail(number, fmt::format("holds entry {} with other bytes than the signed log's",
                                         entry->sequence));
            else
                ++check.entriesMatched;
        }
    }
    if (seen.empty())
        return check;
    check.firstSequence = seen.begin()->first;
    check.lastSequence = seen.rbegin()->first;
    const auto isDeclared = [&](std::uint64_t first, std::uint64_t last) {
        return std::any_of(declared.begin(), declared.end(), [&](const auto& gap) {
            return gap.first <= first && last <= gap.second;
        });
    };
    // The copy begins at the log's first entry: a copy whose first lines were cut off would
    // otherwise verify as the whole record.
    if (*check.firstSequence > 0) {
        check.gaps.emplace_back(0, *check.firstSequence - 1);
        if (!isDeclared(0, *check.firstSequence - 1))
            check.errors.push_back(fmt::format(
                "The forwarded copy begins at entry {}: entries 0 to {} are missing from it "
                "(its beginning was removed, or it is not the target's whole copy).",
                *check.firstSequence, *check.firstSequence - 1));
    }
    // What the signed log holds after the copy's last line was not forwarded (yet): the copy
    // is incomplete, which is not tampering (forwarding may have been turned off).
    if (auto after = signedLeaves.upper_bound(*check.lastSequence); after != signedLeaves.end())
        check.gaps.emplace_back(after->first, signedLeaves.rbegin()->first);
    std::uint64_t expected = *check.firstSequence;
    for (const auto& [sequence, leaf] : seen) {
        if (sequence > expected) {
            check.gaps.emplace_back(expected, sequence - 1);
            if (!isDeclared(expected, sequence - 1))
                check.errors.push_back(fmt::format(
                    "Entries {} to {} are missing from the forwarded copy and no gap line "
                    "stands for them: lines were removed.",
                    expected, sequence - 1));
        }
        expected = sequence + 1;
    }
    std::sort(check.gaps.begin(), check.gaps.end());

    // The copy's own heads: signed by the trusted key over the root of its first entries.
    const auto verifier = copyVerifier(options, bundle ? &*bundle : nullptr, *origin, check);
    std::uint64_t coveredByHeads = 0;
    if (verifier) {
        for (const auto& [lineNumber, note] : notes)
            if (!verifyTreeHead(note, *verifier))
                fail(lineNumber, "holds a tree head the trusted key did not sign");
        std::sort(heads.begin(), heads.end(),
                  [](const CopyHead& a, const CopyHead& b) { return a.head.size < b.head.size; });
        CompactRange range;
        auto at = seen.begin();
        for (const auto& [lineNumber, head] : heads) {
            while (range.size() < head.size && at != seen.end() && at->first == range.size()) {
                range.append(at->second);
                ++at;
            }
            if (range.size() < head.size) {
                fail(lineNumber, fmt::format("holds a head of {} entries, but the copy lacks "
                                             "entry {}",
                                             head.size, range.size()));
                continue;
            }
            if (range.root() != head.root) {
                fail(lineNumber, fmt::format("holds a head whose root is not that of the copy's "
                                             "first {} entries",
                                             head.size));
                continue;
            }
            ++check.headsVerified;
            coveredByHeads = std::max(coveredByHeads, head.size);
        }
    }
    for (const auto& [sequence, leaf] : seen) {
        if (sequence < coveredByHeads)
            ++check.entriesUnderHeads;
        else if (!signedLeaves.contains(sequence))
            ++check.entriesUnsigned;
    }
    return check;
}

}  // namespace sealtrain::audit
