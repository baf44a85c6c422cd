// libFuzzer target: the dataset import's record readers (text files, text records, JSONL, CSV,
// fortune) and the PII screen, over the bytes a steward uploads. The first byte of an input
// picks the format (its value modulo five), the rest is the file. Promises checked: a record is
// never longer than the record limit (an oversized one is reported, not kept); line numbers are
// inside the file and never go back; the reader hashes exactly the bytes of the file; the PII
// matches are in order, inside the record and apart, and redaction replaces exactly them. Any
// crash, sanitizer report or broken promise is a bug. Seeds: make_fuzz_seeds.
#include "fuzz_dataset_records.h"

#include "record_source.h"
#include "sealtrain/crypto/hash.h"
#include "sealtrain/dataset/pii.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

using namespace sealtrain;

namespace {

// One in-memory file, rewritten for every input and opened through /proc as a path, the way the
// import opens an upload.
int memoryFile()
{
    static const int fd = ::memfd_create("fuzz-dataset-records", MFD_CLOEXEC);
    return fd;
}

bool rewrite(int fd, const std::uint8_t* data, std::size_t size)
{
    if (::ftruncate(fd, 0) != 0)
        return false;
    std::size_t done = 0;
    while (done < size) {
        const ssize_t wrote = ::pwrite(fd, data + done, size - done, static_cast<off_t>(done));
        if (wrote <= 0)
            return false;
        done += static_cast<std::size_t>(wrote);
    }
    return true;
}

void checkPii(std::string_view text)
{
    const auto matches = dataset::findPii(text);
    std::size_t end = 0;
    std::size_t expected = text.size();
    for (const dataset::PiiMatch& match : matches) {
        if (match.length == 0 || match.offset < end || match.offset > text.size()
            || match.length > text.size() - match.offset)
            std::abort();
        end = match.offset + match.length;
        expected = expected - match.length + std::strlen(dataset::piiPlaceholder(match.kind));
    }
    const std::string redacted = dataset::redactPii(text, matches);
    if (redacted.size() != expected || (!matches.empty() && redacted == text))
        std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    if (size == 0)
        return 0;
    const auto format = static_cast<dataset::InputFormat>(data[0] % fuzz::kRecordFormats);
    const std::uint8_t* file = data + 1;
    const std::size_t fileSize = size - 1;
    const int fd = memoryFile();
    if (fd < 0 || !rewrite(fd, file, fileSize))
        std::abort();
    auto source =
        dataset::internal::RecordSource::open("/proc/self/fd/" + std::to_string(fd), "upload",
                                              format, fuzz::kRecordField, fuzz::kMaxRecordBytes);
    if (!source)
        std::abort();
    const std::uint64_t lines =
        static_cast<std::uint64_t>(std::count(file, file + fileSize, std::uint8_t{'\n'})) + 1;
    std::uint64_t records = 0;
    std::uint64_t lastLine = 0;
    dataset::internal::Record record;
    for (;;) {
        auto more = (*source)->next(record);
        if (!more)
            std::abort();  // reading memory does not fail
        if (!*more)
            break;
        // Each record but a whole empty file's consumes a byte; an oversized record keeps none.
        if (++records > fileSize + 1 || record.text.size() > fuzz::kMaxRecordBytes)
            std::abort();
        const std::uint64_t line = record.issue ? record.issue->where.line : record.line;
        if (line < 1 || line > lines || record.line < lastLine)
            std::abort();
        lastLine = record.line;
        if (!record.issue)
            checkPii(record.text);
    }
    auto finished = (*source)->finish();
    if (!finished || finished->second != fileSize
        || finished->first != crypto::sha256({file, fileSize}))
        std::abort();
    return 0;
}
