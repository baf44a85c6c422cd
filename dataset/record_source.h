// Streams records out of one source file in bounded memory (import.cpp's input side), hashing
// every byte it reads so that the manifest can name the exact source.
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/crypto/hash.h"
#include "sealtrain/dataset/import.h"

#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace sealtrain::dataset::internal {

struct Record {
    std::string text;
    std::uint64_t line = 0;      // where the record starts
    bool spansLines = false;     // a newline in `text` is a newline in the file (text and CSV)
    std::optional<Issue> issue;  // set instead of a usable text
};

class RecordSource final {
public:
    // Unreadable when the file can not be opened (as an Issue, since the policy decides).
    [[nodiscard]] static Result<std::unique_ptr<RecordSource>>
    open(const std::filesystem::path& path, std::string displayName, InputFormat format,
         std::string field, std::size_t maxRecordBytes);
    ~RecordSource();
    RecordSource(const RecordSource&) = delete;
    RecordSource& operator=(const RecordSource&) = delete;

    // The next record; false at the end of the file. Io when a read fails.
    [[nodiscard]] Result<bool> next(Record& record);
    // Reads what is left (for the hash) and returns the file's SHA-256 and size.
    [[nodiscard]] Result<std::pair<crypto::Sha256Digest, std::uint64_t>> finish();
    [[nodiscard]] std::uint64_t bytesRead() const noexcept { return bytesRead_; }

private:
    RecordSource(std::FILE* file, std::string displayName, InputFormat format, std::string field,
                 std::size_t maxRecordBytes);
    // True when unread bytes are in the buffer (reading the next block when it is empty); false
    // at the end of the input.
    [[nodiscard]] Result<bool> fill();
    // Reads (and hashes) the rest of the input without keeping it.
    [[nodiscard]] Result<void> skipRest();
    [[nodiscard]] Result<int> get();  // the next byte, or -1 at the end
    [[nodiscard]] Result<bool> readLine(std::string& line, bool& overflow);
    [[nodiscard]] Result<bool> nextTextFile(Record& record);
    // Turns `record` into an Oversized issue (longer than maxRecordBytes_), dropping its text.
    void markOversized(Record& record) const;
    // Adds line `lineNumber` of a multi-line record to `record` (the first one sets where it
    // starts); past maxRecordBytes_ the record becomes an Oversized issue and its rest is skipped.
    void appendLine(Record& record, bool& started, std::uint64_t lineNumber,
                    const std::string& line, bool overflow) const;
    enum class Separator { BlankLine, Percent };
    [[nodiscard]] Result<bool> nextSeparated(Record& record, Separator separator);
    [[nodiscard]] Result<bool> nextJsonl(Record& record);
    [[nodiscard]] Result<bool> nextCsvRow(std::vector<std::string>& fields, bool& overflow);
    [[nodiscard]] Result<bool> nextCsv(Record& record);
    [[nodiscard]] Issue issue(IssueKind kind, std::uint64_t line, std::string detail) const;

    std::FILE* file_;
    std::string displayName_;
    InputFormat format_;
    std::string field_;
    std::size_t maxRecordBytes_;
    crypto::Sha256 hash_;
    std::vector<char> buffer_;
    std::size_t begin_ = 0;
    std::size_t end_ = 0;
    bool eof_ = false;
    std::uint64_t bytesRead_ = 0;
    std::uint64_t line_ = 1;  // the line of the next byte
    bool doneWholeFile_ = false;
    std::optional<std::size_t> csvColumn_;
    std::size_t csvColumnCount_ = 0;
};

}  // namespace sealtrain::dataset::internal
