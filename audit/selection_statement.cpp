// The signed selection statement of an export bundle: its six lines, strict parsing, signing and
// verification as a C2SP signed note under the log's key.
#include "sealtrain/audit/selection_statement.h"

#include "sealtrain/audit/proof.h"
#include "sealtrain/base/encoding.h"
#include "sealtrain/base/utf8.h"

#include <vector>

namespace sealtrain::audit {
namespace {

Error malformedStatement(const std::string& what)
{
    return Error(ErrorCode::Integrity, "The bundle's selection statement is malformed (" + what
                                           + "); it was altered or not written by a log.");
}

// The value after "<name> " on a line, or nullopt when the line has another name.
std::optional<std::string_view> valueOf(std::string_view line, std::string_view name)
{
    if (line.size() <= name.size() + 1 || !line.starts_with(name) || line[name.size()] != ' ')
        return std::nullopt;
    return line.substr(name.size() + 1);
}

// "<decimal> <base64 hash>" as on the head and entries lines.
std::optional<std::pair<std::uint64_t, Hash>> countAndHash(std::string_view value)
{
    const auto space = value.find(' ');
    if (space == std::string_view::npos)
        return std::nullopt;
    const auto count = parseDecimal(value.substr(0, space));
    const auto hash = hashFromBase64(value.substr(space + 1));
    if (!count || !hash)
        return std::nullopt;
    return std::pair{*count, *hash};
}

}  // namespace

bool isValidFilterText(std::string_view filter)
{
    if (filter.empty() || !isValidUtf8(filter) || filter.front() == ' ' || filter.back() == ' ')
        return false;
    for (const char c : filter)
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
            return false;
    return true;
}

void SequenceDigest::add(std::uint64_t sequence)
{
    constexpr std::size_t kFlushAt = 8192;
    const std::size_t at = buffer_.size();
    buffer_.resize(at + 8);
    std::uint8_t* const bytes = buffer_.data() + at;
    for (unsigned i = 0; i < 8; ++i)
        bytes[i] = static_cast<std::uint8_t>(sequence >> (56U - 8U * i));
    if (buffer_.size() >= kFlushAt) {
        hash_.update(buffer_);
        buffer_.clear();
    }
    ++count_;
}

Hash SequenceDigest::finish()
{
    hash_.update(buffer_);
    buffer_.clear();
    count_ = 0;
    return hash_.finish();
}

std::string selectionStatementText(const SelectionStatement& s)
{
    return std::string(kSelectionStatementMagic) + "\norigin " + s.origin + "\nhead "
           + std::to_string(s.headSize) + " " + toBase64(s.headRoot) + "\nselection "
           + (s.selectionAll ? "all" : "filtered") + "\nfilter " + s.filter + "\nentries "
           + std::to_string(s.entryCount) + " " + toBase64(s.sequencesDigest) + "\n";
}

Result<SelectionStatement> parseSelectionStatementText(std::string_view text)
{
    if (text.empty() || text.back() != '\n')
        return malformedStatement("the text does not end in a newline");
    std::vector<std::string_view> lines;
    for (std::string_view rest = text; !rest.empty();) {
        const auto end = rest.find('\n');
        lines.push_back(rest.substr(0, end));
        rest.remove_prefix(end + 1);
    }
    if (lines.size() != 6 || lines[0] != kSelectionStatementMagic)
        return malformedStatement("it is not six lines under the statement's first line");
    SelectionStatement s;
    const auto origin = valueOf(lines[1], "origin");
    const auto head = valueOf(lines[2], "head");
    const auto selection = valueOf(lines[3], "selection");
    const auto filter = valueOf(lines[4], "filter");
    const auto entries = valueOf(lines[5], "entries");
    if (!origin || origin->find(' ') != std::string_view::npos)
        return malformedStatement("bad origin line");
    s.origin = std::string(*origin);
    const auto headValue = head ? countAndHash(*head) : std::nullopt;
    if (!headValue)
        return malformedStatement("bad head line");
    std::tie(s.headSize, s.headRoot) = *headValue;
    if (!selection || (*selection != "all" && *selection != "filtered"))
        return malformedStatement("bad selection line");
    s.selectionAll = *selection == "all";
    if (!filter || !isValidFilterText(*filter) || (*filter == "all") != s.selectionAll)
        return malformedStatement("bad filter line");
    s.filter = std::string(*filter);
    const auto entriesValue = entries ? countAndHash(*entries) : std::nullopt;
    if (!entriesValue)
        return malformedStatement("bad entries line");
    std::tie(s.entryCount, s.sequencesDigest) = *entriesValue;
    return s;
}

std::string signSelectionStatement(const SelectionStatement& statement,
                                   const crypto::SigningKey& key)
{
    return signNote(selectionStatementText(statement), statement.origin, key);
}

Result<SelectionStatement> verifySelectionStatement(std::string_view signedNote,
                                                    const NoteVerifier& trusted)
{
    auto text = verifyNote(signedNote, trusted);
    if (!text)
        return text.error().withContext("The bundle's selection statement");
    return parseSelectionStatementText(*text);
}

}  // namespace sealtrain::audit
