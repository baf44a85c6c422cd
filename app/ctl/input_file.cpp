// A command's input file read whole, its NotFound error naming what the file was meant to be;
// an output file written privately and atomically.
#include "input_file.h"

#include "sealtrain/base/byte_io.h"

#include <filesystem>

namespace sealtrain::ctl {

Result<std::string> readInputFile(const std::string& path, const std::string& what)
{
    auto content = readWholeFile(path);
    if (!content && content.error().code() == ErrorCode::NotFound)
        return Error(ErrorCode::NotFound,
                     "Cannot read the " + what + " '" + path + "'; check the path.");
    return content;
}

Result<void> writeOutputFile(const std::string& path, std::span<const std::uint8_t> bytes,
                             const std::string& what)
{
    auto written = writeFileAtomically(path, bytes, AtomicFileSink::Overwrite::Allow,
                                       AtomicFileSink::kPrivateMode);
    if (!written)
        return written.error().withContext("Cannot write the " + what + " '" + path + "'");
    return written;
}

Result<std::string> readTrustedKey(const std::string& value)
{
    if (value.empty() || !std::filesystem::is_regular_file(value))
        return value;
    auto text = readInputFile(value, "trusted key");
    if (!text)
        return text.error();
    while (!text->empty() && (text->back() == '\n' || text->back() == '\r'))
        text->pop_back();
    return *text;
}

}  // namespace sealtrain::ctl
