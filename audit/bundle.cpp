// Export bundles: writing, strict parsing, subsetting and verification.
#include "sealtrain/audit/bundle.h"

#include "sealtrain/audit/proof.h"
#include "sealtrain/base/encoding.h"

#include <algorithm>
#include <map>
#include <set>

namespace sealtrain::audit {
namespace {

constexpr std::size_t kMaxReportedErrors = 50;
constexpr std::uint64_t kExportPage = 4096;

std::string seqText(std::uint64_t sequence)
{
    return "Entry " + std::to_string(sequence);
}

std::vector<std::string_view> splitWords(std::string_view line)
{
    std::vector<std::string_view> words;
    std::size_t start = 0;
    while (start <= line.size()) {
        const auto space = line.find(' ', start);
        const auto end = space == std::string_view::npos ? line.size() : space;
        words.push_back(line.substr(start, end - start));
        start = end + 1;
    }
    return words;
}

std::string hashesText(const std::vector<Hash>& hashes)
{
    std::string out;
    for (const auto& hash : hashes)
        out += " " + toBase64(hash);
    return out;
}

// The smallest head size that covers `sequence`, or nullopt.
std::optional<std::uint64_t> coveringHead(const std::vector<std::uint64_t>& sizes,
                                          std::uint64_t sequence)
{
    const auto it = std::upper_bound(sizes.begin(), sizes.end(), sequence);
    if (it == sizes.end())
        return std::nullopt;
    return *it;
}

class Report {
public:
    explicit Report(VerifyReport& report)
        : report_(report)
    {
    }
    void error(std::string message)
    {
        if (report_.errors.size() < kMaxReportedErrors)
            report_.errors.push_back(std::move(message));
        else
            ++suppressed_;
    }
    void entryError(std::uint64_t sequence, const std::string& message)
    {
        if (!report_.firstBadEntry || sequence < *report_.firstBadEntry)
            report_.firstBadEntry = sequence;
        error(message);
    }
    void finish()
    {
        if (suppressed_ > 0)
            report_.errors.push_back("And " + std::to_string(suppressed_) + " more errors.");
    }

private:
    VerifyReport& report_;
    std::size_t suppressed_ = 0;
};

}  // namespace

bool ExportFilter::selectsAll() const
{
    return !fromTimeNs && !toTimeNs && actor.empty() && action.empty() && targetKind.empty()
           && targetId.empty();
}

bool ExportFilter::matches(const Entry& entry) const
{
    if (fromTimeNs && entry.timeNs < *fromTimeNs)
        return false;
    if (toTimeNs && entry.timeNs >= *toTimeNs)
        return false;
    if (!actor.empty() && entry.actor.id != actor)
        return false;
    if (!action.empty()) {
        if (action.size() > 2 && action.ends_with(".*")) {
            const std::string_view prefix(action.data(), action.size() - 1);
            if (!std::string_view(entry.action).starts_with(prefix))
                return false;
        } else if (entry.action != action) {
            return false;
        }
    }
    if (!targetKind.empty() && entry.target.kind != targetKind)
        return false;
    return targetId.empty() || entry.target.id == targetId;
}

std::string ExportFilter::describe() const
{
    if (selectsAll())
        return "all";
    std::string out;
    auto add = [&out](const std::string& key, const std::string& value) {
        if (!value.empty())
            out += (out.empty() ? "" : " ") + key + "=" + value;
    };
    if (fromTimeNs)
        add("from", formatUtcSeconds(static_cast<std::int64_t>(*fromTimeNs / 1000000000U)));
    if (toTimeNs)
        add("to", formatUtcSeconds(static_cast<std::int64_t>(*toTimeNs / 1000000000U)));
    add("actor", actor);
    add("action", action);
    add("target-kind", targetKind);
    add("target-id", targetId);
    return out;
}

Result<std::string> exportBundle(AuditLog& log, const ExportFilter& filter)
{
    auto exportHead = log.signHead();
    if (!exportHead)
        return exportHead.error();
    auto notes = log.store().readHeads();
    if (!notes)
        return notes.error();

    Bundle bundle;
    bundle.origin = log.origin();
    bundle.selectionAll = filter.selectsAll();
    bundle.filter = filter.describe();
    bundle.keys.push_back(log.verifier());
    // One head per size, the latest signed; sizes only grow.
    std::vector<std::uint64_t> sizes;
    for (const auto& note : *notes) {
        auto head = verifyTreeHead(note, log.verifier());
        if (!head)
            return head.error();
        if (!sizes.empty() && sizes.back() == head->size) {
            bundle.heads.back() = note;
        } else {
            sizes.push_back(head->size);
            bundle.heads.push_back(note);
        }
    }
    for (std::size_t i = 1; i < sizes.size(); ++i) {
        if (sizes[i - 1] == 0)
            continue;
        auto proof = log.tree().consistencyProof(sizes[i - 1], sizes[i]);
        if (!proof)
            return proof.error();
        bundle.consistency.push_back({sizes[i - 1], sizes[i], std::move(*proof), 0});
    }
    for (std::uint64_t first = 0; first < exportHead->size; first += kExportPage) {
        auto page = log.store().readEntries(first, std::min(kExportPage, exportHead->size - first));
        if (!page)
            return page.error();
        for (auto& stored : *page) {
            auto entry = decodeEntry(stored.bytes);
            if (!entry)
                return entry.error().withContext(seqText(stored.sequence));
            if (!filter.matches(*entry))
                continue;
            const auto headSize = coveringHead(sizes, stored.sequence);
            if (!headSize)
                return Error(ErrorCode::Internal, "An exported entry has no covering head.");
            auto proof = log.tree().inclusionProof(stored.sequence, *headSize);
            if (!proof)
                return proof.error();
            bundle.entries.push_back(
                {stored.sequence, headSize, std::move(stored.bytes), std::move(*proof), 0});
        }
    }
    return formatBundle(bundle);
}

std::string formatBundle(const Bundle& bundle)
{
    std::string out;
    out += std::string(kBundleMagic) + "\n";
    out += "origin " + bundle.origin + "\n";
    out += std::string("selection ") + (bundle.selectionAll ? "all" : "filtered") + "\n";
    out += "filter " + bundle.filter + "\n";
    for (const auto& key : bundle.keys)
        out += "key " + key.vkey() + "\n";
    for (const auto& head : bundle.heads)
        out += "head " + toBase64(asBytes(head)) + "\n";
    for (const auto& c : bundle.consistency)
        out += "consistency " + std::to_string(c.size1) + " " + std::to_string(c.size2)
               + hashesText(c.proof) + "\n";
    for (const auto& e : bundle.entries)
        out += "entry " + std::to_string(e.sequence) + " "
               + (e.headSize ? std::to_string(*e.headSize) : std::string("-")) + " "
               + toBase64(e.bytes) + hashesText(e.proof) + "\n";
    out += "end\n";
    return out;
}

Result<Bundle> parseBundle(std::string_view text)
{
    std::size_t lineNumber = 0;
    auto bad = [&lineNumber](const std::string& what) {
        return Error(ErrorCode::Integrity, "Line " + std::to_string(lineNumber)
                                               + " of the bundle is malformed (" + what
                                               + "); the file was altered or truncated.");
    };
    if (!text.ends_with('\n'))
        return Error(ErrorCode::Integrity,
                     "The bundle does not end with a newline; the file was truncated.");
    // Sections in their fixed order: 0 header, 1 keys, 2 heads, 3 consistency, 4 entries, 5 end.
    int section = 0;
    Bundle bundle;
    std::string_view rest = text;
    while (!rest.empty()) {
        const auto newline = rest.find('\n');
        const auto line = rest.substr(0, newline);
        rest.remove_prefix(newline + 1);
        ++lineNumber;
        if (section == 5)
            return bad("text after the end line");
        if (line.find_first_of("\r\t") != std::string_view::npos)
            return bad("a carriage return or tab");
        const auto words = splitWords(line);
        const auto kind = words.front();
        if (lineNumber == 1) {
            if (line != kBundleMagic)
                return Error(ErrorCode::Unsupported,
                             "The file is not a version 1 Sealtrain audit bundle.");
            continue;
        }
        if (lineNumber == 2 || lineNumber == 3 || lineNumber == 4) {
            const char* expected = lineNumber == 2   ? "origin"
                                   : lineNumber == 3 ? "selection"
                                                     : "filter";
            if (kind != expected || words.size() < 2)
                return bad(std::string("expected the ") + expected + " line");
            const auto value = line.substr(kind.size() + 1);
            if (lineNumber == 2) {
                if (words.size() != 2 || value.empty())
                    return bad("origin");
                bundle.origin = std::string(value);
            } else if (lineNumber == 3) {
                if (value != "all" && value != "filtered")
                    return bad("selection is neither all nor filtered");
                bundle.selectionAll = value == "all";
            } else {
                bundle.filter = std::string(value);
            }
            section = 1;
            continue;
        }
        if (kind == "key" && section == 1) {
            if (words.size() != 2)
                return bad("key");
            auto key = NoteVerifier::fromVkey(words[1]);
            if (!key)
                return bad(key.error().message().substr(0, key.error().message().size() - 1));
            bundle.keys.push_back(std::move(*key));
        } else if (kind == "head" && (section == 1 || section == 2) && !bundle.keys.empty()) {
            section = 2;
            const auto note = words.size() == 2 ? fromBase64(words[1]) : std::nullopt;
            if (!note)
                return bad("head is not base64");
            bundle.heads.emplace_back(note->begin(), note->end());
        } else if (kind == "consistency" && (section == 2 || section == 3)
                   && !bundle.heads.empty()) {
            section = 3;
            BundleConsistency c;
            c.line = lineNumber;
            const auto size1 = words.size() >= 3 ? parseDecimal(words[1]) : std::nullopt;
            const auto size2 = words.size() >= 3 ? parseDecimal(words[2]) : std::nullopt;
            if (!size1 || !size2)
                return bad("consistency sizes");
            c.size1 = *size1;
            c.size2 = *size2;
            for (std::size_t i = 3; i < words.size(); ++i) {
                auto hash = hashFromBase64(words[i]);
                if (!hash)
                    return bad("consistency proof hash");
                c.proof.push_back(*hash);
            }
            bundle.consistency.push_back(std::move(c));
        } else if (kind == "entry" && section >= 2 && section <= 4) {
            section = 4;
            BundleEntry e;
            e.line = lineNumber;
            const auto sequence = words.size() >= 4 ? parseDecimal(words[1]) : std::nullopt;
            if (!sequence)
                return bad("entry sequence number");
            e.sequence = *sequence;
            if (words[2] != "-") {
                e.headSize = parseDecimal(words[2]);
                if (!e.headSize)
                    return bad("entry head size");
            }
            auto bytes = fromBase64(words[3]);
            if (!bytes || bytes->empty() || bytes->size() > kMaxEntrySize)
                return bad("entry bytes are not base64");
            e.bytes = std::move(*bytes);
            for (std::size_t i = 4; i < words.size(); ++i) {
                auto hash = hashFromBase64(words[i]);
                if (!hash)
                    return bad("entry proof hash");
                e.proof.push_back(*hash);
            }
            if (!e.headSize && !e.proof.empty())
                return bad("an unsigned entry carries a proof");
            bundle.entries.push_back(std::move(e));
        } else if (line == "end" && section >= 2) {
            section = 5;
        } else {
            return bad("unexpected '" + std::string(kind.substr(0, 20)) + "' line here");
        }
    }
    if (section != 5)
        return Error(ErrorCode::Integrity,
                     "The bundle has no end line or no signed head; the file was truncated.");
    return bundle;
}

Result<Bundle> subsetBundle(const Bundle& bundle, const ExportFilter& filter)
{
    Bundle subset = bundle;
    subset.entries.clear();
    subset.selectionAll = bundle.selectionAll && filter.selectsAll();
    if (!filter.selectsAll())
        subset.filter = bundle.filter == "all" ? filter.describe()
                                               : bundle.filter + " then " + filter.describe();
    for (const auto& e : bundle.entries) {
        auto entry = decodeEntry(e.bytes);
        if (!entry)
            return entry.error().withContext(seqText(e.sequence));
        if (filter.matches(*entry))
            subset.entries.push_back(e);
    }
    return subset;
}

Result<Hash> LogVerifier::add(std::span<const std::uint8_t> entryBytes)
{
    const std::uint64_t expected = range_.size();
    auto entry = checkEntry(entryBytes);
    if (!entry)
        return entry.error().withContext(seqText(expected));
    if (entry->sequence != expected)
        return Error(ErrorCode::Integrity, seqText(expected) + " is missing or out of place: "
                                               + "the next entry says it is number "
                                               + std::to_string(entry->sequence) + ".");
    if (entry->previousLeafHash != previous_)
        return Error(ErrorCode::Integrity,
                     seqText(expected)
                         + " does not chain to the entry before it; one of the two "
                           "was altered.");
    previous_ = leafHash(entryBytes);
    range_.append(previous_);
    return previous_;
}

namespace {

// Resolves the key the signatures must verify under.
std::optional<NoteVerifier> chooseKey(const Bundle& bundle, const VerifyOptions& options,
                                      VerifyReport& report, Report& out)
{
    const std::string& trusted = options.trustedKey;
    if (trusted.empty()) {
        if (bundle.keys.size() != 1) {
            out.error("The bundle lists several keys; pass --key with the one you trust.");
            return std::nullopt;
        }
        report.warnings.push_back(
            "No trusted key was given, so the signatures were checked with the bundle's own key "
            "and only show that the bundle is self-consistent; pass --key with the log's public "
            "key or its fingerprint.");
        report.keyId = bundle.keys.front().key.keyId();
        return bundle.keys.front();
    }
    report.keyTrusted = true;
    if (trusted.find("-----BEGIN") != std::string::npos) {
        auto key = crypto::PublicKey::fromPem(trusted);
        if (!key) {
            out.error("The trusted key is not an Ed25519 public key in PEM form.");
            return std::nullopt;
        }
        report.keyId = key->keyId();
        return NoteVerifier{bundle.origin, *key};
    }
    if (trusted.find('+') != std::string::npos) {
        auto verifier = NoteVerifier::fromVkey(trusted);
        if (!verifier) {
            out.error(verifier.error().message());
            return std::nullopt;
        }
        report.keyId = verifier->key.keyId();
        return *verifier;
    }
    for (const auto& key : bundle.keys) {
        if (key.key.keyId() == trusted) {
            report.keyId = trusted;
            return key;
        }
    }
    out.error("None of the bundle's keys has the fingerprint " + trusted
              + "; the bundle was signed by a key you do not trust.");
    return std::nullopt;
}

}  // namespace

VerifyReport verifyBundle(std::string_view text, const VerifyOptions& options)
{
    VerifyReport report;
    Report out(report);
    auto parsed = parseBundle(text);
    if (!parsed) {
        out.error(parsed.error().message());
        return report;
    }
    const Bundle& bundle = *parsed;
    report.origin = bundle.origin;
    report.filter = bundle.filter;
    report.selectionAll = bundle.selectionAll;

    const auto verifier = chooseKey(bundle, options, report, out);

    // Heads: each signed by the trusted key, sizes strictly growing.
    std::map<std::uint64_t, Hash> roots;
    std::vector<std::uint64_t> sizes;
    for (std::size_t i = 0; i < bundle.heads.size(); ++i) {
        const auto& note = bundle.heads[i];
        Result<TreeHead> head = Error(ErrorCode::Internal, "No key.");
        if (verifier)
            head = verifyTreeHead(note, *verifier);
        if (!head || !verifier) {
            // Keep checking the rest against the unverified head so that every fault shows.
            auto unsigned_ = parseSignedNote(note);
            auto treeHead = unsigned_ ? parseTreeHeadText(unsigned_->text)
                                      : Result<TreeHead>(unsigned_.error());
            const std::string which =
                treeHead ? "The signed head at size " + std::to_string(treeHead->size)
                         : "Signed head number " + std::to_string(i + 1);
            if (verifier)
                out.error(head.error().withContext(which).message());
            if (!treeHead)
                continue;
            head = *treeHead;
        }
        if (head->origin != bundle.origin)
            out.error("The signed head at size " + std::to_string(head->size)
                      + " is from another log (origin " + head->origin + ").");
        if (!sizes.empty() && head->size <= sizes.back()) {
            out.error("The signed heads are not in order of growing size; the bundle was "
                      "altered.");
            continue;
        }
        sizes.push_back(head->size);
        roots[head->size] = head->root;
        report.heads.push_back(*head);
    }

    // Consistency between each two successive heads (none is needed from the empty tree).
    std::size_t next = 0;
    for (std::size_t i = 1; i < sizes.size(); ++i) {
        if (sizes[i - 1] == 0)
            continue;
        const std::string pair = std::to_string(sizes[i - 1]) + " and " + std::to_string(sizes[i]);
        if (next >= bundle.consistency.size() || bundle.consistency[next].size1 != sizes[i - 1]
            || bundle.consistency[next].size2 != sizes[i]) {
            out.error("The bundle has no consistency proof between the heads at sizes " + pair
                      + "; it was altered.");
            continue;
        }
        const auto& c = bundle.consistency[next++];
        auto consistent =
            verifyConsistency(c.size1, c.size2, c.proof, roots[c.size1], roots[c.size2]);
        if (!consistent)
            out.error(
                "The signed heads at sizes " + pair
                + " are not consistent: the log was rewritten between them ("
                + consistent.error().message().substr(0, consistent.error().message().size() - 1)
                + ").");
    }
    if (next != bundle.consistency.size())
        out.error("The bundle has consistency proofs for heads it does not hold; it was "
                  "altered.");

    // Entries.
    const std::uint64_t signedSize = sizes.empty() ? 0 : sizes.back();
    std::set<std::uint64_t> present;
    for (const auto& e : bundle.entries)
        present.insert(e.sequence);
    LogVerifier stream;
    bool streamOk = bundle.selectionAll;
    std::map<std::uint64_t, Hash> streamRoots;  // roots at sizes the witness needs
    std::set<std::uint64_t> witnessSizes;
    std::vector<TreeHead> witness;
    if (options.witnessHeads && verifier) {
        for (const auto& note : *options.witnessHeads) {
            auto head = verifyTreeHead(note, *verifier);
            if (!head) {
                out.error(head.error().withContext("A head in the witness file").message());
                continue;
            }
            witness.push_back(*head);
            witnessSizes.insert(head->size);
        }
    }

    std::optional<std::uint64_t> previousSequence;
    Hash previousLeaf{};
    std::optional<std::uint64_t> firstUnsigned;
    std::uint64_t lastUnsigned = 0;
    for (std::size_t i = 0; i < bundle.entries.size(); ++i) {
        const auto& e = bundle.entries[i];
        const std::uint64_t seq = e.sequence;
        if (bundle.selectionAll) {
            const std::uint64_t expected = previousSequence ? *previousSequence + 1 : 0;
            if (seq != expected) {
                if (seq > expected && present.count(expected) != 0)
                    out.entryError(expected, seqText(seq) + " is in the place of entry "
                                                 + std::to_string(expected)
                                                 + "; entries were swapped or moved.");
                else if (seq > expected)
                    out.entryError(expected, seqText(expected)
                                                 + (seq - expected > 1
                                                        ? " to " + std::to_string(seq - 1) + " are"
                                                        : std::string(" is"))
                                                 + " missing from a complete export; entries were "
                                                   "deleted.");
                else
                    out.entryError(seq, seqText(seq) + " appears again after entry "
                                            + std::to_string(*previousSequence)
                                            + "; entries were swapped or duplicated.");
                streamOk = false;
            }
        } else if (previousSequence && seq <= *previousSequence) {
            out.entryError(seq, seqText(seq) + " appears after entry "
                                    + std::to_string(*previousSequence)
                                    + "; entries were swapped or moved.");
        }

        auto entry = decodeEntry(e.bytes);
        if (!entry) {
            out.entryError(seq, entry.error().withContext(seqText(seq)).message());
            streamOk = false;
            previousSequence = seq;
            continue;
        }
        if (entry->sequence != seq)
            out.entryError(seq, seqText(seq) + " holds the bytes of entry "
                                    + std::to_string(entry->sequence) + "; it was altered.");
        const Hash leaf = leafHash(e.bytes);
        if (previousSequence && *previousSequence + 1 == seq && entry->sequence == seq
            && entry->previousLeafHash != previousLeaf)
            out.entryError(seq, seqText(seq) + " does not chain to entry " + std::to_string(seq - 1)
                                    + "; one of the two was altered.");

        if (!e.headSize) {
            if (seq < signedSize)
                out.entryError(seq, seqText(seq)
                                        + " is covered by a signed head but carries no "
                                          "proof; the bundle was altered.");
            firstUnsigned = firstUnsigned ? firstUnsigned : seq;
            lastUnsigned = seq;
        } else if (const auto covering = coveringHead(sizes, seq);
                   !covering || *covering != *e.headSize) {
            out.entryError(seq, seqText(seq)
                                    + " names a signed head that is not the first one "
                                      "covering it; the bundle was altered.");
        } else if (auto included =
                       verifyInclusion(seq, *e.headSize, leaf, e.proof, roots[*e.headSize]);
                   !included) {
            out.entryError(seq, seqText(seq) + " is not in the log the signed head at size "
                                    + std::to_string(*e.headSize) + " describes; it was altered.");
        } else {
            ++report.entriesVerified;
        }

        if (streamOk) {
            auto added = stream.add(e.bytes);
            if (!added) {
                streamOk = false;  // reported above, named by entry
            } else {
                const auto size = stream.size();
                if (roots.count(size) != 0 && roots[size] != stream.root())
                    out.entryError(seq, "The entries up to " + seqText(seq)
                                            + " do not hash to the signed head at size "
                                            + std::to_string(size) + "; the log was altered.");
                if (witnessSizes.count(size) != 0)
                    streamRoots[size] = stream.root();
            }
        }
        report.entries.push_back(std::move(*entry));
        previousSequence = seq;
        previousLeaf = leaf;
    }
    if (bundle.selectionAll) {
        const std::uint64_t have = previousSequence ? *previousSequence + 1 : 0;
        if (have < signedSize)
            out.entryError(have, seqText(have)
                                     + (signedSize - have > 1
                                            ? " to " + std::to_string(signedSize - 1) + " are"
                                            : std::string(" is"))
                                     + " missing, yet the signed head at size "
                                     + std::to_string(signedSize)
                                     + " covers them; the log's tail was cut.");
    }
    if (firstUnsigned)
        report.warnings.push_back(
            "Entries " + std::to_string(*firstUnsigned) + " to " + std::to_string(lastUnsigned)
            + " are not covered by any signed head, so nothing shows whether they were altered.");

    // The witness: heads the log published outside its store must agree with the bundle.
    for (const auto& w : witness) {
        ++report.witnessHeadsChecked;
        const std::string size = std::to_string(w.size);
        if (w.size > signedSize) {
            out.error("The witness file holds a signed head at size " + size
                      + ", beyond the bundle's newest head at size " + std::to_string(signedSize)
                      + "; the log was rolled back or its tail was cut.");
            continue;
        }
        std::optional<Hash> root;
        if (roots.count(w.size) != 0)
            root = roots[w.size];
        else if (streamRoots.count(w.size) != 0)
            root = streamRoots[w.size];
        else if (w.size == 0)
            root = emptyTreeRoot();
        if (!root) {
            out.error("The witness head at size " + size
                      + " can not be compared: the bundle has no head of that size.");
        } else if (*root != w.root) {
            std::uint64_t agreed = 0;
            for (const auto& earlier : witness)
                if (earlier.size < w.size && roots.count(earlier.size) != 0
                    && roots[earlier.size] == earlier.root)
                    agreed = std::max(agreed, earlier.size);
            out.entryError(agreed, "The log was rewritten: the witness file's head at size " + size
                                       + " disagrees with the bundle, so an entry from "
                                       + std::to_string(agreed) + " to "
                                       + std::to_string(w.size - 1) + " was changed.");
        }
    }
    out.finish();
    return report;
}

}  // namespace sealtrain::audit
