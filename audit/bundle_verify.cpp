// Verifying an export bundle (docs/formats/audit.md, "What sealtrainctl audit verify checks"):
// the key, the heads and their consistency, the signed selection statement, the entries, the
// witness, and the verdict.
#include "bundle_text.h"

#include "sealtrain/audit/proof.h"
#include "sealtrain/base/encoding.h"

#include <bit>
#include <map>
#include <set>

namespace sealtrain::audit {
namespace {

using internal::coveringHead;
using internal::seqText;

constexpr std::size_t kMaxReportedErrors = 50;

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

std::string withoutFinalStop(const std::string& message)
{
    return message.substr(0, message.size() - 1);
}

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

// The bundle's heads as far as they could be read: sizes in order and the root at each.
struct Heads {
    std::vector<std::uint64_t> sizes;
    std::map<std::uint64_t, Hash> roots;

    [[nodiscard]] std::uint64_t signedSize() const { return sizes.empty() ? 0 : sizes.back(); }
};

// Each head signed by the trusted key, sizes strictly growing.
Heads checkHeads(const Bundle& bundle, const std::optional<NoteVerifier>& verifier,
                 VerifyReport& report, Report& out)
{
    Heads heads;
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
        if (!heads.sizes.empty() && head->size <= heads.sizes.back()) {
            out.error("The signed heads are not in order of growing size; the bundle was "
                      "altered.");
            continue;
        }
        heads.sizes.push_back(head->size);
        heads.roots[head->size] = head->root;
        report.heads.push_back(*head);
    }
    return heads;
}

// Consistency between each two successive heads (none is needed from the empty tree).
void checkConsistency(const Bundle& bundle, const Heads& heads, Report& out)
{
    std::size_t next = 0;
    for (std::size_t i = 1; i < heads.sizes.size(); ++i) {
        const std::uint64_t size1 = heads.sizes[i - 1];
        const std::uint64_t size2 = heads.sizes[i];
        if (size1 == 0)
            continue;
        const std::string pair = std::to_string(size1) + " and " + std::to_string(size2);
        if (next >= bundle.consistency.size() || bundle.consistency[next].size1 != size1
            || bundle.consistency[next].size2 != size2) {
            out.error("The bundle has no consistency proof between the heads at sizes " + pair
                      + "; it was altered.");
            continue;
        }
        const auto& c = bundle.consistency[next++];
        auto consistent =
            verifyConsistency(size1, size2, c.proof, heads.roots.at(size1), heads.roots.at(size2));
        if (!consistent)
            out.error("The signed heads at sizes " + pair
                      + " are not consistent: the log was rewritten between them ("
                      + withoutFinalStop(consistent.error().message()) + ").");
    }
    if (next != bundle.consistency.size())
        out.error("The bundle has consistency proofs for heads it does not hold; it was "
                  "altered.");
}

// The signed selection statement against the bundle's own lines, its newest head and the
// entries it holds. Without a statement a filtered selection is unproven (a warning); a
// complete one is still proven by recomputing the roots from the entries.
void checkStatement(const internal::BundleText& scanned,
                    const std::optional<NoteVerifier>& verifier, const Heads& heads,
                    VerifyReport& report, Report& out)
{
    const Bundle& bundle = scanned.header;
    if (!bundle.statement) {
        if (!bundle.selectionAll)
            report.warnings.push_back(
                "The bundle's selection is not signed (a version 1 bundle, or one cut from "
                "another offline), so nothing shows which entries were left out of it.");
        return;
    }
    if (!verifier)
        return;  // the key error is reported already
    auto statement = verifySelectionStatement(*bundle.statement, *verifier);
    if (!statement) {
        out.error(statement.error().message());
        return;
    }
    const std::string altered = "; the bundle was altered.";
    if (statement->origin != bundle.origin)
        out.error("The selection statement is for another log (origin " + statement->origin + ")"
                  + altered);
    if (statement->selectionAll != bundle.selectionAll || statement->filter != bundle.filter)
        out.error("The bundle says its selection is '" + bundle.filter
                  + "' but the log signed the selection '" + statement->filter + "'" + altered);
    if (statement->headSize != heads.signedSize() || heads.roots.count(statement->headSize) == 0
        || heads.roots.at(statement->headSize) != statement->headRoot)
        out.error("The selection statement was signed for the head at size "
                  + std::to_string(statement->headSize)
                  + ", not for the bundle's newest signed head" + altered);
    SequenceDigest digest;
    for (const auto& line : scanned.entries)
        digest.add(line.sequence);
    const std::uint64_t count = digest.count();
    if (count != statement->entryCount)
        out.error("The bundle holds " + std::to_string(count) + " entries but the log exported "
                  + std::to_string(statement->entryCount)
                  + "; entries were deleted or added after the export.");
    else if (digest.finish() != statement->sequencesDigest)
        out.error("The bundle's entries are not the ones the log exported; entries were replaced "
                  "after the export.");
    report.selectionSigned = true;
}

// The length of an RFC 9162 inclusion proof for `index` in a tree of `size` leaves.
std::size_t inclusionProofLength(std::uint64_t index, std::uint64_t size)
{
    const auto inner = static_cast<unsigned>(std::bit_width(index ^ (size - 1)));
    return inner + static_cast<std::size_t>(std::popcount(index >> inner));
}

// Proves a complete bundle by recomputing each head's root from all the entries, decoding and
// hashing each entry once: the per-entry inclusion proofs add nothing to that, so only their
// form and length are checked. Returns false, having decoded what it could, when anything is
// off; the detailed check then finds and names every fault.
bool proveComplete(const internal::BundleText& scanned, const Heads& heads,
                   const std::set<std::uint64_t>& witnessSizes, bool keepEntries,
                   std::map<std::uint64_t, Hash>& streamRoots, VerifyReport& report)
{
    LogVerifier stream;
    std::vector<std::uint8_t> bytes;
    if (keepEntries)
        report.entries.reserve(scanned.entries.size());
    std::size_t nextHead = !heads.sizes.empty() && heads.sizes.front() == 0 ? 1 : 0;
    for (const auto& line : scanned.entries) {
        const bool covered = nextHead < heads.sizes.size();
        if (line.sequence != stream.size() || covered != line.headSize.has_value())
            return false;
        if (covered
            && (*line.headSize != heads.sizes[nextHead]
                || line.proofLength != inclusionProofLength(line.sequence, *line.headSize)
                || !internal::isProofText(line.proof)))
            return false;
        if (!fromBase64Into(line.bytes, bytes) || bytes.empty() || bytes.size() > kMaxEntrySize)
            return false;
        if (keepEntries) {
            if (!stream.add(bytes, report.entries.emplace_back()))
                return false;
        } else if (!stream.add(bytes)) {
            return false;
        }
        const std::uint64_t size = stream.size();
        if (covered && size == heads.sizes[nextHead]) {
            if (stream.root() != heads.roots.at(size))
                return false;
            ++nextHead;
        }
        if (!witnessSizes.empty() && witnessSizes.count(size) != 0)
            streamRoots[size] = stream.root();
    }
    if (nextHead < heads.sizes.size())
        return false;  // a signed head covers entries the bundle does not hold
    report.entriesVerified = std::min(stream.size(), heads.signedSize());
    return true;
}

// Every entry on its own: form, sequence, chain, inclusion proof; and for a complete bundle,
// contiguity and each head's root recomputed from the entries. Names every fault.
void checkEachEntry(const Bundle& bundle, const Heads& heads,
                    const std::set<std::uint64_t>& witnessSizes, bool keepEntries,
                    std::map<std::uint64_t, Hash>& streamRoots, VerifyReport& report, Report& out)
{
    const std::uint64_t signedSize = heads.signedSize();
    std::set<std::uint64_t> present;
    for (const auto& e : bundle.entries)
        present.insert(e.sequence);
    LogVerifier stream;
    bool streamOk = bundle.selectionAll;
    std::optional<std::uint64_t> previousSequence;
    Hash previousLeaf{};
    for (const auto& e : bundle.entries) {
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
        } else if (const auto covering = coveringHead(heads.sizes, seq);
                   !covering || *covering != *e.headSize) {
            out.entryError(seq, seqText(seq)
                                    + " names a signed head that is not the first one "
                                      "covering it; the bundle was altered.");
        } else if (auto included = verifyInclusion(seq, *e.headSize, leaf, e.proof,
                                                   heads.roots.at(*e.headSize));
                   !included) {
            out.entryError(seq, seqText(seq) + " is not in the log the signed head at size "
                                    + std::to_string(*e.headSize) + " describes; it was altered.");
        } else {
            ++report.entriesVerified;
        }

        if (streamOk) {
            if (!stream.add(e.bytes)) {
                streamOk = false;  // reported above, named by entry
            } else {
                const auto size = stream.size();
                if (heads.roots.count(size) != 0 && heads.roots.at(size) != stream.root())
                    out.entryError(seq, "The entries up to " + seqText(seq)
                                            + " do not hash to the signed head at size "
                                            + std::to_string(size) + "; the log was altered.");
                if (witnessSizes.count(size) != 0)
                    streamRoots[size] = stream.root();
            }
        }
        if (keepEntries)
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
}

// Entries beyond the newest signed head carry no proof: nothing shows they were not altered.
void warnAboutUnsignedTail(const internal::BundleText& scanned, VerifyReport& report)
{
    std::optional<std::uint64_t> first;
    std::uint64_t last = 0;
    for (const auto& line : scanned.entries) {
        if (line.headSize)
            continue;
        first = first ? first : line.sequence;
        last = line.sequence;
    }
    if (first)
        report.warnings.push_back("Entries " + std::to_string(*first) + " to "
                                  + std::to_string(last)
                                  + " are not covered by any signed head, so nothing shows "
                                    "whether they were altered.");
}

std::vector<TreeHead> readWitnessHeads(const VerifyOptions& options,
                                       const std::optional<NoteVerifier>& verifier, Report& out)
{
    std::vector<TreeHead> witness;
    if (!options.witnessHeads || !verifier)
        return witness;
    for (const auto& note : *options.witnessHeads) {
        auto head = verifyTreeHead(note, *verifier);
        if (!head) {
            out.error(head.error().withContext("A head in the witness file").message());
            continue;
        }
        witness.push_back(*head);
    }
    return witness;
}

// The witness: heads the log published outside its store must agree with the bundle.
void checkWitness(const std::vector<TreeHead>& witness, const Heads& heads,
                  const std::map<std::uint64_t, Hash>& streamRoots, VerifyReport& report,
                  Report& out)
{
    const std::uint64_t signedSize = heads.signedSize();
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
        if (heads.roots.count(w.size) != 0)
            root = heads.roots.at(w.size);
        else if (streamRoots.count(w.size) != 0)
            root = streamRoots.at(w.size);
        else if (w.size == 0)
            root = emptyTreeRoot();
        if (!root) {
            out.error("The witness head at size " + size
                      + " can not be compared: the bundle has no head of that size.");
        } else if (*root != w.root) {
            std::uint64_t agreed = 0;
            for (const auto& earlier : witness)
                if (earlier.size < w.size && heads.roots.count(earlier.size) != 0
                    && heads.roots.at(earlier.size) == earlier.root)
                    agreed = std::max(agreed, earlier.size);
            out.entryError(agreed, "The log was rewritten: the witness file's head at size " + size
                                       + " disagrees with the bundle, so an entry from "
                                       + std::to_string(agreed) + " to "
                                       + std::to_string(w.size - 1) + " was changed.");
        }
    }
}

}  // namespace

