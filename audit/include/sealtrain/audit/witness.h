// Witnesses: every signed head the log issues is also kept outside its store, so that an older or
// rewritten store is refused at open (docs/formats/audit.md, "The witness").
//   - A witness file (FileWitness): one line per head, base64 of the signed note text. The data
//     directory keeps one beside its database; an operator adds others on another file system
//     or host (docs/operations/data-directory.md, "Witnesses").
//   - A TPM monotonic counter (tpm_counter_witness.h): counts the heads, and cannot go back.
// A witness that recorded heads and is then missing or empty is refused, never warned about.
#pragma once

#include "sealtrain/audit/merkle_tree.h"
#include "sealtrain/audit/tree_head.h"
#include "sealtrain/base/result.h"

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

namespace sealtrain::audit {

// What a failed check found (Error::reasonCode(); docs/formats/audit.md, audit.witness_reset).
inline constexpr ReasonCode kMissing{"witness_missing"};  // kept heads, and is gone
inline constexpr ReasonCode kEmpty{"witness_empty"};      // kept heads, and holds none now
inline constexpr ReasonCode kAhead{"witness_ahead"};      // kept more than the store holds
inline constexpr ReasonCode kDiffers{"witness_differs"};  // kept another history, or a forgery
inline constexpr ReasonCode kBehind{"witness_behind"};    // counts far fewer heads: another one

// Appends one head and flushes it to disk (O_APPEND, fsync).
[[nodiscard]] Result<void> appendWitness(const std::filesystem::path& file,
                                         const std::string& signedNote);
// Every head in the file, oldest first. Strict: a malformed line is an Integrity error.
[[nodiscard]] Result<std::vector<std::string>> readWitness(const std::filesystem::path& file);

// The log as read from its store, which a witness is checked against at open.
struct WitnessedLog {
    const MerkleTree& tree;
    std::size_t storedHeads = 0;  // signed heads in the store
    NoteVerifier verifier;
};

class HeadWitness {
public:
    HeadWitness() = default;
    HeadWitness(const HeadWitness&) = delete;
    HeadWitness& operator=(const HeadWitness&) = delete;
    virtual ~HeadWitness() = default;
    // How an operator names it: "file:/ABSOLUTE/PATH", "tpm:0x01500016".
    [[nodiscard]] virtual std::string location() const = 0;
    // Keeps a head the store holds now; `storedHeads` counts the store's heads with it.
    [[nodiscard]] virtual Result<void> record(const std::string& signedNote,
                                              std::size_t storedHeads) = 0;
    // At open: Integrity when the store is older than what the witness kept (a restored copy,
    // a rolled-back directory), differs from it, or the witness lost what it kept.
    [[nodiscard]] virtual Result<void> check(const WitnessedLog& log) = 0;
};

class FileWitness final : public HeadWitness {
public:
    explicit FileWitness(std::filesystem::path file)
        : file_(std::move(file))
    {
    }
    [[nodiscard]] std::string location() const override { return "file:" + file_.string(); }
    [[nodiscard]] Result<void> record(const std::string& signedNote,
                                      std::size_t storedHeads) override;
    [[nodiscard]] Result<void> check(const WitnessedLog& log) override;
    [[nodiscard]] const std::filesystem::path& file() const noexcept { return file_; }

private:
    std::filesystem::path file_;
};

}  // namespace sealtrain::audit
