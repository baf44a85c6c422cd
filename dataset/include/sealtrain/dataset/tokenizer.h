// Tokenizers for dataset import (issue #6): byte-level (vocabulary 256, the default) and
// GPT-2-compatible byte-level BPE from the standard vocab.json and merges.txt. Both turn UTF-8
// text into token ids; the manifest records which one and the SHA-256 of its files.
#pragma once

#include "sealtrain/base/result.h"

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace sealtrain::dataset {

struct TokenizerInfo {
    std::string id;  // "byte" or "gpt2-bpe"
    std::uint32_t vocabSize = 0;
    // Appended after every record so that documents stay apart in the token stream; nullopt
    // when the vocabulary has no such token (a BPE vocabulary without "<|endoftext|>").
    std::optional<std::uint32_t> endOfText;
    std::map<std::string, std::string> fileSha256;  // file name -> lowercase hex SHA-256
};

class Tokenizer {
public:
    virtual ~Tokenizer() = default;
    Tokenizer(const Tokenizer&) = delete;
    Tokenizer& operator=(const Tokenizer&) = delete;

    [[nodiscard]] virtual const TokenizerInfo& info() const noexcept = 0;
    // Appends the ids of `text` (UTF-8) to `out`. Not thread-safe (implementations cache).
    virtual void encode(std::string_view text, std::vector<std::uint32_t>& out) = 0;
    // The bytes the ids stand for; InvalidArgument for an id outside the vocabulary.
    [[nodiscard]] virtual Result<std::string> decode(std::span<const std::uint32_t> ids) const = 0;

protected:
    Tokenizer() = default;
};

// One token per byte; id = the byte's value; end of text = 0 (NUL).
class ByteTokenizer final : public Tokenizer {
public:
    ByteTokenizer();
    [[nodiscard]] const TokenizerInfo& info() const noexcept override { return info_; }
    void encode(std::string_view text, std::vector<std::uint32_t>& out) override;
    [[nodiscard]] Result<std::string> decode(std::span<const std::uint32_t> ids) const override;

private:
    TokenizerInfo info_;
};

// GPT-2's byte-level BPE: the text is split by GPT-2's pre-tokenisation pattern, each piece's
// bytes are mapped to GPT-2's printable byte alphabet, and merges.txt's pairs are applied in rank
// order; vocab.json maps the resulting symbols to ids.
class Gpt2BpeTokenizer final : public Tokenizer {
public:
    // InvalidArgument when the files are malformed: a vocab.json that is not an object of
    // string -> id, a merges.txt line that is not two symbols, a merge whose parts or result are
    // not in the vocabulary, or a byte without a symbol. NotFound or Io when unreadable.
    [[nodiscard]] static Result<std::unique_ptr<Gpt2BpeTokenizer>>
    load(const std::filesystem::path& vocabJson, const std::filesystem::path& mergesTxt);
    // The same from the files' texts; the errors name `vocabLabel` and `mergesLabel`.
    [[nodiscard]] static Result<std::unique_ptr<Gpt2BpeTokenizer>>
    fromText(const std::string& vocabText, const std::string& mergesText,
             const std::string& vocabLabel = "vocab.json",
             const std::string& mergesLabel = "merges.txt");
    ~Gpt2BpeTokenizer() override;

    [[nodiscard]] const TokenizerInfo& info() const noexcept override;
    void encode(std::string_view text, std::vector<std::uint32_t>& out) override;
    [[nodiscard]] Result<std::string> decode(std::span<const std::uint32_t> ids) const override;

private:
    struct State;
    explicit Gpt2BpeTokenizer(std::unique_ptr<State> state);
    std::unique_ptr<State> state_;
};

// The byte tokenizer written as GPT-2 tokenizer files: vocab.json maps each byte's symbol in
// GPT-2's byte alphabet to the byte's value, merges.txt holds no merge. With them transformers'
// GPT2Tokenizer encodes text exactly as ByteTokenizer does (an exported model's tokenizer,
// docs/formats/model-export.md).
[[nodiscard]] std::string byteTokenizerGpt2Vocab();
[[nodiscard]] std::string byteTokenizerGpt2Merges();

// GPT-2's pre-tokenisation of `text`, the behaviour of the pattern
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// as pieces of `text` (bytes that are not well-formed UTF-8 count as symbols of their own).
[[nodiscard]] std::vector<std::string_view> gpt2PreTokenize(std::string_view text);

}  // namespace sealtrain::dataset
