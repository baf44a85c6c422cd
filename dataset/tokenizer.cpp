// Byte-level and GPT-2 byte-level BPE tokenizers (tokenizer.h).
#include "sealtrain/dataset/tokenizer.h"

#include "unicode_classes.h"

#include "sealtrain/base/byte_io.h"
#include "sealtrain/base/encoding.h"
#include "sealtrain/crypto/hash.h"

#include <nlohmann/json.hpp>

#include <array>
#include <limits>
#include <sstream>
#include <unordered_map>

namespace sealtrain::dataset {

using internal::decodeUtf8;
using internal::isUnicodeLetter;
using internal::isUnicodeNumber;
using internal::isUnicodeSpace;

ByteTokenizer::ByteTokenizer()
{
    info_.id = "byte";
    info_.vocabSize = 256;
    info_.endOfText = 0;
}

void ByteTokenizer::encode(std::string_view text, std::vector<std::uint32_t>& out)
{
    out.reserve(out.size() + text.size());
    for (const char c : text)
        out.push_back(static_cast<std::uint8_t>(c));
}

Result<std::string> ByteTokenizer::decode(std::span<const std::uint32_t> ids) const
{
    std::string text;
    text.reserve(ids.size());
    for (const std::uint32_t id : ids) {
        if (id > 255)
            return Error(ErrorCode::InvalidArgument,
                         "A token id is outside the byte vocabulary (0-255); decode it with "
                         "the tokenizer the dataset was made with.");
        text.push_back(static_cast<char>(id));
    }
    return text;
}

namespace {

enum class CharClass { Letter, Number, Space, Other };

struct CodePoint {
    CharClass cls = CharClass::Other;
    char32_t value = 0;
    std::size_t length = 1;
};

CodePoint codePointAt(std::string_view text, std::size_t pos)
{
    CodePoint cp;
    const auto byte = static_cast<std::uint8_t>(text[pos]);
    if (byte < 0x80) {
        cp.value = byte;
        if ((byte >= 'a' && byte <= 'z') || (byte >= 'A' && byte <= 'Z'))
            cp.cls = CharClass::Letter;
        else if (byte >= '0' && byte <= '9')
            cp.cls = CharClass::Number;
        else if (isUnicodeSpace(byte))
            cp.cls = CharClass::Space;
        return cp;
    }
    char32_t value = 0;
    const std::size_t length = decodeUtf8(text, pos, value);
    if (length == 0)
        return cp;  // a stray byte: a symbol of its own, class Other
    cp.value = value;
    cp.length = length;
    if (isUnicodeSpace(value))
        cp.cls = CharClass::Space;
    else if (isUnicodeLetter(value))
        cp.cls = CharClass::Letter;
    else if (isUnicodeNumber(value))
        cp.cls = CharClass::Number;
    return cp;
}

// The length of a contraction ('s 't 're 've 'm 'll 'd) at `pos`, or 0.
std::size_t contractionAt(std::string_view text, std::size_t pos)
{
    if (text[pos] != '\'' || pos + 1 >= text.size())
        return 0;
    const char a = text[pos + 1];
    if (a == 's' || a == 't' || a == 'm' || a == 'd')
        return 2;
    if (pos + 2 < text.size()) {
        const char b = text[pos + 2];
        if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l'))
            return 3;
    }
    return 0;
}

// The end of the run of code points of class `cls` (Other meaning "not space, letter or number")
// that starts at `pos`.
std::size_t runEnd(std::string_view text, std::size_t pos, CharClass cls)
{
    while (pos < text.size()) {
        const CodePoint cp = codePointAt(text, pos);
        if (cp.cls != cls)
            break;
        pos += cp.length;
    }
    return pos;
}

}  // namespace

std::vector<std::string_view> gpt2PreTokenize(std::string_view text)
{
    std::vector<std::string_view> pieces;
    std::size_t pos = 0;
    while (pos < text.size()) {
        const std::size_t start = pos;
        if (const std::size_t contraction = contractionAt(text, pos); contraction != 0) {
            pieces.push_back(text.substr(pos, contraction));
            pos += contraction;
            continue;
        }
        CodePoint first = codePointAt(text, pos);
        std::size_t body = pos;
        // " ?X+": one optional U+0020 before a run of letters, numbers or other symbols.
        if (first.value == U' ' && pos + 1 < text.size()) {
            const CodePoint next = codePointAt(text, pos + 1);
            if (next.cls != CharClass::Space) {
                body = pos + 1;
                first = next;
            }
        }
        if (first.cls != CharClass::Space) {
            pos = runEnd(text, body + first.length, first.cls);
            pieces.push_back(text.substr(start, pos - start));
            continue;
        }
        // "\s+(?!\S)|\s+": a run of white space; when a non-space follows, its last code point
        // is left for the next piece (unless the run is a single code point).
        std::size_t end = pos;
        std::size_t lastStart = pos;
        while (end < text.size()) {
            const CodePoint cp = codePointAt(text, end);
            if (cp.cls != CharClass::Space)
                break;
            lastStart = end;
            end += cp.length;
        }
        if (end < text.size() && lastStart > pos)
            end = lastStart;
        pieces.push_back(text.substr(pos, end - pos));
        pos = end;
    }
    return pieces;
}

namespace {

// GPT-2's map from bytes to printable code points: the printable Latin-1 bytes stand for
// themselves, the others take U+0100 upwards in byte order.
std::array<char32_t, 256> gpt2ByteAlphabet()
{
    std::array<char32_t, 256> alphabet{};
    char32_t next = 256;
    for (std::uint32_t b = 0; b < 256; ++b) {
        const bool printable =
            (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
        alphabet[b] = printable ? static_cast<char32_t>(b) : next++;
    }
    return alphabet;
}

void appendUtf8(std::string& out, char32_t cp)
{
    if (cp < 0x80) {
        out.push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
        out.push_back(static_cast<char>(0xC0U | (cp >> 6U)));
        out.push_back(static_cast<char>(0x80U | (cp & 0x3FU)));
    } else {
        out.push_back(static_cast<char>(0xE0U | (cp >> 12U)));
        out.push_back(static_cast<char>(0x80U | ((cp >> 6U) & 0x3FU)));
        out.push_back(static_cast<char>(0x80U | (cp & 0x3FU)));
    }
}

Result<std::string> readTokenizerFile(const std::filesystem::path& path)
{
    auto text = readWholeFile(path);
    if (!text && text.error().code() == ErrorCode::NotFound)
        return Error(ErrorCode::NotFound,
                     "The tokenizer file '" + path.string() + "' does not exist; check the path.");
    return text;
}

std::uint64_t pairKey(std::uint32_t a, std::uint32_t b)
{
    return (static_cast<std::uint64_t>(a) << 32U) | b;
}

constexpr std::size_t kCacheLimit = 1U << 16U;

}  // namespace

struct Gpt2BpeTokenizer::State {
    TokenizerInfo info;
    std::array<std::uint32_t, 256> byteIds{};
    std::vector<std::string> symbols;  // id -> symbol (in GPT-2's byte alphabet)
    struct Merge {
        std::uint32_t rank;
        std::uint32_t result;
    };
    std::unordered_map<std::uint64_t, Merge> merges;
    std::unordered_map<char32_t, std::uint8_t> alphabetToByte;
    std::unordered_map<std::string, std::vector<std::uint32_t>> cache;
    std::vector<std::uint32_t> work;