const char* verdictName(Verdict verdict) noexcept
{
    switch (verdict) {
    case Verdict::Verified: return "VERIFIED";
    case Verdict::Unconfirmed: return "UNCONFIRMED";
    case Verdict::Failed: break;
    }
    return "FAILED";
}

Verdict VerifyReport::verdict() const noexcept
{
    if (!errors.empty())
        return Verdict::Failed;
    return warnings.empty() ? Verdict::Verified : Verdict::Unconfirmed;
}

std::string VerifyReport::selectionText() const
{
    if (complete())
        return "all";
    if (selectionAll)
        return "not complete: the bundle claims all entries but failed verification";
    return "filtered: " + filter
           + (selectionSigned ? " (the selection was signed by the log at export)"
                              : " (the selection is not signed: nothing shows which entries "
                                "were left out)");
}

VerifyReport verifyBundle(std::string_view text, const VerifyOptions& options)
{
    VerifyReport report;
    Report out(report);
    auto scanned = internal::scanBundle(text);
    if (!scanned) {
        out.error(scanned.error().message());
        return report;
    }
    const Bundle& header = scanned->header;
    report.origin = header.origin;
    report.filter = header.filter;
    report.selectionAll = header.selectionAll;
    report.entriesInBundle = scanned->entries.size();

    const auto verifier = chooseKey(header, options, report, out);
    const Heads heads = checkHeads(header, verifier, report, out);
    checkConsistency(header, heads, out);
    checkStatement(*scanned, verifier, heads, report, out);
    const auto witness = readWitnessHeads(options, verifier, out);
    std::set<std::uint64_t> witnessSizes;
    for (const auto& w : witness)
        witnessSizes.insert(w.size);

    std::map<std::uint64_t, Hash> streamRoots;  // roots at sizes the witness needs
    if (!header.selectionAll
        || !proveComplete(*scanned, heads, witnessSizes, options.keepEntries, streamRoots,
                          report)) {
        report.entries.clear();
        report.entriesVerified = 0;
        streamRoots.clear();
        auto bundle = parseBundle(text);
        if (!bundle) {
            out.error(bundle.error().message());
            out.finish();
            return report;
        }
        checkEachEntry(*bundle, heads, witnessSizes, options.keepEntries, streamRoots, report, out);
    }
    warnAboutUnsignedTail(*scanned, report);
    checkWitness(witness, heads, streamRoots, report, out);
    out.finish();
    return report;
}

}  // namespace sealtrain::audit
