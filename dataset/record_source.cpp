// Record readers for the five input formats (record_source.h).
#include "record_source.h"

#include "unicode_classes.h"

#include <nlohmann/json.hpp>

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace sealtrain::dataset::internal {

namespace {
constexpr std::size_t kReadBlock = std::size_t{1} << 20U;

// The read buffer for `file`: a block, or less for a regular file smaller than one (one byte
// more than the file, so that the first read finds its end).
std::size_t readBufferSize(std::FILE* file)
{
    struct stat info {};
    if (::fstat(::fileno(file), &info) != 0 || !S_ISREG(info.st_mode) || info.st_size < 0)
        return kReadBlock;
    return std::min(kReadBlock, static_cast<std::size_t>(info.st_size) + 1);
}

bool isBlank(std::string_view line)
{
    return line.find_first_not_of(" \t\r") == std::string_view::npos;
}
}  // namespace

Result<std::unique_ptr<RecordSource>> RecordSource::open(const std::filesystem::path& path,
                                                         std::string displayName,
                                                         InputFormat format, std::string field,
                                                         std::size_t maxRecordBytes)
{
    std::FILE* file = std::fopen(path.c_str(), "rb");
    if (file == nullptr)
        return Error(ErrorCode::Io, "Cannot open '" + displayName + "' (" + std::strerror(errno)
                                        + "); check that it exists and is readable.");
    return std::unique_ptr<RecordSource>(
        new RecordSource(file, std::move(displayName), format, std::move(field), maxRecordBytes));
}

RecordSource::RecordSource(std::FILE* file, std::string displayName, InputFormat format,
                           std::string field, std::size_t maxRecordBytes)
    : file_(file)
    , displayName_(std::move(displayName))
    , format_(format)
    , field_(std::move(field))
    , maxRecordBytes_(maxRecordBytes)
    , buffer_(readBufferSize(file))
{
}

RecordSource::~RecordSource()
{
    std::fclose(file_);
}

Issue RecordSource::issue(IssueKind kind, std::uint64_t line, std::string detail) const
{
    return Issue{kind, Location{displayName_, line}, std::move(detail)};
}

Result<bool> RecordSource::fill()
{
    if (begin_ != end_)
        return true;
    if (eof_)
        return false;
    const std::size_t got = std::fread(buffer_.data(), 1, buffer_.size(), file_);
    if (got < buffer_.size()) {
        if (std::ferror(file_) != 0)
            return Error(ErrorCode::Io,
                         "Reading '" + displayName_
                             + "' failed part-way; check the disk and import again.");
        eof_ = true;
    }
    hash_.update({reinterpret_cast<const std::uint8_t*>(buffer_.data()), got});
    bytesRead_ += got;
    begin_ = 0;
    end_ = got;
    return got > 0;
}

Result<void> RecordSource::skipRest()
{
    for (;;) {
        begin_ = end_;
        auto more = fill();
        if (!more)
            return more.error();
        if (!*more)
            return success();
    }
}

Result<int> RecordSource::get()
{
    auto more = fill();
    if (!more)
        return more.error();
    if (!*more)
        return -1;
    const auto c = static_cast<unsigned char>(buffer_[begin_++]);
    if (c == '\n')
        ++line_;
    return static_cast<int>(c);
}

// One line without its '\n' (and '\r'); `overflow` when it was longer than the limit (the rest
// is consumed and dropped).
Result<bool> RecordSource::readLine(std::string& line, bool& overflow)
{
    line.clear();
    overflow = false;
    const std::size_t limit =
        format_ == InputFormat::Jsonl ? maxRecordBytes_ * 2 + 4096 : maxRecordBytes_;
    bool any = false;
    for (;;) {
        auto more = fill();
        if (!more)
            return more.error();
        if (!*more)
            break;
        any = true;
        const char* start = buffer_.data() + begin_;
        const auto* newline = static_cast<const char*>(std::memchr(start, '\n', end_ - begin_));
        const std::size_t take =
            newline != nullptr ? static_cast<std::size_t>(newline - start) : end_ - begin_;
        if (!overflow) {
            if (line.size() + take > limit)
                overflow = true;
            else
                line.append(start, take);
        }
        begin_ += take;
        if (newline != nullptr) {
            ++begin_;
            ++line_;
            break;
        }
    }
    if (!line.empty() && line.back() == '\r')
        line.pop_back();
    return any;
}

Result<bool> RecordSource::next(Record& record)
{
    record.text.clear();
    record.issue.reset();
    record.spansLines = format_ != InputFormat::Jsonl;
    switch (format_) {
    case InputFormat::TextFiles: return nextTextFile(record);
    case InputFormat::TextRecords: return nextSeparated(record, Separator::BlankLine);
    case InputFormat::Fortune: return nextSeparated(record, Separator::Percent);
    case InputFormat::Jsonl: return nextJsonl(record);
    case InputFormat::Csv: return nextCsv(record);
    }
    return false;
}

Result<bool> RecordSource::nextTextFile(Record& record)
{
    if (doneWholeFile_)
        return false;
    doneWholeFile_ = true;
    record.line = 1;
    for (;;) {
        auto more = fill();
        if (!more)
            return more.error();
        if (!*more)
            break;
        const std::size_t take = end_ - begin_;
        if (record.text.size() + take > maxRecordBytes_) {
            record.issue =
                issue(IssueKind::Oversized, 1,
                      "the document is longer than " + std::to_string(maxRecordBytes_) + " bytes");
            SEALTRAIN_TRY(skipRest());
            record.text.clear();
            return true;
        }
        record.text.append(buffer_.data() + begin_, take);
        begin_ = end_;
    }
    return true;
}

void RecordSource::markOversized(Record& record) const
{
    record.issue = issue(IssueKind::Oversized, record.line,
                         "the record is longer than " + std::to_string(maxRecordBytes_) + " bytes");
    record.text.clear();
}

void RecordSource::appendLine(Record& record, bool& started, std::uint64_t lineNumber,
                              const std::string& line, bool overflow) const
{
    if (!started) {
        started = true;
        record.line = lineNumber;
    }
    if (record.issue)
        return;  // consume the rest of an oversized record
    if (overflow || record.text.size() + line.size() + 1 > maxRecordBytes_) {
        markOversized(record);
        return;
    }
    if (lineNumber != record.line)
        record.text.push_back('\n');
    record.text += line;
}

// Both multi-line formats: a record is the lines up to a separator line. For text records the
// separator is a blank line; for fortune(6) it is a line holding only '%', and blank lines inside
// a fortune are part of it. Only blank lines between two separators (or after the last) are no
// record at all, not an empty one.
Result<bool> RecordSource::nextSeparated(Record& record, Separator separator)
{
    std::string line;
    bool overflow = false;
    bool started = false;
    for (;;) {
        const std::uint64_t lineNumber = line_;
        auto got = readLine(line, overflow);
        if (!got)
            return got.error();
        const bool separates =
            !*got
            || (!overflow && (separator == Separator::BlankLine ? isBlank(line) : line == "%"));
        if (separates) {
            if (started && !record.issue
                && record.text.find_first_not_of(" \t\r\n") == std::string::npos) {
                started = false;
                record.text.clear();
            }
            if (started || !*got)
                return started;
            continue;
        }
        appendLine(record, started, lineNumber, line, overflow);
    }
}

Result<bool> RecordSource::nextJsonl(Record& record)
{
    std::string line;
    bool overflow = false;
    for (;;) {
        record.line = line_;
        auto got = readLine(line, overflow);
        if (!got)
            return got.error();
        if (!*got)
            return false;
        if (!overflow && isBlank(line))
            continue;
        break;
    }
    if (overflow) {
        record.issue = issue(IssueKind::Oversized, record.line, "the JSON line is too long");
        return true;
    }
    if (const std::size_t bad = firstInvalidUtf8(line); bad != line.size()) {
        record.issue = issue(IssueKind::InvalidUtf8, record.line,
                             "invalid UTF-8 at byte " + std::to_string(bad + 1) + " of the line");
        return true;
    }
    const auto value = nlohmann::json::parse(line, nullptr, false);
    if (value.is_discarded() || !value.is_object()) {
        record.issue = issue(IssueKind::Malformed, record.line, "the line is not a JSON object");
        return true;
    }
    const auto found = value.find(field_);
    if (found == value.end() || !found->is_string()) {
        record.issue = issue(IssueKind::Malformed, record.line,
                             "the object has no string field '" + field_ + "'");
        return true;
    }
    record.text = found->get<std::string>();
    if (record.text.size() > maxRecordBytes_)
        markOversized(record);
    return true;
}

// One RFC 4180 row: fields separated by ',', rows by CRLF or LF, quoted fields with "" for a
// quote and line breaks inside. Every byte read counts toward the row's bound, separators and
// both quotes of an escaped pair included (a row of commas would otherwise keep a string per
// comma, and a quoted field of "" pairs would grow at half the rate counted); past it the row is
// read through and dropped, and `overflow` is set.
Result<bool> RecordSource::nextCsvRow(std::vector<std::string>& fields, bool& overflow)
{
    fields.assign(1, std::string());
    overflow = false;
    bool quoted = false;
    bool any = false;
    bool fieldStarted = false;  // a quote opens a field only before its first byte
    std::size_t total = 0;
    const std::size_t limit = maxRecordBytes_ * 4 + 4096;
    const auto count = [&] {
        if (!overflow && ++total > limit) {
            overflow = true;
            fields.assign(1, std::string());
        }
    };
    const auto append = [&](char ch) {
        fieldStarted = true;
        if (!overflow)
            fields.back().push_back(ch);
    };
    const auto separate = [&] {
        fieldStarted = false;
        if (!overflow)
            fields.emplace_back();
    };
    for (;;) {
        auto c = get();
        if (!c)
            return c.error();
        if (*c < 0)
            return any;
        any = true;
        const char ch = static_cast<char>(*c);
        count();
        if (quoted) {
            if (ch != '"') {
                append(ch);
                continue;
            }
            auto after = get();
            if (!after)
                return after.error();
            quoted = false;
            if (*after < 0 || *after == '\n')
                return true;
            count();
            if (*after == '"') {
                quoted = true;
                append('"');
            } else if (*after == ',') {
                separate();
            } else if (*after != '\r') {
                append(static_cast<char>(*after));
            }
        } else if (ch == '"' && !fieldStarted) {
            quoted = true;
        } else if (ch == ',') {
            separate();
        } else if (ch == '\n') {
            if (!fields.back().empty() && fields.back().back() == '\r')
                fields.back().pop_back();
            return true;
        } else {
            append(ch);
        }
    }
}

Result<bool> RecordSource::nextCsv(Record& record)
{
    std::vector<std::string> fields;
    bool overflow = false;
    if (!csvColumn_) {
        record.line = line_;
        auto got = nextCsvRow(fields, overflow);
        if (!got)
            return got.error();
        if (!*got)
            return false;
        for (std::size_t i = 0; i < fields.size(); ++i) {
            if (fields[i] == field_)
                csvColumn_ = i;
        }
        csvColumnCount_ = fields.size();
        if (!csvColumn_) {
            record.issue =
                overflow ? issue(IssueKind::Oversized, record.line, "the header row is too long")
                         : issue(IssueKind::Malformed, record.line,
                                 "the header row has no column '" + field_ + "'");
            // Without the column no row of this file can be read.
            while (true) {
                auto more = get();
                if (!more)
                    return more.error();
                if (*more < 0)
                    break;
            }
            doneWholeFile_ = true;
            return true;
        }
    }
    if (doneWholeFile_)
        return false;
    record.line = line_;
    auto got = nextCsvRow(fields, overflow);
    if (!got)
        return got.error();
    if (!*got)
        return false;
    if (overflow) {
        record.issue = issue(IssueKind::Oversized, record.line, "the row is too long");
    } else if (fields.size() != csvColumnCount_) {
        record.issue =
            issue(IssueKind::Malformed, record.line,
                  "the row has " + std::to_string(fields.size()) + " fields where the header has "
                      + std::to_string(csvColumnCount_));
    } else {
        record.text = std::move(fields[*csvColumn_]);
        if (record.text.size() > maxRecordBytes_)
            markOversized(record);
    }
    return true;
}

Result<std::pair<crypto::Sha256Digest, std::uint64_t>> RecordSource::finish()
{
    SEALTRAIN_TRY(skipRest());
    return std::make_pair(hash_.finish(), bytesRead_);
}

}  // namespace sealtrain::dataset::internal