    void encodePiece(std::string_view piece, std::vector<std::uint32_t>& out)
    {
        work.clear();
        for (const char c : piece)
            work.push_back(byteIds[static_cast<std::uint8_t>(c)]);
        while (work.size() > 1) {
            std::uint32_t bestRank = std::numeric_limits<std::uint32_t>::max();
            std::uint64_t bestPair = 0;
            std::uint32_t bestResult = 0;
            for (std::size_t i = 0; i + 1 < work.size(); ++i) {
                const auto found = merges.find(pairKey(work[i], work[i + 1]));
                if (found != merges.end() && found->second.rank < bestRank) {
                    bestRank = found->second.rank;
                    bestPair = found->first;
                    bestResult = found->second.result;
                }
            }
            if (bestRank == std::numeric_limits<std::uint32_t>::max())
                break;
            std::size_t write = 0;
            for (std::size_t read = 0; read < work.size(); ++write) {
                if (read + 1 < work.size() && pairKey(work[read], work[read + 1]) == bestPair) {
                    work[write] = bestResult;
                    read += 2;
                } else {
                    work[write] = work[read];
                    ++read;
                }
            }
            work.resize(write);
        }
        out.insert(out.end(), work.begin(), work.end());
    }
};

Gpt2BpeTokenizer::Gpt2BpeTokenizer(std::unique_ptr<State> state)
    : state_(std::move(state))
{
}

Gpt2BpeTokenizer::~Gpt2BpeTokenizer() = default;

const TokenizerInfo& Gpt2BpeTokenizer::info() const noexcept
{
    return state_->info;
}

Result<std::unique_ptr<Gpt2BpeTokenizer>>
Gpt2BpeTokenizer::load(const std::filesystem::path& vocabJson,
                       const std::filesystem::path& mergesTxt)
{
    auto vocabText = readTokenizerFile(vocabJson);
    if (!vocabText)
        return vocabText.error();
    auto mergesText = readTokenizerFile(mergesTxt);
    if (!mergesText)
        return mergesText.error();
    return fromText(*vocabText, *mergesText, vocabJson.string(), mergesTxt.string());
}

Result<std::unique_ptr<Gpt2BpeTokenizer>> Gpt2BpeTokenizer::fromText(const std::string& vocabText,
                                                                     const std::string& mergesText,
                                                                     const std::string& vocabLabel,
                                                                     const std::string& mergesLabel)
{
    auto state = std::make_unique<State>();
    const auto badVocab = [&](const std::string& what) {
        return Error(ErrorCode::InvalidArgument, "The vocabulary '" + vocabLabel + "' " + what
                                                     + "; supply GPT-2's standard vocab.json.");
    };
    const nlohmann::json vocab = nlohmann::json::parse(vocabText, nullptr, false);
    if (vocab.is_discarded() || !vocab.is_object() || vocab.empty())
        return badVocab("is not a JSON object of symbols to ids");
    std::unordered_map<std::string, std::uint32_t> ids;
    std::uint32_t maxId = 0;
    for (const auto& [symbol, id] : vocab.items()) {
        if (!id.is_number_unsigned() || id.get<std::uint64_t>() >= (1ULL << 31U))
            return badVocab("maps '" + symbol + "' to something other than a small id");
        const auto value = id.get<std::uint32_t>();
        ids.emplace(symbol, value);
        maxId = std::max(maxId, value);
    }
    // Before the table of symbols is made: its size is the file's count of symbols, never an id
    // the file merely names (a vocab.json of one symbol numbered 2^31 - 1 would ask for 64 GB).
    if (ids.size() != std::size_t{maxId} + 1)
        return badVocab("leaves gaps in its ids");
    state->symbols.assign(ids.size(), std::string());
    for (const auto& [symbol, id] : ids) {
        if (!state->symbols[id].empty())
            return badVocab("gives two symbols the same id");
        state->symbols[id] = symbol;
    }

    const auto alphabet = gpt2ByteAlphabet();
    for (std::uint32_t b = 0; b < 256; ++b) {
        std::string symbol;
        appendUtf8(symbol, alphabet[b]);
        const auto found = ids.find(symbol);
        if (found == ids.end())
            return badVocab("has no symbol for the byte " + std::to_string(b));
        state->byteIds[b] = found->second;
        state->alphabetToByte.emplace(alphabet[b], static_cast<std::uint8_t>(b));
    }

    std::istringstream lines(mergesText);
    std::string line;
    std::uint32_t rank = 0;
    std::size_t lineNumber = 0;
    while (std::getline(lines, line)) {
        ++lineNumber;
        if (!line.empty() && line.back() == '\r')
            line.pop_back();
        if (line.empty() || (lineNumber == 1 && line.rfind("#version", 0) == 0))
            continue;
        const auto space = line.find(' ');
        const auto badMerge = [&](const std::string& what) {
            std::string message = "Line " + std::to_string(lineNumber) + " of the merges file '";
            message += mergesLabel;
            message += "' ";
            message += what;
            message += "; supply the merges.txt that belongs to the vocab.json.";
            return Error(ErrorCode::InvalidArgument, message);
        };
        if (space == std::string::npos || space == 0
            || line.find(' ', space + 1) != std::string::npos)
            return badMerge("is not two symbols separated by one space");
        const std::string left = line.substr(0, space);
        const std::string right = line.substr(space + 1);
        const auto a = ids.find(left);
        const auto b = ids.find(right);
        const auto merged = ids.find(left + right);
        if (a == ids.end() || b == ids.end() || merged == ids.end())
            return badMerge("names a symbol that is not in the vocabulary");
        state->merges.emplace(pairKey(a->second, b->second), State::Merge{rank++, merged->second});
    }

    auto& info = state->info;
    info.id = "gpt2-bpe";
    info.vocabSize = maxId + 1;
    if (const auto eot = ids.find("<|endoftext|>"); eot != ids.end())
        info.endOfText = eot->second;
    info.fileSha256["vocab.json"] = toHex(crypto::sha256(asBytes(vocabText)));
    info.fileSha256["merges.txt"] = toHex(crypto::sha256(asBytes(mergesText)));
    return std::unique_ptr<Gpt2BpeTokenizer>(new Gpt2BpeTokenizer(std::move(state)));
}

void Gpt2BpeTokenizer::encode(std::string_view text, std::vector<std::uint32_t>& out)
{
    for (const std::string_view piece : gpt2PreTokenize(text)) {
        auto& cache = state_->cache;
        if (const auto found = cache.find(std::string(piece)); found != cache.end()) {
            out.insert(out.end(), found->second.begin(), found->second.end());
            continue;
        }
        const std::size_t before = out.size();
        state_->encodePiece(piece, out);
        if (cache.size() >= kCacheLimit)
            cache.clear();
        cache.emplace(std::string(piece),
                      std::vector<std::uint32_t>(out.begin() + static_cast<std::ptrdiff_t>(before),
                                                 out.end()));
    }
}

Result<std::string> Gpt2BpeTokenizer::decode(std::span<const std::uint32_t> ids) const
{
    std::string bytes;
    for (const std::uint32_t id : ids) {
        if (id >= state_->symbols.size())
            return Error(ErrorCode::InvalidArgument,
                         "A token id is outside the BPE vocabulary; decode it with the tokenizer "
                         "the dataset was made with.");
        const std::string& symbol = state_->symbols[id];
        std::string decoded;
        bool byteSymbols = true;
        for (std::size_t pos = 0; pos < symbol.size() && byteSymbols;) {
            char32_t cp = 0;
            const std::size_t length = decodeUtf8(symbol, pos, cp);
            const auto found = state_->alphabetToByte.find(cp);
            byteSymbols = length != 0 && found != state_->alphabetToByte.end();
            if (byteSymbols) {
                decoded.push_back(static_cast<char>(found->second));
                pos += length;
            }
        }
        // Special tokens such as <|endoftext|> may hold characters outside the byte alphabet;
        // they stand for their own text.
        bytes += byteSymbols ? decoded : symbol;
    }
    return bytes;
}

std::string byteTokenizerGpt2Vocab()
{
    const std::array<char32_t, 256> alphabet = gpt2ByteAlphabet();
    nlohmann::json vocab = nlohmann::json::object();
    for (std::uint32_t b = 0; b < 256; ++b) {
        std::string symbol;
        appendUtf8(symbol, alphabet[b]);
        vocab[symbol] = b;
    }
    return vocab.dump() + "\n";
}

std::string byteTokenizerGpt2Merges()
{
    return "#version: 0.2\n";
}

}  // namespace sealtrain::dataset
